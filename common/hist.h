/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HIST_H
#define SOAK_HIST_H

#include <stddef.h>
#include <stdint.h>

/*
 * Log-linear (HDR-style) latency histogram over nanoseconds.
 *
 * Values below 2^HIST_SUB_BITS+1 (256 ns) are counted exactly.  Above that,
 * every power of two [2^k, 2^(k+1)) is split into 2^HIST_SUB_BITS (128) equal
 * sub-buckets, so a bucket is at most 1/128 of its lower bound wide and the
 * value reported for it (the bucket's midpoint, clamped to the recorded
 * min/max) is within 0.4% of any value that fell into it.  The top bucket
 * ends at 2^HIST_MAX_BITS ns (about 9.8 hours); larger values are clamped
 * into it and counted in `clamped`.
 *
 * A histogram is a plain fixed-size struct: recording allocates nothing and
 * takes no lock, merging is exact (bucket counts add).
 */
#define HIST_SUB_BITS 7
#define HIST_MAX_BITS 45
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)             /* 128 */
#define HIST_LINEAR_LIMIT (2u * HIST_SUB_COUNT)          /* 256: exact below */
#define HIST_BUCKETS (HIST_LINEAR_LIMIT + (HIST_MAX_BITS - HIST_SUB_BITS - 1) * HIST_SUB_COUNT)
#define HIST_MAX_VALUE ((UINT64_C(1) << HIST_MAX_BITS) - 1)

struct hist {
	uint64_t count;
	uint64_t sum;      /* of recorded (clamped) values, ns */
	uint64_t min;      /* UINT64_MAX when empty */
	uint64_t max;
	uint64_t clamped;  /* values above HIST_MAX_VALUE */
	uint64_t buckets[HIST_BUCKETS];
};

/* An empty histogram, in memory of any content. */
void hist_init(struct hist *h);
/*
 * The same in memory known to be all zero (from calloc): only the fields
 * that are not zero when empty are written, so the pages of buckets a
 * histogram never uses are never touched and never become resident.  A
 * daemon with hundreds of histograms per workload (5 per op, in every
 * interval slot and total) keeps its RSS to the buckets its latencies fill.
 */
void hist_init_zeroed(struct hist *h);
/*
 * Empties an initialised histogram.  Only buckets from min's to max's can
 * hold counts (every record and merge keeps that, and decoding checks it),
 * so only those are cleared.
 */
void hist_reset(struct hist *h);
void hist_record(struct hist *h, uint64_t value_ns);
void hist_record_n(struct hist *h, uint64_t value_ns, uint64_t n);
void hist_merge(struct hist *dst, const struct hist *src);

/* Bucket index of a value, and the range [lo, hi] of values a bucket holds. */
size_t hist_bucket_of(uint64_t value_ns);
void hist_bucket_range(size_t bucket, uint64_t *ret_lo, uint64_t *ret_hi);

/*
 * Value at percentile p (0 < p <= 100): the recorded value of rank
 * ceil(p/100 * count), reported as its bucket's midpoint clamped to
 * [min, max].  p = 100 returns max exactly.  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);
/* Number of recorded values strictly greater than threshold_ns; exact when
 * threshold_ns is a bucket boundary (the hi of hist_bucket_range), below min
 * or at/above max; otherwise the bucket that holds the threshold is not
 * counted, as its low end is not above it. */
uint64_t hist_count_above(const struct hist *h, uint64_t threshold_ns);
double hist_mean(const struct hist *h);
static inline uint64_t hist_min(const struct hist *h) { return h->count ? h->min : 0; }
static inline uint64_t hist_max(const struct hist *h) { return h->max; }

/*
 * Compact serialisation: a version byte, then LEB128 varints of count, sum,
 * min, max, clamped and of (gap, count) pairs for every non-empty bucket.
 * hist_serialize returns the number of bytes written, or the number needed
 * if buf is NULL or too small (nothing is written then).
 * hist_deserialize returns 0 or -EINVAL for malformed or inconsistent input.
 */
size_t hist_serialize(const struct hist *h, uint8_t *buf, size_t buflen);
int hist_deserialize(struct hist *ret, const uint8_t *buf, size_t len);

/* The same bytes as unpadded base64url text, for JSON; NUL-terminated.
 * hist_to_base64 returns a malloc'd string or NULL; hist_from_base64
 * returns 0, -EINVAL or -ENOMEM. */
char *hist_to_base64(const struct hist *h);
int hist_from_base64(struct hist *ret, const char *text);
/* Merges a base64 histogram into dst; 0, -EINVAL or -ENOMEM (dst unchanged). */
int hist_merge_base64(struct hist *dst, const char *text);

#endif
