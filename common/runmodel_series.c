// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run model's series (bounded: neighbours merged in pairs, lowest and
 * highest kept) and slices (serialised histograms but for the open one).
 */
#include "runmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runmodel_int.h"

void rm_series_free(struct rm_series *s)
{
	if (s)
		free(s->pts);
	free(s);
}

struct rm_series *rm_series_new(const char *name)
{
	struct rm_series *s = calloc(1, sizeof(*s));

	if (s)
		snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

static float fmin_nan(float a, float b)
{
	return isnan(a) ? b : isnan(b) ? a : a < b ? a : b;
}

static float fmax_nan(float a, float b)
{
	return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

/* Halves a full series: each pair of neighbours becomes one point, which
 * then stands for twice as many intervals. */
static void series_compact(struct rm_series *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i += 2, n++) {
		struct rm_point p = s->pts[i];
		if (i + 1 < s->n) {
			const struct rm_point *q = &s->pts[i + 1];
			p.t1 = q->t1;
			p.v = fmin_nan(p.v, q->v);
			p.vmax = fmax_nan(p.vmax, q->vmax);
		}
		s->pts[n] = p;
	}
	s->n = n;
	s->per_point *= 2;
}

int rm_series_add(struct rm_series *s, double t0, double t1, double v)
{
	if (!s)
		return -ENOMEM;
	if (!s->per_point)
		s->per_point = 1;
	/* The last point takes intervals until it stands for as many as the rest. */
	if (s->n && s->last_n < s->per_point) {
		struct rm_point *last = &s->pts[s->n - 1];
		last->t1 = t1;
		last->v = fmin_nan(last->v, (float)v);
		last->vmax = fmax_nan(last->vmax, (float)v);
		s->last_n++;
		return 0;
	}
	if (s->n == RM_SERIES_POINTS)
		series_compact(s);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct rm_point *p = realloc(s->pts, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pts = p;
		s->cap = cap;
	}
	s->pts[s->n++] = (struct rm_point){ t0, t1, (float)v, (float)v };
	s->last_n = 1;
	return 0;
}

struct rm_series *runmodel_find(struct rm_series *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i]->name, name) == 0)
			return list[i];
	return NULL;
}

/* The named series of list, made when new (NULL when the list is full). */
struct rm_series *rm_series_of(struct rm_series **list, size_t *n, size_t max,
				   const char *name)
{
	struct rm_series *s = runmodel_find(list, *n, name);

	if (s || *n >= max)
		return s;
	s = rm_series_new(name);
	if (s)
		list[(*n)++] = s;
	return s;
}

/* Serialises the open slice into its place: merged with what an earlier
 * visit to it left there (intervals arrive in order, so rarely). */
static int close_slice(struct rm_op *o, struct hist *scratch)
{
	struct rm_slice *sl = &o->slices[o->open_idx];

	if (sl->bytes) {
		if (hist_deserialize(scratch, sl->bytes, sl->len) < 0)
			return -EINVAL;
		hist_merge(o->open, scratch);
		free(sl->bytes);
		sl->bytes = NULL;
	}
	size_t len = hist_serialize(o->open, NULL, 0);
	sl->bytes = malloc(len);
	if (!sl->bytes)
		return -ENOMEM;
	sl->len = hist_serialize(o->open, sl->bytes, len);
	o->has_open = false;
	return 0;
}

int rm_slice_add(struct runmodel *m, struct rm_op *o, uint64_t start_ns, double secs,
		     uint64_t count, const struct hist *h, struct hist *scratch)
{
	size_t idx = (size_t)(start_ns / m->slice_ns);
	int r;

	if (idx >= RM_MAX_SLICES ||
	    (idx >= o->n_slices && m->slice_entries + (idx + 1 - o->n_slices) > RM_MAX_SLICE_ENTRIES)) {
		m->slices_dropped++;
		return 0;
	}
	if (idx >= o->n_slices) {
		m->slice_entries += idx + 1 - o->n_slices;
		struct rm_slice *sl = realloc(o->slices, (idx + 1) * sizeof(*sl));
		if (!sl)
			return -ENOMEM;
		o->slices = sl;
		memset(&sl[o->n_slices], 0, (idx + 1 - o->n_slices) * sizeof(*sl));
		o->n_slices = idx + 1;
	}
	if (!o->open) {
		o->open = hist_new();
		if (!o->open)
			return -ENOMEM;
	}
	if (!o->has_open || o->open_idx != idx) {
		if (o->has_open && (r = close_slice(o, scratch)) < 0)
			return r;
		hist_reset(o->open);
		o->open_idx = idx;
		o->has_open = true;
	}
	hist_merge(o->open, h);
	o->slices[idx].secs += secs;
	o->slices[idx].count += count;
	return 0;
}

const struct hist *runmodel_slice(const struct rm_op *o, size_t i, struct hist *scratch)
{
	if (i >= o->n_slices)
		return NULL;
	const struct rm_slice *sl = &o->slices[i];
	if (!sl->bytes) {
		if (o->has_open && o->open_idx == i)
			return o->open;
		return NULL;
	}
	if (hist_deserialize(scratch, sl->bytes, sl->len) < 0)
		return NULL;
	if (o->has_open && o->open_idx == i)
		hist_merge(scratch, o->open);
	return scratch;
}

long runmodel_worst_slice(const struct rm_op *o)
{
	struct hist *scratch = hist_new();
	long worst = -1;
	uint64_t worst_v = 0;

	for (size_t i = 0; scratch && i < o->n_slices; i++) {
		const struct hist *h = runmodel_slice(o, i, scratch);
		if (!h || !h->count)
			continue;
		uint64_t v = hist_percentile(h, 99.9);
		if (worst < 0 || v > worst_v) {
			worst = (long)i;
			worst_v = v;
		}
	}
	hist_delete(scratch);
	return worst;
}

size_t runmodel_slice_values(const struct rm_op *o, const char *stat, uint64_t slice_ns,
			     double *out, size_t max)
{
	struct hist *scratch = hist_new();
	size_t n = 0;

	for (size_t i = 0; scratch && i < o->n_slices && n < max; i++) {
		const struct rm_slice *sl = &o->slices[i];
		if (sl->secs < 0.9 * (slice_ns / 1e9))
			continue;
		const struct hist *h = runmodel_slice(o, i, scratch);
		if (!h || !h->count)
			continue;
		if (strcmp(stat, "rate") == 0)
			out[n++] = sl->count / sl->secs;
		else if (strcmp(stat, "p50") == 0)
			out[n++] = hist_percentile(h, 50) / 1e3;
		else if (strcmp(stat, "p99") == 0)
			out[n++] = hist_percentile(h, 99) / 1e3;
		else if (strcmp(stat, "p999") == 0)
			out[n++] = hist_percentile(h, 99.9) / 1e3;
	}
	hist_delete(scratch);
	return n;
}
