/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hist.h"

#define NSAMPLES 200000
#define USEC UINT64_C(1000)
#define MSEC UINT64_C(1000000)
#define HOUR (UINT64_C(3600) * 1000000000)

/* xorshift64*: deterministic across libcs, unlike rand(). */
static uint64_t prng_state;

static void prng_seed(uint64_t seed)
{
	prng_state = seed ? seed : 1;
}

static uint64_t prng_next(void)
{
	prng_state ^= prng_state >> 12;
	prng_state ^= prng_state << 25;
	prng_state ^= prng_state >> 27;
	return prng_state * UINT64_C(2685821657736338717);
}

/* Uniform in (0, 1], so log() and pow() never see zero. */
static double prng_unit(void)
{
	return (double)((prng_next() >> 11) + 1) * 0x1p-53;
}

static uint64_t clamp_latency(double v)
{
	if (v < (double)USEC)
		return USEC;
	if (v > (double)HOUR)
		return HOUR;
	return (uint64_t)v;
}

enum dist { DIST_UNIFORM, DIST_EXPONENTIAL, DIST_PARETO };

static uint64_t sample(enum dist dist)
{
	switch (dist) {
	case DIST_UNIFORM:
		return USEC + prng_next() % (HOUR - USEC + 1);
	case DIST_EXPONENTIAL:
		return clamp_latency(-log(prng_unit()) * (double)MSEC);
	case DIST_PARETO:
		return clamp_latency((double)USEC / pow(prng_unit(), 1.0 / 1.1));
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static struct hist *hist_new_checked(void)
{
	struct hist *h = hist_new();

	assert_non_null(h);
	return h;
}

static uint64_t *fill(struct hist *h, enum dist dist, uint64_t seed)
{
	uint64_t *values = malloc(NSAMPLES * sizeof(*values));
	size_t i;

	assert_non_null(values);
	prng_seed(seed);
	for (i = 0; i < NSAMPLES; i++) {
		values[i] = sample(dist);
		hist_record(h, values[i]);
	}
	qsort(values, NSAMPLES, sizeof(*values), cmp_u64);
	return values;
}

/* Every property an accepted or freshly built histogram must have. */
static void assert_consistent(const struct hist *h)
{
	uint64_t seen = 0;
	size_t b, first = HIST_BUCKETS, last = 0;

	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!hist_bucket(h, b))
			continue;
		if (first == HIST_BUCKETS)
			first = b;
		last = b;
		seen += hist_bucket(h, b);
	}
	assert_int_equal(seen, h->count);
	/* A chunk is only there for counts: none is held empty. */
	for (size_t c = 0; c < HIST_CHUNKS; c++) {
		uint64_t in = 0;

		for (b = c * HIST_SUB_COUNT; b < (c + 1) * HIST_SUB_COUNT; b++)
			in += hist_bucket(h, b);
		assert_true(!(h->chunks ? h->chunks[c] : 0) == !in);
	}
	if (!h->count) {
		assert_null(h->chunks);
		assert_int_equal(h->min, UINT64_MAX);
		assert_int_equal(h->max, 0);
		assert_int_equal(h->sum, 0);
		return;
	}
	assert_true(h->min <= h->max);
	assert_true(h->max <= HIST_MAX_VALUE);
	assert_int_equal(hist_bucket_of(h->min), first);
	assert_int_equal(hist_bucket_of(h->max), last);
	assert_true(h->clamped <= hist_bucket(h, HIST_BUCKETS - 1));
}

static void test_bucket_layout(void **state)
{
	uint64_t lo, hi, prev_hi = 0, mid;
	size_t b;

	(void)state;
	assert_int_equal(HIST_BUCKETS, 4992);
	for (b = 0; b < HIST_BUCKETS; b++) {
		hist_bucket_range(b, &lo, &hi);
		assert_true(lo <= hi);
		assert_int_equal(hist_bucket_of(lo), b);
		assert_int_equal(hist_bucket_of(hi), b);
		if (b)
			assert_int_equal(lo, prev_hi + 1);
		else
			assert_int_equal(lo, 0);
		if (lo < HIST_LINEAR_LIMIT) {
			assert_int_equal(lo, hi);
		} else {
			/* The reported midpoint is within 1/256 of anything in the bucket. */
			assert_true((hi - lo + 1) * HIST_SUB_COUNT <= lo);
			mid = lo + (hi - lo) / 2;
			assert_true((mid - lo) * 256 <= lo);
			assert_true((hi - mid) * 256 <= hi);
		}
		prev_hi = hi;
	}
	assert_int_equal(prev_hi, HIST_MAX_VALUE);
}

static void check_percentiles(enum dist dist, uint64_t seed)
{
	/* p in hundredths of a percent, so the reference rank is exact. */
	static const uint64_t p_x100[] = { 100, 1000, 5000, 9000, 9900, 9990, 9999 };
	struct hist *h = hist_new_checked();
	uint64_t *values = fill(h, dist, seed);
	size_t i;

	assert_consistent(h);
	assert_int_equal(h->count, NSAMPLES);
	assert_int_equal(hist_min(h), values[0]);
	assert_int_equal(hist_max(h), values[NSAMPLES - 1]);
	assert_int_equal(hist_percentile(h, 100.0), values[NSAMPLES - 1]);
	for (i = 0; i < sizeof(p_x100) / sizeof(p_x100[0]); i++) {
		uint64_t rank = (p_x100[i] * NSAMPLES + 9999) / 10000;
		uint64_t want = values[rank - 1];
		uint64_t got = hist_percentile(h, (double)p_x100[i] / 100.0);
		uint64_t err = got > want ? got - want : want - got;

		/* README: "any reported percentile is within 0.4% of the true value". */
		if (err * 1000 > want * 4)
			fail_msg("dist %d p%.2f: got %llu want %llu", dist, (double)p_x100[i] / 100.0,
				 (unsigned long long)got, (unsigned long long)want);
	}
	free(values);
	hist_delete(h);
}

static void test_percentile_uniform(void **state)
{
	(void)state;
	check_percentiles(DIST_UNIFORM, 1);
}

static void test_percentile_exponential(void **state)
{
	(void)state;
	check_percentiles(DIST_EXPONENTIAL, 2);
}

static void test_percentile_pareto(void **state)
{
	(void)state;
	check_percentiles(DIST_PARETO, 3);
}

static void test_percentile_exact_small(void **state)
{
	struct hist *h = hist_new_checked();
	uint64_t v;

	(void)state;
	assert_int_equal(hist_percentile(h, 50), 0);
	assert_int_equal(hist_min(h), 0);
	assert_true(hist_mean(h) == 0.0);
	for (v = 1; v <= 100; v++)
		hist_record(h, v);
	assert_int_equal(hist_percentile(h, 1), 1);
	assert_int_equal(hist_percentile(h, 50), 50);
	assert_int_equal(hist_percentile(h, 50.5), 51);
	assert_int_equal(hist_percentile(h, 99), 99);
	assert_int_equal(hist_percentile(h, 99.9), 100);
	assert_int_equal(hist_percentile(h, 100), 100);
	assert_int_equal(hist_percentile(h, 0), 1);
	assert_int_equal(hist_percentile(h, NAN), 1);
	assert_true(hist_mean(h) == 50.5);

	/* One value: every percentile is that value, not its bucket's midpoint. */
	hist_reset(h);
	hist_record(h, 123456789);
	assert_int_equal(hist_percentile(h, 1), 123456789);
	assert_int_equal(hist_percentile(h, 50), 123456789);
	assert_int_equal(hist_percentile(h, 100), 123456789);
	hist_delete(h);
}

/* The values of the ranks that bound a percentile with 95% confidence. */
static void test_percentile_interval(void **state)
{
	struct hist *h = hist_new_checked();
	uint64_t lo, hi;

	(void)state;
	assert_false(hist_percentile_interval(h, 50, &lo, &hi));
	assert_int_equal(lo, 0);
	assert_int_equal(hi, UINT64_MAX);
	for (uint64_t v = 1; v <= 200; v++)
		hist_record(h, v);
	/* p50 of 200: rank 100 -/+ 1.96 * sqrt(50) = 13.9, so ranks 86..115. */
	assert_true(hist_percentile_interval(h, 50, &lo, &hi));
	assert_int_equal(lo, 86);
	assert_int_equal(hi, 115);
	/* p99 of 200: rank 198 + 2.8 + 1 is past the largest value. */
	assert_false(hist_percentile_interval(h, 99, &lo, &hi));
	assert_int_equal(lo, 195);
	assert_int_equal(hi, UINT64_MAX);

	/* cmp's runs: of 540 or 1260 ops, p99.9 is unbounded, p99 of 1260 is not. */
	hist_reset(h);
	for (uint64_t v = 1; v <= 540; v++)
		hist_record(h, 1000 * v);
	assert_false(hist_percentile_interval(h, 99.9, &lo, &hi));
	for (uint64_t v = 541; v <= 1260; v++)
		hist_record(h, 1000 * v);
	assert_false(hist_percentile_interval(h, 99.9, &lo, &hi));
	assert_true(hist_percentile_interval(h, 99, &lo, &hi));
	assert_true(lo <= hist_percentile(h, 99) && hist_percentile(h, 99) <= hi);
	assert_true(hi < hist_max(h));
	for (uint64_t v = 1261; v <= 10000; v++)
		hist_record(h, 1000 * v);
	assert_true(hist_percentile_interval(h, 99.9, &lo, &hi));
	assert_true(lo <= hist_percentile(h, 99.9) && hist_percentile(h, 99.9) <= hi);
	hist_delete(h);
}

static void test_merge(void **state)
{
	struct hist *whole = hist_new_checked(), *merged = hist_new_checked(), *parts[5];
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++)
		parts[i] = hist_new_checked();
	prng_seed(42);
	/* parts[4] stays empty: merging nothing must change nothing. */
	for (i = 0; i < 3 * NSAMPLES; i++) {
		uint64_t v = sample((enum dist)(i % 3));

		hist_record(whole, v);
		hist_record(parts[prng_next() % 4], v);
	}
	hist_record(whole, UINT64_MAX);
	hist_record(parts[2], UINT64_MAX);

	for (i = 0; i < 5; i++)
		hist_merge(merged, parts[i]);
	assert_consistent(merged);
	assert_int_equal(merged->count, whole->count);
	assert_int_equal(merged->sum, whole->sum);
	assert_int_equal(merged->min, whole->min);
	assert_int_equal(merged->max, whole->max);
	assert_int_equal(merged->clamped, 1);
	assert_true(hist_equal(merged, whole));

	/* Merge order does not matter. */
	hist_reset(merged);
	for (i = 5; i-- > 0;)
		hist_merge(merged, parts[i]);
	assert_true(hist_equal(merged, whole));

	for (i = 0; i < 5; i++)
		hist_delete(parts[i]);
	hist_delete(whole);
	hist_delete(merged);
}

static void test_record_n(void **state)
{
	struct hist *a = hist_new_checked(), *b = hist_new_checked();
	int i;

	(void)state;
	for (i = 0; i < 7; i++) {
		hist_record(a, 5000);
		hist_record(a, HIST_MAX_VALUE + 10);
	}
	hist_record_n(b, 5000, 7);
	hist_record_n(b, HIST_MAX_VALUE + 10, 7);
	hist_record_n(b, 1, 0);
	assert_true(hist_equal(a, b));

	/* The sum sticks at the top instead of wrapping. */
	hist_record_n(b, HIST_MAX_VALUE, UINT64_C(1) << 20);
	assert_int_equal(b->sum, UINT64_MAX);
	hist_record(b, 1);
	assert_int_equal(b->sum, UINT64_MAX);
	assert_consistent(b);
	hist_delete(a);
	hist_delete(b);
}

static void test_clamp(void **state)
{
	struct hist *h = hist_new_checked();

	(void)state;
	hist_record(h, HIST_MAX_VALUE);
	assert_int_equal(h->clamped, 0);
	hist_record(h, HIST_MAX_VALUE + 1);
	hist_record(h, UINT64_MAX);
	assert_int_equal(h->count, 3);
	assert_int_equal(h->clamped, 2);
	assert_int_equal(h->max, HIST_MAX_VALUE);
	assert_int_equal(h->sum, 3 * HIST_MAX_VALUE);
	assert_int_equal(hist_bucket(h, HIST_BUCKETS - 1), 3);
	assert_int_equal(hist_bucket_of(UINT64_MAX), HIST_BUCKETS - 1);
	assert_int_equal(hist_percentile(h, 50), HIST_MAX_VALUE);
	assert_int_equal(hist_percentile(h, 100), HIST_MAX_VALUE);
	assert_consistent(h);
	hist_delete(h);
}

/* Number of sorted values strictly greater than t. */
static uint64_t raw_above(const uint64_t *values, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (values[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n - lo;
}

static void test_count_above(void **state)
{
	struct hist *h = hist_new_checked();
	uint64_t *values = fill(h, DIST_PARETO, 7), lo, hi, got, want;
	size_t b;

	(void)state;
	for (b = 0; b < HIST_BUCKETS; b++) {
		hist_bucket_range(b, &lo, &hi);
		assert_int_equal(hist_count_above(h, hi), raw_above(values, NSAMPLES, hi));
		/* Inside a bucket: never more than the truth, short by at most that bucket. */
		got = hist_count_above(h, lo);
		want = raw_above(values, NSAMPLES, lo);
		assert_true(got <= want);
		assert_true(want - got <= hist_bucket(h, b));
	}
	assert_int_equal(hist_count_above(h, 0), NSAMPLES);
	assert_int_equal(hist_count_above(h, h->min - 1), NSAMPLES);
	assert_int_equal(hist_count_above(h, h->max), 0);
	assert_int_equal(hist_count_above(h, UINT64_MAX), 0);
	/* max - 1 shares max's (wide) bucket, which is therefore not counted. */
	assert_int_equal(hist_count_above(h, h->max - 1), 0);

	hist_reset(h);
	assert_int_equal(hist_count_above(h, 0), 0);
	hist_record(h, 300);
	hist_record(h, 301);
	hist_record(h, 1000);
	/* 300 and 301 share bucket [300, 301]. */
	assert_int_equal(hist_count_above(h, 299), 3);
	assert_int_equal(hist_count_above(h, 301), 1);
	assert_int_equal(hist_count_above(h, 999), 1);
	assert_int_equal(hist_count_above(h, 1000), 0);
	free(values);
	hist_delete(h);
}

static void roundtrip(const struct hist *h)
{
	struct hist *back = hist_new_checked();
	size_t need = hist_serialize(h, NULL, 0);
	uint8_t *buf = malloc(need + 1);
	char *text;

	assert_non_null(buf);
	/* Too small: reports the size and leaves the buffer alone. */
	memset(buf, 0xa5, need + 1);
	assert_int_equal(hist_serialize(h, buf, need - 1), need);
	assert_int_equal(buf[0], 0xa5);
	assert_int_equal(hist_serialize(h, buf, need + 1), need);
	assert_int_equal(buf[need], 0xa5);

	assert_int_equal(hist_deserialize(back, buf, need), 0);
	assert_true(hist_equal(back, h));

	text = hist_to_base64(h);
	assert_non_null(text);
	assert_int_equal(strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
			 strlen(text));
	assert_int_equal(strlen(text), (need * 4 + 2) / 3);
	hist_reset(back);
	assert_int_equal(hist_from_base64(back, text), 0);
	assert_true(hist_equal(back, h));
	free(text);
	free(buf);
	hist_delete(back);
}

/*
 * hist_reset releases every chunk and hist_init_zeroed writes only min:
 * both must leave a histogram equal to one from hist_init, and
 * hist_merge_base64 must add as hist_merge does.
 */
static void test_reset_and_merge_base64(void **state)
{
	struct hist *h = hist_new_checked(), *empty = hist_new_checked(), *sum = hist_new_checked(), *want = hist_new_checked();
	struct hist *z = calloc(1, sizeof(*z));

	(void)state;
	assert_non_null(z);
	hist_init_zeroed(z);
	assert_true(hist_equal(z, empty));
	prng_seed(7);
	for (int d = 0; d < 3; d++) {
		free(fill(h, (enum dist)d, 500 + d));
		hist_record(h, UINT64_MAX);
		hist_merge(want, h);
		char *text = hist_to_base64(h);
		assert_non_null(text);
		assert_int_equal(hist_merge_base64(sum, text), 0);
		free(text);
		assert_true(hist_equal(sum, want));
		hist_reset(h);
		assert_true(hist_equal(h, empty));
		assert_int_equal(hist_memory(h), 0);
	}
	/* A bad text adds nothing. */
	assert_int_equal(hist_merge_base64(sum, "AQIDBA"), -EINVAL);
	assert_true(hist_equal(sum, want));
	hist_reset(h);
	assert_true(hist_equal(h, empty));
	hist_delete(z);
	hist_delete(h);
	hist_delete(empty);
	hist_delete(sum);
	hist_delete(want);
}

/*
 * Memory is the octaves in use: three values far apart hold three chunks,
 * whatever lies between them, and every answer skips the empty octaves.
 */
static bool within(uint64_t got, uint64_t want)
{
	return (got > want ? got - want : want - got) * 1000 <= want * 4;
}

static void test_memory(void **state)
{
	struct hist *h = hist_new_checked(), *copy = hist_new_checked();

	(void)state;
	assert_int_equal(hist_memory(h), 0);
	hist_record(h, 3 * USEC);
	hist_record(h, 2 * MSEC);
	hist_record_n(h, 7000 * MSEC, 2);
	assert_consistent(h);
	assert_int_equal(hist_memory(h), 3 * HIST_SUB_COUNT * sizeof(uint8_t));
	assert_true(within(hist_percentile(h, 25), 3 * USEC));
	assert_true(within(hist_percentile(h, 50), 2 * MSEC));
	assert_true(within(hist_percentile(h, 75), 7000 * MSEC));
	assert_int_equal(hist_count_above(h, 3 * MSEC), 2);
	hist_merge(copy, h);
	assert_true(hist_equal(copy, h));
	assert_int_equal(hist_memory(copy), hist_memory(h));
	roundtrip(h);
	hist_reset(h);
	assert_int_equal(hist_memory(h), 0);
	assert_consistent(h);

	/* Counts are as wide as they need: a chunk widens when one of its
	 * counts passes 255, 65535 and 2^32 - 1, and only that chunk; a new
	 * chunk starts as wide as its first count.  Merging and decoding
	 * carry the counts over. */
	hist_record(h, 3 * USEC);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * sizeof(uint8_t));
	hist_record_n(h, 50 * USEC, 255);
	assert_int_equal(hist_memory(h), 2 * HIST_SUB_COUNT * sizeof(uint8_t));
	hist_record(h, 50 * USEC + 1);
	assert_int_equal(hist_bucket(h, hist_bucket_of(50 * USEC)), 256);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * (sizeof(uint8_t) + sizeof(uint16_t)));
	hist_record_n(h, 50 * USEC, 65535 - 256);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * (sizeof(uint8_t) + sizeof(uint16_t)));
	hist_record(h, 50 * USEC);
	assert_int_equal(hist_bucket(h, hist_bucket_of(50 * USEC)), 65536);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * (sizeof(uint8_t) + sizeof(uint32_t)));
	assert_consistent(h);
	hist_reset(h);
	hist_record(h, 3 * USEC);
	hist_record_n(h, 2 * MSEC, UINT32_MAX);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * (sizeof(uint8_t) + sizeof(uint32_t)));
	hist_record(h, 2 * MSEC);
	assert_int_equal(hist_bucket(h, hist_bucket_of(2 * MSEC)), UINT64_C(1) << 32);
	assert_int_equal(hist_memory(h), HIST_SUB_COUNT * (sizeof(uint8_t) + sizeof(uint64_t)));
	assert_consistent(h);
	hist_reset(copy);
	hist_merge(copy, h);
	hist_merge(copy, h);
	assert_int_equal(hist_bucket(copy, hist_bucket_of(2 * MSEC)), UINT64_C(1) << 33);
	assert_int_equal(hist_bucket(copy, hist_bucket_of(3 * USEC)), 2);
	roundtrip(h);
	roundtrip(copy);
	hist_delete(h);
	hist_delete(copy);
}

static void test_roundtrip(void **state)
{
	struct hist *h = hist_new_checked();
	uint64_t *values;
	int d;

	(void)state;
	roundtrip(h);
	hist_record(h, 0);
	roundtrip(h);
	hist_reset(h);
	hist_record(h, 4 * MSEC + 17);
	roundtrip(h);
	hist_record(h, UINT64_MAX);
	roundtrip(h);
	for (d = 0; d < 3; d++) {
		values = fill(h, (enum dist)d, 100 + d);
		free(values);
		roundtrip(h);
	}
	hist_record_n(h, HIST_MAX_VALUE, UINT64_C(1) << 20);
	roundtrip(h);
	hist_delete(h);
}

/* What a failed decode must leave alone: odd values in three octaves. */
static void make_poison(struct hist *h)
{
	hist_reset(h);
	hist_record(h, 77);
	hist_record(h, 5 * MSEC + 3);
	hist_record_n(h, HIST_MAX_VALUE, 5);
}

/* A hostile buffer either fails and leaves *ret alone, or is canonical. */
static void check_hostile(const uint8_t *buf, size_t len, struct hist *scratch, struct hist *poison)
{
	uint8_t *again;

	hist_copy(scratch, poison);
	if (hist_deserialize(scratch, buf, len) < 0) {
		assert_true(hist_equal(scratch, poison));
		return;
	}
	assert_consistent(scratch);
	again = malloc(len + 1);
	assert_non_null(again);
	assert_int_equal(hist_serialize(scratch, again, len + 1), len);
	assert_memory_equal(again, buf, len);
	free(again);
}

static void test_deserialize_corrupt(void **state)
{
	struct hist *h = hist_new_checked(), *scratch = hist_new_checked(), *poison = hist_new_checked();
	static const uint8_t masks[] = { 0x01, 0x02, 0x10, 0x40, 0x7f, 0x80, 0xff };
	uint64_t *values = fill(h, DIST_EXPONENTIAL, 9);
	size_t len = hist_serialize(h, NULL, 0), i, m;
	uint8_t *buf = malloc(len + 1);

	(void)state;
	assert_non_null(buf);
	make_poison(poison);
	hist_serialize(h, buf, len);

	for (i = 0; i < len; i++)
		assert_int_equal(hist_deserialize(scratch, buf, i), -EINVAL);
	buf[len] = 0;
	assert_int_equal(hist_deserialize(scratch, buf, len + 1), -EINVAL);
	assert_int_equal(hist_deserialize(scratch, NULL, 0), -EINVAL);

	for (i = 0; i < len; i++) {
		for (m = 0; m < sizeof(masks); m++) {
			buf[i] ^= masks[m];
			check_hostile(buf, len, scratch, poison);
			buf[i] ^= masks[m];
		}
	}
	/* Random garbage behind a valid version byte, of every short length. */
	prng_seed(11);
	for (i = 0; i < 200000; i++) {
		size_t n = 1 + prng_next() % 40, j;

		buf[0] = 1;
		for (j = 1; j < n; j++)
			buf[j] = (uint8_t)prng_next();
		check_hostile(buf, n, scratch, poison);
	}
	free(values);
	free(buf);
	hist_delete(scratch);
	hist_delete(poison);
	hist_delete(h);
}

static size_t put(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* version, count, sum, min, max, clamped, then (gap, count) pairs. */
static size_t build(uint8_t *out, const uint64_t *fields, size_t nfields)
{
	size_t n = 1, i;

	out[0] = 1;
	for (i = 0; i < nfields; i++)
		n += put(out + n, fields[i]);
	return n;
}

static void test_deserialize_crafted(void **state)
{
	static const struct {
		const char *what;
		uint64_t fields[9];
		size_t nfields;
		int ret;
	} cases[] = {
		/* 300 is in bucket 278, 400 in bucket 328. */
		{ "valid pair", { 2, 700, 300, 400, 0, 278, 1, 49, 1 }, 9, 0 },
		{ "valid empty", { 0, 0, UINT64_MAX, 0, 0 }, 5, 0 },
		{ "empty with sum", { 0, 1, UINT64_MAX, 0, 0 }, 5, -EINVAL },
		{ "empty with min 0", { 0, 0, 0, 0, 0 }, 5, -EINVAL },
		{ "min above max", { 2, 700, 400, 300, 0, 278, 1, 49, 1 }, 9, -EINVAL },
		{ "sum too small", { 2, 600, 300, 400, 0, 278, 1, 49, 1 }, 9, -EINVAL },
		{ "buckets short", { 3, 1000, 300, 400, 0, 278, 1, 49, 1 }, 9, -EINVAL },
		{ "buckets over", { 2, 700, 300, 400, 0, 278, 1, 49, 2 }, 9, -EINVAL },
		{ "zero bucket", { 2, 700, 300, 400, 0, 278, 0, 50, 2 }, 9, -EINVAL },
		{ "bucket out of range", { 1, 5, 5, 5, 0, HIST_BUCKETS, 1 }, 7, -EINVAL },
		{ "gap overflow", { 1, 5, 5, 5, 0, UINT64_MAX, 1 }, 7, -EINVAL },
		{ "min not first", { 2, 700, 300, 400, 0, 279, 1, 48, 1 }, 9, -EINVAL },
		{ "max beyond range", { 1, HIST_MAX_VALUE + 1, HIST_MAX_VALUE + 1, HIST_MAX_VALUE + 1, 0, HIST_BUCKETS - 1, 1 }, 7, -EINVAL },
		{ "clamped below top", { 1, 5, 5, 5, 1, 5, 1 }, 7, -EINVAL },
		{ "clamped above count", { 1, HIST_MAX_VALUE, HIST_MAX_VALUE, HIST_MAX_VALUE, 2, HIST_BUCKETS - 1, 1 }, 7, -EINVAL },
		{ "clamped ok", { 1, HIST_MAX_VALUE, HIST_MAX_VALUE, HIST_MAX_VALUE, 1, HIST_BUCKETS - 1, 1 }, 7, 0 },
		{ "single min != max", { 1, 5, 5, 6, 0, 5, 1 }, 7, -EINVAL },
	};
	struct hist *h = hist_new_checked();
	uint8_t buf[128];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = build(buf, cases[i].fields, cases[i].nfields);
		if (hist_deserialize(h, buf, n) != cases[i].ret)
			fail_msg("case '%s'", cases[i].what);
	}

	/* Wrong version. */
	n = build(buf, cases[0].fields, cases[0].nfields);
	buf[0] = 2;
	assert_int_equal(hist_deserialize(h, buf, n), -EINVAL);
	buf[0] = 0;
	assert_int_equal(hist_deserialize(h, buf, n), -EINVAL);

	/* Overlong zero: 0x80 0x00 for count. */
	memcpy(buf, (const uint8_t[]){ 1, 0x80, 0x00, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0 }, 16);
	assert_int_equal(hist_deserialize(h, buf, 16), -EINVAL);
	/* The same without the overlong byte is the valid empty histogram. */
	memmove(buf + 1, buf + 2, 14);
	assert_int_equal(hist_deserialize(h, buf, 15), 0);
	/* A 65-bit varint and an 11-byte varint. */
	memcpy(buf, (const uint8_t[]){ 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 }, 11);
	assert_int_equal(hist_deserialize(h, buf, 11), -EINVAL);
	memcpy(buf, (const uint8_t[]){ 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00 }, 12);
	assert_int_equal(hist_deserialize(h, buf, 12), -EINVAL);
	hist_delete(h);
}

static char base64url_next(char c)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

	return alphabet[(strchr(alphabet, c) - alphabet) | 1];
}

static void test_base64_hostile(void **state)
{
	struct hist *h = hist_new_checked(), *poison = hist_new_checked();
	char *text, *big;
	size_t len;

	(void)state;
	make_poison(poison);
	hist_copy(h, poison);
	assert_int_equal(hist_from_base64(h, NULL), -EINVAL);
	assert_int_equal(hist_from_base64(h, ""), -EINVAL);
	assert_int_equal(hist_from_base64(h, "A"), -EINVAL);
	assert_int_equal(hist_from_base64(h, "===="), -EINVAL);
	assert_int_equal(hist_from_base64(h, "AQ=="), -EINVAL);
	assert_int_equal(hist_from_base64(h, "AQ+/"), -EINVAL);
	assert_true(hist_equal(h, poison));

	hist_reset(h);
	text = hist_to_base64(h);
	assert_non_null(text);
	assert_int_equal(hist_from_base64(poison, text), 0);
	/* 15 bytes: the empty histogram keeps its UINT64_MAX min. */
	assert_int_equal(strlen(text), 20);
	free(text);

	hist_record(h, 77);
	text = hist_to_base64(h);
	len = strlen(text);
	assert_true(len % 4 != 0);
	/* Set a spare bit in the last character, which only holds 4 data bits here. */
	text[len - 1] = base64url_next(text[len - 1]);
	assert_int_equal(hist_from_base64(poison, text), -EINVAL);
	free(text);

	big = malloc(1 << 20);
	assert_non_null(big);
	memset(big, 'A', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	assert_int_equal(hist_from_base64(poison, big), -EINVAL);
	free(big);
	hist_delete(poison);
	hist_delete(h);
}

/* The rank is the definition's for counts past 10^8 too: 99.99% of
 * 199,999,999 is rank 199,980,000, the first of the slow values. */
static void test_percentile_rank_large_count(void **state)
{
	struct hist h;
	(void)state;

	hist_init(&h);
	hist_record_n(&h, 1000, 199979999);
	hist_record_n(&h, 5000000, 20000);
	assert_true(hist_percentile(&h, 99.99) >= 4900000);
	/* One value fewer among the slow ones: the rank is the last fast one. */
	hist_reset(&h);
	hist_record_n(&h, 1000, 199980000);
	hist_record_n(&h, 5000000, 19999);
	assert_true(hist_percentile(&h, 99.99) < 2000);
	/* And the case the slack is for: 99.9% of 200000 is rank 199800. */
	hist_reset(&h);
	hist_record_n(&h, 1000, 199800);
	hist_record_n(&h, 5000000, 200);
	assert_true(hist_percentile(&h, 99.9) < 2000);
	hist_free(&h);
}

/* A percentile of what is left once the values of another histogram are
 * taken out: a search's completed ops, without the missed ops' waits. */
static void test_percentile_without(void **state)
{
	struct hist h, ex, none;
	(void)state;

	hist_init(&h);
	hist_init(&ex);
	hist_init(&none);
	hist_record_n(&h, 500000, 990);
	hist_record_n(&h, 20000000, 10);
	hist_record_n(&ex, 20000000, 10);
	assert_true(hist_percentile(&h, 99.5) > 19000000);
	uint64_t p = hist_percentile_without(&h, &ex, 99.5);
	assert_true(p > 490000 && p < 510000);
	assert_true(hist_percentile_without(&h, &ex, 100) < 510000);
	assert_int_equal(hist_percentile_without(&h, &none, 99.5), hist_percentile(&h, 99.5));
	assert_int_equal(hist_percentile_without(&ex, &ex, 50), 0);
	hist_free(&h);
	hist_free(&ex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_layout),
		cmocka_unit_test(test_percentile_uniform),
		cmocka_unit_test(test_percentile_exponential),
		cmocka_unit_test(test_percentile_pareto),
		cmocka_unit_test(test_percentile_exact_small),
		cmocka_unit_test(test_percentile_interval),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_record_n),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_count_above),
		cmocka_unit_test(test_reset_and_merge_base64),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_deserialize_corrupt),
		cmocka_unit_test(test_deserialize_crafted),
		cmocka_unit_test(test_base64_hostile),
		cmocka_unit_test(test_percentile_rank_large_count),
		cmocka_unit_test(test_percentile_without),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
