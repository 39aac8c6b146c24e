// SPDX-License-Identifier: GPL-2.0-only
#include "runmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runlog.h"
#include "runmodel_int.h"

#define NS 1e9

struct runmodel *runmodel_new(uint64_t slice_ns)
{
	struct runmodel *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->slice_ns = slice_ns ? slice_ns : UINT64_C(3600) * 1000000000;
	m->scratch = hist_new();
	if (!m->scratch) {
		free(m);
		return NULL;
	}
	return m;
}

void runmodel_free(struct runmodel *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct rm_workload *w = m->w[i];
		for (size_t j = 0; j < w->n_ops; j++) {
			struct rm_op *o = &w->ops[j];
			hist_delete(o->lat);
			for (size_t k = 0; k < o->n_slices; k++)
				free(o->slices[k].bytes);
			free(o->slices);
			hist_delete(o->open);
			struct rm_series *s[] = { o->s_p50, o->s_p99, o->s_p999, o->s_max,
						  o->s_rate, o->s_target, o->s_errors, o->s_missed };
			for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
				rm_series_free(s[k]);
		}
		for (size_t k = 0; k < w->n_kernel; k++)
			rm_series_free(w->kernel[k]);
		free(w->late);
		free(w);
	}
	for (size_t k = 0; k < m->n_host; k++)
		rm_series_free(m->host[k]);
	hist_delete(m->scratch);
	json_decref(m->certify);
	json_decref(m->search);
	free(m->restarts);
	free(m->gaps);
	free(m->events);
	free(m);
}

struct rm_workload *runmodel_workload(const struct runmodel *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->w[i]->name, name) == 0)
			return m->w[i];
	return NULL;
}

struct rm_op *runmodel_op(const struct rm_workload *w, const char *name)
{
	for (size_t i = 0; i < w->n_ops; i++)
		if (strcmp(w->ops[i].name, name) == 0)
			return (struct rm_op *)&w->ops[i];
	return NULL;
}

static struct rm_workload *workload_of(struct runmodel *m, const char *raw)
{
	char name[sizeof(((struct rm_workload *)0)->name)];
	runlog_clean_name(name, sizeof(name), raw);
	struct rm_workload *w = runmodel_workload(m, name);

	if (w || m->n >= RM_MAX_WORKLOADS)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->first_s = -1;
	m->w[m->n++] = w;
	return w;
}

static struct rm_op *op_of(struct rm_workload *w, const char *raw)
{
	char name[sizeof(((struct rm_op *)0)->name)];
	runlog_clean_name(name, sizeof(name), raw);
	struct rm_op *o = runmodel_op(w, name);

	if (o || w->n_ops >= RM_MAX_OPS)
		return o;
	o = &w->ops[w->n_ops];
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->lat = hist_new();
	o->s_p50 = rm_series_new("p50");
	o->s_p99 = rm_series_new("p99");
	o->s_p999 = rm_series_new("p999");
	o->s_max = rm_series_new("max");
	o->s_rate = rm_series_new("rate");
	o->s_target = rm_series_new("target");
	o->s_errors = rm_series_new("errors");
	o->s_missed = rm_series_new("missed");
	if (!o->lat || !o->s_p50 || !o->s_p99 || !o->s_p999 || !o->s_max || !o->s_rate ||
	    !o->s_target || !o->s_errors || !o->s_missed)
		return NULL;   /* freed with the model: n_ops counts it below */
	hist_init(o->lat);
	w->n_ops++;
	return o;
}

static uint64_t u64(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_integer(v) && json_integer_value(v) > 0)
		return (uint64_t)json_integer_value(v);
	if (json_is_real(v) && json_real_value(v) > 0)   /* clamped: a cast out of range is undefined */
		return json_real_value(v) < 1.8e19 ? (uint64_t)json_real_value(v) : UINT64_MAX;
	return 0;
}

static double num(json_t *obj, const char *key, double otherwise)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : otherwise;
}

/* As ops_num in rundump.c: a recorded number of ops or share, finite and
 * not negative, or 0. */
static double ops_num(json_t *obj, const char *key, double most)
{
	double v = num(obj, key, 0);

	return isfinite(v) && v > 0 ? (v < most ? v : most) : 0;
}

/* As sat_add in rundump.c: counts stop at what JSON prints as a count. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > (uint64_t)INT64_MAX - a ? (uint64_t)INT64_MAX : a + b;
}

static void add_verify(struct rm_op *o, json_t *verify)
{
	const char *key;
	json_t *v;

	json_object_foreach(verify, key, v) {
		if (!json_is_number(v))
			continue;
		size_t i = 0;
		while (i < o->n_verify && strcmp(o->verify[i].name, key) != 0)
			i++;
		if (i == o->n_verify) {
			if (o->n_verify >= sizeof(o->verify) / sizeof(o->verify[0]))
				continue;
			snprintf(o->verify[i].name, sizeof(o->verify[i].name), "%s", key);
			o->n_verify++;
		}
		o->verify[i].value += u64(verify, key);
	}
}

static int add_op(struct runmodel *m, struct rm_workload *w, const char *name, json_t *rec,
		  uint64_t start_ns, uint64_t end_ns, double target_total, double share)
{
	struct rm_op *o = op_of(w, name);
	double t0 = start_ns / NS, t1 = end_ns / NS, secs = t1 - t0;
	struct hist *h = hist_new();
	int r = 0;

	if (!o || !h) {
		hist_delete(h);
		return -ENOMEM;
	}
	const char *lat = json_string_value(json_object_get(rec, "latency"));
	if (lat && hist_from_base64(h, lat) < 0)
		hist_reset(h);
	uint64_t errors = u64(rec, "errors"), missed = u64(rec, "missed");
	o->count = sat_add(o->count, u64(rec, "count"));
	o->errors = sat_add(o->errors, errors);
	o->missed = sat_add(o->missed, missed);
	o->bytes = sat_add(o->bytes, u64(rec, "bytes"));
	o->corrupt = sat_add(o->corrupt, u64(rec, "corrupt"));
	double target = target_total * share;
	o->target_ops += target;
	o->active_s += secs;
	hist_merge(o->lat, h);
	add_verify(o, json_object_get(rec, "verify"));
	bool any = h->count > 0;
	rm_series_add(o->s_p50, t0, t1, any ? hist_percentile(h, 50) / 1e3 : NAN);
	rm_series_add(o->s_p99, t0, t1, any ? hist_percentile(h, 99) / 1e3 : NAN);
	rm_series_add(o->s_p999, t0, t1, any ? hist_percentile(h, 99.9) / 1e3 : NAN);
	rm_series_add(o->s_max, t0, t1, any ? hist_max(h) / 1e3 : NAN);
	rm_series_add(o->s_rate, t0, t1, secs > 0 ? u64(rec, "count") / secs : NAN);
	rm_series_add(o->s_target, t0, t1, secs > 0 && target_total > 0 ? target / secs : NAN);
	rm_series_add(o->s_errors, t0, t1, (double)errors);
	r = rm_series_add(o->s_missed, t0, t1, (double)missed);
	if (r == 0)
		r = rm_slice_add(m, o, start_ns, secs, u64(rec, "count"), h, m->scratch);
	hist_delete(h);
	return r;
}

static void add_kernel_latency(struct rm_workload *w, const char *family, const char *what,
			       json_t *lat, double t0, double t1)
{
	static const char *const stats[] = { "p50", "p99", "p999", "max" };

	for (size_t i = 0; i < 4; i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s.%s.%s", family, what, stats[i]);
		struct rm_series *s = rm_series_of(w->kernel, &w->n_kernel,
						sizeof(w->kernel) / sizeof(w->kernel[0]), name);
		if (s)
			rm_series_add(s, t0, t1, num(lat, stats[i], NAN));
	}
}

/* kernel: {"blk": {"read": {"count", "latency_us": {...}}, ...},
 *          "tcp": {"srtt_samples", "latency_us" (smoothed RTT), "connects", "connect_us"}} */
static void add_kernel(struct rm_workload *w, json_t *kernel, double t0, double t1)
{
	const char *family, *op;
	json_t *ops, *series;

	json_object_foreach(kernel, family, ops) {
		if (json_is_object(json_object_get(ops, "latency_us"))) {   /* one series: TCP */
			if (num(ops, "srtt_samples", 1) > 0)
				add_kernel_latency(w, family, "srtt", json_object_get(ops, "latency_us"), t0,
						   t1);
			if (num(ops, "connects", 0) > 0)
				add_kernel_latency(w, family, "connect", json_object_get(ops, "connect_us"),
						   t0, t1);
			continue;
		}
		json_object_foreach(ops, op, series) {
			json_t *lat = json_object_get(series, "latency_us");
			if (json_is_object(lat) && num(series, "count", 1) > 0)
				add_kernel_latency(w, family, op, lat, t0, t1);
		}
	}
}

static int add_interval(struct runmodel *m, json_t *rec)
{
	const char *name = json_string_value(json_object_get(rec, "workload"));
	json_t *ops = json_object_get(rec, "ops");
	uint64_t start = u64(rec, "start_ns"), end = u64(rec, "end_ns");

	if (!name || end < start)
		return -EINVAL;
	struct rm_workload *w = workload_of(m, name);
	/* Past RM_MAX_WORKLOADS (a run that went on through reloads and
	 * restarts can name more), the record is left out, not the report. */
	if (!w)
		return m->n >= RM_MAX_WORKLOADS ? -EINVAL : -ENOMEM;
	if (!m->wall_start_ns && u64(rec, "wall_start_ns"))
		m->wall_start_ns = u64(rec, "wall_start_ns") - start;
	w->intervals++;
	if (json_is_true(json_object_get(rec, "stalled")))
		w->stalled_intervals += u64(rec, "intervals") ? u64(rec, "intervals") : 1;
	if (w->first_s < 0)
		w->first_s = start / NS;
	w->last_s = end / NS;
	if (end / NS > m->end_s)
		m->end_s = end / NS;
	if (json_is_true(json_object_get(rec, "generator_late"))) {
		struct rm_late *l = realloc(w->late, (w->n_late + 1) * sizeof(*l));
		if (!l)
			return -ENOMEM;
		w->late = l;
		l[w->n_late++] = (struct rm_late){ start / NS, end / NS,
						    num(rec, "generator_late_ms", 0) };
	}
	double target = ops_num(rec, "target_ops", 1e15);
	const char *op;
	json_t *o;
	json_object_foreach(ops, op, o) {
		int r = add_op(m, w, op, o, start, end, target, ops_num(o, "share", 1));
		if (r < 0)
			return r;
	}
	add_kernel(w, json_object_get(rec, "kernel"), start / NS, end / NS);
	return 0;
}

/* Every number of a host record, flattened: "cpu.iowait", "disks.sda.util_pct". */
static void add_host_values(struct runmodel *m, const char *prefix, json_t *obj, double t0,
			    double t1, int depth)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		char name[96];
		if (strcmp(key, "type") == 0 || strcmp(key, "start_ns") == 0 ||
		    strcmp(key, "end_ns") == 0 || strncmp(key, "wall", 4) == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", key);
		if (json_is_object(v) && depth < 3)
			add_host_values(m, name, v, t0, t1, depth + 1);
		else if (json_is_number(v)) {
			struct rm_series *s = rm_series_of(m->host, &m->n_host, RM_MAX_SERIES, name);
			if (s)
				rm_series_add(s, t0, t1, json_number_value(v));
		}
	}
}

/* A workload a reload replaced (or added back) starts over, as soakd's
 * own totals and the text reports do: what is judged is the new
 * definition's.  Its series stay, the run's history over time; an op the
 * new definition lacks is left unused (no row, no panels). */
static void reset_workload(struct runmodel *m, struct rm_workload *w)
{
	for (size_t j = 0; j < w->n_ops; j++) {
		struct rm_op *o = &w->ops[j];
		o->count = o->errors = o->missed = o->bytes = o->corrupt = 0;
		o->target_ops = o->active_s = 0;
		if (o->lat)
			hist_reset(o->lat);
		for (size_t k = 0; k < o->n_slices; k++)
			free(o->slices[k].bytes);
		free(o->slices);
		o->slices = NULL;
		m->slice_entries -= o->n_slices;
		o->n_slices = 0;
		o->has_open = false;
		memset(o->verify, 0, sizeof(o->verify));
		o->n_verify = 0;
	}
	free(w->late);
	w->late = NULL;
	w->n_late = 0;
	w->stalled_intervals = w->intervals = 0;
}

static void reset_listed(struct runmodel *m, json_t *names)
{
	size_t k;
	json_t *v;

	json_array_foreach(names, k, v) {
		char name[sizeof(((struct rm_workload *)0)->name)];
		if (!json_is_string(v))
			continue;
		runlog_clean_name(name, sizeof(name), json_string_value(v));
		struct rm_workload *w = runmodel_workload(m, name);
		if (w)
			reset_workload(m, w);
	}
}

int runmodel_add(struct runmodel *m, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	int r = 0;

	if (!type) {
		r = -EINVAL;
	} else if (strcmp(type, "interval") == 0) {
		r = add_interval(m, rec);
	} else if (strcmp(type, "start") == 0) {
		const char *run = json_string_value(json_object_get(rec, "run"));
		struct rm_restart *s = realloc(m->restarts, (m->n_restarts + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		m->restarts = s;
		s = &s[m->n_restarts++];
		*s = (struct rm_restart){ u64(rec, "wall_ns"), u64(rec, "run_ns") / NS,
					  json_is_true(json_object_get(rec, "resumed")), "" };
		snprintf(s->version, sizeof(s->version), "%s",
			 json_string_value(json_object_get(rec, "version")) ?: "");
		if (run)
			snprintf(m->run, sizeof(m->run), "%s", run);
	} else if (strcmp(type, "reload") == 0) {
		reset_listed(m, json_object_get(rec, "replaced"));
		reset_listed(m, json_object_get(rec, "added"));
	} else if (strcmp(type, "gap") == 0) {
		struct rm_gap *g = realloc(m->gaps, (m->n_gaps + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		m->gaps = g;
		g[m->n_gaps++] = (struct rm_gap){ u64(rec, "run_ns") / NS, u64(rec, "down_ns") / NS };
	} else if (strcmp(type, "state") == 0) {
		const char *name = json_string_value(json_object_get(rec, "workload"));
		struct rm_workload *w = name ? workload_of(m, name) : NULL;
		if (w) {
			snprintf(w->state, sizeof(w->state), "%s",
				 json_string_value(json_object_get(rec, "state")) ?: "");
			snprintf(w->reason, sizeof(w->reason), "%s",
				 json_string_value(json_object_get(rec, "reason")) ?: "");
		}
	} else if (strcmp(type, "host") == 0) {
		add_host_values(m, "", rec, u64(rec, "start_ns") / NS, u64(rec, "end_ns") / NS, 0);
	} else if (strncmp(type, "certify", 7) == 0) {
		if (!m->certify)
			m->certify = json_array();
		if (m->certify && json_array_size(m->certify) < RM_MAX_CERTIFY)
			json_array_append(m->certify, rec);
	} else if (strcmp(type, "search") == 0) {
		if (!m->search)
			m->search = json_array();
		if (m->search && json_array_size(m->search) < RM_MAX_CERTIFY)
			json_array_append(m->search, rec);
	} else if (strcmp(type, "event") == 0) {
		struct rm_event *e = realloc(m->events, (m->n_events + 1) * sizeof(*e));
		if (!e)
			return -ENOMEM;
		m->events = e;
		e = &e[m->n_events++];
		memset(e, 0, sizeof(*e));
		e->t = u64(rec, "start_ns") / NS;
		snprintf(e->workload, sizeof(e->workload), "%s",
			 json_string_value(json_object_get(rec, "workload")) ?: "");
		snprintf(e->op, sizeof(e->op), "%s", json_string_value(json_object_get(rec, "op")) ?: "");
		snprintf(e->metric, sizeof(e->metric), "%s",
			 json_string_value(json_object_get(rec, "metric")) ?: "");
		snprintf(e->event, sizeof(e->event), "%s",
			 json_string_value(json_object_get(rec, "event")) ?: "");
		snprintf(e->message, sizeof(e->message), "%s",
			 json_string_value(json_object_get(rec, "message")) ?: "");
	}
	if (r == -EINVAL)
		m->skipped++;
	return r;
}

int runmodel_load(struct runmodel *m, const char *dir_or_log, char *err, size_t errlen)
{
	char *path = runlog_path_of(dir_or_log);
	struct runlog_reader *rd = NULL;
	json_t *rec;
	int r;

	if (!path) {
		snprintf(err, errlen, "%s: no interval log there", dir_or_log);
		return -ENOENT;
	}
	r = runlog_open(path, &rd);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EPROTO ? "not a soakd interval log" : strerror(-r));
		free(path);
		return r;
	}
	while ((r = runlog_next(rd, &rec)) > 0) {
		r = runmodel_add(m, rec);
		json_decref(rec);
		if (r == -ENOMEM)
			break;
	}
	if (r < 0 && r != -EINVAL)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	else
		r = 0;
	runlog_close(rd);
	free(path);
	return r;
}

int runmodel_add_dump(struct runmodel *m, json_t *dump)
{
	json_t *ws = json_object_get(dump, "workloads"), *w, *o;
	const char *op;
	size_t i;

	if (!json_is_array(ws))
		return -EINVAL;
	if (json_is_string(json_object_get(dump, "run")))
		snprintf(m->run, sizeof(m->run), "%s", json_string_value(json_object_get(dump, "run")));
	json_array_foreach(ws, i, w) {
		const char *name = json_string_value(json_object_get(w, "name"));
		double active = num(w, "active_s", 0);
		if (!name)
			return -EINVAL;
		struct rm_workload *rw = workload_of(m, name);
		if (!rw && m->n >= RM_MAX_WORKLOADS)
			continue;
		if (!rw)
			return -ENOMEM;
		if (json_is_string(json_object_get(w, "state")))
			snprintf(rw->state, sizeof(rw->state), "%s",
				 json_string_value(json_object_get(w, "state")));
		json_object_foreach(json_object_get(w, "ops"), op, o) {
			struct rm_op *ro = op_of(rw, op);
			const char *lat = json_string_value(json_object_get(o, "latency_hist"));
			if (!ro)
				return -ENOMEM;
			if (!lat || hist_merge_base64(ro->lat, lat) < 0)
				return -EINVAL;   /* a dump without its histograms cannot be compared */
			ro->count = sat_add(ro->count, u64(o, "count"));
			ro->errors = sat_add(ro->errors, u64(o, "errors"));
			ro->missed = sat_add(ro->missed, u64(o, "missed"));
			ro->bytes = sat_add(ro->bytes, u64(o, "bytes"));
			ro->corrupt = sat_add(ro->corrupt, u64(o, "corrupt"));
			ro->target_ops += num(o, "rate_target", 0) * active;
			add_verify(ro, json_object_get(o, "verify"));
			ro->active_s += active;
			/* The run as one point: the rate over its active time. */
			rm_series_add(ro->s_rate, 0, active, active > 0 ? u64(o, "count") / active : NAN);
		}
		if (active > m->end_s)
			m->end_s = active;
	}
	return 0;
}

