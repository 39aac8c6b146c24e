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

#include "jsonpos.h"
#include "parse.h"

#define MAX_DEPTH 8
#define FOREVER_NS (UINT64_C(1) << 62)
#define DEFAULT_INTERVAL_NS UINT64_C(1000000000)
#define DEFAULT_MAX_LAG_NS (UINT64_C(10) * 1000000000) /* ACT's max-lag-sec */

struct ctx {
	const char *name;
	const char *text;
	size_t len;
	FILE *errout;
	unsigned errors;
	struct jsonpos_step path[MAX_DEPTH];
	size_t depth;
};

static void push_key(struct ctx *c, const char *key)
{
	c->path[c->depth++] = (struct jsonpos_step){ .key = key };
}

static void push_index(struct ctx *c, size_t index)
{
	c->path[c->depth++] = (struct jsonpos_step){ .index = index };
}

static void pop(struct ctx *c)
{
	c->depth--;
}

static void vreport(struct ctx *c, int at_key, const char *fmt, va_list ap)
{
	int line = 1, column = 1;

	/* A path that is not in the text (a missing key) points at its parent. */
	for (size_t d = c->depth + 1; d-- > 0;)
		if (jsonpos_locate(c->text, c->len, c->path, d, at_key && d == c->depth,
				   &line, &column) == 0)
			break;
	fprintf(c->errout, "%s:%d:%d: ", c->name, line, column);
	vfprintf(c->errout, fmt, ap);
	fputc('\n', c->errout);
	c->errors++;
}

__attribute__((format(printf, 2, 3)))
static void report(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, 0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static void report_key(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, 1, fmt, ap);
	va_end(ap);
}

/* Reports keys of obj not in the NULL-terminated list allowed. */
static void check_keys(struct ctx *c, json_t *obj, const char *what, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		bool known = false;
		for (const char *const *a = allowed; *a; a++)
			known = known || strcmp(*a, key) == 0;
		if (!known) {
			push_key(c, key);
			report_key(c, "unknown key \"%s\" in %s", key, what);
			pop(c);
		}
	}
}

/* Each get_* reads obj[key] when present, reports problems, and leaves
 * *ret untouched when the key is absent or wrong. */

static bool get_string(struct ctx *c, json_t *obj, const char *key, const char **ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	push_key(c, key);
	bool ok = json_is_string(v);
	if (!ok)
		report(c, "\"%s\" must be a string", key);
	else
		*ret = json_string_value(v);
	pop(c);
	return ok;
}

static void get_bool(struct ctx *c, json_t *obj, const char *key, bool *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	push_key(c, key);
	if (!json_is_boolean(v))
		report(c, "\"%s\" must be true or false", key);
	else
		*ret = json_is_true(v);
	pop(c);
}

static void get_number(struct ctx *c, json_t *obj, const char *key, double min, double max,
		       double *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	push_key(c, key);
	if (!json_is_number(v)) {
		report(c, "\"%s\" must be a number", key);
	} else {
		double d = json_number_value(v);
		if (!(d >= min && d <= max))
			report(c, "\"%s\" is %g, must be between %g and %g", key, d, min, max);
		else
			*ret = d;
	}
	pop(c);
}

static void get_uint(struct ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		     uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	push_key(c, key);
	if (!json_is_integer(v)) {
		report(c, "\"%s\" must be a whole number", key);
	} else {
		json_int_t i = json_integer_value(v);
		if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
			report(c, "\"%s\" is %" JSON_INTEGER_FORMAT ", must be between %" PRIu64
				  " and %" PRIu64, key, i, min, max);
		else
			*ret = (uint64_t)i;
	}
	pop(c);
}

/* Durations are strings ("90s") or a number of seconds. */
static bool parse_duration_value(struct ctx *c, json_t *v, const char *what, uint64_t *ret)
{
	const char *why = NULL;
	uint64_t ns;

	if (json_is_string(v)) {
		if (parse_duration(json_string_value(v), &ns, &why) < 0) {
			report(c, "%s: bad duration \"%s\": %s", what, json_string_value(v), why);
			return false;
		}
	} else if (json_is_number(v)) {
		double s = json_number_value(v);
		if (!(s >= 0 && s < 1e9)) {
			report(c, "%s: duration %g s is out of range", what, s);
			return false;
		}
		ns = (uint64_t)llround(s * 1e9);
	} else {
		report(c, "%s must be a duration such as \"90s\" or \"1h30m\"", what);
		return false;
	}
	*ret = ns;
	return true;
}

static bool get_duration(struct ctx *c, json_t *obj, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	push_key(c, key);
	char what[80];
	snprintf(what, sizeof(what), "\"%s\"", key);
	bool ok = parse_duration_value(c, v, what, ret);
	pop(c);
	return ok;
}

/* Sizes are strings ("4KiB") or a number of bytes. */
static bool parse_size_value(struct ctx *c, json_t *v, const char *what, uint64_t *ret)
{
	const char *why = NULL;
	uint64_t bytes;

	if (json_is_string(v)) {
		if (parse_size(json_string_value(v), &bytes, &why) < 0) {
			report(c, "%s: bad size \"%s\": %s", what, json_string_value(v), why);
			return false;
		}
	} else if (json_is_integer(v) && json_integer_value(v) >= 0) {
		bytes = (uint64_t)json_integer_value(v);
	} else {
		report(c, "%s must be a size such as 4096 or \"4KiB\"", what);
		return false;
	}
	*ret = bytes;
	return true;
}

static bool get_size(struct ctx *c, json_t *obj, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	push_key(c, key);
	char what[80];
	snprintf(what, sizeof(what), "\"%s\"", key);
	bool ok = parse_size_value(c, v, what, ret);
	pop(c);
	return ok;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= CONFIG_MAX_NAME)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_.", *p)))
			return false;
	return true;
}

static char *absolute_path(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	char *abs = NULL;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		return NULL;
	return abs;
}

static void parse_target(struct ctx *c, json_t *v, struct target_config *t)
{
	const char *path = NULL;

	if (json_is_string(v)) {
		path = json_string_value(v);
	} else if (json_is_object(v)) {
		static const char *const keys[] = { "path", "destroy_data", NULL };
		check_keys(c, v, "a target", keys);
		if (!get_string(c, v, "path", &path) && !json_object_get(v, "path"))
			report(c, "a target needs \"path\"");
		get_bool(c, v, "destroy_data", &t->destroy_data);
	} else {
		report(c, "a target must be a path or {\"path\": ..., \"destroy_data\": ...}");
	}
	if (!path)
		return;
	if (!*path || strlen(path) >= PATH_MAX) {
		report(c, "target path must not be empty or longer than %d bytes", PATH_MAX - 1);
		return;
	}
	t->path = absolute_path(path);
	if (!t->path)
		report(c, "cannot resolve target path \"%s\": %s", path, strerror(errno));
}

static void parse_targets(struct ctx *c, json_t *obj, struct workload_config *w)
{
	json_t *arr = json_object_get(obj, "targets");
	if (!arr) {
		report(c, "workload \"%s\" needs \"targets\": a list of files or block devices",
		       w->name);
		return;
	}
	push_key(c, "targets");
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		report(c, "\"targets\" must be a non-empty list");
	} else if (json_array_size(arr) > CONFIG_MAX_TARGETS) {
		report(c, "\"targets\" lists %zu entries, at most %d are allowed",
		       json_array_size(arr), CONFIG_MAX_TARGETS);
	} else {
		size_t i;
		json_t *v;
		json_array_foreach(arr, i, v) {
			push_index(c, i);
			parse_target(c, v, &w->targets[i]);
			for (size_t j = 0; j < i && w->targets[i].path; j++)
				if (w->targets[j].path &&
				    strcmp(w->targets[j].path, w->targets[i].path) == 0)
					report(c, "target \"%s\" is listed twice", w->targets[i].path);
			pop(c);
		}
		w->n_targets = json_array_size(arr);
	}
	pop(c);
}

static void parse_block_sizes(struct ctx *c, json_t *obj, struct workload_config *w)
{
	json_t *v = json_object_get(obj, "block_size");
	uint64_t bytes;

	if (!v)
		return;
	push_key(c, "block_size");
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		if (json_array_size(v) == 0 || json_array_size(v) > CONFIG_MAX_BLOCK_SIZES)
			report(c, "\"block_size\" list must hold 1 to %d entries",
			       CONFIG_MAX_BLOCK_SIZES);
		else
			w->n_block_sizes = 0;
		json_array_foreach(v, i, e) {
			if (i >= CONFIG_MAX_BLOCK_SIZES)
				break;
			push_index(c, i);
			if (!json_is_object(e)) {
				report(c, "a block size entry must be {\"size\": ..., \"weight\": ...}");
			} else {
				static const char *const keys[] = { "size", "weight", NULL };
				uint64_t weight = 1;
				check_keys(c, e, "a block size entry", keys);
				if (!json_object_get(e, "size"))
					report(c, "a block size entry needs \"size\"");
				get_uint(c, e, "weight", 1, 1000000, &weight);
				if (get_size(c, e, "size", &bytes)) {
					w->block_sizes[w->n_block_sizes].bytes = (uint32_t)bytes;
					w->block_sizes[w->n_block_sizes].weight = (uint32_t)weight;
					w->n_block_sizes++;
					push_key(c, "size");
					if (bytes == 0 || bytes % 512 || bytes > (64u << 20))
						report(c, "block size %" PRIu64 " must be a multiple of 512 bytes up to 64MiB", bytes);
					pop(c);
				}
			}
			pop(c);
		}
	} else if (parse_size_value(c, v, "\"block_size\"", &bytes)) {
		if (bytes == 0 || bytes % 512 || bytes > (64u << 20))
			report(c, "block size %" PRIu64 " must be a multiple of 512 bytes up to 64MiB",
			       bytes);
		w->block_sizes[0] = (struct block_size_weight){ .bytes = (uint32_t)bytes, .weight = 1 };
		w->n_block_sizes = 1;
	}
	pop(c);
}

static void parse_schedule(struct ctx *c, json_t *obj, struct workload_config *w,
			   uint64_t run_duration_ns)
{
	json_t *arr = json_object_get(obj, "schedule");

	if (!arr) {
		w->steps[0] = (struct sched_step){ .scale = 1,
			.duration_ns = run_duration_ns ? run_duration_ns : FOREVER_NS };
		w->n_steps = 1;
		return;
	}
	push_key(c, "schedule");
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > SCHED_MAX_STEPS) {
		report(c, "\"schedule\" must be a list of 1 to %d steps", SCHED_MAX_STEPS);
		pop(c);
		return;
	}
	size_t i;
	json_t *step;
	json_array_foreach(arr, i, step) {
		static const char *const keys[] = { "scale", "for", "ramp", NULL };
		struct sched_step *s = &w->steps[i];

		push_index(c, i);
		*s = (struct sched_step){ .scale = 1 };
		if (!json_is_object(step)) {
			report(c, "a schedule step must be {\"scale\": N, \"for\": DURATION}");
			pop(c);
			continue;
		}
		check_keys(c, step, "a schedule step", keys);
		get_number(c, step, "scale", 0, 1e6, &s->scale);
		get_bool(c, step, "ramp", &s->ramp);
		if (!json_object_get(step, "for"))
			report(c, "a schedule step needs \"for\": how long it lasts");
		else if (get_duration(c, step, "for", &s->duration_ns) && s->duration_ns == 0) {
			push_key(c, "for");
			report(c, "a schedule step must last longer than 0");
			pop(c);
		}
		if (w->rate == 0 && (s->scale != 1 || s->ramp)) {
			push_key(c, "scale");
			report(c, "scaling a closed-loop workload needs a \"rate\" to scale");
			pop(c);
		}
		pop(c);
	}
	w->n_steps = json_array_size(arr);
	pop(c);
}

static void parse_workload(struct ctx *c, json_t *obj, struct workload_config *w,
			   const struct run_config *run)
{
	static const char *const keys[] = {
		"name", "type", "model", "autostart", "targets", "file_size", "read_pct",
		"block_size", "access", "queue_depth", "rate", "arrival", "schedule",
		"start", "max_lag", "seed", NULL,
	};
	const char *s;

	*w = (struct workload_config){
		.type = WORKLOAD_DEVICE, .model = MODEL_PATTERN, .autostart = true,
		.read_pct = 100, .access = ACCESS_RANDOM, .queue_depth = 32,
		.block_sizes = { { .bytes = 4096, .weight = 1 } }, .n_block_sizes = 1,
		.arrival = ARRIVAL_UNIFORM, .max_lag_ns = DEFAULT_MAX_LAG_NS,
	};
	if (!json_is_object(obj)) {
		report(c, "a workload must be an object");
		return;
	}
	check_keys(c, obj, "a workload", keys);

	if (!json_object_get(obj, "name"))
		report(c, "a workload needs a \"name\"");
	else if (get_string(c, obj, "name", &s)) {
		if (!valid_name(s)) {
			push_key(c, "name");
			report(c, "workload name \"%s\" must be 1-%d letters, digits, '-', '_' or '.'",
			       s, CONFIG_MAX_NAME - 1);
			pop(c);
		} else {
			strcpy(w->name, s);
		}
	}
	if (get_string(c, obj, "type", &s)) {
		push_key(c, "type");
		if (strcmp(s, "device") == 0)
			w->type = WORKLOAD_DEVICE;
		else if (strcmp(s, "object") == 0)
			report(c, "workload type \"object\" is not supported by this build");
		else
			report(c, "unknown workload type \"%s\" (expected \"device\")", s);
		pop(c);
	} else if (!json_object_get(obj, "type")) {
		report(c, "a workload needs a \"type\" (\"device\")");
	}
	if (get_string(c, obj, "model", &s)) {
		push_key(c, "model");
		if (strcmp(s, "pattern") != 0)
			report(c, "unknown device model \"%s\" (expected \"pattern\")", s);
		pop(c);
	}
	get_bool(c, obj, "autostart", &w->autostart);

	double rate = 0;
	get_number(c, obj, "rate", 0, CONFIG_MAX_RATE, &rate);
	w->rate = rate;

	parse_targets(c, obj, w);
	get_size(c, obj, "file_size", &w->file_size);
	uint64_t u = w->read_pct;
	get_uint(c, obj, "read_pct", 0, 100, &u);
	w->read_pct = (unsigned)u;
	parse_block_sizes(c, obj, w);
	if (get_string(c, obj, "access", &s)) {
		push_key(c, "access");
		if (strcmp(s, "random") == 0)
			w->access = ACCESS_RANDOM;
		else if (strcmp(s, "sequential") == 0)
			w->access = ACCESS_SEQUENTIAL;
		else
			report(c, "\"access\" must be \"random\" or \"sequential\", not \"%s\"", s);
		pop(c);
	}
	u = w->queue_depth;
	get_uint(c, obj, "queue_depth", 1, CONFIG_MAX_QUEUE_DEPTH, &u);
	w->queue_depth = (unsigned)u;
	if (get_string(c, obj, "arrival", &s)) {
		push_key(c, "arrival");
		if (strcmp(s, "uniform") == 0)
			w->arrival = ARRIVAL_UNIFORM;
		else if (strcmp(s, "poisson") == 0)
			w->arrival = ARRIVAL_POISSON;
		else
			report(c, "\"arrival\" must be \"uniform\" or \"poisson\", not \"%s\"", s);
		pop(c);
	}
	if (w->rate == 0 && json_object_get(obj, "arrival")) {
		push_key(c, "arrival");
		report(c, "\"arrival\" needs a \"rate\"");
		pop(c);
	}
	get_duration(c, obj, "max_lag", &w->max_lag_ns);
	get_duration(c, obj, "start", &w->start_offset_ns);
	get_uint(c, obj, "seed", 0, UINT64_MAX >> 1, &w->seed);
	parse_schedule(c, obj, w, run->duration_ns);
}

static void parse_run(struct ctx *c, json_t *obj, struct run_config *run)
{
	static const char *const keys[] = { "name", "duration", "interval", "on_finish",
					    "socket", NULL };
	const char *s;

	push_key(c, "run");
	if (!json_is_object(obj)) {
		report(c, "\"run\" must be an object");
		pop(c);
		return;
	}
	check_keys(c, obj, "\"run\"", keys);
	if (get_string(c, obj, "name", &s)) {
		push_key(c, "name");
		if (!valid_name(s))
			report(c, "run name \"%s\" must be 1-%d letters, digits, '-', '_' or '.'",
			       s, CONFIG_MAX_NAME - 1);
		else
			strcpy(run->name, s);
		pop(c);
	}
	get_duration(c, obj, "duration", &run->duration_ns);
	if (get_duration(c, obj, "interval", &run->interval_ns) &&
	    (run->interval_ns < 10000000 || run->interval_ns > UINT64_C(3600) * 1000000000)) {
		push_key(c, "interval");
		report(c, "\"interval\" must be between 10ms and 1h");
		pop(c);
	}
	if (get_string(c, obj, "on_finish", &s)) {
		push_key(c, "on_finish");
		if (strcmp(s, "exit") == 0)
			run->exit_on_finish = true;
		else if (strcmp(s, "idle") == 0)
			run->exit_on_finish = false;
		else
			report(c, "\"on_finish\" must be \"exit\" or \"idle\", not \"%s\"", s);
		pop(c);
	}
	if (get_string(c, obj, "socket", &s))
		run->socket_path = strdup(s);
	pop(c);
}

static int load(struct ctx *c, struct run_config **ret)
{
	json_error_t jerr;
	json_t *root = json_loadb(c->text, c->len, JSON_REJECT_DUPLICATES, &jerr);
	struct run_config *run;

	if (!root) {
		fprintf(c->errout, "%s:%d:%d: %s\n", c->name, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		json_decref(root);
		return -ENOMEM;
	}
	strcpy(run->name, "soak");
	run->interval_ns = DEFAULT_INTERVAL_NS;
	run->exit_on_finish = true;
	run->path = absolute_path(c->name);

	if (!json_is_object(root)) {
		report(c, "the configuration must be a JSON object with \"run\" and \"workloads\"");
		goto out;
	}
	static const char *const keys[] = { "run", "workloads", NULL };
	check_keys(c, root, "the configuration", keys);
	json_t *r = json_object_get(root, "run");
	if (r)
		parse_run(c, r, run);

	json_t *arr = json_object_get(root, "workloads");
	push_key(c, "workloads");
	if (!arr) {
		report(c, "the configuration needs \"workloads\": a list of workloads");
	} else if (!json_is_array(arr) || json_array_size(arr) == 0) {
		report(c, "\"workloads\" must be a non-empty list");
	} else if (json_array_size(arr) > CONFIG_MAX_WORKLOADS) {
		report(c, "\"workloads\" lists %zu workloads, at most %d are allowed",
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
			push_index(c, i);
			parse_workload(c, json_array_get(arr, i), &run->workloads[i], run);
			for (size_t j = 0; j < i; j++)
				if (run->workloads[i].name[0] &&
				    strcmp(run->workloads[i].name, run->workloads[j].name) == 0) {
					push_key(c, "name");
					report(c, "workload name \"%s\" is used twice",
					       run->workloads[i].name);
					pop(c);
				}
			pop(c);
		}
	}
	pop(c);
out:
	json_decref(root);
	if (c->errors) {
		config_free(run);
		return -EINVAL;
	}
	*ret = run;
	return 0;
}

int config_load_string(const char *text, const char *name, FILE *errout, struct run_config **ret)
{
	struct ctx c = { .name = name, .text = text, .len = strlen(text), .errout = errout };
	return load(&c, ret);
}

int config_load(const char *path, FILE *errout, struct run_config **ret)
{
	FILE *f = fopen(path, "re");
	char *text;
	size_t n;
	int r;

	if (!f) {
		r = -errno;
		fprintf(errout, "%s:1:1: cannot open configuration: %s\n", path, strerror(errno));
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
		struct ctx c = { .name = path, .text = text, .len = n, .errout = errout };
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
	for (size_t i = 0; i < c->n_workloads; i++)
		for (size_t t = 0; t < c->workloads[i].n_targets; t++)
			free(c->workloads[i].targets[t].path);
	free(c->workloads);
	free(c->socket_path);
	free(c->path);
	free(c);
}

const char *workload_type_name(enum workload_type t)
{
	return t == WORKLOAD_OBJECT ? "object" : "device";
}

const char *access_name(enum access_pattern a)
{
	return a == ACCESS_SEQUENTIAL ? "sequential" : "random";
}

static void print_duration(FILE *out, const char *key, uint64_t ns, const char *sep)
{
	char buf[64];
	if (ns >= FOREVER_NS)
		snprintf(buf, sizeof(buf), "forever");
	else
		format_duration(ns, buf, sizeof(buf));
	fprintf(out, "\"%s\": \"%s\"%s", key, buf, sep);
}

void config_print_plan(const struct run_config *c, FILE *out)
{
	char buf[64];

	fprintf(out, "{\n  \"run\": {\"name\": \"%s\", ", c->name);
	print_duration(out, "duration", c->duration_ns ? c->duration_ns : FOREVER_NS, ", ");
	print_duration(out, "interval", c->interval_ns, ", ");
	fprintf(out, "\"on_finish\": \"%s\"},\n  \"workloads\": [\n",
		c->exit_on_finish ? "exit" : "idle");
	for (size_t i = 0; i < c->n_workloads; i++) {
		const struct workload_config *w = &c->workloads[i];
		fprintf(out, "    {\"name\": \"%s\", \"type\": \"%s\", \"model\": \"pattern\", "
			     "\"autostart\": %s,\n", w->name, workload_type_name(w->type),
			w->autostart ? "true" : "false");
		fprintf(out, "     \"targets\": [");
		for (size_t t = 0; t < w->n_targets; t++) {
			json_t *p = json_string(w->targets[t].path);
			char *q = json_dumps(p, JSON_ENCODE_ANY);
			fprintf(out, "%s{\"path\": %s, \"destroy_data\": %s}", t ? ", " : "",
				q ? q : "\"?\"", w->targets[t].destroy_data ? "true" : "false");
			free(q);
			json_decref(p);
		}
		format_size(w->file_size, buf, sizeof(buf));
		fprintf(out, "],\n     \"file_size\": \"%s\", \"read_pct\": %u, \"block_size\": [",
			w->file_size ? buf : "existing", w->read_pct);
		for (size_t b = 0; b < w->n_block_sizes; b++) {
			format_size(w->block_sizes[b].bytes, buf, sizeof(buf));
			fprintf(out, "%s{\"size\": \"%s\", \"weight\": %u}", b ? ", " : "", buf,
				w->block_sizes[b].weight);
		}
		fprintf(out, "], \"access\": \"%s\", \"queue_depth\": %u,\n", access_name(w->access),
			w->queue_depth);
		if (w->rate > 0)
			fprintf(out, "     \"rate\": %g, \"arrival\": \"%s\", ", w->rate,
				w->arrival == ARRIVAL_POISSON ? "poisson" : "uniform");
		else
			fprintf(out, "     \"rate\": \"closed-loop\", ");
		print_duration(out, "max_lag", w->max_lag_ns, ", ");
		fprintf(out, "\"seed\": %" PRIu64 ",\n     \"schedule\": [\n", w->seed);
		uint64_t at = w->start_offset_ns;
		for (size_t s = 0; s < w->n_steps; s++) {
			const struct sched_step *st = &w->steps[s];
			fprintf(out, "       {");
			print_duration(out, "at", at, ", ");
			print_duration(out, "for", st->duration_ns, ", ");
			fprintf(out, "\"scale\": %g, \"ramp\": %s", st->scale, st->ramp ? "true" : "false");
			if (w->rate > 0)
				fprintf(out, ", \"rate\": %g", w->rate * st->scale);
			fprintf(out, "}%s\n", s + 1 < w->n_steps ? "," : "");
			at = at + st->duration_ns >= FOREVER_NS ? FOREVER_NS : at + st->duration_ns;
		}
		fprintf(out, "     ]}%s\n", i + 1 < c->n_workloads ? "," : "");
	}
	fprintf(out, "  ]\n}\n");
}
