// SPDX-License-Identifier: GPL-2.0-only
/*
 * The write ledger of an object workload thread (see obj_ledger.h): one
 * record format for the map and the journal, so that the map is nothing
 * but a journal folded down to one state per slot, replayed by the same
 * code.
 */
#include "obj_ledger.h"
#include "obj_ledger_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/regfile.h"
#include "obj_ledger_util.h"
#include "obj_payload.h"

static uint32_t rec_crc(const struct rec *r)
{
	return obj_crc32c_update(0, (const uint8_t *)r + 4, sizeof(*r) - 4);
}

void obj_ledger_seal(struct rec *r)
{
	r->crc = rec_crc(r);
}

uint8_t *obj_ledger_rec_vid(struct rec *r)
{
	return (uint8_t *)r + offsetof(struct rec, version);
}

/* Applies one change record to the in-memory state. */
int obj_ledger_apply(struct obj_ledger *l, const struct rec *r)
{
	if (r->slot >= l->slots)
		return -ERANGE;
	struct obj_ledger_entry *e = &l->entries[r->slot];
	/* A new acknowledged state forgets the old one's version id. */
	if (l->vids && (r->type == R_SLOT || r->type == R_ACK || r->type == R_SETTLE))
		l->vids[r->slot][0] = 0;
	switch (r->type) {
	case R_CLOSED:
		return 0;
	case R_LOST_IDS:
		return obj_ledger_add_lost_ids(l, r->id, r->size);
	case R_VERSION_ID: {
		unsigned len = r->state & ~VID_UUID;
		if ((r->state & VID_UUID) ? len != 16 : len > VID_BYTES)
			return -EINVAL;
		if (!l->vids && !(l->vids = calloc(l->slots, sizeof(*l->vids))))
			return -ENOMEM;
		l->vids[r->slot][0] = r->state;
		memcpy(&l->vids[r->slot][1], obj_ledger_rec_vid((struct rec *)r), VID_BYTES);
		return 0;
	}
	case R_SLOT:
		e->state = r->state;
		e->id = r->id;
		e->version = r->version;
		e->size = r->size;
		e->etag = r->etag;
		e->time_s = r->time_s;
		e->pending = OBJ_PENDING_NONE;
		e->uncertain = 0;
		e->unknown = 0; /* a fold's R_UNCERTAIN follows if it still is */
		return 0;
	case R_INTEND_PUT:
	case R_INTEND_DELETE:
		/*
		 * A write sent while an earlier one's outcome is still not
		 * known (it ended uncertain, or soakd died with it in
		 * flight; a doubtful slot is rewritten or cleaned up): the
		 * server may hold what either did.  The slot stays
		 * uncertain whatever this one's answer, but for an
		 * acknowledgement; a refusal leaves the earlier doubt.  And
		 * after a DELETE that may have happened, finding nothing is
		 * no loss: the slot is unknown until a write or a read
		 * fixes it, so the audit never judges it lost or stale.
		 */
		if (e->pending == OBJ_PENDING_DELETE)
			e->unknown = 1;
		e->uncertain = e->pending != OBJ_PENDING_NONE;
		e->pending = r->type == R_INTEND_PUT ? OBJ_PENDING_PUT : OBJ_PENDING_DELETE;
		if (r->type == R_INTEND_PUT) {
			e->try_id = r->id;
			e->try_version = r->version;
			e->try_size = r->size;
		}
		return 0;
	case R_ACK:
		/* A write announced and acknowledged since the ledger was
		 * opened: its outcome is the state, known again. */
		if (e->pending != OBJ_PENDING_NONE)
			e->unknown = 0;
		if (e->pending == OBJ_PENDING_PUT) {
			e->state = OBJ_LEDGER_PRESENT;
			e->id = e->try_id;
			e->version = e->try_version;
			e->size = e->try_size;
		} else if (e->pending == OBJ_PENDING_DELETE) {
			e->state = OBJ_LEDGER_DELETED;
		}
		e->etag = r->etag;
		e->time_s = r->time_s;
		e->pending = OBJ_PENDING_NONE;
		e->uncertain = 0;
		return 0;
	case R_ABORT:
		/* Refused; one sent over an earlier uncertain write leaves
		 * that doubt (see above): the slot stays pending, uncertain. */
		if (!e->uncertain)
			e->pending = OBJ_PENDING_NONE;
		return 0;
	case R_UNCERTAIN:
		if (r->state == UNCERTAIN_LOST)
			e->unknown = 1;
		else if (e->pending != OBJ_PENDING_NONE)
			e->uncertain = 1;
		return 0;
	case R_SETTLE:
		if (r->state == OBJ_LEDGER_PRESENT) {
			e->state = OBJ_LEDGER_PRESENT;
			e->id = r->id;
			e->version = r->version;
			e->size = r->size;
			e->etag = 0;
		} else if (e->pending == OBJ_PENDING_PUT && e->state != OBJ_LEDGER_PRESENT) {
			/* A new name never written: the old one's tombstone stays. */
		} else if (e->state == OBJ_LEDGER_PRESENT) {
			e->state = OBJ_LEDGER_DELETED;
		}
		e->time_s = r->time_s;
		e->pending = OBJ_PENDING_NONE;
		e->uncertain = 0;
		e->unknown = 0;
		return 0;
	default:
		return -EINVAL;
	}
}

static int open_file(struct obj_ledger *l, const char *name, int flags, char *err, size_t errlen)
{
	struct stat st;
	int fd = openat(l->dir_fd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			0640);
	if (fd < 0) {
		int r = -errno;
		if (r != -ENOENT)
			snprintf(err, errlen, "cannot open the ledger file %s: %s", name,
				 strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the ledger file %s is %s; it must be a regular file", name,
			 fstat(fd, &st) < 0 ? "unreadable" : regfile_type(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	/* Regular files never block; the flag only kept a FIFO's open from
	 * hanging. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Damage at record n of a file: noted (see obj_ledger_damage.c). */
static int note_damage(struct obj_ledger *l, struct ledger_damage *d, bool is_map, uint64_t n,
		       char *err, size_t errlen)
{
	int r = obj_ledger_damage_note(d, l->slots, is_map, n * sizeof(struct rec));
	if (r < 0)
		snprintf(err, errlen, "out of memory to replay a damaged ledger of %u objects",
			 l->slots);
	return r;
}

/* Reads the records of one file into the state (is_map: the map, whose
 * generation the journal's must match).  Damage is skipped and noted in
 * d, the records after it applied.  Returns 0 (*ret_stale set when the
 * journal predates the map), or a negative errno with err set. */
static int replay(struct obj_ledger *l, int fd, const char *name, bool is_map,
		  struct obj_ledger_info *info, struct ledger_damage *d, bool *ret_stale,
		  char *err, size_t errlen)
{
	struct rec *buf = malloc(IO_RECORDS * sizeof(*buf));
	uint64_t n = 0, applied = 0;
	size_t have = 0;
	int r = 0;

	if (!buf)
		return -ENOMEM;
	*ret_stale = false;
	for (;;) {
		ssize_t got = read(fd, (char *)buf + have, IO_RECORDS * sizeof(*buf) - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot read the ledger file %s: %s", name, strerror(errno));
			goto out;
		}
		have += (size_t)got;
		size_t whole = have / sizeof(*buf);
		for (size_t i = 0; i < whole; i++, n++) {
			const struct rec *rec = &buf[i];
			bool whole_rec = rec->crc == rec_crc(rec);
			if (n == 0 && !whole_rec) {
				/* Without a header, nothing says whose records
				 * these are. */
				info->damaged++;
				r = note_damage(l, d, is_map, n, err, errlen);
				goto done;
			}
			if (n == 0) {
				if (rec->type == R_HEADER && rec->id == MAGIC &&
				    (rec->version > FORMAT || rec->version < FORMAT_1)) {
					snprintf(err, errlen, "the ledger %s is of format %u, this "
						 "soakd reads formats %u to %u (a newer soakd wrote it)",
						 name, rec->version, FORMAT_1, FORMAT);
					r = -EINVAL;
					goto out;
				}
				if (rec->type != R_HEADER || rec->id != MAGIC) {
					snprintf(err, errlen, "%s is not a soakd ledger (format %u)", name,
						 FORMAT);
					r = -EINVAL;
					goto out;
				}
				if (rec->slot != l->slots) {
					snprintf(err, errlen, "the ledger %s is for %u objects, the workload "
						 "has %u: a run keeps its pool (start a new run to change it)",
						 name, rec->slot, l->slots);
					r = -EINVAL;
					goto out;
				}
				if (is_map) {
					l->gen = rec->gen;
					l->tag = rec->etag;
					l->file_boot = rec->size;
					l->file_format = rec->version;
				} else if (rec->gen != l->gen) {
					if (rec->gen > l->gen) {
						snprintf(err, errlen, "the ledger journal %s is newer "
							 "than its map (generation %u > %u)", name,
							 rec->gen, l->gen);
						r = -EINVAL;
						goto out;
					}
					*ret_stale = true; /* folded into the map already */
					goto out;
				} else if (!info->resumed) {
					l->tag = rec->etag; /* no map yet: the journal's */
				}
				if (!is_map) {
					l->file_boot = rec->size;
					l->file_format = rec->version;
				}
				info->resumed = true;
				continue;
			}
			/* After damage, a record of another generation is
			 * no more this file's than a bad one. */
			if (whole_rec && (!d->seen || rec->gen == l->gen) && rec->slot < l->slots)
				obj_ledger_damage_track(d, &l->entries[rec->slot], rec);
			l->closed = false;
			if (!whole_rec || (d->seen && rec->gen != l->gen) ||
			    obj_ledger_apply(l, rec) < 0) {
				info->damaged++;
				if ((r = note_damage(l, d, is_map, n, err, errlen)) < 0)
					goto out;
				continue;
			}
			applied++;
			l->closed = !is_map && rec->type == R_CLOSED;
		}
		if (got == 0) {
			/* A record cut short at the end: the write a crash
			 * or a full disk interrupted, with nothing after it.
			 * Its slot's earlier intent keeps the slot uncertain;
			 * no other record is missing, so it is not damage. */
			info->torn |= have % sizeof(*buf) != 0;
			break;
		}
		memmove(buf, buf + whole, have - whole * sizeof(*buf));
		have -= whole * sizeof(*buf);
	}
done:
	info->records_replayed += applied;
	if (!is_map)
		l->journal_records = applied;
out:
	free(buf);
	return r;
}

static int set_names(struct obj_ledger *l, const char *base)
{
	if (asprintf(&l->map_name, "%s.map", base) < 0)
		l->map_name = NULL;
	if (asprintf(&l->journal_name, "%s.journal", base) < 0)
		l->journal_name = NULL;
	if (asprintf(&l->tmp_name, "%s.map.tmp", base) < 0)
		l->tmp_name = NULL;
	return l->map_name && l->journal_name && l->tmp_name ? 0 : -ENOMEM;
}

int obj_ledger_open(int dir_fd, const char *base, uint32_t slots, const char *tag, uint64_t boot,
		    struct obj_ledger **ret, struct obj_ledger_info *ret_info, char *err,
		    size_t errlen)
{
	struct obj_ledger_info info = { 0 };
	struct ledger_damage damage = { 0 };
	struct obj_ledger *l = calloc(1, sizeof(*l));
	bool stale = false;
	int r;

	if (!l)
		return -ENOMEM;
	l->dir_fd = -1;
	l->journal_fd = -1;
	l->slots = slots;
	l->boot = boot;
	if (slots == 0 || obj_ledger_tag_parse(tag, &l->tag) < 0) {
		snprintf(err, errlen, "a ledger needs slots and a %d-digit hex run tag",
			 OBJ_LEDGER_TAG_LEN);
		r = -EINVAL;
		goto fail;
	}
	l->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	l->entries = calloc(slots, sizeof(*l->entries));
	if (l->dir_fd < 0 || !l->entries || set_names(l, base) < 0) {
		snprintf(err, errlen, "out of memory for a ledger of %u objects", slots);
		r = -ENOMEM;
		goto fail;
	}

	int map_fd = open_file(l, l->map_name, O_RDONLY, err, errlen);
	if (map_fd < 0 && map_fd != -ENOENT) {
		r = map_fd;
		goto fail;
	}
	if (map_fd >= 0) {
		struct stat st;
		r = replay(l, map_fd, l->map_name, true, &info, &damage, &stale, err, errlen);
		if (fstat(map_fd, &st) == 0)
			l->map_bytes = (uint64_t)st.st_size;
		close(map_fd);
		if (r < 0)
			goto fail;
	}
	l->journal_fd = open_file(l, l->journal_name, O_RDWR | O_CREAT, err, errlen);
	if (l->journal_fd < 0) {
		r = l->journal_fd;
		goto fail;
	}
	r = replay(l, l->journal_fd, l->journal_name, false, &info, &damage, &stale, err,
		   errlen);
	if (r < 0)
		goto fail;
	/* Before the fold, which keeps the marks.  Another boot is told
	 * where both boots are known (a ledger of format 2 has none). */
	obj_ledger_damage_mark(&damage, l);
	/* Closed cleanly: R_CLOSED last, and nothing torn or damaged (a
	 * record cut short after it was appended later; damage before it, a
	 * write-back out of order in a power cut). */
	bool clean = l->closed && !info.torn && !info.damaged;
	if (info.resumed && boot && l->file_boot && l->file_boot != boot && !clean &&
	    (r = obj_ledger_host_restarted(l, &info)) < 0) {
		snprintf(err, errlen, "cannot resume the ledger %s after a host restart: %s",
			 l->journal_name, r == -ERANGE ? "no names are left to set aside" : strerror(-r));
		goto fail;
	}
	info.damage_in_map = damage.in_map;
	info.damage_offset = damage.offset;
	obj_ledger_damage_free(&damage);
	/* An empty journal, one of an older map, or one cut short: start
	 * it afresh from the state just read (folding, if anything was). */
	struct stat st;
	if (fstat(l->journal_fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	/* And one begun under another boot, or of an older format: its
	 * headers take this boot's id (the file's, when this boot's cannot
	 * be read: a later start can still tell) and format. */
	if (!l->boot)
		l->boot = l->file_boot;
	if (stale || info.torn || info.damaged || st.st_size == 0 || l->file_boot != l->boot ||
	    l->file_format != FORMAT)
		r = info.resumed ? obj_ledger_fold(l) : obj_ledger_reset_journal(l);
	else if ((l->journal_len = lseek(l->journal_fd, 0, SEEK_END)) < 0)
		r = -errno;
	else if (l->closed)
		r = obj_ledger_reopen_closed(l);
	if (r < 0) {
		snprintf(err, errlen, "cannot write the ledger %s: %s", l->journal_name, strerror(-r));
		goto fail;
	}
	/* What was in flight when soakd stopped: nobody knows its outcome. */
	for (uint32_t s = 0; s < slots; s++) {
		struct obj_ledger_entry *e = &l->entries[s];
		e->uncertain |= e->pending != OBJ_PENDING_NONE;
		/* Nothing there to doubt (an unknown write aborted since). */
		if (e->state != OBJ_LEDGER_PRESENT && e->pending == OBJ_PENDING_NONE)
			e->unknown = 0;
		info.present += e->state == OBJ_LEDGER_PRESENT && !e->pending && !e->unknown;
		info.uncertain += e->pending != OBJ_PENDING_NONE || e->unknown;
		info.unknown += e->unknown;
		info.deleted += e->state == OBJ_LEDGER_DELETED && !e->pending && !e->unknown;
	}
	snprintf(info.tag, sizeof(info.tag), "%016" PRIx64, l->tag);
	l->opened = true;
	*ret = l;
	*ret_info = info;
	return 0;
fail:
	obj_ledger_damage_free(&damage);
	obj_ledger_close(l);
	return r;
}

void obj_ledger_close(struct obj_ledger *l)
{
	if (!l)
		return;
	if (l->journal_fd >= 0) {
		/* Records held back by a failed write: a last try. */
		if (l->need_fold || l->n_held)
			(void)obj_ledger_flush(l, obj_ledger_mono_ns(), true);
		/* Closed cleanly only with every record on disk: not after
		 * any failed write or sync (a sync's error is told once, and
		 * the pages it lost are not written again). */
		if (!l->opened || l->need_fold || l->n_held || l->error ||
		    obj_ledger_mark_closed(l) < 0)
			(void)fdatasync(l->journal_fd);
		close(l->journal_fd);
	}
	if (l->dir_fd >= 0)
		close(l->dir_fd);
	free(l->entries);
	free(l->vids);
	free(l->lost);
	free(l->held);
	free(l->map_name);
	free(l->journal_name);
	free(l->tmp_name);
	free(l);
}

uint32_t obj_ledger_slots(const struct obj_ledger *l)
{
	return l->slots;
}

const struct obj_ledger_entry *obj_ledger_get(const struct obj_ledger *l, uint32_t slot)
{
	return slot < l->slots ? &l->entries[slot] : NULL;
}

uint64_t obj_ledger_disk_bytes(const struct obj_ledger *l)
{
	return l->map_bytes + (l->journal_records + 1) * sizeof(struct rec);
}

uint64_t obj_ledger_journal_records(const struct obj_ledger *l)
{
	return l->journal_records;
}

int obj_ledger_error(const struct obj_ledger *l)
{
	return l->error;
}
