// SPDX-License-Identifier: GPL-2.0-only
#include "sched.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define NS_PER_S 1e9

/*
 * Past 2^53 a double no longer holds every integer, so constant spacing
 * (op n at Λ = n - 1) could not name each op exactly.
 */

static void step_rates(const struct sched *s, size_t i, double *ret_from, double *ret_to)
{
	const struct sched_seg *st = &s->seg[i];
	double from = st->scale;

	if (st->ramp)
		from = i > 0 ? s->seg[i - 1].scale : 0;
	*ret_from = s->base_rate * from;
	*ret_to = s->base_rate * st->scale;
}

/* Λ accumulated from the start of step i to x_ns into it. */
static double step_ops_at(const struct sched *s, size_t i, uint64_t x_ns)
{
	double r0, r1, x = (double)x_ns;

	step_rates(s, i, &r0, &r1);
	if (r0 == r1)
		return r0 * x / NS_PER_S;
	/* Mean of the two end rates times the elapsed time: no cancellation,
	 * whichever way the ramp goes. */
	double rx = r0 + (r1 - r0) * (x / (double)s->seg[i].duration_ns);
	return x / NS_PER_S * (r0 + rx) / 2;
}

/*
 * round(ops * 1e9 / rate), half up, as if computed exactly.  Both the
 * product and the quotient carry a rounding error that fma() recovers
 * exactly; folding them back in before rounding keeps op k + R exactly 1 s
 * after op k at R ops/s even past 2^53 ns·ops, so every whole second of a
 * constant step holds exactly R ops however long the schedule runs.
 */
static double ops_to_ns(double ops, double rate)
{
	double p = ops * NS_PER_S;
	double p_err = fma(ops, NS_PER_S, -p);
	double q = p / rate;
	double q_err = (fma(-q, rate, p) + p_err) / rate;
	double whole = floor(q);

	return whole + ((q - whole) + q_err >= 0.5 ? 1 : 0);
}

/*
 * Time in ns into ramp step i where it has accumulated ops of Λ.  With rates
 * r0 → r1 over D, Λ(x) = r0 x + a x² / 2 (a = (r1 - r0) / D), and
 *     x = 2 Λ / (r0 + sqrt(r0² + 2 a Λ)),
 * the root form that never subtracts nearly equal values: both terms of the
 * denominator are >= 0, and the square root is the rate reached at x.  It
 * holds for a < 0 (ramp down) and for r0 = 0 or r1 = 0 alike.
 */
static double ramp_ops_to_ns(const struct sched *s, size_t i, double ops)
{
	double r0, r1;
	double d = (double)s->seg[i].duration_ns / NS_PER_S;

	step_rates(s, i, &r0, &r1);
	if (ops <= 0)
		return 0; /* also avoids 0/0 when a ramp starts from rest */
	double disc = r0 * r0 + 2 * ((r1 - r0) / d) * ops;
	/* Rounding can push the end of a ramp down to 0 slightly negative. */
	if (disc < 0)
		disc = 0;
	return floor(2 * ops / (r0 + sqrt(disc)) * NS_PER_S + 0.5);
}

/* Largest i < n_steps with seg[i].start_ns <= t_ns. */
static size_t step_by_time(const struct sched *s, uint64_t t_ns)
{
	size_t lo = 0, hi = s->n_steps;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->seg[mid].start_ns <= t_ns)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Largest i < n_steps with seg[i].start_ops <= ops.  Steps at scale 0 add
 * nothing to Λ, so this lands on the step that actually produces the op,
 * past any empty ones that start at the same Λ.
 */
static size_t step_by_ops(const struct sched *s, double ops)
{
	size_t lo = 0, hi = s->n_steps;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->seg[mid].start_ops <= ops)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static double ops_at(const struct sched *s, uint64_t t_ns)
{
	if (t_ns >= sched_duration(s))
		return s->seg[s->n_steps].start_ops;
	size_t i = step_by_time(s, t_ns);
	return s->seg[i].start_ops + step_ops_at(s, i, t_ns - s->seg[i].start_ns);
}

/*
 * Due time of the op at Λ = ops, which must lie in step i.  Returns false
 * when it would be at or past the end of the schedule.
 */
static bool due_in_step(const struct sched *s, size_t i, double ops, uint64_t *ret_due_ns)
{
	double r0, r1, x;
	/* Relative to the step so that the op index, not a running sum of
	 * spacings, sets the time: no drift over billions of ops. */
	double local = ops - s->seg[i].start_ops;
	uint64_t len = s->seg[i].duration_ns, due;

	step_rates(s, i, &r0, &r1);
	if (local < 0)
		local = 0;
	x = r0 == r1 ? ops_to_ns(local, r0) : ramp_ops_to_ns(s, i, local);
	/* Where Λ is nearly flat (the tail of a ramp down to 0) a rounding
	 * error in Λ is a large one in time: keep the op inside its step. */
	due = s->seg[i].start_ns + (x < (double)len ? (uint64_t)x : len);
	if (due >= sched_duration(s))
		return false;
	*ret_due_ns = due;
	return true;
}

/* Due time of the constant-spacing op at Λ = index + phase, wherever it
 * falls. */
static bool due_of_index(const struct sched *s, uint64_t index, uint64_t *ret_due_ns)
{
	double ops = (double)index + s->phase;

	if (ops >= s->seg[s->n_steps].start_ops)
		return false;
	return due_in_step(s, step_by_ops(s, ops), ops, ret_due_ns);
}

/* xorshift64*: fast, and deterministic for a given seed so runs repeat. */
static double rng_unit(struct sched *s)
{
	uint64_t x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	/* Top 53 bits: uniform on [0, 1), never 1, so log1p(-u) is finite. */
	return (double)((x * UINT64_C(0x2545F4914F6CDD1D)) >> 11) * 0x1.0p-53;
}

static double rng_exp(struct sched *s)
{
	return -log1p(-rng_unit(s));
}

static uint64_t rng_seed(uint64_t seed)
{
	/* splitmix64 spreads nearby seeds apart and maps 0 (which would
	 * freeze xorshift) to a usable state. */
	uint64_t z = seed + UINT64_C(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	z ^= z >> 31;
	return z ? z : UINT64_C(0x9E3779B97F4A7C15);
}

int sched_init(struct sched *s, double base_rate, const struct sched_step *steps,
	       size_t n_steps, bool poisson, uint64_t seed)
{
	uint64_t end_ns = 0;

	if (!(base_rate > 0) || !isfinite(base_rate))
		return -EINVAL;
	if (!steps || n_steps == 0 || n_steps > SCHED_MAX_STEPS)
		return -EINVAL;
	for (size_t i = 0; i < n_steps; i++) {
		if (!(steps[i].scale >= 0) || !isfinite(steps[i].scale))
			return -EINVAL;
		if (steps[i].duration_ns == 0 || steps[i].duration_ns > UINT64_MAX - end_ns)
			return -EINVAL;
		end_ns += steps[i].duration_ns;
	}

	/* Validate the totals on a scratch copy so *s is untouched on error. */
	struct sched tmp = {
		.base_rate = base_rate,
		.poisson = poisson,
		.n_steps = n_steps,
	};
	for (size_t i = 0; i < n_steps; i++)
		tmp.seg[i] = (struct sched_seg){ .scale = steps[i].scale,
						 .duration_ns = steps[i].duration_ns,
						 .ramp = steps[i].ramp };
	for (size_t i = 0; i < n_steps; i++) {
		tmp.seg[i + 1].start_ns = tmp.seg[i].start_ns + steps[i].duration_ns;
		tmp.seg[i + 1].start_ops = tmp.seg[i].start_ops +
					    step_ops_at(&tmp, i, steps[i].duration_ns);
	}
	if (!(tmp.seg[n_steps].start_ops <= SCHED_MAX_OPS))
		return -EINVAL;

	sched_copy(s, &tmp);
	if (poisson) {
		s->rng = rng_seed(seed);
		s->target_ops = rng_exp(s);
		s->step = step_by_ops(s, s->target_ops);
	}
	return 0;
}

void sched_copy(struct sched *dst, const struct sched *src)
{
	memcpy(dst, src, offsetof(struct sched, seg) + (src->n_steps + 1) * sizeof(src->seg[0]));
}

bool sched_next(struct sched *s, uint64_t *ret_due_ns)
{
	uint64_t due;

	if (s->target_ops >= s->seg[s->n_steps].start_ops)
		return false;
	/* The op lies in the last step whose start Λ it has reached; walking
	 * forward also steps over scale-0 steps, whose start equals their end. */
	while (s->step + 1 < s->n_steps && s->target_ops >= s->seg[s->step + 1].start_ops)
		s->step++;
	if (!due_in_step(s, s->step, s->target_ops, &due))
		return false;
	/* Each op's time is exact to within rounding, but two ops a hair apart
	 * (a tiny Poisson gap, a ramp's root form) could round out of order. */
	if (due < s->last_due_ns)
		due = s->last_due_ns;

	s->last_due_ns = due;
	s->issued++;
	if (s->poisson)
		s->target_ops += rng_exp(s);
	else
		s->target_ops = (double)s->issued + s->phase;
	*ret_due_ns = due;
	return true;
}

double sched_rate_at(const struct sched *s, uint64_t t_ns)
{
	double r0, r1;

	if (t_ns >= sched_duration(s))
		return 0;
	size_t i = step_by_time(s, t_ns);
	step_rates(s, i, &r0, &r1);
	if (r0 == r1)
		return r0;
	return r0 + (r1 - r0) * ((double)(t_ns - s->seg[i].start_ns) /
				 (double)s->seg[i].duration_ns);
}

double sched_ops_between(const struct sched *s, uint64_t from_ns, uint64_t to_ns)
{
	if (to_ns <= from_ns)
		return 0;
	return ops_at(s, to_ns) - ops_at(s, from_ns);
}

int sched_set_phase(struct sched *s, double phase)
{
	if (!(phase >= 0 && phase < 1))
		return -EINVAL;
	if (s->poisson || s->issued)
		return 0;
	s->phase = phase;
	s->target_ops = phase;
	s->step = phase < s->seg[s->n_steps].start_ops ? step_by_ops(s, phase) : s->n_steps - 1;
	return 0;
}

void sched_seek(struct sched *s, uint64_t t_ns)
{
	double ops = ops_at(s, t_ns);
	double total = s->seg[s->n_steps].start_ops;

	s->last_due_ns = t_ns;
	if (s->poisson) {
		double expected = floor(ops + 0.5);

		s->issued = (uint64_t)expected;
		s->target_ops = ops + rng_exp(s);
	} else {
		/*
		 * The first op at or after t is op ceil(Λ(t)) in exact
		 * arithmetic; Λ(t) carries rounding, so settle the index
		 * against the rounded due times that sched_next() will
		 * hand out.  This moves it by at most one either way.
		 */
		double first = ceil(ops - s->phase);
		uint64_t index = first > 0 ? (uint64_t)first : 0, due;

		while (index > 0 && due_of_index(s, index - 1, &due) && due >= t_ns)
			index--;
		while (due_of_index(s, index, &due) && due < t_ns)
			index++;
		s->issued = index;
		s->target_ops = (double)index + s->phase;
	}
	s->step = s->target_ops < total ? step_by_ops(s, s->target_ops) : s->n_steps - 1;
}

void sched_ahead_init(struct sched_ahead *a, const struct sched *issue)
{
	sched_copy(&a->due, issue);
	a->have = false;
	a->due_ns = 0;
}

uint64_t sched_ahead_waiting(struct sched_ahead *a, const struct sched *issue, bool held,
			     uint64_t t_ns)
{
	for (;;) {
		if (!a->have) {
			if (!sched_next(&a->due, &a->due_ns))
				break;
			a->have = true;
		}
		if (a->due_ns >= t_ns)
			break;
		a->have = false;
	}
	/* Ops handed out by each cursor, less the one it holds unpassed. */
	uint64_t due = a->due.issued - (a->have ? 1 : 0);
	uint64_t issued = issue->issued - (held ? 1 : 0);
	return due > issued ? due - issued : 0;
}
