/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_SCHED_H
#define SOAK_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open-loop rate scheduler: pure arithmetic, no clock of its own.
 *
 * The schedule is a list of steps, each scaling the base rate for a
 * duration; a ramp step moves linearly from the previous step's scale (0 for
 * the first step) to its own over its duration.  The cumulative number of
 * ops due by time t is Λ(t) = ∫ base_rate * scale(u) du.  The n-th op
 * (n = 1, 2, ...) is due at the t where Λ(t) = n - 1 for constant spacing, so
 * the first op is due at t = 0 and a step of whole seconds at an integral
 * rate R holds exactly R ops in every whole second; for Poisson arrivals it
 * is due where Λ(t) = E_1 + ... + E_n with E_i ~ Exp(1).  An op whose Λ
 * falls exactly on a step boundary belongs to the later step, so a step at
 * scale 0 gets none.  Due times are therefore absolute (never "a delta after
 * the last op"), so a late op does not delay those after it.
 *
 * Times are nanoseconds relative to the start of the schedule, rounded to
 * the nearest ns; due times never decrease.
 */

struct sched_step {
	double scale;
	uint64_t duration_ns;
	bool ramp;
};

/* Ops a schedule may hold: a double counts every integer up to 2^53. */
#define SCHED_MAX_OPS 9007199254740992.0
#define SCHED_MAX_STEPS 256

/* A step as the schedule runs it: the step, and where it begins. */
struct sched_seg {
	double scale;
	uint64_t duration_ns;
	bool ramp;
	uint64_t start_ns;
	double start_ops;            /* Λ at its start */
};

struct sched {
	double base_rate;            /* ops/s at scale 1 */
	bool poisson;
	size_t n_steps;

	/* Position */
	double target_ops;           /* Λ value of the next op */
	size_t step;                 /* step holding the next op */
	uint64_t issued;             /* ops handed out */
	uint64_t rng;                /* xorshift state for Poisson */
	uint64_t last_due_ns;        /* floor for the next due time */
	double phase;                /* constant spacing: op n is due at Λ = n - 1 + phase */

	/* Last, so that what a schedule uses is its first bytes (sched_copy):
	 * [n_steps] holds only the end's start_ns and start_ops. */
	struct sched_seg seg[SCHED_MAX_STEPS + 1];
};


/*
 * Set up a schedule.  Returns 0, or -EINVAL when base_rate <= 0, a scale is
 * negative, n_steps is 0 or above SCHED_MAX_STEPS, or a duration is 0 (also
 * when a value is not finite, the total duration overflows, or the schedule
 * holds more than 2^53 ops, past which op indices lose exactness).
 */
int sched_init(struct sched *s, double base_rate, const struct sched_step *steps,
	       size_t n_steps, bool poisson, uint64_t seed);

/*
 * Shift a constant-spacing schedule by a fraction of one op, before its
 * first op: op n becomes due where Λ = n - 1 + phase.  N schedules of rate
 * R/N, the i-th at phase i/N, together send R evenly spaced ops per second
 * instead of N at once every N/R s.  Poisson arrivals (independent already)
 * and a schedule that has handed out ops are left alone.  Returns -EINVAL
 * unless 0 <= phase < 1.
 */
int sched_set_phase(struct sched *s, double phase);

/*
 * Due time of the next op; advances the schedule.  Returns false (and sets
 * nothing) once no op is due before the schedule's end.
 */
bool sched_next(struct sched *s, uint64_t *ret_due_ns);

/* Instantaneous target rate (ops/s) at t, 0 past the end. */
double sched_rate_at(const struct sched *s, uint64_t t_ns);

/* Expected ops due in [from, to): Λ(to) - Λ(from). */
double sched_ops_between(const struct sched *s, uint64_t from_ns, uint64_t to_ns);

/* Total length of the schedule. */
static inline uint64_t sched_duration(const struct sched *s) { return s->seg[s->n_steps].start_ns; }

/*
 * dst becomes a copy of src, src's steps only: a schedule is 10 KiB for
 * SCHED_MAX_STEPS, and one copied whole in each of a hundred workloads'
 * zeroed memory would make all of it resident for the one step most use.
 */
void sched_copy(struct sched *dst, const struct sched *src);

/*
 * A second cursor over a copy of a schedule, run ahead to count the ops due
 * before a time: with the ops the issuing cursor has handed out, how many
 * are due and not yet issued (waiting), without a list of them.
 */
struct sched_ahead {
	bool have;                   /* due_ns holds an op of `due` not yet passed */
	uint64_t due_ns;
	struct sched due;            /* last: sched_copy fills its first bytes */
};
void sched_ahead_init(struct sched_ahead *a, const struct sched *issue);
/* Ops due before t_ns (relative, never going back) less those the issuing
 * cursor has handed out, not counting one it holds unissued (held). */
uint64_t sched_ahead_waiting(struct sched_ahead *a, const struct sched *issue, bool held,
			     uint64_t t_ns);

/*
 * Skip ahead so the next op handed out is the first one due at or after
 * t_ns (used when a workload restarts mid-schedule).  Poisson arrivals are
 * memoryless, so they simply restart from Λ(t_ns); issued then holds the
 * expected count before t_ns.
 */
void sched_seek(struct sched *s, uint64_t t_ns);

#endif
