// SPDX-License-Identifier: GPL-2.0-only
/* Object size distributions: bounds, means, and warp's log2 shape. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/object/obj_rng.h"
#include "daemon/object/obj_size.h"

#define SAMPLES 400000

/* Draws SAMPLES sizes; checks they lie in [min, max] and returns their mean. */
static double sample_mean(const struct obj_size_spec *s, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t rng = obj_rng_seed(12345), lo = UINT64_MAX, hi = 0;
	double sum = 0;
	for (int i = 0; i < SAMPLES; i++) {
		uint64_t v = obj_size_pick(s, &rng);
		if (v < s->min || v > s->max)
			fail_msg("size %llu outside [%llu, %llu]", (unsigned long long)v,
				 (unsigned long long)s->min, (unsigned long long)s->max);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		sum += (double)v;
	}
	*ret_lo = lo;
	*ret_hi = hi;
	return sum / SAMPLES;
}

static void expect_mean(const struct obj_size_spec *s, double want, double tolerance)
{
	uint64_t lo, hi;
	double mean = sample_mean(s, &lo, &hi);
	if (fabs(mean - want) > tolerance * want)
		fail_msg("%s: mean %.1f, expected %.1f", obj_size_dist_name(s->dist), mean, want);
	if (fabs(obj_size_expected_mean(s) - want) > 1e-6 * want)
		fail_msg("%s: expected mean says %.1f, not %.1f", obj_size_dist_name(s->dist),
			 obj_size_expected_mean(s), want);
}

static void test_fixed(void **state)
{
	(void)state;
	struct obj_size_spec s = { .dist = OBJ_SIZE_FIXED, .max = 16384 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MAX, NULL), 0);
	assert_int_equal(s.min, 16384);
	expect_mean(&s, 16384, 0);
}

static void test_uniform(void **state)
{
	(void)state;
	struct obj_size_spec s = { .dist = OBJ_SIZE_UNIFORM, .min = 1000, .max = 9000 };
	uint64_t lo, hi;
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MIN | OBJ_SIZE_HAS_MAX, NULL), 0);
	expect_mean(&s, 5000, 0.005);
	sample_mean(&s, &lo, &hi);
	/* Both ends are reached. */
	assert_true(lo < 1010 && hi > 8990);
}

static void test_log2_like_warp(void **state)
{
	(void)state;
	struct obj_size_spec s = { .dist = OBJ_SIZE_LOG2, .max = 1 << 20 };
	const char *why = NULL;
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MAX, &why), 0);
	/* warp: 8 doublings below max. */
	assert_int_equal(s.min, 4096);
	/* warp documents an average of max * 0.179151. */
	assert_true(fabs(obj_size_expected_mean(&s) / s.max - 0.1797) < 0.001);
	expect_mean(&s, obj_size_expected_mean(&s), 0.01);

	/* Equal counts in each doubling. */
	unsigned counts[8] = { 0 };
	uint64_t rng = obj_rng_seed(7);
	for (int i = 0; i < SAMPLES; i++) {
		uint64_t v = obj_size_pick(&s, &rng);
		int k = (int)floor(log2((double)v / (double)s.min));
		counts[k > 7 ? 7 : k]++;
	}
	for (int k = 0; k < 8; k++)
		if (fabs(counts[k] / (double)SAMPLES - 0.125) > 0.005)
			fail_msg("doubling %d holds %.3f of the sizes", k, counts[k] / (double)SAMPLES);

	/* Small maxima keep warp's 128-byte floor; an explicit min wins. */
	struct obj_size_spec small = { .dist = OBJ_SIZE_LOG2, .max = 8192 };
	assert_int_equal(obj_size_resolve(&small, OBJ_SIZE_HAS_MAX, NULL), 0);
	assert_int_equal(small.min, 128);
	struct obj_size_spec given = { .dist = OBJ_SIZE_LOG2, .min = 1024, .max = 65536 };
	assert_int_equal(obj_size_resolve(&given, OBJ_SIZE_HAS_MIN | OBJ_SIZE_HAS_MAX, NULL), 0);
	expect_mean(&given, (65536.0 - 1024) / log(64.0), 0.01);
}

static void test_exponential(void **state)
{
	(void)state;
	/* Without bounds: the mean asked for (the 20x cap cuts e^-20). */
	struct obj_size_spec s = { .dist = OBJ_SIZE_EXPONENTIAL, .mean = 50000 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MEAN, NULL), 0);
	assert_int_equal(s.max, 1000000);
	expect_mean(&s, 50000, 0.01);
	/* Restricted to [min, max]: the truncated exponential's mean. */
	struct obj_size_spec t = { .dist = OBJ_SIZE_EXPONENTIAL, .min = 10000, .mean = 50000,
				   .max = 100000 };
	assert_int_equal(obj_size_resolve(&t, OBJ_SIZE_HAS_MIN | OBJ_SIZE_HAS_MAX | OBJ_SIZE_HAS_MEAN,
					  NULL), 0);
	double m = 50000, a = 10000, b = 100000;
	double want = m + (a * exp(-a / m) - b * exp(-b / m)) / (exp(-a / m) - exp(-b / m));
	expect_mean(&t, want, 0.01);
}

static void test_refused(void **state)
{
	(void)state;
	const char *why = NULL;
	struct obj_size_spec s;

	s = (struct obj_size_spec){ .dist = OBJ_SIZE_UNIFORM, .min = 10, .max = 5 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MIN | OBJ_SIZE_HAS_MAX, &why), -EINVAL);
	assert_non_null(strstr(why, "larger"));
	s = (struct obj_size_spec){ .dist = OBJ_SIZE_UNIFORM, .min = 10 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MIN, &why), -EINVAL);
	s = (struct obj_size_spec){ .dist = OBJ_SIZE_EXPONENTIAL, .max = 10 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MAX, &why), -EINVAL);
	assert_non_null(strstr(why, "mean"));
	s = (struct obj_size_spec){ .dist = OBJ_SIZE_EXPONENTIAL, .mean = 100, .max = 10 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MAX | OBJ_SIZE_HAS_MEAN, &why), -EINVAL);
	s = (struct obj_size_spec){ .dist = OBJ_SIZE_FIXED, .max = UINT64_C(6) << 30 };
	assert_int_equal(obj_size_resolve(&s, OBJ_SIZE_HAS_MAX, &why), -EINVAL);
	assert_non_null(strstr(why, "5GiB"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_uniform),
		cmocka_unit_test(test_log2_like_warp),
		cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
