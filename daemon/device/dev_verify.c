// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device data verification in the engine (dev_verify.h): filling, the
 * write and read hooks of the I/O path, flush epochs on the stream's
 * ring, the first failures of each class logged and their blocks saved.
 */
#include "dev_verify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "base/log.h"
#include "dev_engine_int.h"
#include "dev_verify_int.h"
#include "verify.h"
#include "verify_map.h"
#include "workload/workload.h"

#define LOGGED_PER_CLASS 5
/* A device that keeps failing its flushes is asked again after 4 ms, then
 * twice as long each time, up to a second: not hammered with fsyncs in a
 * loop while the full ring holds every write back. */
#define FLUSH_BACKOFF_MIN_NS (UINT64_C(4000000))
#define FLUSH_BACKOFF_MAX_NS (UINT64_C(1000000000))
#define SAVED_MAX 32

enum { SLOT_INFLIGHT = 1 };

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* op_stats' classes, in verify.h's order. */
static const enum op_verify_class to_op_class[VERIFY_CLASSES] = {
	[VERIFY_OK] = OP_VERIFY_CHECKED, [VERIFY_CORRUPT] = OP_VERIFY_CORRUPT,
	[VERIFY_STALE] = OP_VERIFY_STALE, [VERIFY_MISDIRECTED] = OP_VERIFY_MISDIRECTED,
	[VERIFY_TORN] = OP_VERIFY_TORN, [VERIFY_FOREIGN] = OP_VERIFY_FOREIGN,
	[VERIFY_UNCERTAIN] = OP_VERIFY_UNCERTAIN, [VERIFY_UNCHECKED] = OP_VERIFY_UNCHECKED,
};

void dev_verify_count(uint64_t *verify, uint64_t *corrupt, enum verify_class c)
{
	if (c != VERIFY_UNCHECKED)
		verify[OP_VERIFY_CHECKED]++;
	if (c != VERIFY_OK)
		verify[to_op_class[c]]++;
	if (c != VERIFY_OK && c != VERIFY_UNCERTAIN && c != VERIFY_UNCHECKED)
		(*corrupt)++;
}

static uint8_t window(unsigned back)
{
	return back > 127 ? 127 : (uint8_t)back;
}

/* What the map says block b should hold. */
static void expect_block(const struct dev_verify *v, uint64_t b, const struct dev_verify_seen *seen,
			 struct verify_expect *e)
{
	const struct verify_map *m = &v->map;
	uint8_t gen = m->gens[b];
	uint8_t back = verify_map_uncertain(m, b);
	bool filled = verify_map_filled(m);

	*e = (struct verify_expect){ .id = v->id, .offset = b * VERIFY_BLOCK, .gen = gen,
				     .known = filled || gen != 0, .uncertain = back > 0,
				     .back = back };
	e->id.run = verify_map_run_id(m);
	/*
	 * A read that raced writes (in flight at its submit, or submitted
	 * during it) may see the block as it was at any moment of it: from
	 * as far back as the device might have been at the submit up to
	 * every write since.  Were the map moved back under it (a read that
	 * raced nothing settled the block), it is not judged past what it
	 * saw with two more.
	 */
	int since = seen ? verify_gen_steps(seen->gen, gen) : 0;
	if (seen && (since != 0 || (seen->back & DEV_VERIFY_WRITING))) {
		unsigned at_submit = seen->back & ~DEV_VERIFY_WRITING;
		unsigned w = since >= 0 && since <= 127 ? (unsigned)since + at_submit
						       : at_submit > 2 ? at_submit : 2;
		e->raced = true;
		if (window(w) > e->back)
			e->back = window(w);
	}
	int from_start = verify_gen_steps(0, gen);
	e->maybe_unwritten = !filled && from_start >= 0 && from_start <= e->back;
	if (v->adopt_all) {
		e->any_gen = e->uncertain = e->known = true;
		e->maybe_unwritten = !filled;
	}
}

static void save_block(struct dev_verify *v, enum verify_class c, uint64_t b,
		       const uint8_t *block)
{
	char name[160];

	if (v->saved >= SAVED_MAX || v->dir_fd < 0)
		return;
	snprintf(name, sizeof(name), "%s-%s-%" PRIu64 ".block", v->name, verify_class_name(c),
		 b * VERIFY_BLOCK);
	int fd = openat(v->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return;
	v->saved++;
	if (write(fd, block, VERIFY_BLOCK) != VERIFY_BLOCK)
		log_warning("%s: cannot save a %s block to %s: %m", v->label, verify_class_name(c),
			    name);
	close(fd);
}

static void report(struct dev_verify *v, enum verify_class c, const struct verify_expect *e,
		   const struct verify_header *found, const uint8_t *block)
{
	char text[256];

	if (c == VERIFY_OK || c == VERIFY_UNCERTAIN || c == VERIFY_UNCHECKED ||
	    v->logged[c] >= LOGGED_PER_CLASS)
		return;
	verify_header_format(found, text, sizeof(text));
	v->logged[c]++;
	log_warning("%s: verify: %s block at offset %" PRIu64 ": expected run=%016" PRIx64
		    " offset=%" PRIu64 " gen=%u%s, found %s%s", v->label, verify_class_name(c),
		    e->offset, e->id.run, e->offset, e->gen,
		    e->uncertain ? " (or up to a few older: unflushed at a crash)" : "", text,
		    v->logged[c] == LOGGED_PER_CLASS ? " (further ones are counted, not logged)"
						     : "");
	save_block(v, c, e->offset / VERIFY_BLOCK, block);
}

enum verify_class dev_verify_block(struct dev_verify *v, uint64_t b, const uint8_t *block,
				   const struct dev_verify_seen *seen)
{
	struct verify_expect e;
	struct verify_header found;

	expect_block(v, b, seen, &e);
	bool raced = e.raced;
	enum verify_class c = verify_check(block, &e, &found);
	/* A block whose uncertain mark was lost may rightly hold an older
	 * write: once one was lost, older is uncertain. */
	if (c == VERIFY_STALE && verify_map_unc_lost(&v->map)) {
		if (!v->dropped_logged)
			log_warning("%s: verify: %" PRIu64 " blocks' uncertain marks were lost (held "
				    "in memory when soakd last stopped, the table of uncertain blocks "
				    "being full, or no memory for them); from now on a block older "
				    "than the last write is counted uncertain, not stale",
				    v->label, verify_map_unc_lost(&v->map));
		v->dropped_logged = true;
		c = VERIFY_UNCERTAIN;
	}
	report(v, c, &e, &found, block);
	/* Torn, where a host restart left any generation possible (verify.c
	 * does not judge it): no truth to settle at, so it stays uncertain
	 * until a write settles it, not judged against the map at its next
	 * read. */
	if (c == VERIFY_UNCHECKED && e.any_gen && !raced &&
	    verify_decode(block, VERIFY_BLOCK, &found) == VERIFY_DECODE_BAD_CRC &&
	    verify_sectors_torn(block, &found))
		verify_map_mark_uncertain(&v->map, b, 127);
	/* Now known: what the block holds is the truth from here on; unless
	 * a write to it was in flight during the read, and may land after. */
	if (c == VERIFY_UNCERTAIN && !raced)
		verify_map_settle(&v->map, b,
				  found.magic && found.run == e.id.run ? found.gen : 0);
	return c;
}

/*
 * Whether an op may not be issued now: the map's ring must have room for
 * the blocks of any op (a write records one entry per block, all at its
 * submit) on top of those the pre-reads in flight will write when they
 * complete.  Checking for one free entry let a large write, or pre-reads
 * turning into writes, run past the ring's end and overwrite entries of
 * epochs not yet flushed.
 */
bool dev_verify_blocked(const struct dev_stream *d)
{
	const struct dev_verify *v = d->verify;
	uint64_t op_blocks = d->max_len / VERIFY_BLOCK + 1;

	return verify_map_open_writes(&v->map) + v->preread_blocks + op_blocks > VERIFY_MAP_RING;
}


/* The whole blocks of [offset, offset + len) inside the map. */
static void block_range(const struct dev_verify *v, uint64_t offset, uint32_t len,
			uint64_t *ret_first, uint64_t *ret_end)
{
	uint64_t first = (offset + VERIFY_BLOCK - 1) / VERIFY_BLOCK;
	uint64_t end = (offset + len) / VERIFY_BLOCK;

	if (end > v->n_blocks)
		end = v->n_blocks;
	*ret_first = first;
	*ret_end = end > first ? end : first;
}

static uint64_t slot_blocks(const struct dev_verify *v, const struct dev_slot *slot)
{
	uint64_t b, end;

	block_range(v, slot->offset, slot->len, &b, &end);
	return end - b;
}

static bool overlap(const struct dev_slot *a, const struct dev_slot *b)
{
	return a->offset < b->offset + b->len && b->offset < a->offset + a->len;
}

static size_t slot_at(const struct dev_verify *v, unsigned slot_index, uint64_t k)
{
	return (size_t)slot_index * v->slot_blocks + k;
}

/*
 * A read (or write) just submitted, and the writes in flight to its
 * blocks.  A write in flight may not have landed, nor any after it: a
 * read's window at its submit reaches back past that write to what the
 * block held before it, which was itself uncertain by that write's own
 * window.  A write may land before writes to the same block submitted
 * earlier: once all have completed, the block holds the generation of any
 * of them, so it stays uncertain back to the oldest.  Only the blocks
 * both ops hold; a write settled its own before this.
 */
static void mark_races(struct dev_stream *d, unsigned slot_index, bool is_write)
{
	struct dev_verify *v = d->verify;
	const struct dev_slot *slot = &d->slots[slot_index];
	uint64_t first, end;

	if (!v->n_writes)
		return;
	block_range(v, slot->offset, slot->len, &first, &end);
	for (unsigned i = 0; i < d->n_slots; i++) {
		const struct dev_slot *other = &d->slots[i];
		if (i == slot_index || !(v->slot_state[i] & SLOT_INFLIGHT) ||
		    other->io != DEV_IO_WRITE || !overlap(slot, other))
			continue;
		uint64_t ofirst, oend;
		block_range(v, other->offset, other->len, &ofirst, &oend);
		uint64_t lo = first > ofirst ? first : ofirst, hi = end < oend ? end : oend;
		for (uint64_t b = lo; b < hi; b++) {
			size_t at = slot_at(v, slot_index, b - first), ot = slot_at(v, i, b - ofirst);
			int steps = verify_gen_steps(v->slot_gen[ot], v->slot_gen[at]);
			if (steps < 0 || steps > 127)
				steps = 127;
			if (is_write) {
				verify_map_mark_uncertain(&v->map, b, window((unsigned)steps));
				continue;
			}
			unsigned back = (unsigned)steps + 1u + v->slot_back[ot];
			unsigned had = v->slot_back[at] & ~DEV_VERIFY_WRITING;
			v->slot_back[at] = (uint8_t)(DEV_VERIFY_WRITING |
						     (back > had ? window(back) : had));
		}
	}
}

void dev_verify_submit(struct dev_stream *d, unsigned slot_index)
{
	struct dev_verify *v = d->verify;
	struct dev_slot *slot = &d->slots[slot_index];
	bool is_write = slot->io == DEV_IO_WRITE;

	v->slot_state[slot_index] = SLOT_INFLIGHT;
	if (!is_write) {
		uint64_t b, end;
		block_range(v, slot->offset, slot->len, &b, &end);
		for (size_t at = slot_at(v, slot_index, 0); b < end; b++, at++) {
			v->slot_gen[at] = v->map.gens[b];
			v->slot_back[at] = verify_map_uncertain(&v->map, b);
		}
		mark_races(d, slot_index, false);
		v->n_reads++;
		if (slot->pre_read)
			v->preread_blocks += slot_blocks(v, slot);
		return;
	}
	uint8_t *buf = d->buffers + (size_t)(d->n_slots + slot_index) * d->max_len;
	uint64_t b, end, now = realtime_ns();
	block_range(v, slot->offset, slot->len, &b, &end);
	v->slot_ring[slot_index] = verify_map_head(&v->map);
	for (size_t at = slot_at(v, slot_index, 0); b < end; b++, at++) {
		uint8_t gen = verify_map_write(&v->map, b);
		/* How uncertain it was before: what the write's ring entry keeps. */
		v->slot_back[at] = verify_map_prev_back(&v->map, verify_map_head(&v->map) - 1);
		v->slot_gen[at] = gen;
		verify_encode(buf + (b * VERIFY_BLOCK - slot->offset), &v->id, b * VERIFY_BLOCK,
			      verify_map_next_seq(&v->map), gen, now);
	}
	mark_races(d, slot_index, true);
	v->slot_epoch[slot_index] = verify_map_epoch(&v->map);
	v->writes_inflight[v->slot_epoch[slot_index] & 1]++;
	v->n_writes++;
}

/* A write of blocks [b, end) completed. */
static void write_done(struct dev_verify *v, unsigned slot_index, uint64_t b, uint64_t end,
		       bool error)
{
	v->writes_inflight[v->slot_epoch[slot_index] & 1]--;
	v->n_writes--;
	/* A failed write may have landed, in part or not at all: the block
	 * holds its generation or any later one, or any it could hold before
	 * it (a block whose earlier write failed too is two or more behind). */
	for (size_t at = slot_at(v, slot_index, 0), k = 0; error && b + k < end; k++, at++) {
		int since = verify_gen_steps(v->slot_gen[at], v->map.gens[b + k]);
		unsigned back = (since >= 0 && since <= 127 ? (unsigned)since : 127) + 1u +
				v->slot_back[at];
		verify_map_mark_uncertain(&v->map, b + k, window(back));
	}
	/* A FUA write (RWF_DSYNC: REQ_FUA, or the write and a flush
	 * where the device does not claim FUA) is durable once it
	 * completes, without waiting for the epoch's flush. */
	if (!error && v->cfg->fua)
		verify_map_durable(&v->map, v->slot_ring[slot_index],
				   v->slot_ring[slot_index] + (end - b));
}

bool dev_verify_complete(struct workload_stream *s, struct dev_stream *d, unsigned slot_index,
			 bool error)
{
	struct dev_verify *v = d->verify;
	struct dev_slot *slot = &d->slots[slot_index];
	uint64_t b, end;

	v->slot_state[slot_index] = 0;
	block_range(v, slot->offset, slot->len, &b, &end);
	if (slot->io == DEV_IO_WRITE) {
		write_done(v, slot_index, b, end, error);
		return false;
	}
	v->n_reads--;
	if (slot->pre_read)
		v->preread_blocks -= end - b;
	if (error)
		return false;
	struct op_stats *os = &stream_current(&s->stats)->ops[slot->op];
	const uint8_t *buf = d->buffers + (size_t)slot_index * d->max_len;
	/* Parts of blocks at the ends (reads not on block boundaries). */
	uint64_t whole = end > b ? end - b : 0;
	if ((uint64_t)slot->len > whole * VERIFY_BLOCK)
		os->verify[OP_VERIFY_UNCHECKED]++;
	for (uint64_t i = b; i < end; i++) {
		size_t at = slot_at(v, slot_index, i - b);
		struct dev_verify_seen seen = { .gen = v->slot_gen[at], .back = v->slot_back[at] };
		enum verify_class c = dev_verify_block(v, i, buf + (i * VERIFY_BLOCK - slot->offset),
						       &seen);
		dev_verify_count(os->verify, &os->corrupt, c);
	}
	if (!slot->pre_read)
		return false;
	/* Checked before it is overwritten: now the write itself. */
	slot->pre_read = 0;
	slot->io = DEV_IO_WRITE;
	dev_verify_submit(d, slot_index);
	return true;
}

/*
 * Flush epochs.  An epoch closes every flush_interval (sooner when half
 * the ring is used); its fsync is queued once every write stamped with it
 * has completed (an fsync covers completed writes only), and one flush at
 * a time, so at most two epochs have writes in flight.  After a failed
 * flush the next waits for its backoff (flush_retry_ns), ring full or not;
 * the thread meanwhile reaps completions and counts the ops due as any
 * that wait for room (dev_engine.c, next_wake).
 */
void dev_verify_tick(struct workload_stream *s, struct dev_stream *d, uint64_t now_ns)
{
	struct dev_verify *v = d->verify;
	(void)s;

	if (!v->closing && !v->flushing && now_ns >= v->flush_retry_ns &&
	    (now_ns >= v->next_flush_ns || verify_map_open_writes(&v->map) > VERIFY_MAP_RING / 2)) {
		/* Nothing written since the last flush: nothing to flush, and
		 * the next look is an interval away (not a wake-up at once). */
		v->next_flush_ns = now_ns + v->cfg->flush_interval_ns;
		if (!verify_map_open_writes(&v->map))
			return;
		v->closing_epoch = verify_map_close_epoch(&v->map);
		v->closing = true;
	}
	if (!v->closing || v->writes_inflight[v->closing_epoch & 1])
		return;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	if (!sqe)
		return;             /* the next pass */
	io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, DEV_VERIFY_FLUSH_TAG);
	v->closing = false;
	v->flushing = true;
}

/*
 * A late completion, of an op the last run gave up on: a write is known to
 * have landed (or, failed, maybe not), so it leaves the epoch it was
 * stamped with like any other; a read (or a pre-read, which does not go on
 * as its write) is not checked, its op was counted as missed.
 */
void dev_verify_late(struct dev_stream *d, unsigned slot_index, bool error)
{
	struct dev_verify *v = d->verify;
	struct dev_slot *slot = &d->slots[slot_index];
	uint64_t b, end;

	if (!(v->slot_state[slot_index] & SLOT_INFLIGHT))
		return;
	v->slot_state[slot_index] = 0;
	block_range(v, slot->offset, slot->len, &b, &end);
	if (slot->io == DEV_IO_WRITE) {
		write_done(v, slot_index, b, end, error);
	} else {
		v->n_reads--;
		if (slot->pre_read)
			v->preread_blocks -= end - b;
	}
}

void dev_verify_late_flush(struct dev_stream *d, int res)
{
	struct dev_verify *v = d->verify;

	v->flushing = false;
	if (res < 0)
		return;             /* the epoch stays open, as after any failed flush */
	verify_map_flushed(&v->map, v->closing_epoch);
}

bool dev_verify_flushing(const struct dev_verify *v)
{
	return v->flushing;
}

uint64_t dev_verify_next_flush(const struct dev_verify *v)
{
	if (v->closing || v->flushing)
		return UINT64_MAX;
	/* Half the ring used: due now, or when the backoff ends. */
	uint64_t due = verify_map_open_writes(&v->map) > VERIFY_MAP_RING / 2 ? 0 : v->next_flush_ns;
	return due > v->flush_retry_ns ? due : v->flush_retry_ns;
}

/* A failed flush reaches the results: on the stream's first write op (a
 * flush covers every write op's writes; a model has one on a device). */
static void count_flush_failed(struct workload_stream *s, struct dev_stream *d)
{
	for (size_t g = 0; g < d->model.n_gens; g++)
		if (d->model.gens[g].op_write >= 0) {
			stream_current(&s->stats)->ops[d->model.gens[g].op_write]
				.verify[OP_VERIFY_FLUSH_FAILED]++;
			return;
		}
}

void dev_verify_flush_done(struct workload_stream *s, struct dev_stream *d, int res)
{
	struct dev_verify *v = d->verify;

	v->flushing = false;
	if (res < 0) {
		/* The epoch stays open: its writes are uncertain after a crash,
		 * and the next flush covers them, after a backoff. */
		v->flush_backoff_ns = !v->flush_backoff_ns ? FLUSH_BACKOFF_MIN_NS
				      : v->flush_backoff_ns >= FLUSH_BACKOFF_MAX_NS / 2
					      ? FLUSH_BACKOFF_MAX_NS
					      : v->flush_backoff_ns * 2;
		v->flush_retry_ns = mono_ns() + v->flush_backoff_ns;
		count_flush_failed(s, d);
		if (v->flush_errors++ < LOGGED_PER_CLASS)
			log_warning("%s: flush failed: %s (the writes since the last flush stay "
				    "uncertain; tried again in %" PRIu64 " ms%s)", s->label,
				    strerror(-res), v->flush_backoff_ns / 1000000,
				    v->flush_errors == LOGGED_PER_CLASS ? ", further failures are "
				    "counted, not logged" : "");
		return;
	}
	v->flush_backoff_ns = 0;
	v->flush_retry_ns = 0;
	verify_map_flushed(&v->map, v->closing_epoch);
	verify_map_sync_async(&v->map);
	if (verify_map_n_spilled(&v->map) && !v->spill_logged) {
		v->spill_logged = true;
		log_warning("%s: verify: the table of uncertain blocks is full: %" PRIu64 " marks "
			    "are held in memory until it has room; if soakd stops before, the "
			    "run counts older blocks as uncertain, not stale, from then on",
			    s->label, verify_map_n_spilled(&v->map));
	}
}

void dev_verify_finish(struct workload_stream *s, struct dev_stream *d)
{
	struct dev_verify *v = d->verify;

	if (!v || !v->map.gens || d->abandoned)
		return;
	/* An epoch closed and not yet flushed goes with this last flush
	 * (flushes cover every epoch before theirs).  Left set, it would
	 * have the next start wait on that epoch's parity: on its own
	 * writes, which no flush would close before the ring filled. */
	v->closing = false;
	uint64_t epoch = verify_map_close_epoch(&v->map);
	if (fdatasync(d->fd) < 0) {
		log_warning("%s: the last flush failed: %m (the writes since the last flush stay "
			    "uncertain)", s->label);
		count_flush_failed(s, d);   /* in the stream's last interval */
		return;
	}
	verify_map_flushed(&v->map, epoch);
	verify_map_sync_async(&v->map);
	if (verify_map_n_spilled(&v->map))
		log_warning("%s: verify: %" PRIu64 " uncertain marks did not fit the table and are "
			    "lost with this stop: from the next start a block older than the "
			    "last write is counted uncertain, not stale", s->label,
			    verify_map_n_spilled(&v->map));
	/* Synced and marked clean: a host restart before the next write
	 * finds them trustworthy. */
	if (verify_map_sync_clean(&v->map) < 0)
		log_warning("%s: cannot sync the verify state: %m", s->label);
}

void dev_verify_free(struct dev_verify *v)
{
	if (!v)
		return;
	verify_map_close(&v->map);
	if (v->dir_fd >= 0)
		close(v->dir_fd);
	free(v->slot_state);
	free(v->slot_epoch);
	free(v->slot_ring);
	free(v->slot_gen);
	free(v->slot_back);
	free(v);
}
