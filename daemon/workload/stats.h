/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_STATS_H
#define SOAK_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"

/*
 * What one workload thread measures, and how it hands each interval to the
 * main thread without a lock on the I/O path.
 *
 * Interval boundaries are absolute (run start + k * interval), so the thread
 * closes its own intervals: the first completion or wake-up at or after a
 * boundary publishes the slot it was filling and moves to the next one.  The
 * main thread's tick, a little after the boundary, consumes what has been
 * published.  Slots form a ring; the thread only moves on to a slot the main
 * thread has consumed.  If the main thread falls STATS_SLOTS - 1 intervals
 * behind (soakd was frozen, or its loop blocked), an empty slot moves on to
 * the boundary just crossed, so the intervals missed leave a hole the main
 * thread fills with records of their own; a slot that already holds ops
 * keeps filling, and its record says it spans more than one interval.
 */

#define STATS_MAX_OPS 8
#define STATS_SLOTS 4

/* Why an object op failed, counted per category as wrk does. */
enum op_error_class {
	OP_ERR_CONNECT,     /* no connection: refused, unreachable, TLS handshake */
	OP_ERR_TIMEOUT,
	OP_ERR_HTTP_4XX,
	OP_ERR_HTTP_5XX,
	OP_ERR_TRANSFER,    /* connection lost mid-transfer, malformed response */
	OP_ERR_CLASSES,
};

/* Device ops with "verify": what the blocks read back were (4 KiB verify
 * blocks, not ops; daemon/device/verify.h says what each class means).
 * checked counts every block judged; unchecked, those that could not be. */
enum op_verify_class {
	OP_VERIFY_CHECKED,
	OP_VERIFY_CORRUPT,
	OP_VERIFY_STALE,
	OP_VERIFY_MISDIRECTED,
	OP_VERIFY_TORN,
	OP_VERIFY_FOREIGN,
	OP_VERIFY_UNCERTAIN,
	OP_VERIFY_UNCHECKED,
	/* Not blocks: the cache flushes of the stream that failed (the
	 * writes since the last one stay volatile), on its first write op. */
	OP_VERIFY_FLUSH_FAILED,
	OP_VERIFY_CLASSES,
};
/* "checked", "corrupt", ...: the names in records, dumps and exports. */
extern const char *const op_verify_names[OP_VERIFY_CLASSES];
/* Object ops checked against the run's write ledger (issue 17); corrupt
 * is op_stats.corrupt.  Kept apart from the device's verification. */
struct obj_verify {
	uint64_t checked;      /* reads compared with what was acknowledged */
	uint64_t lost;         /* an acknowledged object answered 404 */
	uint64_t resurrected;  /* the object of an acknowledged DELETE is back */
	uint64_t stale;        /* an older version than the last acknowledged PUT */
	uint64_t list_missing; /* a LIST left out an acknowledged object */
	uint64_t list_extra;   /* a LIST showed an object the ledger does not hold */
	uint64_t uncertain;    /* a PUT or DELETE ended with no clear answer */
};

struct op_stats {
	uint64_t count;     /* completed: served, if wrongly (corrupt); not errors */
	uint64_t errors;
	uint64_t bytes;     /* moved by successful ops */
	uint64_t corrupt;   /* completed, but the data read back is not what was written */
	/* Due inside the run but never completed: not issued before the
	 * schedule ended, or still in flight when the drain gave up. */
	uint64_t missed;
	/* Gauge, not a sum over time: ops due but not yet completed (waiting
	 * for a slot or in flight) at the end of the interval.  Per interval,
	 * count + errors + missed = scheduled - (pending at its end - pending
	 * at its start). */
	uint64_t pending;
	uint64_t error_class[OP_ERR_CLASSES]; /* object ops: errors by cause */
	/* Device ops with "verify" (corrupt above is their failures' sum). */
	uint64_t verify[OP_VERIFY_CLASSES];
	struct obj_verify obj_verify;          /* object ops */
	struct hist latency; /* from the intended issue time */
	struct hist service; /* from the actual submit */
	struct hist ttfb;    /* object ops: submit to the first response byte */
	struct hist connect; /* object ops that opened a connection: its setup time */
	struct hist issue_delay; /* soakd's own lateness: due (or slot free) to submit */
	/* The missed ops' waits, which latency holds too: what a judgement
	 * that counts every missed op as over its thresholds takes out. */
	struct hist missed_wait;
};

struct interval_slot {
	uint64_t start_ns;   /* CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint64_t lag_max_ns;
	uint64_t cpu_ns;     /* the thread's CPU time in the interval */
	uint64_t frozen_ns;  /* longest the thread woke late (stopped, starved) */
	struct op_stats ops[]; /* n_ops */
};

struct stream_stats {
	size_t n_ops;
	size_t slot_size;
	struct interval_slot *slots[STATS_SLOTS];
	uint64_t seq;               /* thread-private: slot being filled */
	_Atomic uint64_t published; /* slots [0, published) are complete */
	_Atomic uint64_t consumed;  /* main thread: slots [0, consumed) merged */
};

int stream_stats_init(struct stream_stats *s, size_t n_ops, uint64_t start_ns);
void stream_stats_done(struct stream_stats *s);

/* Thread side. */
static inline struct interval_slot *stream_current(struct stream_stats *s)
{
	return s->slots[s->seq % STATS_SLOTS];
}

/* Closes the current slot at end_ns, if the next one is free. */
void stream_publish(struct stream_stats *s, uint64_t end_ns);

void op_stats_record(struct op_stats *o, uint64_t latency_ns, uint64_t service_ns,
		     uint64_t bytes, bool error);
/* An object op that failed (counted in errors and its class), or that
 * completed with data other than what was written (corrupt, not an error:
 * served, so in the latency histograms as a device's corrupt read is). */
void op_stats_record_error(struct op_stats *o, enum op_error_class c);
void op_stats_record_corrupt(struct op_stats *o, uint64_t latency_ns, uint64_t service_ns,
			     uint64_t bytes);
/* Times o read back data other than what was written: corrupt reads (a
 * device's wrong blocks are among them) and an object's lost, resurrected,
 * stale and wrongly listed ones.  Any fails a report's verdict. */
uint64_t op_stats_wrong_data(const struct op_stats *o);
/* Adds src's object verification counters to dst; true if any is set. */
bool obj_verify_add(struct obj_verify *dst, const struct obj_verify *src);
/* An op declared missed wait_ns after it was due: its wait is a lower bound
 * of its latency, and goes into latency_us so abandoning ops never makes
 * the percentiles look better. */
void op_stats_record_missed(struct op_stats *o, uint64_t wait_ns);

typedef void (*stream_consume_fn)(const struct interval_slot *slot, size_t n_ops, void *userdata);
/* Main side: the oldest published slot not yet consumed, or NULL; and
 * consuming it (fn, then the slot is free again). */
const struct interval_slot *stream_peek(struct stream_stats *s);
void stream_consume_one(struct stream_stats *s, stream_consume_fn fn, void *userdata);
/* Main side: calls fn for every published, unconsumed slot, then frees them. */
size_t stream_consume(struct stream_stats *s, stream_consume_fn fn, void *userdata);
/* After the thread has been joined: also hands over the slot it was filling. */
void stream_consume_rest(struct stream_stats *s, uint64_t end_ns, stream_consume_fn fn,
			 void *userdata);

/* Empty stats in memory of any content (op_stats_init), in memory known to
 * be zero (op_stats_init_zeroed), or made empty again (op_stats_reset,
 * which releases the histograms' buckets: call it before freeing an
 * op_stats). */
void op_stats_init(struct op_stats *o);
void op_stats_init_zeroed(struct op_stats *o);
void op_stats_reset(struct op_stats *o);
/* n empty op_stats from calloc, or NULL. */
struct op_stats *op_stats_array(size_t n);
/* Releases an op_stats_array (or NULL). */
void op_stats_array_free(struct op_stats *a, size_t n);
/* Sums everything but the pending gauge, which the caller sets. */
void op_stats_merge(struct op_stats *dst, const struct op_stats *src);

#endif
