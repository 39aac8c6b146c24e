// SPDX-License-Identifier: GPL-2.0-only
/*
 * The write ledger of an object workload thread (see obj_ledger.h): one
 * record format for the map and the journal, so that the map is nothing
 * but a journal folded down to one state per slot, replayed by the same
 * code.
 */
#include "obj_ledger.h"

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

#define MAGIC UINT64_C(0x31474c4b414f53) /* "SOAKLG1" */
/* 2 added R_VERSION_ID; a format 1 ledger (none of them) loads as it is. */
#define FORMAT 2
#define FORMAT_1 1
/* The journal is folded into the map when it holds more records than
 * this beyond the number of slots. */
#define FOLD_SLACK 4096
#define IO_RECORDS 4096
/* Records kept in memory while the journal cannot take them (a full or
 * failing disk; allocated then), written before any later one; past this
 * many, the next fold writes the whole state instead. */
#define HELD_MAX 1024

enum rec_type {
	R_HEADER = 1,
	R_SLOT,          /* a map entry: the acknowledged state */
	R_INTEND_PUT,
	R_INTEND_DELETE,
	R_ACK,
	R_ABORT,
	R_UNCERTAIN,
	R_SETTLE,        /* state: present or not; id, version, size */
	/* The acknowledged PUT's version id (a versioned bucket), after its
	 * R_ACK or R_SLOT: state = its encoded length, the bytes from
	 * "version" to "time_s" (VID_BYTES) = the id, a UUID as 16 bytes. */
	R_VERSION_ID,
};

#define VID_BYTES OBJ_LEDGER_VID_BYTES
#define VID_UUID OBJ_LEDGER_VID_UUID

/* 48 bytes, host byte order (the run directory belongs to this host). */
struct rec {
	uint32_t crc;    /* CRC32C of the rest */
	uint8_t type;
	uint8_t state;
	uint16_t reserved;
	uint32_t slot;   /* R_HEADER: the number of slots */
	uint32_t version;/* R_HEADER: FORMAT */
	uint64_t id;     /* R_HEADER: MAGIC */
	uint64_t size;
	uint64_t etag;   /* R_HEADER: the run tag */
	uint32_t time_s;
	uint32_t gen;    /* the map generation a journal belongs to */
};
_Static_assert(sizeof(struct rec) == 48, "ledger records are 48 bytes");

struct obj_ledger {
	int dir_fd;
	int journal_fd;
	char *map_name, *journal_name, *tmp_name;
	uint32_t slots;
	uint32_t gen;
	uint64_t tag;
	struct obj_ledger_entry *entries;
	/* Per slot: the length byte and VID_BYTES of R_VERSION_ID; allocated
	 * with the first version id (only versioned buckets have any). */
	uint8_t (*vids)[1 + VID_BYTES];
	uint64_t journal_records;   /* since the map */
	/* The journal's length in whole records: a failed append is cut
	 * back to it, so that no later record lands out of step. */
	off_t journal_len;
	/* Records applied but not in the journal yet, in order; or, past
	 * HELD_MAX (or a journal that could not be started), need_fold: only
	 * a fold can put the state on disk, and nothing is appended until
	 * one does.  retry_ns: when a fold is tried again. */
	struct rec *held;
	size_t n_held;
	bool need_fold;
	uint64_t retry_ns;
	uint64_t unsynced_since_ns; /* 0: all synced */
	uint64_t map_bytes;
	int error;
};

static uint32_t rec_crc(const struct rec *r)
{
	return obj_crc32c_update(0, (const uint8_t *)r + 4, sizeof(*r) - 4);
}

static void seal(struct rec *r)
{
	r->crc = rec_crc(r);
}

static uint8_t *vid_bytes(struct rec *r)
{
	return (uint8_t *)r + offsetof(struct rec, version);
}

/* Applies one change record to the in-memory state. */
static int apply(struct obj_ledger *l, const struct rec *r)
{
	if (r->slot >= l->slots)
		return -ERANGE;
	struct obj_ledger_entry *e = &l->entries[r->slot];
	/* A new acknowledged state forgets the old one's version id. */
	if (l->vids && (r->type == R_SLOT || r->type == R_ACK || r->type == R_SETTLE))
		l->vids[r->slot][0] = 0;
	switch (r->type) {
	case R_VERSION_ID: {
		unsigned len = r->state & ~VID_UUID;
		if ((r->state & VID_UUID) ? len != 16 : len > VID_BYTES)
			return -EINVAL;
		if (!l->vids && !(l->vids = calloc(l->slots, sizeof(*l->vids))))
			return -ENOMEM;
		l->vids[r->slot][0] = r->state;
		memcpy(&l->vids[r->slot][1], vid_bytes((struct rec *)r), VID_BYTES);
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
		return 0;
	case R_INTEND_PUT:
		e->pending = OBJ_PENDING_PUT;
		e->try_id = r->id;
		e->try_version = r->version;
		e->try_size = r->size;
		e->uncertain = 0;
		return 0;
	case R_INTEND_DELETE:
		e->pending = OBJ_PENDING_DELETE;
		e->uncertain = 0;
		return 0;
	case R_ACK:
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
		e->pending = OBJ_PENDING_NONE;
		e->uncertain = 0;
		return 0;
	case R_UNCERTAIN:
		if (e->pending != OBJ_PENDING_NONE)
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
		return 0;
	default:
		return -EINVAL;
	}
}

static struct rec header(const struct obj_ledger *l)
{
	struct rec h = { .type = R_HEADER, .slot = l->slots, .version = FORMAT, .id = MAGIC,
			 .etag = l->tag, .gen = l->gen };
	seal(&h);
	return h;
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

/* Reads the records of one file into the state.  want_gen: the journal's
 * generation must match the map's (UINT32_MAX: this is the map, take its
 * generation).  Returns 0 (*ret_stale set when the journal predates the
 * map), or a negative errno with err set. */
static int replay(struct obj_ledger *l, int fd, const char *name, bool is_map,
		  struct obj_ledger_info *info, bool *ret_stale, char *err, size_t errlen)
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
			if (rec->crc != rec_crc(rec)) {
				info->damaged++;
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
				info->resumed = true;
				continue;
			}
			if (apply(l, rec) < 0) {
				info->damaged++;
				goto done;
			}
			applied++;
		}
		if (got == 0) {
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

/* Starts the journal afresh for the current generation. */
static int reset_journal(struct obj_ledger *l)
{
	struct rec h = header(l);
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

/* Writes every slot's state as a new map generation, then empties the
 * journal.  A crash in between leaves the new map and an old journal,
 * which open recognises by its generation and ignores. */
static int fold(struct obj_ledger *l)
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
	buf[n++] = header(l);
	for (uint32_t s = 0; s < l->slots; s++) {
		const struct obj_ledger_entry *e = &l->entries[s];
		if (e->state == OBJ_LEDGER_NONE && e->pending == OBJ_PENDING_NONE)
			continue;
		if (n + 4 > IO_RECORDS) {
			if ((r = obj_ledger_write_all(fd, buf, n * sizeof(*buf))) < 0)
				goto fail;
			bytes += n * sizeof(*buf);
			n = 0;
		}
		buf[n] = (struct rec){ .type = R_SLOT, .state = e->state, .slot = s,
				       .version = e->version, .id = e->id, .size = e->size,
				       .etag = e->etag, .time_s = e->time_s, .gen = l->gen };
		seal(&buf[n++]);
		if (l->vids && l->vids[s][0]) {
			buf[n] = (struct rec){ .type = R_VERSION_ID, .state = l->vids[s][0], .slot = s,
					       .gen = l->gen };
			memcpy(vid_bytes(&buf[n]), &l->vids[s][1], VID_BYTES);
			seal(&buf[n++]);
		}
		if (e->pending != OBJ_PENDING_NONE) {
			buf[n] = (struct rec){ .type = e->pending == OBJ_PENDING_PUT ? R_INTEND_PUT
										   : R_INTEND_DELETE,
					       .slot = s, .version = e->try_version, .id = e->try_id,
					       .size = e->try_size, .gen = l->gen };
			seal(&buf[n++]);
		}
		if (e->uncertain) {
			buf[n] = (struct rec){ .type = R_UNCERTAIN, .slot = s, .gen = l->gen };
			seal(&buf[n++]);
		}
	}
	if ((r = obj_ledger_write_all(fd, buf, n * sizeof(*buf))) < 0)
		goto fail;
	bytes += n * sizeof(*buf);
	if (fsync(fd) < 0 || renameat(l->dir_fd, l->tmp_name, l->dir_fd, l->map_name) < 0 ||
	    fsync(l->dir_fd) < 0) {
		r = -errno;
		goto fail;
	}
	close(fd);
	fd = -1;
	l->map_bytes = bytes;
	/* The map holds every change, those held back too. */
	l->n_held = 0;
	r = reset_journal(l);
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

int obj_ledger_open(int dir_fd, const char *base, uint32_t slots, const char *tag,
		    struct obj_ledger **ret, struct obj_ledger_info *ret_info, char *err,
		    size_t errlen)
{
	struct obj_ledger_info info = { 0 };
	struct obj_ledger *l = calloc(1, sizeof(*l));
	bool stale = false;
	int r;

	if (!l)
		return -ENOMEM;
	l->dir_fd = -1;
	l->journal_fd = -1;
	l->slots = slots;
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
		r = replay(l, map_fd, l->map_name, true, &info, &stale, err, errlen);
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
	r = replay(l, l->journal_fd, l->journal_name, false, &info, &stale, err, errlen);
	if (r < 0)
		goto fail;
	/* An empty journal, one of an older map, or one cut short: start
	 * it afresh from the state just read (folding, if anything was). */
	struct stat st;
	if (fstat(l->journal_fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (stale || info.torn || info.damaged || st.st_size == 0)
		r = info.resumed ? fold(l) : reset_journal(l);
	else if ((l->journal_len = lseek(l->journal_fd, 0, SEEK_END)) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "cannot write the ledger %s: %s", l->journal_name, strerror(-r));
		goto fail;
	}
	/* What was in flight when soakd stopped: nobody knows its outcome. */
	for (uint32_t s = 0; s < slots; s++) {
		struct obj_ledger_entry *e = &l->entries[s];
		e->uncertain |= e->pending != OBJ_PENDING_NONE;
		info.present += e->state == OBJ_LEDGER_PRESENT && !e->pending;
		info.uncertain += e->pending != OBJ_PENDING_NONE;
		info.deleted += e->state == OBJ_LEDGER_DELETED && !e->pending;
	}
	snprintf(info.tag, sizeof(info.tag), "%016" PRIx64, l->tag);
	*ret = l;
	*ret_info = info;
	return 0;
fail:
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
		if (l->unsynced_since_ns)
			(void)fdatasync(l->journal_fd);
		close(l->journal_fd);
	}
	if (l->dir_fd >= 0)
		close(l->dir_fd);
	free(l->entries);
	free(l->vids);
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
	if (apply(l, &r) < 0)
		return -ERANGE;
	seal(&r);
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
	int e = obj_ledger_vid_pack(vid, vid_bytes(&r), &r.state);
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

int obj_ledger_flush(struct obj_ledger *l, uint64_t now_ns, bool force)
{
	int r = 0;

	/* After a failed write: the held records, or (too many, or a
	 * journal in an unknown state) a fold, tried once per sync interval. */
	if (l->need_fold || l->n_held) {
		if (now_ns < l->retry_ns && !force)
			return l->error;
		l->retry_ns = now_ns + OBJ_LEDGER_SYNC_NS;
		r = l->need_fold ? fold(l) : write_held(l);
		if (r < 0) {
			l->error = r;
			return r;
		}
	}
	if (l->journal_records > (uint64_t)l->slots + FOLD_SLACK) {
		r = fold(l);
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
