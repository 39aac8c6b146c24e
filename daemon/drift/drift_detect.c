// SPDX-License-Identifier: GPL-2.0-only
/*
 * The two-window change-point test (drift_detect.h).  The per-interval
 * state kept is a few counters: once the reference's p99 and p99.9 are
 * known, an interval's histogram is reduced to how many of its ops were
 * slower than them, so a window of a day costs kilobytes, not a day of
 * histograms.
 */
#include "drift_detect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void drift_params_from_config(const struct drift_config *cfg, uint64_t interval_ns,
			      struct drift_params *ret)
{
	/* Per sensitivity (low, normal, high): the z-score; how much slower
	 * than the reference's percentile an op must be to count, and how
	 * many times the percentile's share must; the error rate's factor;
	 * the throughput's drop. */
	static const double z[] = { 8, 6, 4 }, ratio[] = { 3, 2, 1.5 }, share[] = { 2, 1.5, 1.5 },
			    effect[] = { 4, 3, 2 }, drop[] = { 0.5, 0.3, 0.2 };
	unsigned k = cfg->sensitivity <= DRIFT_HIGH ? cfg->sensitivity : DRIFT_NORMAL;

	*ret = (struct drift_params){
		.window = interval_ns ? (unsigned)(cfg->window_ns / interval_ns) : 2,
		.metrics = cfg->metrics, .z = z[k], .ratio = ratio[k], .share = share[k],
		.effect = effect[k], .drop = drop[k],
	};
	if (ret->window < 2)
		ret->window = 2;
}

int drift_op_init(struct drift_op *o, const struct drift_params *p)
{
	memset(o, 0, sizeof(*o));
	o->p = *p;
	o->ring = calloc(p->window, sizeof(*o->ring));
	if (!o->ring)
		return -ENOMEM;
	drift_op_reset(o);
	return 0;
}

void drift_op_free(struct drift_op *o)
{
	free(o->ring);
	o->ring = NULL;
	hist_free(&o->ref);
}

void drift_op_reset(struct drift_op *o)
{
	hist_reset(&o->ref);
	o->ref_intervals = 0;
	o->ref_rate = 0;
	o->ref_completed = o->ref_errors = 0;
	o->ref_secs = 0;
	o->ref_done = false;
	o->ring_n = o->ring_pos = 0;
	memset(o->active, 0, sizeof(o->active));
}

/* Binomial z-score of k successes in n trials against rate p. */
static double zscore(uint64_t k, uint64_t n, double p)
{
	double sd = sqrt((double)n * p * (1 - p));
	return sd > 0 ? ((double)k - (double)n * p) / sd : 0;
}

static bool same_rate(double a, double b)
{
	return fabs(a - b) <= 0.01 * fmax(a, b);
}

/* The test of one metric over the window's sums: failing or not. */
static bool test(const struct drift_op *o, enum drift_metric m, const struct drift_sample *sum,
		 struct drift_finding *f)
{
	const struct drift_params *p = &o->p;

	*f = (struct drift_finding){ .metric = m, .n = sum->n };
	switch (m) {
	case DRIFT_P99:
	case DRIFT_P999: {
		double base = m == DRIFT_P99 ? 0.01 : 0.001;
		/* A percentile read from fewer than DRIFT_MIN_TAIL ops above
		 * it is too uncertain to test against. */
		if ((double)o->ref.count * base < DRIFT_MIN_TAIL)
			return false;
		uint64_t above = m == DRIFT_P99 ? sum->above99 : sum->above999;
		f->ref_ns = m == DRIFT_P99 ? o->thr99 : o->thr999;
		f->ratio = p->ratio;
		f->expected = base;
		f->observed = sum->n ? (double)above / (double)sum->n : 0;
		return sum->n && f->observed >= p->share * base && zscore(above, sum->n, base) >= p->z;
	}
	case DRIFT_THROUGHPUT:
		f->expected = o->ref_secs > 0 ? (double)o->ref_completed / o->ref_secs : 0;
		f->observed = sum->secs > 0 ? (double)sum->completed / sum->secs : 0;
		return f->expected > 0 && f->observed < (1 - p->drop) * f->expected;
	case DRIFT_ERRORS: {
		double base = ((double)o->ref_errors + 1) / ((double)o->ref_completed + 2);
		f->expected = base;
		f->observed = sum->completed ? (double)sum->errors / (double)sum->completed : 0;
		return sum->errors >= 5 && f->observed >= p->effect * base &&
		       zscore(sum->errors, sum->completed, base) >= p->z;
	}
	default:
		return false;
	}
}

size_t drift_op_feed(struct drift_op *o, const struct hist *lat, uint64_t completed,
		     uint64_t errors, double secs, double rate, struct drift_finding *ret)
{
	size_t found = 0;

	/* A new scheduled rate is a new load: its latencies are not drift.
	 * An alarm on stays on until the new load's own test passes (the
	 * short last interval of a schedule is a "new rate" too, and a
	 * run's last gauges should still show the alarm). */
	if (o->ref_intervals && !same_rate(rate, o->ref_rate)) {
		bool active[DRIFT_METRICS];
		memcpy(active, o->active, sizeof(active));
		drift_op_reset(o);
		memcpy(o->active, active, sizeof(active));
	}
	if (!o->ref_done) {
		if (o->ref_intervals == 0)
			o->ref_rate = rate;
		hist_merge(&o->ref, lat);
		o->ref_completed += completed;
		o->ref_errors += errors;
		o->ref_secs += secs;
		if (++o->ref_intervals == o->p.window) {
			o->thr99 = hist_percentile(&o->ref, 99);
			o->thr999 = hist_percentile(&o->ref, 99.9);
			o->ref_done = true;
		}
		return 0;
	}
	/* Ops slower than `ratio` times the reference's percentiles.
	 * hist_count_above is exact at a bucket's upper bound: the bucket
	 * that holds the threshold counts as not above. */
	uint64_t lo, hi99, hi999;
	hist_bucket_range(hist_bucket_of((uint64_t)(o->p.ratio * (double)o->thr99)), &lo, &hi99);
	hist_bucket_range(hist_bucket_of((uint64_t)(o->p.ratio * (double)o->thr999)), &lo, &hi999);
	struct drift_sample *now = &o->ring[o->ring_pos];
	*now = (struct drift_sample){
		.n = lat->count, .above99 = hist_count_above(lat, hi99),
		.above999 = hist_count_above(lat, hi999), .completed = completed,
		.errors = errors, .secs = secs,
	};
	double ref_rate = o->ref_secs > 0 ? (double)o->ref_completed / o->ref_secs : 0;
	/* An interval fails alone on a share that is both large and, for
	 * its number of ops, no chance (z >= 3: one in about 700). */
	if (now->n && (double)now->above99 >= o->p.share * 0.01 * (double)now->n &&
	    zscore(now->above99, now->n, 0.01) >= 3)
		now->failing |= 1u << DRIFT_P99;
	if (now->n && (double)now->above999 >= o->p.share * 0.001 * (double)now->n &&
	    zscore(now->above999, now->n, 0.001) >= 3)
		now->failing |= 1u << DRIFT_P999;
	if (secs > 0 && (double)completed / secs < (1 - o->p.drop) * ref_rate)
		now->failing |= 1u << DRIFT_THROUGHPUT;
	if (errors)
		now->failing |= 1u << DRIFT_ERRORS;
	o->ring_pos = (o->ring_pos + 1) % o->p.window;
	if (o->ring_n < o->p.window && ++o->ring_n < o->p.window)
		return 0;
	struct drift_sample sum = { 0 };
	unsigned failing[DRIFT_METRICS] = { 0 };
	for (unsigned i = 0; i < o->p.window; i++) {
		for (int m = 0; m < DRIFT_METRICS; m++)
			failing[m] += (o->ring[i].failing >> m) & 1;
		sum.n += o->ring[i].n;
		sum.above99 += o->ring[i].above99;
		sum.above999 += o->ring[i].above999;
		sum.completed += o->ring[i].completed;
		sum.errors += o->ring[i].errors;
		sum.secs += o->ring[i].secs;
	}
	for (int m = 0; m < DRIFT_METRICS; m++) {
		struct drift_finding f;
		if (!(o->p.metrics & (1u << m)))
			continue;
		bool fails = test(o, (enum drift_metric)m, &sum, &f) && 2 * failing[m] > o->p.window;
		if (fails && !o->active[m])
			ret[found++] = f;
		/* On until few of the window's intervals still fail, so a
		 * metric on the edge does not alarm again and again. */
		if (fails)
			o->active[m] = true;
		else if (4 * failing[m] <= o->p.window)
			o->active[m] = false;
	}
	return found;
}
