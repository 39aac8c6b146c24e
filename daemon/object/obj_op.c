// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ops of an object workload thread: which op comes next in the mix,
 * which object and byte range it works on, starting it, and accounting for
 * it when it ends (statistics, the pool, backoff after failures).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"
#include "obj_rng.h"
#include "workload/workload.h"

enum obj_kind obj_op_draw(struct obj_stream *st)
{
	const struct object_config *o = st->cl->cfg;

	if (!st->deck_left) {
		memcpy(st->deck, o->mix, sizeof(st->deck));
		st->deck_left = o->mix_total;
	}
	uint64_t r = obj_rng_below(&st->rng, st->deck_left);
	for (int op = 0; op < OBJ_MIX_OPS; op++) {
		if (r < st->deck[op]) {
			st->deck[op]--;
			st->deck_left--;
			return (enum obj_kind)op;
		}
		r -= st->deck[op];
	}
	return OBJ_KIND_GET;
}

/* The byte range a GET asks for. */
static void pick_range(struct obj_stream *st, struct obj_xfer *x)
{
	const struct object_config *o = st->cl->cfg;

	x->off = 0;
	x->len = x->size;
	x->ranged = false;
	if (x->kind != OBJ_KIND_GET || o->range == OBJ_RANGE_NONE || x->size == 0)
		return;
	x->ranged = true;
	if (o->range == OBJ_RANGE_FIXED) {
		x->off = o->read_offset < x->size ? o->read_offset : x->size - 1;
		x->len = x->size - x->off;
		if (o->read_length && o->read_length < x->len)
			x->len = o->read_length;
	} else {
		/* As warp's --range: a random start and a random length. */
		x->off = obj_rng_below(&st->rng, x->size);
		x->len = 1 + obj_rng_below(&st->rng, x->size - x->off);
	}
}

static void undo_pool(struct obj_stream *st, struct obj_xfer *x, bool write_ok)
{
	switch (x->kind) {
	case OBJ_KIND_GET:
	case OBJ_KIND_STAT:
	case OBJ_KIND_AUDIT:
	case OBJ_KIND_AUDIT_HEAD:
		obj_pool_end_read(&st->pool, x->slot, false);
		break;
	case OBJ_KIND_LIST:
		break;
	default:
		obj_pool_end_write(&st->pool, x->slot,
				   x->kind == OBJ_KIND_DELETE || x->kind == OBJ_KIND_CLEANUP, write_ok);
	}
}

static uint32_t pick_slot(struct obj_stream *st, enum obj_kind kind)
{
	struct obj_pool *p = &st->pool;
	uint32_t i;

	switch (kind) {
	case OBJ_KIND_GET:
	case OBJ_KIND_STAT:
		return obj_pool_pick_read(p, &st->rng);
	case OBJ_KIND_DELETE:
		return obj_pool_pick_idle(p, &st->rng);
	case OBJ_KIND_PUT:
		/* Create while there is room, then write new versions. */
		i = obj_pool_pick_vacant(p, &st->rng);
		return i != OBJ_POOL_NONE ? i : obj_pool_pick_idle(p, &st->rng);
	case OBJ_KIND_PREFILL:
		return obj_pool_next(p, &st->cursor, OBJ_MASK(OBJ_EMPTY) | OBJ_MASK(OBJ_DOUBTFUL));
	case OBJ_KIND_CLEANUP:
		return obj_pool_next(p, &st->cursor, OBJ_MASK(OBJ_PRESENT) | OBJ_MASK(OBJ_DOUBTFUL));
	case OBJ_KIND_AUDIT:
		/* Every object the ledger holds, and every name it deleted
		 * last in a slot (to see that it stays deleted). */
		while ((i = obj_pool_next(p, &st->cursor, OBJ_MASK(OBJ_PRESENT) |
					  OBJ_MASK(OBJ_DOUBTFUL) | OBJ_MASK(OBJ_EMPTY))) !=
		       OBJ_POOL_NONE) {
			if (p->entries[i].state != OBJ_EMPTY ||
			    (st->ledger && obj_ledger_get(st->ledger, i)->state == OBJ_LEDGER_DELETED))
				return i;
		}
		return OBJ_POOL_NONE;
	default:
		return OBJ_POOL_NONE;
	}
}

bool obj_op_start(struct obj_stream *st, enum obj_kind kind, uint64_t due_ns)
{
	struct obj_client *cl = st->cl;
	const struct object_config *o = cl->cfg;
	uint32_t slot = OBJ_POOL_NONE;
	struct obj_xfer *x;
	int r;

	if (kind != OBJ_KIND_LIST) {
		slot = pick_slot(st, kind);
		if (slot == OBJ_POOL_NONE)
			return false;
	}
	x = &st->xfers[st->free_list[--st->n_free]];
	x->kind = kind;
	x->slot = slot;
	x->due_ns = due_ns;
	if (kind == OBJ_KIND_LIST) {
		char prefix[OBJ_KEY_MAX + 16];
		x->list_sub = -1;
		if (o->prefixes > 1) {
			x->list_sub = (int)obj_rng_below(&st->rng, o->prefixes);
			snprintf(prefix, sizeof(prefix), "%sp%d/", cl->name_root, x->list_sub);
		} else {
			snprintf(prefix, sizeof(prefix), "%s", cl->name_root);
		}
		x->list_seq = st->pool.write_seq;
		x->list_bucket = o->buckets > 1 ? (unsigned)obj_rng_below(&st->rng, o->buckets) : 0;
		r = obj_xfer_prepare_list(x, cl, prefix, NULL);
	} else {
		struct obj_entry *e = &st->pool.entries[slot];
		x->verify = o->verify;
		x->expect_gone = false;
		if (kind == OBJ_KIND_AUDIT && e->state == OBJ_EMPTY) {
			/* A deleted name: HEAD it, 404 is the answer wanted. */
			x->kind = kind = OBJ_KIND_AUDIT_HEAD;
			x->expect_gone = true;
		} else if (kind == OBJ_KIND_AUDIT && e->state == OBJ_DOUBTFUL) {
			/* Either write may have landed: the data says which. */
			x->verify = false;
		}
		if (kind == OBJ_KIND_GET || kind == OBJ_KIND_STAT || kind == OBJ_KIND_AUDIT ||
		    kind == OBJ_KIND_AUDIT_HEAD)
			obj_pool_begin_read(&st->pool, slot);
		else if (kind == OBJ_KIND_PUT || kind == OBJ_KIND_PREFILL)
			obj_pool_begin_put(&st->pool, slot, obj_size_pick(&o->size, &st->rng));
		else
			obj_pool_begin_delete(&st->pool, slot);
		obj_key(cl, st->index, e, x->key, sizeof(x->key));
		obj_payload_init(&x->payload, x->key, strlen(x->key), e->version);
		const struct obj_late_entry *late = kind == OBJ_KIND_PUT || kind == OBJ_KIND_PREFILL ||
							    kind == OBJ_KIND_DELETE
							    ? NULL
							    : obj_late_get(&st->late, e->id, mono_ns());
		x->late = late ? *late : (struct obj_late_entry){ 0 };
		x->size = e->size;
		pick_range(st, x);
		/* A versioned bucket: read the version whose PUT was acknowledged. */
		x->version_id[0] = '\0';
		if (o->versioning && st->ledger && x->verify &&
		    (kind == OBJ_KIND_GET || kind == OBJ_KIND_AUDIT)) {
			const struct obj_ledger_entry *le = obj_ledger_get(st->ledger, slot);
			if (le && le->state == OBJ_LEDGER_PRESENT && !le->pending && !le->unknown &&
			    le->id == e->id && le->version == e->version)
				obj_ledger_version_id(st->ledger, slot, x->version_id,
						      sizeof(x->version_id));
		}
		r = obj_xfer_prepare(x, cl);
		/* Entered in the ledger before it can reach the server. */
		if (r == 0)
			obj_book_start(st, x);
	}
	if (r == 0) {
		obj_eps_pick(st, x, mono_ns());
		r = curl_multi_add_handle(st->multi, x->easy) == CURLM_OK ? 0 : -ENOMEM;
		if (r < 0)
			obj_eps_done(st, x, false, false, OP_ERR_TRANSFER, 0);
	}
	if (r < 0) {
		if (st->setup_failed++ < 5)
			log_error("%s: cannot set up a request for %s: %s%s", cl->wcfg->name, x->key,
				  strerror(-r), st->setup_failed == 5 ? " (further ones are counted as "
				  "transfer errors, not logged)" : "");
		if (kind != OBJ_KIND_LIST) {
			obj_book_unsent(st, x);
			undo_pool(st, x, false);
		}
		st->free_list[st->n_free++] = (unsigned)(x - st->xfers);
		/* Issued, and failed at once: an error, not an op that vanishes. */
		if (cl->op_index[kind] >= 0)
			op_stats_record_error(&stream_current(&st->ws->stats)->ops[cl->op_index[kind]],
					      OP_ERR_TRANSFER);
		return true;
	}
	x->busy = true;
	x->submit_ns = mono_ns();
	st->audit_inflight += kind == OBJ_KIND_AUDIT || kind == OBJ_KIND_AUDIT_HEAD;
	int op = cl->op_index[kind];
	uint64_t ready = due_ns > st->slot_free_ns ? due_ns : st->slot_free_ns;
	if (op >= 0)
		hist_record(&stream_current(&st->ws->stats)->ops[op].issue_delay,
			    x->submit_ns > ready ? x->submit_ns - ready : 0);
	return true;
}

void obj_op_missed(struct obj_stream *st, enum obj_kind kind, uint64_t due_ns, uint64_t now)
{
	int op = st->cl->op_index[kind];

	if (op >= 0)
		op_stats_record_missed(&stream_current(&st->ws->stats)->ops[op],
				       now > due_ns ? now - due_ns : 0);
}

void obj_op_skipped(struct obj_stream *st, enum obj_kind kind)
{
	if (st->skipped++ == 0)
		log_warning("%s: no object is free for %s (pool of %u: %u present, %u doubtful); "
			    "such ops are skipped (with a rate: counted as missed)", st->cl->wcfg->name,
			    obj_op_name((enum obj_op)kind), st->pool.cap, st->pool.n_present,
			    st->pool.n_doubtful);
}

/* ttfb only for an op that completed, as latency: a throttling server's
 * quick 503s would pull its percentiles down while service got worse. */
static void record_timing(struct op_stats *os, CURL *easy, bool completed)
{
	curl_off_t t = 0, app = 0;
	long connects = 0;

	if (completed && curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &t) == CURLE_OK &&
	    t > 0)
		hist_record(&os->ttfb, (uint64_t)t * 1000);
	if (curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0) {
		curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &app);
		curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &t);
		hist_record(&os->connect, (uint64_t)(app > 0 ? app : t) * 1000);
	}
}

static void note_success(struct obj_stream *st, struct obj_xfer *x, uint64_t now)
{
	struct obj_client *cl = st->cl;

	st->backoff_ns = 0;
	if (st->failing_since_ns) {
		log_notice("%s: %s answers again after %.1f s (%" PRIu64 " ops failed meanwhile)",
			   cl->wcfg->name, cl->cfg->endpoint, (now - st->failing_since_ns) / 1e9,
			   st->failed_ops);
		st->failing_since_ns = 0;
		st->failed_ops = 0;
	}
	if (!atomic_exchange(&cl->version_logged, true)) {
		long v = 0;
		curl_easy_getinfo(x->easy, CURLINFO_HTTP_VERSION, &v);
		log_info("%s: %s answers over %s", cl->wcfg->name, cl->cfg->endpoint,
			 v == CURL_HTTP_VERSION_2_0 ? "HTTP/2" : v == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0"
				 : "HTTP/1.1");
	}
}

static void note_failure(struct obj_stream *st, enum op_error_class c, uint64_t now)
{
	if (c == OP_ERR_HTTP_4XX)
		return; /* the endpoint answered: nothing to back off from */
	if (!st->failing_since_ns)
		st->failing_since_ns = now;
	st->failed_ops++;
	st->backoff_ns = st->backoff_ns ? st->backoff_ns * 2 : OBJ_BACKOFF_MIN_NS;
	if (st->backoff_ns > OBJ_BACKOFF_MAX_NS)
		st->backoff_ns = OBJ_BACKOFF_MAX_NS;
	st->hold_until_ns = now + st->backoff_ns;
}

/* A prefill PUT ended: what its pass met, so that a pass the endpoint
 * refused whole ends the workload instead of starting another
 * (obj_stream.c). */
static void note_prefill(struct obj_stream *st, struct obj_xfer *x, enum obj_outcome outcome,
			 enum op_error_class c)
{
	struct obj_prefill_pass *pass = &st->pass;
	long status = 0;

	if (outcome == OBJ_OK) {
		pass->ok++;
		return;
	}
	if (c == OP_ERR_HTTP_4XX || c == OP_ERR_HTTP_5XX)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	if (!obj_status_is_lasting(status)) {
		pass->other++;
		return;
	}
	pass->refused++;
	pass->status = status;
	pass->endpoint = x->endpoint;
	st->cl->proto->error_message(x->body, x->body_len, pass->message, sizeof(pass->message));
}

void obj_op_complete(struct obj_stream *st, struct obj_xfer *x, CURLcode result,
		     uint64_t now)
{
	struct obj_client *cl = st->cl;
	enum op_error_class c = OP_ERR_TRANSFER;
	bool gone = false;
	enum obj_outcome outcome = obj_xfer_finish(x, cl, result, &c, &gone);

	curl_multi_remove_handle(st->multi, x->easy);
	if (outcome == OBJ_WAIT)
		return; /* a multipart upload's parts go on by themselves */
	if (outcome == OBJ_MORE) {
		/* A listing's next page, a multipart upload's next step. */
		if (obj_op_resend(st, x) == 0)
			return;
		outcome = OBJ_ERROR;
		c = OP_ERR_TRANSFER;
	}
	obj_op_end(st, x, outcome, c, gone, now);
}

int obj_op_resend(struct obj_stream *st, struct obj_xfer *x)
{
	CURLMcode m = curl_multi_add_handle(st->multi, x->easy);
	if (m == CURLM_OK)
		return 0;
	log_error("%s: cannot send the next request for %s: %s; the op fails",
		  st->cl->wcfg->name, x->key, curl_multi_strerror(m));
	return -ENOMEM;
}

void obj_op_end(struct obj_stream *st, struct obj_xfer *x, enum obj_outcome outcome,
		enum op_error_class c, bool gone, uint64_t now)
{
	struct obj_client *cl = st->cl;
	struct op_stats *os = &stream_current(&st->ws->stats)->ops[cl->op_index[x->kind]];
	uint64_t bytes = 0;
	bool back_off = obj_eps_done(st, x, true, outcome != OBJ_OK && outcome != OBJ_CORRUPT &&
					      outcome != OBJ_STALE && outcome != OBJ_LATE, c, now);
	switch (outcome) {
	case OBJ_LATE:
	case OBJ_OK:
		if (x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL || x->kind == OBJ_KIND_GET)
			bytes = x->pos;
		else if (x->kind == OBJ_KIND_LIST)
			bytes = x->list_bytes;
		op_stats_record(os, now - x->due_ns, now - x->submit_ns, bytes, false);
		record_timing(os, x->easy, true);
		note_success(st, x, now);
		break;
	case OBJ_CORRUPT:
		/* Served, with data other than what was written: its time is
		 * in the histograms (often a stall's, cut short), as a device's
		 * corrupt read's is. */
		op_stats_record_corrupt(os, now - x->due_ns, now - x->submit_ns, x->pos);
		record_timing(os, x->easy, true);
		break;
	case OBJ_STALE:
		/* Completed with the wrong (old) data: like corrupt, not an
		 * error; counted in verify.stale. */
		op_stats_record(os, now - x->due_ns, now - x->submit_ns, x->pos, false);
		record_timing(os, x->easy, true);
		break;
	default:
		op_stats_record_error(os, c);
		/* A failed op may have opened a connection too: connections
		 * counts them all. */
		record_timing(os, x->easy, false);
		if (back_off)
			note_failure(st, c, now);
		break;
	}
	if (x->kind == OBJ_KIND_PREFILL)
		note_prefill(st, x, outcome, c);
	if (x->kind != OBJ_KIND_LIST)
		obj_book_end(st, x, outcome, c, gone, &os->obj_verify);
	else if (outcome == OBJ_OK)
		obj_book_list(st, x, &os->obj_verify);
	if (x->kind == OBJ_KIND_AUDIT || x->kind == OBJ_KIND_AUDIT_HEAD) {
		/* An uncertain write obj_book_end settled is already empty or
		 * present; an acknowledged object that is gone goes, as
		 * the ledger says. */
		obj_pool_end_read(&st->pool, x->slot, gone);
		st->audit_inflight--;
		atomic_fetch_add_explicit(&st->ws->audit_done, 1, memory_order_relaxed);
	}
	else if (x->kind == OBJ_KIND_GET || x->kind == OBJ_KIND_STAT)
		obj_pool_end_read(&st->pool, x->slot, gone);
	else if (x->kind == OBJ_KIND_DELETE)
		obj_pool_end_write(&st->pool, x->slot, true, outcome == OBJ_OK || gone);
	else if (x->kind != OBJ_KIND_LIST)
		undo_pool(st, x, outcome == OBJ_OK);
	obj_xfer_trim(x);
	x->busy = false;
	st->free_list[st->n_free++] = (unsigned)(x - st->xfers);
	if (st->waiting) {
		st->waiting = false;
		st->slot_free_ns = now;
	}
}

void obj_op_abandon(struct obj_stream *st, struct obj_xfer *x)
{
	/* Due and never completed: missed, with its wait so far. */
	obj_op_missed(st, x->kind, x->due_ns, mono_ns());
	int op = st->cl->op_index[x->kind];
	obj_book_abandon(st, x,
			 op >= 0 ? &stream_current(&st->ws->stats)->ops[op].obj_verify : NULL);
	obj_mp_abandon(st, x);
	obj_eps_done(st, x, false, false, OP_ERR_TRANSFER, 0);
	curl_multi_remove_handle(st->multi, x->easy);
	st->audit_inflight -= x->kind == OBJ_KIND_AUDIT || x->kind == OBJ_KIND_AUDIT_HEAD;
	if (x->kind != OBJ_KIND_LIST)
		undo_pool(st, x, false);
	obj_xfer_trim(x);
	x->busy = false;
	st->free_list[st->n_free++] = (unsigned)(x - st->xfers);
}
