// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/workload/sched.h"

#define NS_PER_S UINT64_C(1000000000)

/* struct sched is ~10 KiB: keep it off the test's stack. */
static struct sched S;

#define STEP(sc, secs) ((struct sched_step){ .scale = (sc), .duration_ns = (uint64_t)((secs) * 1e9) })
#define RAMP(sc, secs) ((struct sched_step){ .scale = (sc), .duration_ns = (uint64_t)((secs) * 1e9), .ramp = true })

/* cmocka before 1.1.6 has no assert_double_equal(). */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* Exact reference for constant spacing: op k at round(k * 1e9 / rate), half up. */
static uint64_t exact_due(uint64_t k, uint64_t rate)
{
	unsigned __int128 num = (unsigned __int128)k * NS_PER_S * 2 + rate;

	return (uint64_t)(num / (2 * (unsigned __int128)rate));
}

/* Ops handed out with due times in [from, to), seeking to from first. */
static uint64_t count_window(struct sched *s, uint64_t from, uint64_t to)
{
	uint64_t due, n = 0, last = from;

	sched_seek(s, from);
	struct sched probe = *s;
	while (sched_next(&probe, &due) && due < to) {
		assert_true(due >= last);
		last = due;
		n++;
	}
	return n;
}

/* Drain the schedule, counting ops per 1 s window; returns the total. */
static uint64_t drain_per_second(struct sched *s, uint64_t *per_s, size_t n_windows)
{
	uint64_t due, last = 0, n = 0;

	memset(per_s, 0, n_windows * sizeof(*per_s));
	while (sched_next(s, &due)) {
		assert_true(due >= last);
		assert_true(due < sched_duration(s));
		last = due;
		per_s[due / NS_PER_S]++;
		n++;
	}
	return n;
}

static void test_constant_rate(void **state)
{
	struct sched_step steps[] = { STEP(1, 1) };
	uint64_t due, k = 0;

	(void)state;
	assert_int_equal(sched_init(&S, 5000, steps, 1, false, 0), 0);
	assert_int_equal(sched_duration(&S), NS_PER_S);
	/* Convention: the first op is due at t = 0, the n-th where Λ = n - 1. */
	while (sched_next(&S, &due)) {
		assert_int_equal(due, k * 200000);
		k++;
	}
	assert_int_equal(k, 5000);
	assert_int_equal(S.issued, 5000);
	/* Once finished it stays finished. */
	assert_false(sched_next(&S, &due));
	assert_near(sched_ops_between(&S, 0, NS_PER_S), 5000, 0);
}

static void test_two_steps(void **state)
{
	struct sched_step steps[] = { STEP(1, 1), STEP(2, 1) };
	uint64_t due, prev = 0, n[2] = { 0, 0 };
	bool first = true;

	(void)state;
	assert_int_equal(sched_init(&S, 1000, steps, 2, false, 0), 0);
	while (sched_next(&S, &due)) {
		size_t w = due / NS_PER_S;

		assert_true(w < 2);
		if (!first && due / NS_PER_S == prev / NS_PER_S)
			assert_int_equal(due - prev, w == 0 ? 1000000 : 500000);
		if (n[w] == 0)
			assert_int_equal(due, w * NS_PER_S); /* each step opens on an op */
		n[w]++;
		prev = due;
		first = false;
	}
	assert_int_equal(n[0], 1000);
	assert_int_equal(n[1], 2000);
	assert_near(sched_rate_at(&S, 500000000), 1000, 0);
	assert_near(sched_rate_at(&S, NS_PER_S), 2000, 0);
	assert_near(sched_rate_at(&S, 2 * NS_PER_S), 0, 0);
}

/* Splitting a constant step (even at a fractional Λ) must not move any op. */
static void test_split_step_is_seamless(void **state)
{
	struct sched_step one[] = { STEP(1, 2) };
	struct sched_step two[] = { STEP(1, 0.5), STEP(1, 1.5) };
	static struct sched a, b;
	uint64_t da, db, n = 0;

	(void)state;
	assert_int_equal(sched_init(&a, 3, one, 1, false, 0), 0);
	assert_int_equal(sched_init(&b, 3, two, 2, false, 0), 0);
	while (sched_next(&a, &da)) {
		assert_true(sched_next(&b, &db));
		assert_int_equal(da, db);
		assert_int_equal(da, exact_due(n, 3));
		n++;
	}
	assert_false(sched_next(&b, &db));
	assert_int_equal(n, 6);
}

static void check_windows_within_one(struct sched *s, size_t n_windows)
{
	uint64_t per_s[32];

	assert_true(n_windows <= 32);
	drain_per_second(s, per_s, n_windows);
	for (size_t j = 0; j < n_windows; j++) {
		double want = sched_ops_between(s, j * NS_PER_S, (j + 1) * NS_PER_S);

		assert_true(fabs((double)per_s[j] - want) <= 1.0);
	}
}

static void test_ramp_up(void **state)
{
	struct sched_step steps[] = { RAMP(1, 10) };
	uint64_t per_s[10];

	(void)state;
	assert_int_equal(sched_init(&S, 1000, steps, 1, false, 0), 0);
	assert_near(sched_ops_between(&S, 0, 10 * NS_PER_S), 5000, 1e-9);
	assert_near(sched_rate_at(&S, 0), 0, 0);
	assert_near(sched_rate_at(&S, 5 * NS_PER_S), 500, 1e-9);
	assert_near(sched_ops_between(&S, 0, NS_PER_S), 50, 1e-9);
	assert_int_equal(drain_per_second(&S, per_s, 10), 5000);

	/* Λ(t) = 50 t²: window j holds 50 (2j + 1) ops, its ends both on ops. */
	for (size_t j = 0; j < 10; j++)
		assert_int_equal(per_s[j], 50 * (2 * j + 1));

	assert_int_equal(sched_init(&S, 1000, steps, 1, false, 0), 0);
	check_windows_within_one(&S, 10);
}

static void test_ramp_down(void **state)
{
	/* 1000/s for 5 s, then down to 0 over 10 s, then back up to 300/s. */
	struct sched_step steps[] = { STEP(1, 5), RAMP(0, 10), RAMP(0.3, 3) };
	uint64_t per_s[18];

	(void)state;
	assert_int_equal(sched_init(&S, 1000, steps, 3, false, 0), 0);
	assert_near(sched_ops_between(&S, 5 * NS_PER_S, 15 * NS_PER_S), 5000, 1e-9);
	assert_near(sched_rate_at(&S, 10 * NS_PER_S), 500, 1e-9);
	assert_near(sched_rate_at(&S, 15 * NS_PER_S), 0, 1e-9);
	assert_near(sched_rate_at(&S, 17 * NS_PER_S), 200, 1e-9);
	assert_int_equal(drain_per_second(&S, per_s, 18), 5000 + 5000 + 450);
	assert_int_equal(per_s[4], 1000);
	/* Ramp down: Λ(5 + x) = 5000 + 1000 x - 50 x², so 50 (19 - 2j) in
	 * its j-th second. */
	for (size_t j = 0; j < 10; j++)
		assert_int_equal(per_s[5 + j], 50 * (19 - 2 * j));

	assert_int_equal(sched_init(&S, 1000, steps, 3, false, 0), 0);
	check_windows_within_one(&S, 18);
}

static void test_ramp_between_rates(void **state)
{
	/* Ramp 1x -> 3x, then a "ramp" to the same scale, which is constant. */
	struct sched_step steps[] = { STEP(1, 2), RAMP(3, 4), RAMP(3, 2) };
	struct sched_step flat[] = { STEP(1, 2), RAMP(3, 4), STEP(3, 2) };
	static struct sched ref;
	uint64_t per_s[8], due, rdue;

	(void)state;
	assert_int_equal(sched_init(&S, 700, steps, 3, false, 0), 0);
	/* 2 s at 700 + 4 s averaging 1400 + 2 s at 2100. */
	assert_near(sched_ops_between(&S, 0, 8 * NS_PER_S), 1400 + 5600 + 4200, 1e-6);
	assert_int_equal(drain_per_second(&S, per_s, 8), 11200);
	assert_int_equal(per_s[7], 2100);

	assert_int_equal(sched_init(&S, 700, steps, 3, false, 0), 0);
	check_windows_within_one(&S, 8);

	assert_int_equal(sched_init(&S, 700, steps, 3, false, 0), 0);
	assert_int_equal(sched_init(&ref, 700, flat, 3, false, 0), 0);
	while (sched_next(&ref, &rdue)) {
		assert_true(sched_next(&S, &due));
		assert_int_equal(due, rdue);
	}
	assert_false(sched_next(&S, &due));
}

static void test_poisson(void **state)
{
	struct sched_step steps[] = { STEP(1, 100) };
	static struct sched again;
	uint64_t due, prev = 0, n = 0;
	double sum = 0, sum2 = 0;
	bool first = true;

	(void)state;
	assert_int_equal(sched_init(&S, 10000, steps, 1, true, 42), 0);
	while (sched_next(&S, &due)) {
		assert_true(due >= prev);
		if (!first) {
			double gap = (double)(due - prev);

			sum += gap;
			sum2 += gap * gap;
		}
		prev = due;
		first = false;
		n++;
	}
	assert_true(fabs((double)n - 1e6) <= 1e4);

	double gaps = (double)(n - 1);
	double mean = sum / gaps;
	double sd = sqrt(sum2 / gaps - mean * mean);

	/* Exp(1/rate): mean 100 µs and coefficient of variation 1. */
	assert_true(fabs(mean / 1e5 - 1) < 0.02);
	assert_true(fabs(sd / mean - 1) < 0.02);

	/* Same seed, same arrivals; another seed, others. */
	assert_int_equal(sched_init(&S, 10000, steps, 1, true, 42), 0);
	assert_int_equal(sched_init(&again, 10000, steps, 1, true, 42), 0);
	for (int i = 0; i < 1000; i++) {
		uint64_t a, b;

		assert_true(sched_next(&S, &a));
		assert_true(sched_next(&again, &b));
		assert_int_equal(a, b);
	}
	assert_int_equal(sched_init(&S, 10000, steps, 1, true, 42), 0);
	assert_int_equal(sched_init(&again, 10000, steps, 1, true, 43), 0);
	int same = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t a, b;

		assert_true(sched_next(&S, &a));
		assert_true(sched_next(&again, &b));
		same += a == b;
	}
	assert_true(same < 10);
}

static void test_zero_step(void **state)
{
	struct sched_step steps[] = { STEP(1, 1), STEP(0, 1), STEP(1, 1), STEP(0, 1) };
	uint64_t per_s[4], due;

	(void)state;
	assert_int_equal(sched_init(&S, 1000, steps, 4, false, 0), 0);
	assert_int_equal(drain_per_second(&S, per_s, 4), 2000);
	assert_int_equal(per_s[0], 1000);
	assert_int_equal(per_s[1], 0);
	assert_int_equal(per_s[2], 1000);
	assert_int_equal(per_s[3], 0);

	/* The op at Λ = 1000 sits on the boundary: it opens step 3, not 2. */
	sched_seek(&S, NS_PER_S);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 2 * NS_PER_S);
	assert_near(sched_rate_at(&S, 1500000000), 0, 0);

	/* A schedule that opens at scale 0 starts its ops when the rate does. */
	struct sched_step late[] = { STEP(0, 1), STEP(1, 1) };
	assert_int_equal(sched_init(&S, 1000, late, 2, false, 0), 0);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, NS_PER_S);

	assert_int_equal(sched_init(&S, 20000, steps, 4, true, 7), 0);
	uint64_t total = drain_per_second(&S, per_s, 4);
	assert_int_equal(total, per_s[0] + per_s[2]);
	assert_int_equal(per_s[1], 0);
	assert_int_equal(per_s[3], 0);
	assert_true(fabs((double)per_s[0] - 20000) < 1000);
	assert_true(fabs((double)per_s[2] - 20000) < 1000);
}

static void test_seek(void **state)
{
	struct sched_step steps[] = { STEP(1, 1), STEP(2, 1) };
	uint64_t due;

	(void)state;
	assert_int_equal(sched_init(&S, 1000, steps, 2, false, 0), 0);

	/* Between grid points: the next one up. */
	sched_seek(&S, 1234567890);
	assert_int_equal(S.issued, 1000 + 470); /* ops before t */
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 1235000000);

	/* On a grid point: that op itself. */
	sched_seek(&S, 1500000000);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 1500000000);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 1500500000);

	/* Backwards, into the first step, then just past a grid point. */
	sched_seek(&S, 300000001);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 301000000);
	assert_int_equal(count_window(&S, 0, 2 * NS_PER_S), 3000);

	/* At or past the end: nothing left. */
	sched_seek(&S, 2 * NS_PER_S);
	assert_false(sched_next(&S, &due));
	sched_seek(&S, UINT64_MAX);
	assert_false(sched_next(&S, &due));
	sched_seek(&S, 2 * NS_PER_S - 1);
	assert_false(sched_next(&S, &due));
	sched_seek(&S, 2 * NS_PER_S - 500000);
	assert_true(sched_next(&S, &due));
	assert_int_equal(due, 2 * NS_PER_S - 500000);
	assert_false(sched_next(&S, &due));

	/* Into a ramp: the first op at or after t, and the one before is not. */
	struct sched_step ramp[] = { RAMP(1, 10) };
	for (uint64_t t = 1; t < 10 * NS_PER_S; t += 777777777) {
		uint64_t after, before = 0;
		bool has_before = false;

		assert_int_equal(sched_init(&S, 1000, ramp, 1, false, 0), 0);
		while (sched_next(&S, &due) && due < t) {
			before = due;
			has_before = true;
		}
		after = due;
		sched_seek(&S, t);
		assert_true(sched_next(&S, &due));
		assert_int_equal(due, after);
		assert_true(due >= t);
		assert_true(!has_before || before < t);
	}

	/* Poisson restarts from Λ(t): due at or after t, rate unchanged. */
	assert_int_equal(sched_init(&S, 10000, steps, 2, true, 1), 0);
	sched_seek(&S, 1500000000);
	assert_int_equal(S.issued, 10000 + 10000);
	uint64_t n = 0, prev = 1500000000;
	while (sched_next(&S, &due)) {
		assert_true(due >= prev);
		prev = due;
		n++;
	}
	assert_true(fabs((double)n - 10000) < 500);
}

/* 1e6 ops/s for 24 h: 8.64e10 ops, checked near the end without iterating. */
static void test_long_schedule(void **state)
{
	struct sched_step steps[] = { STEP(1, 86400) };
	const uint64_t end = 86400 * NS_PER_S;
	uint64_t due;

	(void)state;
	assert_int_equal(sched_init(&S, 1e6, steps, 1, false, 0), 0);
	assert_int_equal(sched_duration(&S), end);
	assert_near(sched_ops_between(&S, 0, end), 8.64e10, 0);

	sched_seek(&S, end - 10000);
	for (uint64_t k = 86399999990; k < 86400000000; k++) {
		assert_true(sched_next(&S, &due));
		assert_int_equal(due, k * 1000);
	}
	assert_int_equal(S.issued, 86400000000);
	assert_false(sched_next(&S, &due));

	/* A rate with no exact spacing: every op still lands on the exactly
	 * rounded time, deep into the schedule. */
	const uint64_t rate = 999983;
	assert_int_equal(sched_init(&S, (double)rate, steps, 1, false, 0), 0);
	for (uint64_t t = end - 7 * NS_PER_S - 12345; t < end; t += 3 * NS_PER_S / 2) {
		sched_seek(&S, t);
		uint64_t k = S.issued;
		assert_true(exact_due(k, rate) >= t);
		assert_true(k == 0 || exact_due(k - 1, rate) < t);
		for (int i = 0; i < 1000; i++, k++) {
			if (!sched_next(&S, &due)) {
				assert_true(exact_due(k, rate) >= end);
				break;
			}
			assert_int_equal(due, exact_due(k, rate));
		}
	}
}

/*
 * Any whole second of a constant step at an integral rate holds exactly
 * that many ops: the per-interval accuracy the daemon reports rests on this.
 * 1024/s has spacing 976562.5 ns, every other op a rounding tie.
 */
static void test_whole_second_is_exact(void **state)
{
	static const uint64_t rates[] = { 1, 3, 1024, 7919, 5000, 999983 };
	struct sched_step steps[] = { STEP(1, 2 * 86400) };
	const uint64_t end = 2 * 86400 * NS_PER_S;
	const uint64_t starts[] = { 0, 1, 123456789, 3600 * NS_PER_S + 7,
				    end - NS_PER_S - 333, end - NS_PER_S };

	(void)state;
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		assert_int_equal(sched_init(&S, (double)rates[r], steps, 1, false, 0), 0);
		for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
			assert_int_equal(count_window(&S, starts[i], starts[i] + NS_PER_S), rates[r]);
	}
}

static void test_invalid(void **state)
{
	struct sched_step ok[] = { STEP(1, 1) };
	struct sched_step neg[] = { STEP(1, 1), STEP(-0.5, 1) };
	struct sched_step zero_len[] = { STEP(1, 1), { .scale = 1, .duration_ns = 0 } };
	struct sched_step nan_scale[] = { STEP(NAN, 1) };
	struct sched_step overflow[] = { { .scale = 1, .duration_ns = UINT64_MAX },
					 { .scale = 1, .duration_ns = 1 } };
	static struct sched_step many[SCHED_MAX_STEPS + 1];
	static struct sched before;

	(void)state;
	for (size_t i = 0; i < SCHED_MAX_STEPS + 1; i++)
		many[i] = STEP(1, 1);

	memset(&S, 0xa5, sizeof(S));
	memcpy(&before, &S, sizeof(S));
	assert_int_equal(sched_init(&S, 0, ok, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, -5, ok, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, NAN, ok, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, INFINITY, ok, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, neg, 2, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, nan_scale, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, zero_len, 2, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, ok, 0, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, NULL, 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, many, SCHED_MAX_STEPS + 1, false, 0), -EINVAL);
	assert_int_equal(sched_init(&S, 100, overflow, 2, false, 0), -EINVAL);
	/* 1e12/s for a year is past 2^53 ops. */
	struct sched_step year[] = { STEP(1, 365.0 * 86400) };
	assert_int_equal(sched_init(&S, 1e12, year, 1, false, 0), -EINVAL);
	/* Nothing written on failure. */
	assert_memory_equal(&S, &before, sizeof(S));

	assert_int_equal(sched_init(&S, 100, many, SCHED_MAX_STEPS, false, 0), 0);
	assert_int_equal(sched_duration(&S), SCHED_MAX_STEPS * NS_PER_S);
}

/*
 * N streams sharing a rate (an object workload's threads, a device
 * workload's targets): 4 schedules of 250/s at phases 0, 1/4, 2/4, 3/4
 * together send one op every 1 ms, not 4 at once every 4 ms; each still
 * sends 250 in every whole second, and a seek keeps the phase.
 */
static struct sched four[4];

/*
 * sched_copy copies a schedule's own steps only (the rest of a struct
 * sched is never written, so never made resident): a copy over garbage,
 * made partway through, goes on exactly as the original, and leaves the
 * bytes beyond its steps alone.
 */
static void test_copy(void **state)
{
	struct sched_step steps[] = { STEP(1, 1), RAMP(3, 2), STEP(0, 1), STEP(2, 1) };
	struct sched *copy = malloc(sizeof(*copy));
	uint64_t a, b, n = 0;

	(void)state;
	assert_non_null(copy);
	memset(copy, 0xa5, sizeof(*copy));
	assert_int_equal(sched_init(&S, 700, steps, 4, false, 0), 0);
	for (int i = 0; i < 333; i++)
		assert_true(sched_next(&S, &a));
	sched_copy(copy, &S);
	assert_int_equal(sched_duration(copy), 5 * NS_PER_S);
	for (;;) {
		bool more = sched_next(&S, &a);
		assert_int_equal(sched_next(copy, &b), more);
		if (!more)
			break;
		assert_int_equal(a, b);
		n++;
	}
	assert_true(n > 2000);
	assert_near(sched_rate_at(copy, 2 * NS_PER_S), sched_rate_at(&S, 2 * NS_PER_S), 0);
	const uint8_t *rest = (const uint8_t *)&copy->seg[5];
	for (size_t i = 0; i < sizeof(copy->seg) - 5 * sizeof(copy->seg[0]); i++)
		assert_int_equal(rest[i], 0xa5);
	free(copy);
}

static void test_phases_interleave(void **state)
{
	struct sched_step steps[] = { STEP(1, 2) };
	uint64_t next[4], due, last = 0, n = 0;
	bool have[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sched_init(&four[i], 250, steps, 1, false, 0), 0);
		assert_int_equal(sched_set_phase(&four[i], i / 4.0), 0);
		have[i] = sched_next(&four[i], &next[i]);
	}
	for (;;) {
		int pick = -1;
		for (int i = 0; i < 4; i++)
			if (have[i] && (pick < 0 || next[i] < next[pick]))
				pick = i;
		if (pick < 0)
			break;
		due = next[pick];
		/* Op n of the merged stream is due at n ms exactly. */
		assert_int_equal(due, n * 1000000);
		assert_true(n == 0 || due - last == 1000000);
		last = due;
		n++;
		have[pick] = sched_next(&four[pick], &next[pick]);
	}
	assert_int_equal(n, 2000);

	/* A seek to 1.0005 s: stream 2 (phase 1/2) goes on at 1.002 s, its
	 * op 251 (Λ = 250.5); stream 0 at 1.004 s. */
	assert_int_equal(sched_init(&four[2], 250, steps, 1, false, 0), 0);
	assert_int_equal(sched_set_phase(&four[2], 0.5), 0);
	sched_seek(&four[2], 1000500000);
	assert_true(sched_next(&four[2], &due));
	assert_int_equal(due, 1002000000);
	assert_int_equal(sched_init(&four[0], 250, steps, 1, false, 0), 0);
	assert_int_equal(sched_set_phase(&four[0], 0), 0);
	sched_seek(&four[0], 1000500000);
	assert_true(sched_next(&four[0], &due));
	assert_int_equal(due, 1004000000);

	/* A phase is a fraction of one op. */
	assert_int_equal(sched_set_phase(&four[1], 1.0), -EINVAL);
	assert_int_equal(sched_set_phase(&four[1], -0.1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_rate),
		cmocka_unit_test(test_two_steps),
		cmocka_unit_test(test_split_step_is_seamless),
		cmocka_unit_test(test_ramp_up),
		cmocka_unit_test(test_ramp_down),
		cmocka_unit_test(test_ramp_between_rates),
		cmocka_unit_test(test_poisson),
		cmocka_unit_test(test_zero_step),
		cmocka_unit_test(test_seek),
		cmocka_unit_test(test_long_schedule),
		cmocka_unit_test(test_whole_second_is_exact),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_phases_interleave),
		cmocka_unit_test(test_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
