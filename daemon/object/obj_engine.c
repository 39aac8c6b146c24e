// SPDX-License-Identifier: GPL-2.0-only
/*
 * Object engine: S3 and HTTP load through libcurl's multi interface, one
 * multi handle per thread driving that thread's share of `concurrency`
 * transfers on reused easy handles (so connections are kept alive).
 *
 * This file sets a workload up and tears it down: its ops, the client
 * (credentials, headers), a first look at the endpoint, and each thread's
 * transfers and share of the object pool.  The thread itself is in
 * obj_stream.c, its ops in obj_op.c, the requests in obj_xfer.c,
 * obj_result.c and the protocols obj_s3.c and obj_http.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/log.h"
#include "obj_engine.h"
#include "obj_rng.h"
#include "parse.h"
#include "workload/workload.h"

static int stream_setup(struct workload *w, size_t index, int dir_fd, char *err, size_t errlen)
{
	const struct object_config *o = w->cfg->object;
	struct obj_client *cl = w->engine_data;
	struct obj_stream *st = calloc(1, sizeof(*st));
	unsigned share = o->concurrency / o->threads + (index < o->concurrency % o->threads);
	uint32_t objects = o->objects / o->threads + (index < o->objects % o->threads);

	if (!st)
		goto oom;
	w->streams[index].engine = st;
	st->ws = &w->streams[index];
	st->cl = cl;
	st->index = (unsigned)index;
	obj_eps_init(st);
	st->epoll_fd = -1;
	st->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (st->timer_fd < 0) {
		snprintf(err, errlen, "cannot create a timerfd: %s", strerror(errno));
		return -errno;
	}
	st->rng = obj_rng_seed(w->cfg->seed * 31 + index + 1);
	st->multi = curl_multi_init();
	st->xfers = calloc(share, sizeof(*st->xfers));
	st->free_list = calloc(share, sizeof(*st->free_list));
	if (!st->multi || !st->xfers || !st->free_list || obj_pool_init(&st->pool, objects, 1) < 0)
		goto oom;
	if (o->mix[OBJ_OP_LIST]) {
		st->deleted_ids = malloc(OBJ_DELETED_RING * sizeof(*st->deleted_ids));
		st->deleted_seq = malloc(OBJ_DELETED_RING * sizeof(*st->deleted_seq));
		if (!st->deleted_ids || !st->deleted_seq)
			goto oom;
	}
	int ev_err = obj_stream_events_init(st);
	if (ev_err < 0) {
		snprintf(err, errlen, "cannot create an epoll set: %s", strerror(-ev_err));
		return ev_err;
	}
	if (dir_fd >= 0) {
		int r = obj_book_open(st, dir_fd, err, errlen);
		if (r < 0)
			return r;
	}
	/* Keep a connection per transfer (and per part of a multipart
	 * upload in flight) alive between ops. */
	curl_multi_setopt(st->multi, CURLMOPT_MAXCONNECTS,
			  (long)share * (o->multipart_threshold ? 1 + o->multipart_parallel : 1));
	for (unsigned i = 0; i < share; i++) {
		int r = obj_xfer_init(&st->xfers[i], cl, st);
		if (r < 0)
			goto oom;
		st->free_list[st->n_xfers++] = share - 1 - i;
	}
	st->n_free = st->n_xfers;
	return 0;
oom:
	snprintf(err, errlen, "out of memory for %u transfers and %u objects", share, objects);
	return -ENOMEM;
}

static void stream_release(struct obj_stream *st)
{
	for (unsigned i = 0; i < st->n_xfers; i++) {
		if (st->xfers[i].busy)
			curl_multi_remove_handle(st->multi, st->xfers[i].easy);
		obj_xfer_done(&st->xfers[i]);
	}
	/* A socket leaves the epoll set as curl closes it. */
	if (st->multi)
		curl_multi_cleanup(st->multi);
	if (st->epoll_fd >= 0)
		close(st->epoll_fd);
	free(st->watch);
	if (st->timer_fd >= 0)
		close(st->timer_fd);
	obj_ledger_close(st->ledger);
	obj_pool_free(&st->pool);
	free(st->xfers);
	free(st->free_list);
	free(st->deleted_ids);
	obj_late_free(&st->late);
	free(st->deleted_seq);
	free(st);
}

static int obj_prepare(struct workload *w, char *err, size_t errlen)
{
	static bool curl_ready;
	const struct object_config *o = w->cfg->object;
	struct obj_client *cl;
	int r;

	/* Not thread-safe in every libcurl: done here, on the main thread,
	 * before any workload thread exists. */
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(err, errlen, "cannot initialise libcurl");
			return -EIO;
		}
		curl_ready = true;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->engine_data = cl;
	w->n_ops = 0;
	for (int op = 0; op < OBJ_MIX_OPS; op++) {
		cl->op_index[op] = (int)w->n_ops;
		w->op_share[w->n_ops] = (double)o->mix[op] / o->mix_total;
		w->op_names[w->n_ops++] = obj_op_name((enum obj_op)op);
	}
	bool reads = o->mix[OBJ_OP_GET] || o->mix[OBJ_OP_STAT] || o->mix[OBJ_OP_DELETE] ||
		     o->mix[OBJ_OP_LIST];
	cl->op_index[OBJ_KIND_PREFILL] = cl->op_index[OBJ_KIND_CLEANUP] = -1;
	cl->op_index[OBJ_KIND_AUDIT] = cl->op_index[OBJ_KIND_AUDIT_HEAD] = -1;
	if (o->prefill && reads) {
		cl->op_index[OBJ_KIND_PREFILL] = (int)w->n_ops;
		w->op_share[w->n_ops] = 0;
		w->op_names[w->n_ops++] = "prefill";
	}
	if (o->cleanup) {
		cl->op_index[OBJ_KIND_CLEANUP] = (int)w->n_ops;
		w->op_share[w->n_ops] = 0;
		w->op_names[w->n_ops++] = "cleanup";
	}
	/* Reads of the ledger's objects after a restart (obj_stream.c). */
	if (o->audit != OBJ_AUDIT_OFF && w->run_dir) {
		cl->op_index[OBJ_KIND_AUDIT] = cl->op_index[OBJ_KIND_AUDIT_HEAD] = (int)w->n_ops;
		w->op_share[w->n_ops] = 0;
		w->op_names[w->n_ops++] = "audit";
	}

	r = obj_client_init(cl, w->cfg, err, errlen);
	if (r < 0)
		return r;
	enum op_error_class ignored;
	r = cl->proto->probe(cl, &ignored, err, errlen);
	if (r == -EAGAIN) {
		log_warning("%s: %s cannot be reached now (%s); the workload will keep trying",
			    w->cfg->name, o->endpoint, err);
		err[0] = '\0';
	} else if (r < 0) {
		if (!strstr(err, o->endpoint)) {
			char why[512];
			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s: %s", o->endpoint, why);
		}
		return r;
	} else {
		atomic_store(&cl->ready, true);
	}
	r = obj_eps_probe_rest(cl, err, errlen);
	if (r < 0)
		return r;
	/* The write ledgers live in the run directory; without one (a
	 * test harness), the workload runs without them. */
	int dir_fd = w->run_dir ? obj_book_dir_open(w->run_dir, err, errlen) : -1;
	if (w->run_dir && dir_fd < 0)
		return dir_fd;
	r = 0;
	for (size_t i = 0; i < w->n_streams && r >= 0; i++)
		r = stream_setup(w, i, dir_fd, err, errlen);
	if (dir_fd >= 0)
		close(dir_fd);
	if (r < 0)
		return r;
	log_info("%s: %s %s, %u transfers on %zu thread(s), names under %s", w->cfg->name,
		 cl->proto->name, cl->base_url, o->concurrency, w->n_streams, cl->name_root);
	return 0;
}

static void obj_release(struct workload *w)
{
	for (size_t i = 0; i < w->n_streams; i++) {
		if (w->streams[i].engine)
			stream_release(w->streams[i].engine);
		w->streams[i].engine = NULL;
	}
	if (w->engine_data) {
		obj_eps_report(w->engine_data);
		obj_eps_client_free(w->engine_data);
		obj_client_free(w->engine_data);
		free(w->engine_data);
		w->engine_data = NULL;
	}
}

static size_t obj_n_streams(const struct workload_config *cfg)
{
	return cfg->object ? cfg->object->threads : 1;
}

static const char *obj_stream_label(const struct workload_config *cfg, size_t index)
{
	return cfg->object && cfg->object->labels[index] ? cfg->object->labels[index] : "object";
}

const struct workload_engine obj_engine = {
	.name = "object",
	.n_streams = obj_n_streams,
	.stream_label = obj_stream_label,
	.prepare = obj_prepare,
	.record_extra = obj_eps_record,
	.thread_main = obj_stream_main,
	.release = obj_release,
};
