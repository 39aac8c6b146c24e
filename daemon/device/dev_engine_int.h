/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device engine's per-stream state, shared by dev_engine.c (the I/O
 * thread) and dev_setup.c (opening targets and rings, releasing them).
 * Only these files of daemon/device include this.
 */
#ifndef SOAK_DEV_ENGINE_INT_H
#define SOAK_DEV_ENGINE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "dev_account.h"
#include "dev_model.h"
#include "workload/fidelity.h"
#include "workload/stats.h"

struct workload;
struct dev_verify;          /* dev_verify_int.h */
struct target_span;         /* dev_linger.c */

struct dev_slot {
	uint64_t due_ns;
	uint64_t ready_ns;          /* due with a slot free: from here, soakd is late */
	uint64_t submit_ns;
	uint64_t offset;
	uint32_t len;
	uint8_t io;                 /* enum dev_io */
	uint8_t gen;
	int8_t op;
	uint8_t pre_read;           /* "pre_read": a write, read and checked first */
};

struct dev_stream {
	int fd;
	bool is_blockdev;
	bool writes;
	uint64_t size;              /* working region: [0, size) */
	uint32_t align;             /* direct-I/O unit */
	struct dev_model model;
	unsigned n_slots;
	struct io_uring ring;
	bool ring_ready;
	bool ring_single, ring_claimed; /* dev_ring.c */
	bool fixed_buffers;
	struct dev_slot *slots;
	unsigned *free_slots;
	unsigned n_free;
	uint8_t *buffers;           /* [0, n): read buffers; [n, 2n): write buffers */
	uint32_t max_len;
	uint64_t rng;
	uint64_t writes_issued;
	uint64_t errors_logged;
	struct dev_backlog backlog[DEV_MAX_GENS]; /* ops waiting for a slot */
	unsigned op_inflight[STATS_MAX_OPS];
	bool abandoned;             /* ops left in flight: the kernel may still use the buffers */
	/*
	 * Ops given up in flight at the end of a run: the stream's thread
	 * stays (it is the ring's issuer, the only one that can reap it) and
	 * takes their late completions back, without counting them again.
	 * Until all are back no start may reuse the slots, buffers or ring
	 * (dev_can_start).  linger_lock guards these, and while lingering
	 * the slots, the free list, the ring and the verify state.
	 */
	pthread_mutex_t linger_lock;
	struct target_span *span;   /* dev_linger.c: where its blocks are, at open */
	bool claimed;               /* a block device held for writing (dev_linger_claim) */
	bool lingering;
	bool orphaned;              /* released while lingering: the thread frees it */
	struct fidelity fid;        /* the thread's own lateness */
	struct dev_verify *verify;  /* NULL without "verify" */
	bool verify_flushes;        /* the ring has room for a flush op */
	bool verify_fua, verify_pre_read;
};

int dev_prepare(struct workload *w, char *err, size_t errlen);
/* dev_linger.c: a start refused while ops given up are still the kernel's;
 * the thread's wait for them after its stream ended (frees label). */
int dev_can_start(struct workload *w, char *err, size_t errlen);
void dev_take_back_late(struct dev_stream *d, char *label);
/* Where the blocks of the target open on fd are (sysfs, a loop device's
 * backing), for dev_linger_hold to record without asking the device when
 * it no longer answers; NULL when it cannot be said (then asked then). */
struct target_span *dev_linger_span_new(int fd);
/* The stream lingers: its target is recorded as held (by workload_name)
 * until the thread has every op back, or frees the stream. */
void dev_linger_hold(struct dev_stream *d, const char *label, const char *workload_name);
/* The stream holds its block device open for writing (exclusively), for
 * workload_name; unclaimed before the stream is freed.  Another workload's
 * open refused with EBUSY then names it (dev_linger_claimed_by). */
void dev_linger_claim(struct dev_stream *d, const char *workload_name);
void dev_linger_unclaim(const struct dev_stream *d);
/* -EBUSY while a lingering stream holds a target of cfg (resolved from its
 * path), err naming it and its ops: prepare, and a reload before it stops
 * anything (workload_engine.targets_free), ask (dev_linger.h: the check on
 * a descriptor). */
int dev_targets_free(const struct workload_config *cfg, char *err, size_t errlen);
/* What the stream holds, closed and freed (buffers kept if abandoned). */
void dev_stream_free(struct dev_stream *d);

/*
 * A device stream's io_uring (dev_ring.c): created when the workload is
 * prepared, so a target that cannot be registered fails the start and not
 * the thread, and used by the stream's thread only.  Where the kernel has
 * them it is single-issuer with deferred task work (Linux 6.1): completions
 * are posted only when that thread waits, in one batch, rather than each
 * interrupting it; else it runs completions cooperatively (5.19), else plain.
 * A single-issuer ring is created disabled; dev_ring_claim, called by the
 * stream's thread before its first submit, makes that thread its issuer.
 */
int dev_ring_open(struct dev_stream *d, const char *path, char *err, size_t errlen);
int dev_ring_claim(struct dev_stream *d, const char *path, char *err, size_t errlen);
/*
 * Called by the stream's thread when its I/O is over: replaces its claimed
 * ring with a new disabled one, so that a workload started again (soakctl
 * start, the next probe of a search) only enables it, rather than building
 * and registering a ring after its schedule has begun.  Not after ops were
 * given up in flight: their buffers and ring stay as they are until the
 * thread has taken all of them back (dev_engine.c, take_back_late).
 */
void dev_ring_rearm(struct dev_stream *d, const char *path);

/*
 * "verify" in the I/O path (dev_verify.c, which sees this file): d->verify
 * is set.  The flush op's user_data is DEV_VERIFY_FLUSH_TAG (no slot has
 * that index).
 */
#define DEV_VERIFY_FLUSH_TAG UINT64_MAX
struct workload_stream;
int dev_verify_start(struct workload_stream *s, char *reason, size_t reason_len);
/* No op may be issued now: the epoch ring waits for a flush. */
bool dev_verify_blocked(const struct dev_stream *d);
/* An op is about to be queued in slot_index (a write's buffer is filled). */
void dev_verify_submit(struct dev_stream *d, unsigned slot_index);
/* An op completed; returns true when it was a pre-read that now goes on
 * as its write (the caller queues the slot again). */
bool dev_verify_complete(struct workload_stream *s, struct dev_stream *d, unsigned slot_index,
			 bool error);
/* Closes an epoch and queues its flush when due; when that is. */
void dev_verify_tick(struct workload_stream *s, struct dev_stream *d, uint64_t now_ns);
uint64_t dev_verify_next_flush(const struct dev_verify *v);
void dev_verify_flush_done(struct workload_stream *s, struct dev_stream *d, int res);
/* A flush was queued and has not completed. */
bool dev_verify_flushing(const struct dev_verify *v);

/* What the ring still has in flight: ops, and a verify flush. */
static inline unsigned dev_outstanding(const struct dev_stream *d)
{
	return d->n_slots - d->n_free + (d->verify && dev_verify_flushing(d->verify) ? 1u : 0u);
}
/* Late completions of ops given up in flight (counted already as missed):
 * their slot's verify state released, nothing counted or checked. */
void dev_verify_late(struct dev_stream *d, unsigned slot_index, bool error);
void dev_verify_late_flush(struct dev_stream *d, int res);
/* The stream ends: a last flush, so a restart finds nothing uncertain. */
void dev_verify_finish(struct workload_stream *s, struct dev_stream *d);
void dev_release(struct workload *w);

#endif
