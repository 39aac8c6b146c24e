// SPDX-License-Identifier: GPL-2.0-only
/*
 * Slices: each op's closed intervals merged into the slice (an hour by
 * default) that holds their start, the slices behind the open one kept as
 * base64 histograms in the run's slice store; what soakctl report judges.
 */
#include "results.h"

#include <stdlib.h>

#include "base/log.h"
#include "rundir.h"
#include "slice_store.h"

#include "results_int.h"

/* The run's store of slice histograms. */
struct slice_store *results_slice_store(struct results *r)
{
	/* Opened at the first slice closed, live or replayed: the run's
	 * directory is known by then. */
	if (!r->slices.tried)
		slice_store_open(&r->slices, r->rundir ? rundir_path(r->rundir) : NULL);
	return &r->slices;
}

/* Moves the slice being filled to the compact list. */
static void store_slice(struct results *r, struct op_slices *sl)
{
	if (!sl->open)
		return;
	results_slice_store(r);
	if (sl->n == sl->cap) {
		size_t cap = sl->cap ? sl->cap * 2 : 16;
		struct stored_slice *stored = realloc(sl->stored, cap * sizeof(*stored));
		if (!stored) {
			log_error("out of memory storing a slice; its intervals stay in the totals");
			return;
		}
		sl->stored = stored;
		sl->cap = cap;
	}
	struct stored_slice *st = &sl->stored[sl->n];
	char *lat = hist_to_base64(sl->latency), *svc = hist_to_base64(sl->service);
	*st = (struct stored_slice){ .start_ns = sl->start_ns, .end_ns = sl->end_ns,
				     .count = sl->count };
	if (!lat || !svc || slice_text_put(&r->slices, &st->latency, lat) < 0 ||
	    slice_text_put(&r->slices, &st->service, svc) < 0) {
		slice_text_free(&st->latency);
		free(lat);
		free(svc);
		log_error("out of memory storing a slice; its intervals stay in the totals");
		return;
	}
	free(lat);
	free(svc);
	sl->n++;
	hist_reset(sl->latency);
	hist_reset(sl->service);
	sl->count = 0;
	sl->open = false;
}

/* Folds a closed interval into the slice that holds its start. */
void fold_into_slice(struct results *r, struct workload_results *wr,
		     const struct interval_row *row)
{
	uint64_t index = row->start_ns / r->cfg->slice_ns;

	for (size_t op = 0; op < wr->n_ops; op++) {
		struct op_slices *sl = &wr->slices[op];
		if (sl->open && index != wr->slice_index)
			store_slice(r, sl);
		if (!sl->open) {
			sl->open = true;
			sl->start_ns = row->start_ns;
		}
		sl->end_ns = row->end_ns;
		hist_merge(sl->latency, &wr->interval[op].latency);
		hist_merge(sl->service, &wr->interval[op].service);
		sl->count += wr->interval[op].count;
	}
	wr->slice_index = index;
}
