/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_FIDELITY_H
#define SOAK_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/*
 * Generator fidelity: when soakd itself, not the device, was late.
 *
 * A workload thread sleeps until its next op is due (or a completion
 * arrives); when it wakes past the time it asked for, the thread was not
 * running: soakd was stopped (SIGSTOP, a frozen cgroup) or starved of CPU.
 * Awake with work, time that passes on CLOCK_MONOTONIC while its CPU time
 * (CLOCK_THREAD_CPUTIME_ID) does not is a freeze too.
 * Each such late wake-up is a freeze of the generator, kept (start and end)
 * in a ring, so an op's lag can be split into the part soakd spent frozen
 * and the part the device is behind.  A thread owns its struct fidelity;
 * the clock is the caller's, but for the thread's CPU time.
 */

#define FIDELITY_EVENTS 1024
/* A wake-up later than this counts as a freeze (below it: timer slack). */
#define FIDELITY_FREEZE_MIN_NS UINT64_C(1000000)

struct fidelity_event {
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
};

struct fidelity {
	uint64_t cpu_mark_ns;       /* thread CPU time charged to intervals so far */
	uint64_t busy_from_ns;      /* awake with work since (CLOCK_MONOTONIC), 0: asleep */
	uint64_t busy_cpu_ns;       /* ... and its CPU time then */
	uint64_t n_events;          /* ever recorded; the ring holds the last ones */
	uint64_t over_since_ns;     /* lag over max_lag, soakd's own, since; 0: not */
	struct fidelity_event ev[FIDELITY_EVENTS];
};

enum fidelity_lag {
	FIDELITY_LAG_OK,            /* under max_lag, or over it by soakd's own lateness for now */
	FIDELITY_LAG_DEVICE,        /* the device is behind by more than max_lag */
	FIDELITY_LAG_SOAKD,         /* soakd itself starved for longer than max_lag */
};

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), 0 if unknown. */
uint64_t fidelity_thread_cpu_ns(void);

/* Starts the thread's CPU accounting from now. */
void fidelity_init(struct fidelity *f);

/*
 * Awake, before the thread waits again (or once a loop): the time since it
 * woke (or since the last call) that it did not spend on a CPU, when that
 * is FIDELITY_FREEZE_MIN_NS or more, is a freeze that ended now: the thread
 * had work and was not running (starved: CPU contention, a CPU quota; or
 * stopped mid-work).
 */
void fidelity_sample(struct fidelity *f, struct interval_slot *cur, uint64_t now_ns);

/*
 * The thread asked to wake at wake_ns and woke at now_ns: a wake-up late by
 * FIDELITY_FREEZE_MIN_NS or more is a freeze, recorded (and the longest in
 * the interval kept in cur->frozen_ns).  Returns how late it was.  From
 * now, the thread is awake (fidelity_sample).  Call fidelity_sample just
 * before the wait: its reading of the thread's CPU time stands for the
 * one at waking (the wait's own system time counts as running).
 */
uint64_t fidelity_woke(struct fidelity *f, struct interval_slot *cur, uint64_t wake_ns,
		       uint64_t now_ns);

/* How much of [from_ns, to_ns) or [from_ns, now) soakd spent frozen, by
 * the freezes recorded. */
uint64_t fidelity_frozen_between(const struct fidelity *f, uint64_t from_ns, uint64_t to_ns);
uint64_t fidelity_frozen_since(const struct fidelity *f, uint64_t from_ns);

/*
 * Before cur is published at end_ns: charges it the thread's CPU time since
 * the last close, and the time frozen within it if that is more than its
 * longest freeze (an interval the thread slept through, frozen, has none of
 * its own).
 */
void fidelity_close(struct fidelity *f, struct interval_slot *cur, uint64_t end_ns);

/*
 * Judges a lag against max_lag_ns: the op due at due_ns is lag_ns late at
 * now_ns.  Lag soakd spent frozen is not the device's: LAG_DEVICE only when
 * what is left exceeds max_lag.  Lag over max_lag that is soakd's own lets
 * the run go on (the intervals say generator_late) for another max_lag;
 * if it has not come back under max_lag by then, soakd is starved
 * persistently: LAG_SOAKD.  *ret_own_ns is soakd's share of the lag.
 */
enum fidelity_lag fidelity_judge_lag(struct fidelity *f, uint64_t lag_ns, uint64_t due_ns,
				     uint64_t now_ns, uint64_t max_lag_ns, uint64_t *ret_own_ns);

/*
 * fidelity_judge_lag for a stream (label): true, with the reason, when the
 * run must stop; logs once when the run goes on over soakd's own lag.
 */
bool fidelity_check_lag(struct fidelity *f, const char *label, uint64_t lag, uint64_t due,
			uint64_t now, uint64_t max_lag_ns, char *reason, size_t reason_len);

/*
 * Whether an interval is generator_late: its longest freeze is over a tenth
 * of the interval, or its issue delay's p99 is over FIDELITY_LATE_P99_NS.
 * *ret_late_ns says by how much (the larger of the longest freeze and the
 * largest issue delay).
 */
#define FIDELITY_LATE_P99_NS UINT64_C(10000000)
bool fidelity_interval_late(uint64_t frozen_ns, const struct hist *issue_delay,
			    uint64_t interval_ns, uint64_t *ret_late_ns);

#endif
