// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ledger's changes (see obj_ledger.h): each applied, then appended to
 * the journal, or held while the journal cannot take it; and the syncs
 * and folds that put them on disk.
 */
#include "obj_ledger.h"
#include "obj_ledger_int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "obj_ledger_util.h"

/* Appends n records to the journal, all or none: a write that fails
 * part-way (ENOSPC, EFBIG, EIO) is cut back to the last whole record. */
static int append(struct obj_ledger *l, const struct rec *recs, size_t n)
{
	int e = obj_ledger_write_all(l->journal_fd, recs, n * sizeof(*recs));
	if (e < 0) {
		if (ftruncate(l->journal_fd, l->journal_len) < 0 ||
		    lseek(l->journal_fd, l->journal_len, SEEK_SET) < 0)
			l->need_fold = true; /* the journal's end is not known */
		l->error = e;
		return e;
	}
	l->journal_len += (off_t)(n * sizeof(*recs));
	l->journal_records += n;
	if (!l->unsynced_since_ns)
		l->unsynced_since_ns = obj_ledger_mono_ns();
	return 0;
}

/* The held records, written: 0, or they stay held for the next try. */
static int write_held(struct obj_ledger *l)
{
	int e = l->n_held ? append(l, l->held, l->n_held) : 0;
	if (e == 0)
		l->n_held = 0;
	return e;
}

/* Keeps a record the journal did not take; past HELD_MAX, or without
 * memory, the next fold writes the state instead. */
static void hold(struct obj_ledger *l, const struct rec *r)
{
	if (!l->held)
		l->held = malloc(HELD_MAX * sizeof(*l->held));
	if (!l->held || l->n_held == HELD_MAX) {
		l->need_fold = true;
		l->n_held = 0;
		return;
	}
	l->held[l->n_held++] = *r;
}

/* Applies a change and appends it to the journal, after any held back. */
static int record(struct obj_ledger *l, struct rec r)
{
	r.gen = l->gen;
	if (obj_ledger_apply(l, &r) < 0)
		return -ERANGE;
	obj_ledger_seal(&r);
	if (l->need_fold)
		return l->error ? l->error : -EIO;
	if (l->n_held) {
		hold(l, &r);
		return l->need_fold ? (l->error ? l->error : -EIO) : write_held(l);
	}
	int e = append(l, &r, 1);
	if (e < 0)
		hold(l, &r);
	return e;
}

int obj_ledger_intend_put(struct obj_ledger *l, uint32_t slot, uint64_t id, uint32_t version,
			  uint64_t size)
{
	return record(l, (struct rec){ .type = R_INTEND_PUT, .slot = slot, .id = id,
				       .version = version, .size = size });
}

int obj_ledger_intend_delete(struct obj_ledger *l, uint32_t slot)
{
	return record(l, (struct rec){ .type = R_INTEND_DELETE, .slot = slot });
}

int obj_ledger_set_version_id(struct obj_ledger *l, uint32_t slot, const char *vid)
{
	struct rec r = { .type = R_VERSION_ID, .slot = slot };
	int e = obj_ledger_vid_pack(vid, obj_ledger_rec_vid(&r), &r.state);
	return e < 0 ? e : record(l, r);
}

void obj_ledger_version_id(const struct obj_ledger *l, uint32_t slot, char *buf, size_t len)
{
	buf[0] = '\0';
	if (l->vids && slot < l->slots && l->vids[slot][0])
		obj_ledger_vid_format(l->vids[slot][0], &l->vids[slot][1], buf, len);
}

int obj_ledger_ack(struct obj_ledger *l, uint32_t slot, uint64_t etag, uint64_t wall_ns)
{
	return record(l, (struct rec){ .type = R_ACK, .slot = slot, .etag = etag,
				       .time_s = (uint32_t)(wall_ns / 1000000000u) });
}

int obj_ledger_abort(struct obj_ledger *l, uint32_t slot)
{
	return record(l, (struct rec){ .type = R_ABORT, .slot = slot });
}

int obj_ledger_uncertain(struct obj_ledger *l, uint32_t slot)
{
	return record(l, (struct rec){ .type = R_UNCERTAIN, .slot = slot });
}

int obj_ledger_settle(struct obj_ledger *l, uint32_t slot, bool present, uint64_t id,
		      uint32_t version, uint64_t size, uint64_t wall_ns)
{
	return record(l, (struct rec){ .type = R_SETTLE, .slot = slot,
				       .state = present ? OBJ_LEDGER_PRESENT : OBJ_LEDGER_DELETED,
				       .id = id, .version = version, .size = size,
				       .time_s = (uint32_t)(wall_ns / 1000000000u) });
}

int obj_ledger_mark_closed(struct obj_ledger *l)
{
	int r = record(l, (struct rec){ .type = R_CLOSED });
	if (r == 0 && fdatasync(l->journal_fd) < 0)
		r = -errno;
	if (r == 0)
		l->unsynced_since_ns = 0;
	return r;
}

int obj_ledger_flush(struct obj_ledger *l, uint64_t now_ns, bool force)
{
	int r = 0;

	/* After a failed write: the held records, or (too many, or a
	 * journal in an unknown state) a fold, tried once per sync interval. */
	if (l->need_fold || l->n_held) {
		if (now_ns < l->retry_ns && !force)
			return l->error;
		l->retry_ns = now_ns + OBJ_LEDGER_SYNC_NS;
		r = l->need_fold ? obj_ledger_fold(l) : write_held(l);
		if (r < 0) {
			l->error = r;
			return r;
		}
	}
	if (l->journal_records > (uint64_t)l->slots + FOLD_SLACK) {
		r = obj_ledger_fold(l);
		if (r < 0)
			l->error = r;
		return r;
	}
	if (!l->unsynced_since_ns || (!force && now_ns - l->unsynced_since_ns < OBJ_LEDGER_SYNC_NS))
		return 0;
	if (fdatasync(l->journal_fd) < 0) {
		r = -errno;
		l->error = r;
		return r;
	}
	l->unsynced_since_ns = 0;
	return 0;
}
