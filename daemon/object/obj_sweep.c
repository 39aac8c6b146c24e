// SPDX-License-Identifier: GPL-2.0-only
/*
 * The end of a workload's run, after its cleanup: the sweep of the run's
 * names (what a crash made the ledger lose) and, for a versioned bucket,
 * of their old versions (obj_versions.c).  Both are synchronous requests
 * outside the measured load, and both give way to a stop: soakd stopping
 * (SIGTERM, a reload: the workload's suspend flag) or a stop of the
 * workload requested after its run ended.  A stop that ended the run is
 * not one: the workload stopped by soakctl cleans up, sweeps included, and
 * only a second stop cuts that short.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "obj_engine.h"
#include "workload/workload.h"

void obj_sweep_begin(struct obj_stream *st)
{
	struct workload *w = st->ws->workload;
	/* The flag first (workload_request_stop counts, then sets it): the
	 * stop that ended the run is in the count read after it. */
	(void)atomic_load_explicit(&w->stop_requested, memory_order_acquire);
	st->stops_seen = atomic_load_explicit(&w->stop_requests, memory_order_relaxed);
}

bool obj_sweep_cut_short(const struct obj_stream *st, const char **ret_why)
{
	const struct workload *w = st->ws->workload;
	const char *why = NULL;

	if (atomic_load_explicit(&w->suspend, memory_order_relaxed))
		why = "soakd is stopping";
	else if (atomic_load_explicit(&w->stop_requests, memory_order_relaxed) != st->stops_seen)
		why = "the workload is stopped";
	if (why && ret_why)
		*ret_why = why;
	return why != NULL;
}

/* libcurl calls it at least once a second while a request runs, even one
 * the server holds without a byte: a stop then aborts the request. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return obj_sweep_cut_short(userdata, NULL) ? 1 : 0;
}

void obj_sweep_watch(const struct obj_stream *st, CURL *easy)
{
	curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(easy, CURLOPT_XFERINFODATA, (void *)st);
	curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
}

/* One request of the sweep, synchronously, on the sweep's own transfer. */
static enum obj_outcome sweep_request(struct obj_xfer *x, const struct obj_client *cl)
{
	enum op_error_class c;
	bool gone;
	CURLcode result = curl_easy_perform(x->easy);
	/* Aborted by on_progress: a stop, not the server's failure. */
	if (result == CURLE_ABORTED_BY_CALLBACK)
		return OBJ_ERROR;
	return obj_xfer_finish(x, cl, result, &c, &gone);
}

void obj_book_sweep(struct obj_stream *st)
{
	struct obj_client *cl = st->cl;
	struct obj_xfer x;
	uint64_t found = 0, deleted = 0;
	const char *why = NULL;
	char left[96] = "";
	unsigned b;

	if (!cl->proto->list_url || obj_xfer_init(&x, cl, st) < 0)
		return;
	obj_sweep_watch(st, x.easy);
	for (b = 0; b < cl->cfg->buckets; b++) {
		enum obj_outcome o;
		if (obj_sweep_cut_short(st, &why)) {
			snprintf(left, sizeof(left), "not listed");
			break;
		}
		x.kind = OBJ_KIND_LIST;
		x.list_bucket = b;
		if (obj_xfer_prepare_list(&x, cl, cl->name_root, NULL) < 0)
			break;
		while ((o = sweep_request(&x, cl)) == OBJ_MORE && !obj_sweep_cut_short(st, &why))
			;
		if (o == OBJ_MORE || (o == OBJ_ERROR && obj_sweep_cut_short(st, &why))) {
			snprintf(left, sizeof(left), "its listing cut short after %u page(s)",
				 x.list_pages);
			break;
		}
		if (o != OBJ_OK || !x.list_whole)
			continue;
		uint64_t *ids = x.list_ids;
		size_t n = x.list_n, i;
		/* The transfer is reused for the deletes: keep the ids, and
		 * let go of a large listing's page meanwhile. */
		x.list_ids = NULL;
		x.list_n = x.list_ids_cap = 0;
		obj_xfer_trim(&x);
		for (i = 0; i < n && !obj_sweep_cut_short(st, &why); i++) {
			struct obj_entry e = { .id = ids[i] };
			found++;
			x.kind = OBJ_KIND_CLEANUP;
			obj_key(cl, st->index, &e, x.key, sizeof(x.key));
			if (obj_xfer_prepare(&x, cl) == 0 && sweep_request(&x, cl) == OBJ_OK)
				deleted++;
		}
		free(ids);
		if (why) {
			snprintf(left, sizeof(left), "%zu of the %zu names it listed not deleted",
				 n - i, n);
			break;
		}
	}
	obj_xfer_done(&x);
	if (why) {
		char name[80];
		obj_bucket_name(cl, b, name, sizeof(name));
		log_warning("%s: %s: thread %u's sweep of the run's names stops before its end: "
			    "bucket %s: %s, %u bucket(s) after it not listed (%" PRIu64 " found, %"
			    PRIu64 " deleted); objects of the run the ledger lost may stay",
			    cl->wcfg->name, why, st->index, name, left, cl->cfg->buckets - b - 1,
			    found, deleted);
	} else if (found) {
		log_warning("%s: thread %u found %" PRIu64 " objects of the run the ledger did not "
			    "hold (their records were lost in a crash) and deleted %" PRIu64,
			    cl->wcfg->name, st->index, found, deleted);
	}
}
