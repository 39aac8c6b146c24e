// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bookkeeping between a thread's name pool and its write ledger: the
 * ledger opened in the run directory (a resumed run takes its names and
 * pool back from it), every PUT and DELETE entered before it is sent and
 * settled when it ends, and what a read says about an acknowledged object
 * counted in the op's verify counters (lost, stale, resurrected,
 * uncertain).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/bootid.h"
#include "base/log.h"
#include "obj_engine.h"
#include "workload/workload.h"

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int obj_book_dir_open(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "the run directory's path is too long");
		return -ENAMETOOLONG;
	}
	/* The run directory's writer creates it too, on its own thread:
	 * whoever comes first. */
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(buf, 0750);
		*p = '/';
	}
	(void)mkdir(buf, 0750);
	int fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int r = -errno;
		snprintf(err, errlen, "cannot open the run directory %s for the object ledger: %s",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

/* An unknown slot's next PUT: past any version the lost records may have
 * written (a read of one of them then shows as older, a lost write). */
#define UNKNOWN_VERSION_GAP 65536u

static uint32_t past_lost(const struct obj_ledger_entry *e, uint32_t version)
{
	return e->unknown && version <= UINT32_MAX - UNKNOWN_VERSION_GAP
		       ? version + UNKNOWN_VERSION_GAP : version;
}

/* The pool as the ledger left it: acknowledged objects present, those with
 * a write of unknown outcome, or whose records were lost to damage or a
 * host restart, doubtful (read by no one, rewritten or deleted under the
 * same name), the rest empty. */
static void restore_pool(struct obj_stream *st)
{
	for (uint32_t s = 0; s < st->pool.cap; s++) {
		const struct obj_ledger_entry *e = obj_ledger_get(st->ledger, s);
		/* What was in flight when soakd stopped may land yet. */
		if (e->pending == OBJ_PENDING_PUT)
			obj_late_put(&st->late, e->try_id, e->try_version, e->try_size, mono_ns());
		else if (e->pending == OBJ_PENDING_DELETE)
			obj_late_delete(&st->late, e->id, mono_ns());
		if (e->pending == OBJ_PENDING_PUT) {
			bool same = e->state == OBJ_LEDGER_PRESENT && e->id == e->try_id;
			obj_pool_restore(&st->pool, s, OBJ_DOUBTFUL, e->try_id,
					 past_lost(e, same && e->version > e->try_version
							      ? e->version : e->try_version),
					 e->try_size);
		} else if (e->pending == OBJ_PENDING_DELETE ||
			   (e->unknown && e->state == OBJ_LEDGER_PRESENT)) {
			obj_pool_restore(&st->pool, s, OBJ_DOUBTFUL, e->id, past_lost(e, e->version),
					 e->size);
		} else if (e->state == OBJ_LEDGER_PRESENT) {
			obj_pool_restore(&st->pool, s, OBJ_PRESENT, e->id, e->version, e->size);
		} else if (e->state == OBJ_LEDGER_DELETED) {
			obj_pool_restore(&st->pool, s, OBJ_EMPTY, e->id, e->version, 0);
		}
	}
}

int obj_book_open(struct obj_stream *st, int dir_fd, char *err, size_t errlen)
{
	struct obj_client *cl = st->cl;
	struct obj_ledger_info info;
	char base[128];
	int r;

	snprintf(base, sizeof(base), "ledger.%s.%u", cl->wcfg->name, st->index);
	r = obj_ledger_open(dir_fd, base, st->pool.cap, cl->run_tag, host_boot_id(), &st->ledger,
			    &info, err, errlen);
	if (r < 0)
		return r;
	/* Damage loses the records in it, about slots nobody can tell: the
	 * objects whose last write it may hide are read and taken as they
	 * are (obj_ledger.h); names it alone held are left to the run's
	 * final sweep. */
	if (info.torn || info.damaged)
		log_warning("%s: the ledger file %s.%s is damaged at byte %" PRIu64 " (%" PRIu64
			    " unreadable record(s)%s); the records in the damage are lost, so %" PRIu64
			    " object(s) whose last write they may hold are checked without being "
			    "judged lost or stale, and the run's final sweep deletes names the "
			    "ledger does not hold", cl->wcfg->name, base,
			    info.damage_in_map ? "map" : "journal", info.damage_offset, info.damaged,
			    info.torn ? ", the last one cut short" : "", info.unknown);
	if (info.host_restarted)
		log_warning("%s: the host restarted since thread %u's ledger was last closed (it was "
			    "written under another boot and not closed cleanly): the records of its "
			    "last unsynced second may be lost with the host's page cache, so %" PRIu64
			    " object(s) whose last write they may hold are checked without being "
			    "judged lost or stale, and names %" PRIu64 " to %" PRIu64 " that they may "
			    "have begun are set aside: left out of LIST checks and deleted by the "
			    "run's final sweep", cl->wcfg->name, st->index, info.unknown,
			    info.lost_ids.from, info.lost_ids.to - 1);
	if (!info.resumed)
		return 0;
	/* The run's names are the ledger's: the first thread's ledger
	 * decides, the others must agree. */
	if (st->index == 0 && strcmp(info.tag, cl->run_tag) != 0) {
		r = obj_client_set_tag(cl, info.tag);
		if (r < 0) {
			snprintf(err, errlen, "\"prefix\" is too long");
			return r;
		}
	} else if (strcmp(info.tag, cl->run_tag) != 0) {
		snprintf(err, errlen, "the ledger %s names objects %s, thread 0's %s: the run "
			 "directory is damaged", base, info.tag, cl->run_tag);
		return -EINVAL;
	}
	restore_pool(st);
	/* No name set aside is given again. */
	const struct obj_ledger_ids *lost;
	size_t n_lost = obj_ledger_lost_ids(st->ledger, &lost);
	for (size_t i = 0; i < n_lost; i++)
		if (st->pool.next_id < lost[i].to)
			st->pool.next_id = lost[i].to;
	st->resumed = info.present + info.uncertain + info.deleted > 0;
	if (st->resumed)
		log_info("%s: thread %u resumes %" PRIu64 " objects under %s (%" PRIu64
			 " uncertain, %" PRIu64 " deleted) from its ledger", cl->wcfg->name,
			 st->index, info.present, cl->name_root, info.uncertain, info.deleted);
	return 0;
}

static void ledger_failed(struct obj_stream *st, int r)
{
	if (r >= 0 || st->ledger_failed)
		return;
	st->ledger_failed = true;
	log_error("%s: cannot write the object ledger in the run directory: %s; objects written "
		  "now may be left behind or unchecked after a restart", st->cl->wcfg->name,
		  strerror(-r));
}

void obj_book_start(struct obj_stream *st, const struct obj_xfer *x)
{
	const struct obj_entry *e = &st->pool.entries[x->slot];

	if (!st->ledger)
		return;
	switch (x->kind) {
	case OBJ_KIND_PUT:
	case OBJ_KIND_PREFILL:
		ledger_failed(st, obj_ledger_intend_put(st->ledger, x->slot, e->id, e->version,
							e->size));
		break;
	case OBJ_KIND_DELETE:
	case OBJ_KIND_CLEANUP:
		ledger_failed(st, obj_ledger_intend_delete(st->ledger, x->slot));
		break;
	default:
		break;
	}
}

static uint64_t etag_of(CURL *easy)
{
	struct curl_header *h = NULL;
	if (curl_easy_header(easy, "ETag", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h || !h->value)
		return 0;
	return obj_ledger_etag_hash(h->value, strlen(h->value));
}

/* "sse": "s3": the server says it encrypted the object (said once if not). */
static void check_sse(struct obj_stream *st, const struct obj_xfer *x)
{
	struct curl_header *h = NULL;
	if (curl_easy_header(x->easy, "x-amz-server-side-encryption", 0, CURLH_HEADER, -1, &h) ==
		    CURLHE_OK && h && h->value && strcmp(h->value, "AES256") == 0)
		return;
	if (!atomic_exchange(&st->cl->sse_unconfirmed_logged, true))
		log_warning("%s: PUT %s: the server did not confirm SSE-S3 (no "
			    "\"x-amz-server-side-encryption: AES256\" in its answer)",
			    st->cl->wcfg->name, x->key);
}

/* Whether a write that failed may still have happened: also one that
 * could not connect after it was sent once (libcurl sends a request again
 * on a new connection when a kept-alive one dies unanswered, and it is
 * that connect that failed; the first send may have been carried out). */
static bool outcome_unknown(const struct obj_xfer *x, enum op_error_class c)
{
	return c == OP_ERR_TIMEOUT || c == OP_ERR_HTTP_5XX || c == OP_ERR_TRANSFER ||
	       (c == OP_ERR_CONNECT && x->sends > 0);
}

/* A versioned bucket's x-amz-version-id, "" when there is none. */
static void version_id_of(CURL *easy, char *buf, size_t len)
{
	struct curl_header *h = NULL;
	buf[0] = '\0';
	if (curl_easy_header(easy, "x-amz-version-id", 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h &&
	    h->value && strlen(h->value) < len && !strpbrk(h->value, "\r\n\t "))
		snprintf(buf, len, "%s", h->value);
}

static void end_write(struct obj_stream *st, struct obj_xfer *x, bool done, bool unknown,
		      struct obj_verify *v)
{
	bool put = x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL;
	int r;
	if (done)
		r = obj_ledger_ack(st->ledger, x->slot, put ? etag_of(x->easy) : 0, wall_ns());
	else if (unknown)
		r = obj_ledger_uncertain(st->ledger, x->slot);
	else
		r = obj_ledger_abort(st->ledger, x->slot);
	if (done && r == 0 && put && st->cl->cfg->versioning) {
		char vid[OBJ_LEDGER_VID_MAX];
		version_id_of(x->easy, vid, sizeof(vid));
		int vr = vid[0] ? obj_ledger_set_version_id(st->ledger, x->slot, vid) : -E2BIG;
		if (vr < 0 && vr != -E2BIG)
			ledger_failed(st, vr);
		else if (vr < 0 && !atomic_exchange(&st->cl->vid_unkept_logged, true))
			log_warning("%s: PUT %s: %s; reads of it take the latest version",
				    st->cl->wcfg->name, x->key,
				    vid[0] ? "its version id is too long to keep"
					   : "the server gave no version id (x-amz-version-id)");
	}
	if (!done && unknown && v)
		v->uncertain++;
	ledger_failed(st, r);
}

/* An audit GET of an object whose last write is uncertain: the version
 * its first bytes name settles which write the server kept. */
static void settle(struct obj_stream *st, struct obj_xfer *x, const struct obj_ledger_entry *e,
		   bool gone, struct obj_verify *v)
{
	uint64_t name_hash = 0, version = 0;

	if (gone) {
		/* Nothing under the name: a fine outcome for a DELETE or a
		 * first PUT, not for an overwrite of an acknowledged object. */
		bool lost = e->pending == OBJ_PENDING_PUT && e->state == OBJ_LEDGER_PRESENT &&
			    e->id == e->try_id && !e->unknown;
		if (lost) {
			v->lost++;
			obj_log_verify(st->cl, x, "LOST", "an acknowledged object is gone (its "
				       "overwrite had no clear answer)");
		}
		ledger_failed(st, obj_ledger_settle(st->ledger, x->slot, false, 0, 0, 0, wall_ns()));
		obj_late_retire(&st->late, st->pool.entries[x->slot].id, mono_ns());
		obj_pool_restore(&st->pool, x->slot, OBJ_EMPTY, st->pool.entries[x->slot].id, 0, 0);
		return;
	}
	if (x->head_len == sizeof(x->head))
		obj_payload_header(x->head, &name_hash, &version);
	uint64_t size = version == e->try_version ? e->try_size : e->size;
	bool known = name_hash == x->payload.name_hash && x->pos == size &&
		     ((e->pending == OBJ_PENDING_PUT && version == e->try_version) ||
		      (e->state == OBJ_LEDGER_PRESENT && version == e->version));
	if (!known)
		return; /* stays doubtful: rewritten or deleted later */
	ledger_failed(st, obj_ledger_settle(st->ledger, x->slot, true, st->pool.entries[x->slot].id,
					    (uint32_t)version, size, wall_ns()));
	obj_pool_restore(&st->pool, x->slot, OBJ_PRESENT, st->pool.entries[x->slot].id,
			 (uint32_t)version, size);
}

/* x's name no longer exists (deleted, or lost by the server): listings
 * that began before may still show it. */
static void name_gone(struct obj_stream *st, const struct obj_xfer *x)
{
	if (!st->deleted_ids)
		return;         /* a mix without LIST keeps no ring */
	st->deleted_ids[st->n_deleted % OBJ_DELETED_RING] = st->pool.entries[x->slot].id;
	st->deleted_seq[st->n_deleted % OBJ_DELETED_RING] = st->pool.write_seq + 1;
	st->n_deleted++;
}

void obj_book_end(struct obj_stream *st, struct obj_xfer *x, enum obj_outcome outcome,
		  enum op_error_class c, bool gone, struct obj_verify *v)
{
	const struct obj_ledger_entry *e = st->ledger ? obj_ledger_get(st->ledger, x->slot) : NULL;
	bool ok = outcome == OBJ_OK;

	switch (x->kind) {
	case OBJ_KIND_PUT:
	case OBJ_KIND_PREFILL:
		if (ok && st->cl->cfg->sse_s3)
			check_sse(st, x);
		if (outcome == OBJ_ERROR && outcome_unknown(x, c))
			obj_late_put(&st->late, st->pool.entries[x->slot].id,
				     (uint32_t)x->payload.version, x->size, mono_ns());
		if (e)
			end_write(st, x, ok, outcome == OBJ_ERROR && outcome_unknown(x, c), v);
		else if (outcome == OBJ_ERROR && outcome_unknown(x, c) && v)
			v->uncertain++;
		return;
	case OBJ_KIND_DELETE:
	case OBJ_KIND_CLEANUP:
		name_gone(st, x);
		if (outcome == OBJ_ERROR && !gone && outcome_unknown(x, c))
			obj_late_delete(&st->late, st->pool.entries[x->slot].id, mono_ns());
		else if (ok || gone)
			obj_late_retire(&st->late, st->pool.entries[x->slot].id, mono_ns());
		if (x->resent_gone && v)
			v->uncertain++;
		if (gone && x->kind == OBJ_KIND_DELETE && v) {
			v->lost++;
			obj_log_verify(st->cl, x, "LOST", "the server answers 404 to a DELETE of an "
				       "object whose PUT it acknowledged");
		}
		if (e)
			end_write(st, x, ok || gone, outcome == OBJ_ERROR && !gone && outcome_unknown(x, c),
				  v);
		else if (outcome == OBJ_ERROR && !gone && outcome_unknown(x, c) && v)
			v->uncertain++;
		return;
	case OBJ_KIND_AUDIT_HEAD:
		if (outcome == OBJ_OK && v)
			v->checked++;
		if (outcome == OBJ_OK && !gone && v && obj_late_has_put(&x->late)) {
			v->uncertain++;   /* an unanswered PUT landed after the DELETE */
		} else if (outcome == OBJ_OK && !gone && v) {
			v->resurrected++;
			obj_log_verify(st->cl, x, "RESURRECTED", "an object whose DELETE was "
				       "acknowledged is back");
		}
		return;
	case OBJ_KIND_AUDIT:
		if (e && (e->pending != OBJ_PENDING_NONE || e->unknown)) {
			if (outcome != OBJ_ERROR || gone)
				settle(st, x, e, gone, v);
			return;
		}
		/* An acknowledged object, read in full: as a GET. */
		__attribute__((fallthrough));
	case OBJ_KIND_GET:
	case OBJ_KIND_STAT:
		if (!v)
			return;
		/* What an unanswered write left (obj_late.h): not wrong, and not
		 * settled either (its version is older than the pool's, whose
		 * next PUT would reuse a number): the next write replaces it. */
		if (outcome == OBJ_LATE) {
			v->uncertain++;
			return;
		}
		if (outcome == OBJ_OK || outcome == OBJ_STALE || outcome == OBJ_CORRUPT)
			v->checked++;
		if (outcome == OBJ_STALE)
			v->stale++;
		/* HEAD carries no data: its ETag says whether the object is
		 * still the version whose PUT was acknowledged. */
		/* A versioned bucket: the latest version must be the
		 * acknowledged one. */
		if (outcome == OBJ_OK && x->kind == OBJ_KIND_STAT && e && st->cl->cfg->versioning &&
		    e->state == OBJ_LEDGER_PRESENT && !e->pending && !e->unknown &&
		    e->id == st->pool.entries[x->slot].id) {
			char want[OBJ_LEDGER_VID_MAX], got[OBJ_LEDGER_VID_MAX];
			obj_ledger_version_id(st->ledger, x->slot, want, sizeof(want));
			version_id_of(x->easy, got, sizeof(got));
			if (want[0] && got[0] && strcmp(want, got) != 0 && obj_late_has_put(&x->late)) {
				v->uncertain++;   /* maybe an unanswered PUT, landed */
				return;
			}
			if (want[0] && got[0] && strcmp(want, got) != 0) {
				v->stale++;
				obj_log_verify(st->cl, x, "STALE", "its latest version is not the one "
					       "whose PUT was acknowledged");
				return;
			}
		}
		if (outcome == OBJ_OK && x->kind == OBJ_KIND_STAT && e && e->etag &&
		    e->state == OBJ_LEDGER_PRESENT && !e->pending && !e->unknown &&
		    e->id == st->pool.entries[x->slot].id) {
			uint64_t etag = etag_of(x->easy);
			if (etag && etag != e->etag && obj_late_has_put(&x->late))
				v->uncertain++;   /* maybe an unanswered PUT, landed */
			else if (etag && etag != e->etag) {
				v->stale++;
				obj_log_verify(st->cl, x, "STALE", "its ETag is not the one the "
					       "acknowledged PUT was given");
			}
		}
		/* Counted once: the pool then holds the name as deleted
		 * (obj_pool_end_read), so no read asks for it again; reads
		 * of it already in flight are not counted again. */
		if (gone && st->pool.entries[x->slot].state == OBJ_PRESENT) {
			/* An unanswered DELETE may have landed since. */
			if (x->late.del) {
				v->uncertain++;
			} else {
				v->lost++;
				obj_log_verify(st->cl, x, "LOST", "the server answers 404 for an "
					       "object whose PUT it acknowledged");
			}
			obj_late_retire(&st->late, st->pool.entries[x->slot].id, mono_ns());
			name_gone(st, x);
			if (e)
				ledger_failed(st, obj_ledger_settle(st->ledger, x->slot, false, 0, 0, 0,
								    wall_ns()));
		}
		return;
	default:
		return;
	}
}

void obj_book_abandon(struct obj_stream *st, struct obj_xfer *x, struct obj_verify *v)
{
	if (x->kind != OBJ_KIND_PUT && x->kind != OBJ_KIND_PREFILL && x->kind != OBJ_KIND_DELETE &&
	    x->kind != OBJ_KIND_CLEANUP)
		return;
	if (v)
		v->uncertain++;
	if (x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL)
		obj_late_put(&st->late, st->pool.entries[x->slot].id, (uint32_t)x->payload.version,
			     x->size, mono_ns());
	else
		obj_late_delete(&st->late, st->pool.entries[x->slot].id, mono_ns());
	if (st->ledger)
		ledger_failed(st, obj_ledger_uncertain(st->ledger, x->slot));
}

void obj_book_unsent(struct obj_stream *st, struct obj_xfer *x)
{
	if (st->ledger && (x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL ||
			   x->kind == OBJ_KIND_DELETE || x->kind == OBJ_KIND_CLEANUP))
		ledger_failed(st, obj_ledger_abort(st->ledger, x->slot));
}

struct id_slot {
	uint64_t id;
	uint32_t slot;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_id_slot(const void *a, const void *b)
{
	return cmp_u64(&((const struct id_slot *)a)->id, &((const struct id_slot *)b)->id);
}

/* Whether write count a comes after b (both wrap). */
static bool seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* The name's DELETE ended after the listing began. */
static bool deleted_since(const struct obj_stream *st, uint64_t id, uint32_t since)
{
	uint64_t n = st->n_deleted < OBJ_DELETED_RING ? st->n_deleted : OBJ_DELETED_RING;
	for (uint64_t k = 1; k <= n; k++) {
		uint64_t at = (st->n_deleted - k) % OBJ_DELETED_RING;
		if (!seq_after(st->deleted_seq[at], since))
			break;
		if (st->deleted_ids[at] == id)
			return true;
	}
	return false;
}

void obj_book_list(struct obj_stream *st, struct obj_xfer *x, struct obj_verify *v)
{
	const struct obj_pool *p = &st->pool;
	struct obj_client *cl = st->cl;
	uint64_t missing = 0, extra = 0, back = 0;

	if (!x->list_whole || !v || !st->deleted_ids)
		return;
	/* qsort and bsearch want an array, even an empty one. */
	uint64_t none = 0;
	uint64_t *listed = x->list_n ? x->list_ids : &none;
	if (x->list_n)
		qsort(listed, x->list_n, sizeof(*listed), cmp_u64);
	/* Missing: acknowledged, no write since the listing began, under
	 * the prefix listed, and not in it. */
	for (uint32_t s = 0; s < p->cap; s++) {
		const struct obj_entry *e = &p->entries[s];
		if (e->state != OBJ_PRESENT || e->writing || seq_after(e->write_seq, x->list_seq))
			continue;
		if (x->list_sub >= 0 && obj_key_sub(cl, st->index, e->id) != (unsigned)x->list_sub)
			continue;
		if (cl->cfg->buckets > 1) {
			char key[OBJ_KEY_MAX];
			obj_key(cl, st->index, e, key, sizeof(key));
			if (obj_key_bucket(cl, key) != x->list_bucket)
				continue;
		}
		if (!bsearch(&e->id, listed, x->list_n, sizeof(*listed), cmp_u64)) {
			const struct obj_late_entry *late = obj_late_get(&st->late, e->id, mono_ns());
			missing += !(late && late->del);   /* an unanswered DELETE may have landed */
		}
	}
	/* Extra: listed, yet neither in the pool nor deleted meanwhile; the
	 * oldest deletes are forgotten past the ring, then this is skipped. */
	uint64_t oldest = st->n_deleted >= OBJ_DELETED_RING ? st->n_deleted % OBJ_DELETED_RING : 0;
	bool ring_covers = st->n_deleted < OBJ_DELETED_RING ||
			   !seq_after(st->deleted_seq[oldest], x->list_seq + 1);
	struct id_slot *ids = ring_covers ? malloc(p->cap * sizeof(*ids)) : NULL;
	size_t n = 0;
	for (uint32_t s = 0; ids && s < p->cap; s++)
		if (p->entries[s].id)
			ids[n++] = (struct id_slot){ p->entries[s].id, s };
	if (ids) {
		qsort(ids, n, sizeof(*ids), cmp_id_slot);
		for (size_t k = 0; k < x->list_n; k++) {
			struct id_slot key = { .id = x->list_ids[k] };
			const struct id_slot *f = bsearch(&key, ids, n, sizeof(*ids), cmp_id_slot);
			const struct obj_entry *e = f ? &p->entries[f->slot] : NULL;
			if (e && (e->state != OBJ_EMPTY || e->writing))
				continue;
			if (deleted_since(st, x->list_ids[k], x->list_seq))
				continue;
			/* An unanswered PUT of the name may have landed. */
			const struct obj_late_entry *late =
				obj_late_get(&st->late, x->list_ids[k], mono_ns());
			if (late && obj_late_has_put(late))
				continue;
			/* A name a host restart took from the ledger. */
			if (st->ledger && obj_ledger_id_lost(st->ledger, x->list_ids[k]))
				continue;
			extra++;
			back += e != NULL; /* its slot's last DELETE was acknowledged */
		}
		free(ids);
	}
	extra += x->list_strange;
	v->list_missing += missing;
	v->list_extra += extra;
	v->resurrected += back;
	if (missing || extra) {
		char what[256];
		snprintf(what, sizeof(what), "%" PRIu64 " acknowledged object(s) of thread %u missing, "
			 "%" PRIu64 " listed that the ledger does not hold (%" PRIu64 " deleted before)",
			 missing, st->index, extra, back);
		obj_log_verify(cl, x, "LIST MISMATCH", what);
	}
}

uint64_t obj_book_audit_begin(struct obj_stream *st)
{
	uint64_t n = 0;
	for (uint32_t s = 0; s < st->pool.cap; s++)
		n += st->pool.entries[s].state != OBJ_EMPTY ||
		     (st->ledger && obj_ledger_get(st->ledger, s)->state == OBJ_LEDGER_DELETED);
	atomic_store(&st->ws->audit_done, 0);
	atomic_store(&st->ws->audit_total, n);
	return n;
}

void obj_book_audit_end(struct obj_stream *st)
{
	atomic_store(&st->ws->audit_total, 0);
	atomic_store(&st->ws->audit_done, 0);
}

void obj_book_flush(struct obj_stream *st, uint64_t now, bool force)
{
	if (st->ledger)
		ledger_failed(st, obj_ledger_flush(st->ledger, now, force));
}
