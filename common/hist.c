/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdbool.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define HIST_FORMAT_VERSION 1

/*
 * The sum saturates rather than wraps: a wrapped sum would silently report
 * a small mean, a stuck one is visibly wrong.  Saturating addition is still
 * associative, so merging in any order gives the same result.
 */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline size_t bucket_of(uint64_t value_ns)
{
	unsigned shift;

	if (value_ns < HIST_LINEAR_LIMIT)
		return value_ns;
	/*
	 * With the top bit at 2^k (k >= 8), value >> (k - 7) keeps the top
	 * eight bits, 128..255; each octave above the exact range adds 128
	 * buckets, which puts [256, 512) at 256..383 and so on.
	 */
	shift = 63 - __builtin_clzll(value_ns) - HIST_SUB_BITS;
	return (size_t)shift * HIST_SUB_COUNT + (size_t)(value_ns >> shift);
}

/* A histogram's buckets are not optional: without them its counts would
 * be wrong, so running out of memory for them ends soakd. */
static void *must_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fputs("soakd: out of memory for a histogram's buckets\n", stderr);
		abort();
	}
	return p;
}

/* An empty chunk of counts 1 << width bytes wide. */
static uintptr_t chunk_alloc(unsigned width)
{
	return (uintptr_t)must_calloc(HIST_SUB_COUNT, (size_t)1 << width) | width;
}

static void chunk_free(uintptr_t c)
{
	free((void *)(c & ~HIST_CHUNK_WIDTH));
}

static uintptr_t *table_alloc(void)
{
	return must_calloc(HIST_CHUNKS, sizeof(uintptr_t));
}

/* Sets count i of a chunk to n, which its width holds. */
static inline void chunk_set(uintptr_t chunk, size_t i, uint64_t n)
{
	void *p = (void *)(chunk & ~HIST_CHUNK_WIDTH);

	switch (chunk & HIST_CHUNK_WIDTH) {
	case 0: ((uint8_t *)p)[i] = (uint8_t)n; break;
	case 1: ((uint16_t *)p)[i] = (uint16_t)n; break;
	case 2: ((uint32_t *)p)[i] = (uint32_t)n; break;
	default: ((uint64_t *)p)[i] = n; break;
	}
}

/* Chunk c of a histogram, 0 when it has none. */
static inline uintptr_t chunk_at(const struct hist *h, size_t c)
{
	return h->chunks ? h->chunks[c] : 0;
}

/* The narrowest width (log2 of bytes) that holds count. */
static inline unsigned width_of(uint64_t count)
{
	return count <= UINT8_MAX ? 0 : count <= UINT16_MAX ? 1 : count <= UINT32_MAX ? 2 : 3;
}

/* Chunk c's counts move to a chunk of the given (wider) width. */
static void widen(struct hist *h, size_t c, unsigned width)
{
	uintptr_t old = h->chunks[c], chunk = chunk_alloc(width);

	for (size_t i = 0; i < HIST_SUB_COUNT; i++)
		chunk_set(chunk, i, hist_bucket(h, c * HIST_SUB_COUNT + i));
	chunk_free(old);
	h->chunks[c] = chunk;
}

/* Adds n (> 0) to bucket b, allocating or widening its chunk as needed. */
static inline void bucket_add(struct hist *h, size_t b, uint64_t n)
{
	size_t c = b / HIST_SUB_COUNT, i = b % HIST_SUB_COUNT;
	uintptr_t chunk;
	void *p;
	uint64_t have;

	if (__builtin_expect(!h->chunks, 0))
		h->chunks = table_alloc();
	chunk = h->chunks[c];
	p = (void *)(chunk & ~HIST_CHUNK_WIDTH);
	if (__builtin_expect(!chunk, 0)) {
		chunk = chunk_alloc(width_of(n));
		h->chunks[c] = chunk;
		p = (void *)(chunk & ~HIST_CHUNK_WIDTH);
	}
	switch (chunk & HIST_CHUNK_WIDTH) {
	case 0:
		if (__builtin_expect(n <= (uint64_t)(UINT8_MAX - ((uint8_t *)p)[i]), 1)) {
			((uint8_t *)p)[i] += (uint8_t)n;
			return;
		}
		break;
	case 1:
		if (__builtin_expect(n <= (uint64_t)(UINT16_MAX - ((uint16_t *)p)[i]), 1)) {
			((uint16_t *)p)[i] += (uint16_t)n;
			return;
		}
		break;
	case 2:
		if (__builtin_expect(n <= UINT32_MAX - ((uint32_t *)p)[i], 1)) {
			((uint32_t *)p)[i] += (uint32_t)n;
			return;
		}
		break;
	default:
		((uint64_t *)p)[i] += n;
		return;
	}
	/* Past what this width holds: the bucket's new count (which fits 64
	 * bits: a histogram's count does) decides the next. */
	have = hist_bucket(h, b);
	widen(h, c, width_of(have + n));
	chunk_set(h->chunks[c], i, have + n);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_init_zeroed(struct hist *h)
{
	h->min = UINT64_MAX;
}

void hist_reset(struct hist *h)
{
	if (h->chunks) {
		for (size_t c = 0; c < HIST_CHUNKS; c++)
			chunk_free(h->chunks[c]);
		free(h->chunks);
		h->chunks = NULL;
	}
	h->count = h->sum = h->max = h->clamped = 0;
	h->min = UINT64_MAX;
}

void hist_free(struct hist *h)
{
	hist_reset(h);
}

struct hist *hist_new(void)
{
	struct hist *h = malloc(sizeof(*h));

	if (h)
		hist_init(h);
	return h;
}

void hist_delete(struct hist *h)
{
	if (!h)
		return;
	hist_free(h);
	free(h);
}

size_t hist_memory(const struct hist *h)
{
	size_t n = 0;

	for (size_t c = 0; c < HIST_CHUNKS; c++)
		n += !chunk_at(h, c) ? 0 : HIST_SUB_COUNT << (chunk_at(h, c) & HIST_CHUNK_WIDTH);
	return n;
}

size_t hist_bucket_of(uint64_t value_ns)
{
	return bucket_of(value_ns > HIST_MAX_VALUE ? HIST_MAX_VALUE : value_ns);
}

void hist_bucket_range(size_t bucket, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo, width;
	unsigned shift;

	if (bucket >= HIST_BUCKETS)
		bucket = HIST_BUCKETS - 1;
	if (bucket < HIST_LINEAR_LIMIT) {
		lo = bucket;
		width = 1;
	} else {
		shift = bucket / HIST_SUB_COUNT - 1;
		lo = (uint64_t)(bucket % HIST_SUB_COUNT + HIST_SUB_COUNT) << shift;
		width = UINT64_C(1) << shift;
	}
	if (ret_lo)
		*ret_lo = lo;
	if (ret_hi)
		*ret_hi = lo + width - 1;
}

void hist_record(struct hist *h, uint64_t value_ns)
{
	if (value_ns > HIST_MAX_VALUE) {
		value_ns = HIST_MAX_VALUE;
		h->clamped++;
	}
	bucket_add(h, bucket_of(value_ns), 1);
	h->count++;
	h->sum = add_sat(h->sum, value_ns);
	if (value_ns < h->min)
		h->min = value_ns;
	if (value_ns > h->max)
		h->max = value_ns;
}

void hist_record_n(struct hist *h, uint64_t value_ns, uint64_t n)
{
	if (!n)
		return;
	if (value_ns > HIST_MAX_VALUE) {
		value_ns = HIST_MAX_VALUE;
		h->clamped += n;
	}
	bucket_add(h, bucket_of(value_ns), n);
	h->count += n;
	h->sum = add_sat(h->sum, mul_sat(value_ns, n));
	if (value_ns < h->min)
		h->min = value_ns;
	if (value_ns > h->max)
		h->max = value_ns;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (size_t c = 0; c < HIST_CHUNKS; c++) {
		if (!chunk_at(src, c))
			continue;
		for (size_t b = c * HIST_SUB_COUNT; b < (c + 1) * HIST_SUB_COUNT; b++) {
			uint64_t n = hist_bucket(src, b);

			if (n)
				bucket_add(dst, b, n);
		}
	}
	dst->count += src->count;
	dst->sum = add_sat(dst->sum, src->sum);
	dst->clamped += src->clamped;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

void hist_copy(struct hist *dst, const struct hist *src)
{
	hist_reset(dst);
	hist_merge(dst, src);
}

uint64_t hist_percentile_without(const struct hist *h, const struct hist *ex, double p)
{
	uint64_t total = h->count > ex->count ? h->count - ex->count : 0, seen = 0, lo, hi;
	size_t b = 0;

	if (!total)
		return 0;
	if (!ex->count)
		return hist_percentile(h, p);
	/* The rank as hist_percentile takes it. */
	double exact = (p < 0 ? 0 : p > 100 ? 100 : p) / 100.0 * (double)total;
	uint64_t rank = (uint64_t)ceil(exact - exact * (4 * DBL_EPSILON));
	rank = rank < 1 ? 1 : rank > total ? total : rank;
	for (; b < HIST_BUCKETS; b++) {
		uint64_t in_h = hist_bucket(h, b), in_ex = hist_bucket(ex, b);
		seen += in_h > in_ex ? in_h - in_ex : 0;
		if (seen >= rank)
			break;
	}
	if (b == HIST_BUCKETS)
		return h->max;
	hist_bucket_range(b, &lo, &hi);
	uint64_t mid = lo + (hi - lo) / 2;
	return mid < h->min ? h->min : mid > h->max ? h->max : mid;
}

bool hist_equal(const struct hist *x, const struct hist *y)
{
	if (x->count != y->count || x->sum != y->sum || x->min != y->min || x->max != y->max ||
	    x->clamped != y->clamped)
		return false;
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		if (hist_bucket(x, b) != hist_bucket(y, b))
			return false;
	return true;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi, mid;
	double exact;
	size_t b, last;

	if (!h->count)
		return 0;
	if (p >= 100.0)
		return h->max;
	if (!(p > 0.0))
		return h->min;

	/*
	 * p = 99.9 is not exact in binary, so 99.9% of 200000 comes out a
	 * hair above 199800; without the slack ceil() would step one rank
	 * past the one the definition asks for.  The slack is a few units in
	 * the last place of exact, the most two roundings can add: a fixed
	 * share of it (1e-12) took a whole rank off a count of 10^8 and more
	 * (99.99% of 199,999,999 is 199,979,999.0001: rank 199,980,000).
	 */
	exact = p / 100.0 * (double)h->count;
	rank = (uint64_t)ceil(exact - exact * (4 * DBL_EPSILON));
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	last = hist_bucket_of(h->max);
	for (b = hist_bucket_of(h->min); b < last; b++) {
		if (!chunk_at(h, b / HIST_SUB_COUNT)) {
			b |= HIST_SUB_COUNT - 1;  /* the loop steps to the next chunk */
			continue;
		}
		seen += hist_bucket(h, b);
		if (seen >= rank)
			break;
	}
	hist_bucket_range(b, &lo, &hi);
	mid = lo + (hi - lo) / 2;
	if (mid < h->min)
		return h->min;
	if (mid > h->max)
		return h->max;
	return mid;
}

bool hist_percentile_interval(const struct hist *h, double p, uint64_t *ret_lo,
			      uint64_t *ret_hi)
{
	double n = (double)h->count, q = p / 100;
	double half = 1.96 * sqrt(n * q * (1 - q));
	double lo_rank = floor(n * q - half), hi_rank = ceil(n * q + half) + 1;

	*ret_lo = lo_rank < 1 ? 0 : hist_percentile(h, 100 * lo_rank / n);
	*ret_hi = hi_rank > n ? UINT64_MAX : hist_percentile(h, 100 * hi_rank / n);
	return hi_rank <= n;
}

uint64_t hist_count_above(const struct hist *h, uint64_t threshold_ns)
{
	uint64_t above = 0;
	size_t b, last;

	/* min and max are exact, so these two answers are too, wherever the
	 * threshold falls inside a bucket. */
	if (!h->count || threshold_ns >= h->max)
		return 0;
	if (threshold_ns < h->min)
		return h->count;

	last = hist_bucket_of(h->max);
	for (b = bucket_of(threshold_ns) + 1; b <= last; b++)
		above += hist_bucket(h, b);
	return above;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

/* Writes nothing when out is NULL, so the same code measures and encodes. */
static size_t put_varint(uint8_t *out, uint64_t value)
{
	size_t n = 0;

	do {
		uint8_t byte = value & 0x7f;

		value >>= 7;
		if (value)
			byte |= 0x80;
		if (out)
			out[n] = byte;
		n++;
	} while (value);
	return n;
}

static size_t encode(const struct hist *h, uint8_t *out)
{
	const uint64_t header[] = { h->count, h->sum, h->min, h->max, h->clamped };
	size_t n = 1, next = 0, b, i;

	if (out)
		out[0] = HIST_FORMAT_VERSION;
	for (i = 0; i < sizeof(header) / sizeof(header[0]); i++)
		n += put_varint(out ? out + n : NULL, header[i]);
	for (b = 0; b < HIST_BUCKETS; b++) {
		uint64_t count;

		if (!chunk_at(h, b / HIST_SUB_COUNT)) {
			b |= HIST_SUB_COUNT - 1;
			continue;
		}
		count = hist_bucket(h, b);
		if (!count)
			continue;
		n += put_varint(out ? out + n : NULL, b - next);
		n += put_varint(out ? out + n : NULL, count);
		next = b + 1;
	}
	return n;
}

size_t hist_serialize(const struct hist *h, uint8_t *buf, size_t buflen)
{
	size_t need = encode(h, NULL);

	if (!buf || buflen < need)
		return need;
	return encode(h, buf);
}

struct reader {
	const uint8_t *pos;
	const uint8_t *end;
};

static int get_varint(struct reader *r, uint64_t *ret_value)
{
	uint64_t value = 0;
	unsigned shift = 0;
	uint8_t byte;

	for (;;) {
		if (r->pos == r->end)
			return -EINVAL;
		byte = *r->pos++;
		/* The tenth byte holds bit 63 only. */
		if (shift == 63 && byte > 1)
			return -EINVAL;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			break;
		shift += 7;
	}
	/*
	 * An overlong encoding (a zero last byte after others) is refused so
	 * that every value has one encoding and an accepted buffer re-encodes
	 * to the same bytes; the fuzz tests rely on that.
	 */
	if (byte == 0 && shift)
		return -EINVAL;
	*ret_value = value;
	return 0;
}

/*
 * Checks buf (out NULL), or decodes checked buf into out: as all of it (out
 * was just emptied), or (add) added to what out holds.  Everything is
 * validated before anything is stored, so a caller leaves out alone on
 * failure without a temporary histogram.
 */
static int decode(const uint8_t *buf, size_t len, struct hist *out, bool add)
{
	struct reader r;
	uint64_t count, sum, min, max, clamped, gap, n, seen = 0, last_n = 0;
	size_t next = 0, b = 0, first = HIST_BUCKETS;

	if (len < 1 || buf[0] != HIST_FORMAT_VERSION)
		return -EINVAL;
	r.pos = buf + 1;
	r.end = buf + len;
	if (get_varint(&r, &count) < 0 || get_varint(&r, &sum) < 0 || get_varint(&r, &min) < 0 ||
	    get_varint(&r, &max) < 0 || get_varint(&r, &clamped) < 0)
		return -EINVAL;

	if (!count) {
		if (sum || min != UINT64_MAX || max || clamped)
			return -EINVAL;
	} else {
		if (min > max || max > HIST_MAX_VALUE || clamped > count)
			return -EINVAL;
		if (clamped && max != HIST_MAX_VALUE)
			return -EINVAL;
		/* The other count - 2 values lie in [min, max]. */
		if (count == 1 && (sum != min || min != max))
			return -EINVAL;
		if (count > 1 && (sum < add_sat(min + max, mul_sat(count - 2, min)) ||
				  sum > add_sat(min + max, mul_sat(count - 2, max))))
			return -EINVAL;
	}

	while (seen < count) {
		if (get_varint(&r, &gap) < 0 || get_varint(&r, &n) < 0)
			return -EINVAL;
		if (gap >= HIST_BUCKETS - next)
			return -EINVAL;
		if (!n || n > count - seen)
			return -EINVAL;
		b = next + gap;
		if (first == HIST_BUCKETS)
			first = b;
		if (out)
			bucket_add(out, b, n);  /* out was emptied first unless add */
		seen += n;
		last_n = n;
		next = b + 1;
	}
	if (r.pos != r.end)
		return -EINVAL;

	if (count) {
		if (first != bucket_of(min) || b != bucket_of(max))
			return -EINVAL;
		/* Clamped values were all recorded as HIST_MAX_VALUE. */
		if (clamped > last_n)
			return -EINVAL;
	}
	if (out && add) {
		out->count += count;
		out->sum = add_sat(out->sum, sum);
		out->clamped += clamped;
		if (count && min < out->min)
			out->min = min;
		if (count && max > out->max)
			out->max = max;
	} else if (out) {
		out->count = count;
		out->sum = sum;
		out->min = min;
		out->max = max;
		out->clamped = clamped;
	}
	return 0;
}

int hist_deserialize(struct hist *ret, const uint8_t *buf, size_t len)
{
	int r;

	if (!buf)
		return -EINVAL;
	r = decode(buf, len, NULL, false);
	if (r < 0)
		return r;
	hist_reset(ret);
	return decode(buf, len, ret, false);
}

int hist_merge_bytes(struct hist *dst, const uint8_t *buf, size_t len)
{
	int r;

	if (!buf)
		return -EINVAL;
	r = decode(buf, len, NULL, false);
	return r < 0 ? r : decode(buf, len, dst, true);
}
