// SPDX-License-Identifier: GPL-2.0-only
/*
 * "verify": true on a device workload and the keys that go with it (see
 * config_verify.h; the checking itself is daemon/device/verify*.c).
 */
#include "config_verify.h"

#include <inttypes.h>
#include <string.h>

const char *const config_verify_keys[] = {
	"verify", "fill", "pre_read", "flush_interval", "fua", "verify_on_resume", NULL,
};

/* Long enough for any device to finish a flush, short enough that a
 * crash leaves few blocks uncertain. */
#define FLUSH_MIN_NS (UINT64_C(10) * 1000000)
#define FLUSH_MAX_NS (UINT64_C(3600) * 1000000000)

const char *verify_resume_name(enum verify_resume r)
{
	switch (r) {
	case VERIFY_RESUME_FULL:
		return "full";
	case VERIFY_RESUME_NONE:
		return "none";
	case VERIFY_RESUME_TOUCHED:
	default:
		return "touched";
	}
}

static void parse_resume(struct cfg_ctx *c, json_t *obj, struct verify_config *v)
{
	const char *s;

	if (!cfg_get_string(c, obj, "verify_on_resume", &s))
		return;
	cfg_push_key(c, "verify_on_resume");
	if (strcmp(s, "touched") == 0)
		v->on_resume = VERIFY_RESUME_TOUCHED;
	else if (strcmp(s, "full") == 0)
		v->on_resume = VERIFY_RESUME_FULL;
	else if (strcmp(s, "none") == 0)
		v->on_resume = VERIFY_RESUME_NONE;
	else
		cfg_report(c, "\"verify_on_resume\" must be \"touched\", \"full\" or \"none\", "
			      "not \"%s\"", s);
	cfg_pop(c);
}

/* The blocks a pattern workload writes must be whole verify blocks: a
 * write of part of one would leave a block no header describes. */
static void check_block_sizes(struct cfg_ctx *c, json_t *obj, const struct workload_config *w)
{
	if (w->model != MODEL_PATTERN || w->read_pct == 100)
		return;
	for (size_t b = 0; b < w->n_block_sizes; b++) {
		if (w->block_sizes[b].bytes % CONFIG_VERIFY_BLOCK == 0)
			continue;
		cfg_push_key(c, json_object_get(obj, "block_size") ? "block_size" : "verify");
		cfg_report(c, "with \"verify\": true every block size must be a multiple of %u "
			      "bytes (the verify block), not %" PRIu32, CONFIG_VERIFY_BLOCK,
			   w->block_sizes[b].bytes);
		cfg_pop(c);
		return;
	}
}

static void check_act_sizes(struct cfg_ctx *c, const struct workload_config *w)
{
	if (w->model == MODEL_ACT_STORAGE &&
	    (uint64_t)w->act.large_block_op_kbytes * 1024 % CONFIG_VERIFY_BLOCK) {
		cfg_push_key(c, "large_block_op_kbytes");
		cfg_report(c, "with \"verify\": true large blocks must be a multiple of %u bytes",
			   CONFIG_VERIFY_BLOCK);
		cfg_pop(c);
	}
}

void verify_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	struct verify_config *v = &w->verify;

	*v = (struct verify_config){ .flush_interval_ns = CONFIG_VERIFY_FLUSH_DEFAULT_NS,
				     .on_resume = VERIFY_RESUME_TOUCHED };
	cfg_get_bool(c, obj, "verify", &v->on);
	cfg_get_bool(c, obj, "fill", &v->fill);
	cfg_get_bool(c, obj, "pre_read", &v->pre_read);
	cfg_get_bool(c, obj, "fua", &v->fua);
	if (cfg_get_duration(c, obj, "flush_interval", &v->flush_interval_ns) &&
	    (v->flush_interval_ns < FLUSH_MIN_NS || v->flush_interval_ns > FLUSH_MAX_NS)) {
		cfg_push_key(c, "flush_interval");
		cfg_report(c, "\"flush_interval\" must be between 10ms and 1h");
		cfg_pop(c);
	}
	parse_resume(c, obj, v);
	if (!v->on) {
		for (const char *const *k = config_verify_keys + 1; *k; k++) {
			if (!json_object_get(obj, *k))
				continue;
			cfg_push_key(c, *k);
			cfg_report_key(c, "\"%s\" needs \"verify\": true", *k);
			cfg_pop(c);
		}
		return;
	}
	/* A prepped device is written over anyway: its last pass writes
	 * generation 0, so every read can be checked from the start. */
	if (w->prep)
		v->fill = true;
	check_block_sizes(c, obj, w);
	check_act_sizes(c, w);
}

void verify_config_print(const struct verify_config *v, FILE *out)
{
	if (!v->on)
		return;
	fprintf(out, "     \"verify\": {\"fill\": %s, \"pre_read\": %s, \"fua\": %s, "
		     "\"flush_interval\": \"%gs\", \"verify_on_resume\": \"%s\"},\n",
		v->fill ? "true" : "false", v->pre_read ? "true" : "false",
		v->fua ? "true" : "false", (double)v->flush_interval_ns / 1e9,
		verify_resume_name(v->on_resume));
}
