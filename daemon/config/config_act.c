// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACT's models: the parameters of act_storage and act_index, their defaults
 * and the rates ACT's README derives from them.
 */
#include "config_act.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"

/* ACT's 1x load: per device, 2000 reads/s and 1000 writes/s. */
#define ACT_1X_READS 2000.0
#define ACT_1X_WRITES 1000.0
/* Aerospike stores records in 16-byte units. */
#define ACT_RBLOCK 16u

static const char *const act_storage_keys[] = {
	"model", "devices", "load", "read_reqs_per_sec", "write_reqs_per_sec", "record_bytes",
	"record_bytes_range_max", "large_block_op_kbytes", "replication_factor", "update_pct",
	"defrag_lwm_pct", "service_threads", "prep",
	/* config_verify_keys */
	"verify", "fill", "pre_read", "flush_interval", "fua", "verify_on_resume", NULL,
};

static const char *const act_index_keys[] = {
	"model", "devices", "load", "read_reqs_per_sec", "write_reqs_per_sec",
	"replication_factor", "defrag_lwm_pct", "service_threads", "cache_threads", "prep",
	/* config_verify_keys */
	"verify", "fill", "pre_read", "flush_interval", "fua", "verify_on_resume", NULL,
};

static uint32_t round_up(uint32_t v, uint32_t unit)
{
	return (v + unit - 1) / unit * unit;
}

void act_defaults(struct act_config *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	*a = (struct act_config){
		.record_bytes = 1536,
		.large_block_op_kbytes = 128,
		.replication_factor = 1,
		.update_pct = 0,
		.defrag_lwm_pct = 50,
		/* ACT: 5 service threads per CPU. */
		.service_threads = (unsigned)(5 * (cpus > 0 ? cpus : 1)),
		.cache_threads = 8,
	};
}

void act_derive(struct act_config *a, enum device_model model, size_t n_devices)
{
	double devices = n_devices ? (double)n_devices : 1;
	double rf = a->replication_factor;
	/* Defragmenting blocks left lwm% full rewrites each byte
	 * 100 / (100 - lwm) times. */
	double amplification = 100.0 / (100.0 - a->defrag_lwm_pct);

	if (a->load > 0) {
		a->read_reqs_per_sec = ACT_1X_READS * a->load * devices;
		a->write_reqs_per_sec = ACT_1X_WRITES * a->load * devices;
	}
	double writes = rf * a->write_reqs_per_sec;

	if (model == MODEL_ACT_INDEX) {
		/* One 4 KiB read per client read and per (replica) write on
		 * the service threads; the cache threads do as many reads as
		 * writes, both amplified by defragmentation. */
		a->read_rate = (a->read_reqs_per_sec + writes) / devices;
		a->cache_rate = writes * amplification / devices;
		a->large_block_rate = 0;
		return;
	}
	a->record_stored_bytes = round_up(a->record_bytes, ACT_RBLOCK);
	a->record_stored_bytes_max = a->record_bytes_range_max
					     ? round_up(a->record_bytes_range_max, ACT_RBLOCK)
					     : a->record_stored_bytes;
	/*
	 * Sizes are spread linearly over the range: the mean is the middle.
	 * ACT (derive_configuration in act_storage.c) counts whole records per
	 * large block, in integer arithmetic: a 128 KiB block holds 85
	 * 1536-byte records, not 85.33, and a block holds one record of more
	 * than half its size.  The large-block rate is the (replica) write
	 * rate divided by that count, so soakd's numbers are ACT's: 0.4% above
	 * the exact quotient at 1536 bytes, up to 2x for records over half a
	 * block.  (The README's worked example divides exactly; ACT itself
	 * does not, and ACT is what results are compared with.)
	 */
	uint32_t mean_stored = (a->record_stored_bytes + a->record_stored_bytes_max) / 2;
	uint32_t per_block = a->large_block_op_kbytes * 1024u / mean_stored;
	if (per_block == 0)
		per_block = 1;
	a->records_per_block = per_block;
	/* Updates read the record before writing it (replica writes are
	 * replaces, so replication does not add reads). */
	a->read_rate = (a->read_reqs_per_sec + a->write_reqs_per_sec * a->update_pct / 100.0) /
		       devices;
	/* Large-block reads match large-block writes: every block written is
	 * read back by defragmentation, amplified as above. */
	a->large_block_rate = writes / per_block * amplification / devices;
	a->cache_rate = 0;
}

static void get_reqs(struct cfg_ctx *c, json_t *obj, const char *key, double *ret)
{
	cfg_get_number(c, obj, key, 0, 1e9, ret);
}

void act_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	struct act_config *a = &w->act;
	uint64_t u;
	const char *s;

	act_defaults(a);
	cfg_check_keys2(c, obj, w->model == MODEL_ACT_INDEX ? "an act-index workload"
							   : "an act-storage workload",
			config_common_workload_keys,
			w->model == MODEL_ACT_INDEX ? act_index_keys : act_storage_keys);

	if (cfg_get_string(c, obj, "load", &s)) {
		const char *why = NULL;
		cfg_push_key(c, "load");
		if (parse_multiple(s, &a->load, &why) < 0)
			cfg_report(c, "bad load \"%s\": %s (write it as \"30x\")", s, why);
		cfg_pop(c);
	} else if (json_is_number(json_object_get(obj, "load"))) {
		cfg_get_number(c, obj, "load", 0.001, 1e6, &a->load);
	}
	bool given = json_object_get(obj, "read_reqs_per_sec") ||
		     json_object_get(obj, "write_reqs_per_sec");
	if (given && json_object_get(obj, "load")) {
		cfg_push_key(c, "load");
		cfg_report(c, "give either \"load\" or read_reqs_per_sec/write_reqs_per_sec, not both");
		cfg_pop(c);
	}
	if (!given && !json_object_get(obj, "load"))
		a->load = 1; /* ACT's example configs are the 1x load */
	get_reqs(c, obj, "read_reqs_per_sec", &a->read_reqs_per_sec);
	get_reqs(c, obj, "write_reqs_per_sec", &a->write_reqs_per_sec);

	u = a->replication_factor;
	cfg_get_uint(c, obj, "replication_factor", 1, 16, &u);
	a->replication_factor = (unsigned)u;
	u = a->defrag_lwm_pct;
	cfg_get_uint(c, obj, "defrag_lwm_pct", 0, 99, &u);
	a->defrag_lwm_pct = (unsigned)u;
	u = a->service_threads;
	cfg_get_uint(c, obj, "service_threads", 1, CONFIG_MAX_QUEUE_DEPTH, &u);
	a->service_threads = (unsigned)u;

	if (w->model == MODEL_ACT_INDEX) {
		u = a->cache_threads;
		cfg_get_uint(c, obj, "cache_threads", 1, CONFIG_MAX_QUEUE_DEPTH, &u);
		a->cache_threads = (unsigned)u;
	} else {
		u = a->record_bytes;
		cfg_get_uint(c, obj, "record_bytes", 1, 8u << 20, &u);
		a->record_bytes = (uint32_t)u;
		u = a->record_bytes_range_max;
		cfg_get_uint(c, obj, "record_bytes_range_max", 0, 8u << 20, &u);
		a->record_bytes_range_max = (uint32_t)u;
		u = a->large_block_op_kbytes;
		cfg_get_uint(c, obj, "large_block_op_kbytes", 1, 8192, &u);
		a->large_block_op_kbytes = (uint32_t)u;
		u = a->update_pct;
		cfg_get_uint(c, obj, "update_pct", 0, 100, &u);
		a->update_pct = (unsigned)u;

		uint32_t lb = a->large_block_op_kbytes * 1024;
		if (a->record_bytes > lb) {
			cfg_push_key(c, "record_bytes");
			cfg_report(c, "record_bytes %u is larger than a large block (%u KiB)",
				   a->record_bytes, a->large_block_op_kbytes);
			cfg_pop(c);
		}
		if (a->record_bytes_range_max &&
		    (a->record_bytes_range_max <= a->record_bytes || a->record_bytes_range_max > lb)) {
			cfg_push_key(c, "record_bytes_range_max");
			cfg_report(c, "record_bytes_range_max must be above record_bytes (%u) and at "
				      "most a large block (%u bytes)", a->record_bytes, lb);
			cfg_pop(c);
		}
	}
	cfg_get_bool(c, obj, "prep", &w->prep);
}

void act_config_print(const struct workload_config *w, FILE *out)
{
	const struct act_config *a = &w->act;

	fprintf(out, "     \"model\": \"%s\", \"devices\": [", device_model_name(w->model));
	config_print_targets(w, out);
	fprintf(out, "],\n");
	if (a->load > 0)
		fprintf(out, "     \"load\": \"%gx\", ", a->load);
	else
		fprintf(out, "     ");
	fprintf(out, "\"read_reqs_per_sec\": %g, \"write_reqs_per_sec\": %g, "
		     "\"replication_factor\": %u, \"defrag_lwm_pct\": %u, \"service_threads\": %u, "
		     "\"prep\": %s,\n",
		a->read_reqs_per_sec, a->write_reqs_per_sec, a->replication_factor,
		a->defrag_lwm_pct, a->service_threads, w->prep ? "true" : "false");
	if (w->model == MODEL_ACT_INDEX) {
		fprintf(out, "     \"cache_threads\": %u,\n", a->cache_threads);
		fprintf(out, "     \"derived_per_device\": {\"read\": %.3f, \"cache_read\": %.3f, "
			     "\"cache_write\": %.3f},\n", a->read_rate, a->cache_rate, a->cache_rate);
	} else {
		fprintf(out, "     \"record_bytes\": %u, \"record_bytes_range_max\": %u, "
			     "\"large_block_op_kbytes\": %u, \"update_pct\": %u,\n",
			a->record_bytes, a->record_bytes_range_max, a->large_block_op_kbytes,
			a->update_pct);
		fprintf(out, "     \"derived_per_device\": {\"record_stored_bytes\": [%u, %u], "
			     "\"records_per_large_block\": %u, "
			     "\"read\": %.3f, \"large_block_read\": %.3f, \"large_block_write\": %.3f},\n",
			a->record_stored_bytes, a->record_stored_bytes_max, a->records_per_block, a->read_rate,
			a->large_block_rate, a->large_block_rate);
	}
}
