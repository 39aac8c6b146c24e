// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ledger's changes (see obj_ledger.h): each applied, then appended to
 * the journal, or held while the journal cannot take it; and the syncs,
 * folds and journal resets that put them on disk.
 */
#include "obj_ledger.h"
#include "obj_ledger_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct rec obj_ledger_header(const struct obj_ledger *l)
{
	struct rec h = { .type = R_HEADER, .slot = l->slots, .version = FORMAT, .id = MAGIC,
			 .size = l->boot, .etag = l->tag, .gen = l->gen };
	obj_ledger_seal(&h);
	return h;
}

/* Starts the journal afresh for the current generation. */
int obj_ledger_reset_journal(struct obj_ledger *l)
{
	struct rec h = obj_ledger_header(l);
	int r = 0;
	l->journal_records = 0;
	l->unsynced_since_ns = 0;
	if (ftruncate(l->journal_fd, 0) < 0 || lseek(l->journal_fd, 0, SEEK_SET) < 0)
		r = -errno;
	if (r == 0)
		r = obj_ledger_write_all(l->journal_fd, &h, sizeof(h));
	if (r == 0 && fdatasync(l->journal_fd) < 0)
		r = -errno;
	/* Without its header the journal takes no record: the state waits
	 * for the next fold. */
	l->journal_len = r == 0 ? (off_t)sizeof(h) : 0;
	l->need_fold = r < 0;
	return r;
}

/* A journal closed cleanly, appended to again: its R_CLOSED goes first,
 * synced, so that no record of this start can reach the disk with it
 * still in place (a power cut would leave the ledger looking closed). */
int obj_ledger_reopen_closed(struct obj_ledger *l)
{
	off_t len = l->journal_len - (off_t)sizeof(struct rec);
	if (ftruncate(l->journal_fd, len) < 0 || lseek(l->journal_fd, len, SEEK_SET) < 0 ||
	    fdatasync(l->journal_fd) < 0)
		return -errno;
	l->journal_len = len;
	l->journal_records--;
	l->closed = false;
	return 0;
}

/* Writes every slot's state as a new map generation, then empties the
 * journal.  A crash in between leaves the new map and an old journal,
 * which open recognises by its generation and ignores. */
int obj_ledger_fold(struct obj_ledger *l)
{
	struct rec *buf = malloc(IO_RECORDS * sizeof(*buf));
	size_t n = 0;
	uint64_t bytes = 0;
	int r = 0;
	int fd = -1;

	if (!buf)
		return -ENOMEM;
	(void)unlinkat(l->dir_fd, l->tmp_name, 0);
	fd = openat(l->dir_fd, l->tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0640);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	l->gen++;
	buf[n++] = obj_ledger_header(l);
	for (size_t i = 0; i < l->n_lost; i++) {
		if (n == IO_RECORDS) {
			if ((r = obj_ledger_write_all(fd, buf, n * sizeof(*buf))) < 0)
				goto fail;
			bytes += n * sizeof(*buf);
			n = 0;
		}
		buf[n] = (struct rec){ .type = R_LOST_IDS, .id = l->lost[i].from,
				       .size = l->lost[i].to, .gen = l->gen };
		obj_ledger_seal(&buf[n++]);
	}
	for (uint32_t s = 0; s < l->slots; s++) {
		const struct obj_ledger_entry *e = &l->entries[s];
		if (e->state == OBJ_LEDGER_NONE && e->pending == OBJ_PENDING_NONE)
			continue;
		if (n + 5 > IO_RECORDS) {
			if ((r = obj_ledger_write_all(fd, buf, n * sizeof(*buf))) < 0)
				goto fail;
			bytes += n * sizeof(*buf);
			n = 0;
		}
		buf[n] = (struct rec){ .type = R_SLOT, .state = e->state, .slot = s,
				       .version = e->version, .id = e->id, .size = e->size,
				       .etag = e->etag, .time_s = e->time_s, .gen = l->gen };
		obj_ledger_seal(&buf[n++]);
		if (l->vids && l->vids[s][0]) {
			buf[n] = (struct rec){ .type = R_VERSION_ID, .state = l->vids[s][0], .slot = s,
					       .gen = l->gen };
			memcpy(obj_ledger_rec_vid(&buf[n]), &l->vids[s][1], VID_BYTES);
			obj_ledger_seal(&buf[n++]);
		}
		if (e->pending != OBJ_PENDING_NONE) {
			buf[n] = (struct rec){ .type = e->pending == OBJ_PENDING_PUT ? R_INTEND_PUT
										   : R_INTEND_DELETE,
					       .slot = s, .version = e->try_version, .id = e->try_id,
					       .size = e->try_size, .gen = l->gen };
			obj_ledger_seal(&buf[n++]);
		}
		if (e->uncertain) {
			buf[n] = (struct rec){ .type = R_UNCERTAIN, .slot = s, .gen = l->gen };
			obj_ledger_seal(&buf[n++]);
		}
		if (e->unknown) {
			buf[n] = (struct rec){ .type = R_UNCERTAIN, .state = UNCERTAIN_LOST, .slot = s,
					       .gen = l->gen };
			obj_ledger_seal(&buf[n++]);
		}
	}
	if ((r = obj_ledger_write_all(fd, buf, n * sizeof(*buf))) < 0)
		goto fail;
	bytes += n * sizeof(*buf);
	if (fsync(fd) < 0 || renameat(l->dir_fd, l->tmp_name, l->dir_fd, l->map_name) < 0) {
		r = -errno;
		goto fail;
	}
	/* Renamed: the map in place is of the new generation, whatever the
	 * directory's sync says, and the journal's records must be too (of
	 * the old one, the next open would take them as folded already). */
	int dir_r = fsync(l->dir_fd) < 0 ? -errno : 0;
	close(fd);
	fd = -1;
	l->map_bytes = bytes;
	/* The map holds every change, those held back too. */
	l->n_held = 0;
	r = obj_ledger_reset_journal(l);
	if (r == 0)
		r = dir_r;
	goto out;
fail:
	l->gen--;
	(void)unlinkat(l->dir_fd, l->tmp_name, 0);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}
