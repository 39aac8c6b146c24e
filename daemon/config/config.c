// SPDX-License-Identifier: GPL-2.0-only
/*
 * The configuration file: one JSON object, {"run": {...}, "workloads": [...]}.
 *
 * Every problem is reported as FILE:LINE:COLUMN: message, and validation
 * goes on after the first problem so a user sees all of them at once.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/regfile.h"
#include "config_act.h"
#include "config_certify.h"
#include "config_search.h"
#include "config_targets.h"
#include "config_export.h"
#include "config_json.h"
#include "config_limits.h"
#include "config_drift.h"
#include "config_trace.h"
#include "config_verify.h"
#include "obj_config.h"
#include "rfc3339.h"

/* sizeof(struct sockaddr_un.sun_path) */
#define SOCKET_PATH_MAX 108
#define DEFAULT_INTERVAL_NS UINT64_C(1000000000)
#define DEFAULT_MAX_LAG_NS (UINT64_C(10) * 1000000000) /* ACT's max-lag-sec */

static void parse_block_sizes(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	json_t *v = json_object_get(obj, "block_size");
	uint64_t bytes;

	if (!v)
		return;
	cfg_push_key(c, "block_size");
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		if (json_array_size(v) == 0 || json_array_size(v) > CONFIG_MAX_BLOCK_SIZES)
			cfg_report(c, "\"block_size\" list must hold 1 to %d entries",
			       CONFIG_MAX_BLOCK_SIZES);
		/* Always from 0, past the default: a list too long is read up
		 * to the limit (for its errors), never beyond block_sizes[]. */
		w->n_block_sizes = 0;
		json_array_foreach(v, i, e) {
			if (i >= CONFIG_MAX_BLOCK_SIZES)
				break;
			cfg_push_index(c, i);
			if (!json_is_object(e)) {
				cfg_report(c, "a block size entry must be {\"size\": ..., \"weight\": ...}");
			} else {
				static const char *const keys[] = { "size", "weight", NULL };
				uint64_t weight = 1;
				cfg_check_keys(c, e, "a block size entry", keys);
				if (!json_object_get(e, "size"))
					cfg_report(c, "a block size entry needs \"size\"");
				cfg_get_uint(c, e, "weight", 1, 1000000, &weight);
				if (cfg_get_size(c, e, "size", &bytes)) {
					w->block_sizes[w->n_block_sizes].bytes = (uint32_t)bytes;
					w->block_sizes[w->n_block_sizes].weight = (uint32_t)weight;
					w->n_block_sizes++;
					cfg_push_key(c, "size");
					if (bytes == 0 || bytes % 512 || bytes > (64u << 20))
						cfg_report(c, "block size %" PRIu64 " must be a multiple of 512 bytes up to 64MiB", bytes);
					cfg_pop(c);
				}
			}
			cfg_pop(c);
		}
	} else if (cfg_parse_size_value(c, v, "\"block_size\"", &bytes)) {
		if (bytes == 0 || bytes % 512 || bytes > (64u << 20))
			cfg_report(c, "block size %" PRIu64 " must be a multiple of 512 bytes up to 64MiB",
			       bytes);
		w->block_sizes[0] = (struct block_size_weight){ .bytes = (uint32_t)bytes, .weight = 1 };
		w->n_block_sizes = 1;
	}
	cfg_pop(c);
}

static void parse_schedule(struct cfg_ctx *c, json_t *obj, struct workload_config *w,
			   uint64_t run_duration_ns)
{
	json_t *arr = json_object_get(obj, "schedule");

	if (!arr) {
		w->steps[0] = (struct sched_step){ .scale = 1,
			.duration_ns = run_duration_ns ? run_duration_ns : CONFIG_FOREVER_NS };
		w->n_steps = 1;
		return;
	}
	cfg_push_key(c, "schedule");
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > SCHED_MAX_STEPS) {
		cfg_report(c, "\"schedule\" must be a list of 1 to %d steps", SCHED_MAX_STEPS);
		cfg_pop(c);
		return;
	}
	size_t i;
	json_t *step;
	json_array_foreach(arr, i, step) {
		static const char *const keys[] = { "scale", "for", "ramp", NULL };
		struct sched_step *s = &w->steps[i];

		cfg_push_index(c, i);
		*s = (struct sched_step){ .scale = 1 };
		if (!json_is_object(step)) {
			cfg_report(c, "a schedule step must be {\"scale\": N, \"for\": DURATION}");
			cfg_pop(c);
			continue;
		}
		cfg_check_keys(c, step, "a schedule step", keys);
		cfg_get_number(c, step, "scale", 0, 1e6, &s->scale);
		cfg_get_bool(c, step, "ramp", &s->ramp);
		if (!json_object_get(step, "for"))
			cfg_report(c, "a schedule step needs \"for\": how long it lasts");
		else if (cfg_get_duration(c, step, "for", &s->duration_ns) && s->duration_ns == 0) {
			cfg_push_key(c, "for");
			cfg_report(c, "a schedule step must last longer than 0");
			cfg_pop(c);
		}
		cfg_pop(c);
	}
	w->n_steps = json_array_size(arr);
	cfg_pop(c);
}

static void parse_device(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	static const char *const keys[] = {
		"model", "targets", "file_size", "read_pct", "block_size", "access", "queue_depth",
		"prep", /* config_verify_keys */ "verify", "fill", "pre_read", "flush_interval",
		"fua", "verify_on_resume", NULL,
	};
	const char *s;

	if (cfg_get_string(c, obj, "model", &s)) {
		cfg_push_key(c, "model");
		if (strcmp(s, "pattern") == 0)
			w->model = MODEL_PATTERN;
		else if (strcmp(s, "act-storage") == 0)
			w->model = MODEL_ACT_STORAGE;
		else if (strcmp(s, "act-index") == 0)
			w->model = MODEL_ACT_INDEX;
		else
			cfg_report(c, "unknown device model \"%s\" (expected \"pattern\", "
				      "\"act-storage\" or \"act-index\")", s);
		cfg_pop(c);
	}
	if (w->model != MODEL_PATTERN) {
		config_parse_targets(c, obj, "devices", w);
		act_config_parse(c, obj, w);
		act_derive(&w->act, w->model, w->n_targets);
		/* The workload's rate is the sum of its ops' rates, so the
		 * schedule scales them all and lag is judged per op. */
		double per_device = w->act.read_rate + 2 * w->act.large_block_rate +
				    2 * w->act.cache_rate;
		w->rate = per_device * (double)w->n_targets;
		if (w->rate <= 0) {
			cfg_push_key(c, "read_reqs_per_sec");
			cfg_report(c, "an ACT model needs a non-zero read or write rate");
			cfg_pop(c);
		}
		verify_config_parse(c, obj, w);
		return;
	}
	cfg_check_keys2(c, obj, "a device workload", config_common_workload_keys, keys);
	cfg_get_bool(c, obj, "prep", &w->prep);
	config_parse_targets(c, obj, "targets", w);
	cfg_get_size(c, obj, "file_size", &w->file_size);
	uint64_t u = w->read_pct;
	cfg_get_uint(c, obj, "read_pct", 0, 100, &u);
	w->read_pct = (unsigned)u;
	parse_block_sizes(c, obj, w);
	if (cfg_get_string(c, obj, "access", &s)) {
		cfg_push_key(c, "access");
		if (strcmp(s, "random") == 0)
			w->access = ACCESS_RANDOM;
		else if (strcmp(s, "sequential") == 0)
			w->access = ACCESS_SEQUENTIAL;
		else
			cfg_report(c, "\"access\" must be \"random\" or \"sequential\", not \"%s\"", s);
		cfg_pop(c);
	}
	u = w->queue_depth;
	cfg_get_uint(c, obj, "queue_depth", 1, CONFIG_MAX_QUEUE_DEPTH, &u);
	w->queue_depth = (unsigned)u;
	verify_config_parse(c, obj, w);
}

static void parse_workload(struct cfg_ctx *c, json_t *obj, struct workload_config *w,
			   const struct run_config *run)
{
	const char *s;

	*w = (struct workload_config){
		.type = WORKLOAD_DEVICE, .model = MODEL_PATTERN, .autostart = true,
		.read_pct = 100, .access = ACCESS_RANDOM, .queue_depth = 32,
		.block_sizes = { { .bytes = 4096, .weight = 1 } }, .n_block_sizes = 1,
		.arrival = ARRIVAL_UNIFORM, .max_lag_ns = DEFAULT_MAX_LAG_NS,
	};
	if (!json_is_object(obj)) {
		cfg_report(c, "a workload must be an object");
		return;
	}

	if (!json_object_get(obj, "name"))
		cfg_report(c, "a workload needs a \"name\"");
	else if (cfg_get_string(c, obj, "name", &s)) {
		const char *problem = cfg_name_problem(s);
		if (problem) {
			cfg_push_key(c, "name");
			cfg_report(c, "workload name \"%s\" %s (a name is 1-%d letters, digits, '-', "
				      "'_' or '.', not starting with '.')", s, problem,
				   CONFIG_MAX_NAME - 1);
			cfg_pop(c);
		} else {
			strcpy(w->name, s);
		}
	}
	bool typed = false;
	if (cfg_get_string(c, obj, "type", &s)) {
		cfg_push_key(c, "type");
		if (strcmp(s, "device") == 0) {
			w->type = WORKLOAD_DEVICE;
			typed = true;
		} else if (strcmp(s, "object") == 0) {
			w->type = WORKLOAD_OBJECT;
			typed = true;
		} else {
			cfg_report(c, "unknown workload type \"%s\" (expected \"device\" or \"object\")", s);
		}
		cfg_pop(c);
	} else if (!json_object_get(obj, "type")) {
		cfg_report(c, "a workload needs a \"type\" (\"device\" or \"object\")");
	}
	cfg_get_bool(c, obj, "autostart", &w->autostart);

	double rate = 0;
	cfg_get_number(c, obj, "rate", 0, CONFIG_MAX_RATE, &rate);
	w->rate = rate;
	if (cfg_get_string(c, obj, "arrival", &s)) {
		cfg_push_key(c, "arrival");
		if (strcmp(s, "uniform") == 0)
			w->arrival = ARRIVAL_UNIFORM;
		else if (strcmp(s, "poisson") == 0)
			w->arrival = ARRIVAL_POISSON;
		else
			cfg_report(c, "\"arrival\" must be \"uniform\" or \"poisson\", not \"%s\"", s);
		cfg_pop(c);
	}
	if (w->rate == 0 && json_object_get(obj, "arrival")) {
		cfg_push_key(c, "arrival");
		cfg_report(c, "\"arrival\" needs a \"rate\"");
		cfg_pop(c);
	}
	cfg_get_duration(c, obj, "max_lag", &w->max_lag_ns);
	cfg_get_duration(c, obj, "start", &w->start_offset_ns);
	cfg_get_uint(c, obj, "seed", 0, UINT64_MAX >> 1, &w->seed);
	w->drift = run->drift;
	if (json_object_get(obj, "drift"))
		drift_config_parse(c, json_object_get(obj, "drift"), run, &w->drift);
	parse_schedule(c, obj, w, run->duration_ns);

	if (!typed)
		return;
	if (w->type == WORKLOAD_DEVICE)
		parse_device(c, obj, w);
	else
		obj_config_parse(c, obj, w);

	if (w->rate == 0) {
		for (size_t i = 0; i < w->n_steps; i++)
			if (w->steps[i].scale != 1 || w->steps[i].ramp) {
				cfg_push_key(c, "schedule");
				cfg_push_index(c, i);
				cfg_report(c, "scaling a closed-loop workload needs a \"rate\" to scale");
				cfg_pop(c);
				cfg_pop(c);
				break;
			}
	}
}

static void parse_ctl(struct cfg_ctx *c, json_t *v, struct ctl_config *ctl)
{
	static const char *const keys[] = { "read_only_for_all", NULL };

	cfg_push_key(c, "ctl");
	if (!json_is_object(v))
		cfg_report(c, "\"ctl\" must be {\"read_only_for_all\": true|false}");
	else {
		cfg_check_keys(c, v, "\"ctl\"", keys);
		cfg_get_bool(c, v, "read_only_for_all", &ctl->read_only_for_all);
	}
	cfg_pop(c);
}

static void parse_run(struct cfg_ctx *c, json_t *obj, struct run_config *run)
{
	static const char *const keys[] = { "name", "duration", "interval", "slice", "on_finish",
					    "socket", "trace", "exports", "start_at", "ctl", "certify",
					    "search", "drift", NULL };
	const char *s;

	cfg_push_key(c, "run");
	if (!json_is_object(obj)) {
		cfg_report(c, "\"run\" must be an object");
		cfg_pop(c);
		return;
	}
	cfg_check_keys(c, obj, "\"run\"", keys);
	if (cfg_get_string(c, obj, "name", &s)) {
		cfg_push_key(c, "name");
		const char *problem = cfg_name_problem(s);
		if (problem)
			cfg_report(c, "run name \"%s\" %s (it names the run's directory: 1-%d "
				      "letters, digits, '-', '_' or '.', not starting with '.')",
				   s, problem, CONFIG_MAX_NAME - 1);
		else
			strcpy(run->name, s);
		cfg_pop(c);
	}
	/* Past 146 years a run is one until stopped, as the plan says
	 * ("forever"): the end time must stay a signed 64-bit count. */
	if (cfg_get_duration(c, obj, "duration", &run->duration_ns) &&
	    run->duration_ns >= CONFIG_FOREVER_NS)
		run->duration_ns = 0;
	if (cfg_get_duration(c, obj, "interval", &run->interval_ns) &&
	    (run->interval_ns < 1000000 || run->interval_ns > UINT64_C(3600) * 1000000000)) {
		cfg_push_key(c, "interval");
		cfg_report(c, "\"interval\" must be between 1ms and 1h");
		cfg_pop(c);
		/* The slice checks below divide by it. */
		run->interval_ns = DEFAULT_INTERVAL_NS;
	}
	if (cfg_get_duration(c, obj, "slice", &run->slice_ns) &&
	    (run->slice_ns < run->interval_ns || run->slice_ns % run->interval_ns)) {
		cfg_push_key(c, "slice");
		cfg_report(c, "\"slice\" must be a whole number of intervals");
		cfg_pop(c);
	}
	if (!json_object_get(obj, "slice") && run->slice_ns % run->interval_ns)
		run->slice_ns += run->interval_ns - run->slice_ns % run->interval_ns;
	if (cfg_get_string(c, obj, "on_finish", &s)) {
		cfg_push_key(c, "on_finish");
		if (strcmp(s, "exit") == 0)
			run->exit_on_finish = true;
		else if (strcmp(s, "idle") == 0)
			run->exit_on_finish = false;
		else
			cfg_report(c, "\"on_finish\" must be \"exit\" or \"idle\", not \"%s\"", s);
		cfg_pop(c);
	}
	if (cfg_get_string(c, obj, "socket", &s)) {
		if (!*s || strlen(s) >= SOCKET_PATH_MAX) {
			cfg_push_key(c, "socket");
			cfg_report(c, "\"socket\" must be a path of 1 to %d bytes (the limit of a "
				      "Unix socket's address)", SOCKET_PATH_MAX - 1);
			cfg_pop(c);
		} else {
			run->socket_path = strdup(s);
		}
	}
	if (json_object_get(obj, "trace"))
		trace_config_parse(c, json_object_get(obj, "trace"), &run->trace);
	if (json_object_get(obj, "exports"))
		export_config_parse(c, json_object_get(obj, "exports"), &run->exports);
	if (json_object_get(obj, "ctl"))
		parse_ctl(c, json_object_get(obj, "ctl"), &run->ctl);
	/* After "interval": a window is a whole number of them. */
	if (json_object_get(obj, "drift"))
		drift_config_parse(c, json_object_get(obj, "drift"), run, &run->drift);
	if (cfg_get_string(c, obj, "start_at", &s)) {
		const char *why = "";
		cfg_push_key(c, "start_at");
		if (rfc3339_parse(s, &run->start_at_ns, &why) < 0)
			cfg_report(c, "\"start_at\" must be an RFC 3339 time such as "
				      "\"2025-06-01T12:00:00Z\": %s", why);
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* Whether two workload names are one StatsD name (export_statsd_name). */
static bool same_statsd_name(const char *a, const char *b)
{
	char na[CONFIG_MAX_NAME], nb[CONFIG_MAX_NAME];

	export_statsd_name(a, na, sizeof(na));
	export_statsd_name(b, nb, sizeof(nb));
	return strcmp(na, nb) == 0;
}

static int load(struct cfg_ctx *c, struct run_config **ret)
{
	json_error_t jerr;
	json_t *root = json_loadb(c->text, c->len, JSON_REJECT_DUPLICATES, &jerr);
	struct run_config *run;

	if (!root) {
		fprintf(c->errout, "%s:%d:%d: ", c->name, jerr.line, jerr.column);
		cfg_print_clean(c->errout, jerr.text);
		fputc('\n', c->errout);
		return -EINVAL;
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		json_decref(root);
		return -ENOMEM;
	}
	strcpy(run->name, "soak");
	run->interval_ns = DEFAULT_INTERVAL_NS;
	run->slice_ns = UINT64_C(3600) * 1000000000;
	run->exit_on_finish = true;
	trace_config_defaults(&run->trace);
	run->ctl.read_only_for_all = true;
	run->path = cfg_absolute_path(c->name);

	if (!json_is_object(root)) {
		cfg_report(c, "the configuration must be a JSON object with \"run\" and \"workloads\"");
		goto out;
	}
	static const char *const keys[] = { "run", "workloads", NULL };
	cfg_check_keys(c, root, "the configuration", keys);
	json_t *r = json_object_get(root, "run");
	if (r)
		parse_run(c, r, run);

	json_t *arr = json_object_get(root, "workloads");
	cfg_push_key(c, "workloads");
	if (!arr) {
		cfg_report(c, "the configuration needs \"workloads\": a list of workloads");
	} else if (!json_is_array(arr) || json_array_size(arr) == 0) {
		cfg_report(c, "\"workloads\" must be a non-empty list");
	} else if (json_array_size(arr) > CONFIG_MAX_WORKLOADS) {
		cfg_report(c, "\"workloads\" lists %zu workloads, at most %d are allowed",
		       json_array_size(arr), CONFIG_MAX_WORKLOADS);
	} else {
		run->n_workloads = json_array_size(arr);
		run->workloads = calloc(run->n_workloads, sizeof(*run->workloads));
		if (!run->workloads) {
			run->n_workloads = 0;
			c->errors++;
			fprintf(c->errout, "%s: out of memory\n", c->name);
		}
		for (size_t i = 0; i < run->n_workloads; i++) {
			cfg_push_index(c, i);
			unsigned errors_before = c->errors;
			parse_workload(c, json_array_get(arr, i), &run->workloads[i], run);
			if (c->errors == errors_before)
				config_check_workload_limits(c, json_array_get(arr, i),
							     &run->workloads[i], run);
			for (size_t j = 0; j < i; j++)
				if (run->workloads[i].name[0] &&
				    strcmp(run->workloads[i].name, run->workloads[j].name) == 0) {
					cfg_push_key(c, "name");
					cfg_report(c, "workload name \"%s\" is used twice",
					       run->workloads[i].name);
					cfg_pop(c);
				} else if (run->workloads[i].name[0] && run->exports.statsd_address &&
					   same_statsd_name(run->workloads[i].name,
							    run->workloads[j].name)) {
					char name[CONFIG_MAX_NAME];
					export_statsd_name(run->workloads[i].name, name, sizeof(name));
					cfg_push_key(c, "name");
					cfg_report(c, "workload names \"%s\" and \"%s\" are one StatsD "
						   "name, \"%s\" (StatsD names are lower case, '.' "
						   "becomes '_'): their metrics would be added up as "
						   "one workload's; rename one",
						   run->workloads[j].name, run->workloads[i].name, name);
					cfg_pop(c);
				}
			cfg_pop(c);
		}
	}
	cfg_pop(c);
	/* After the workloads: its steps become their schedules. */
	if (run->n_workloads && json_is_object(r) && json_object_get(r, "certify"))
		certify_config_parse(c, json_object_get(r, "certify"), arr, run);
	if (run->n_workloads && json_is_object(r) && json_object_get(r, "search"))
		search_config_parse(c, json_object_get(r, "search"), arr, run);
	if (!c->errors && run->n_workloads)
		config_check_run_limits(c, run);
out:
	json_decref(root);
	if (c->errors > CFG_MAX_REPORTED)
		fprintf(c->errout, "%s: %u more errors not shown (the first %d are above)\n",
			c->name, c->errors - CFG_MAX_REPORTED, CFG_MAX_REPORTED);
	if (c->errors) {
		config_free(run);
		return -EINVAL;
	}
	*ret = run;
	return 0;
}

int config_load_string(const char *text, const char *name, FILE *errout, struct run_config **ret)
{
	struct cfg_ctx c = { .name = name, .text = text, .len = strlen(text), .errout = errout };
	return load(&c, ret);
}

int config_load(const char *path, FILE *errout, struct run_config **ret)
{
	char err[PATH_MAX + 128];
	char *text;
	size_t n;
	int r;

	int fd = regfile_open(path, "configuration", err, sizeof(err));
	if (fd < 0) {
		fprintf(errout, "%s:1:1: %s\n", path, err);
		return fd;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		r = -errno;
		close(fd);
		fprintf(errout, "%s:1:1: cannot read configuration: %s\n", path, strerror(-r));
		return r;
	}
	text = malloc(CONFIG_MAX_BYTES + 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(text, 1, CONFIG_MAX_BYTES + 1, f);
	if (ferror(f)) {
		r = -errno;
		fprintf(errout, "%s:1:1: cannot read configuration: %s\n", path, strerror(errno));
	} else if (n > CONFIG_MAX_BYTES) {
		r = -EFBIG;
		fprintf(errout, "%s:1:1: configuration is larger than %u bytes\n", path,
			CONFIG_MAX_BYTES);
	} else if (memchr(text, '\0', n)) {
		r = -EINVAL;
		fprintf(errout, "%s:1:1: configuration contains a NUL byte\n", path);
	} else {
		struct cfg_ctx c = { .name = path, .text = text, .len = n, .errout = errout };
		r = load(&c, ret);
	}
	fclose(f);
	free(text);
	return r;
}

void config_free(struct run_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_workloads; i++) {
		for (size_t t = 0; t < c->workloads[i].n_targets; t++)
			free(c->workloads[i].targets[t].path);
		obj_config_free(c->workloads[i].object);
	}
	free(c->workloads);
	free(c->socket_path);
	trace_config_free(&c->trace);
	export_config_free(&c->exports);
	free(c->path);
	free(c);
}
