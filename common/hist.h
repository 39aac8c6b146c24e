/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HIST_H
#define SOAK_HIST_H

#include <stdbool.h>
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
 * Buckets are stored in chunks of one octave (HIST_SUB_COUNT buckets),
 * allocated the first time a value lands in them, of counts as narrow as
 * they can be: 8-bit (128 bytes) until one would pass 255, then 16-bit,
 * 32-bit and 64-bit ones (1 KiB), each chunk on its own.  A histogram's
 * memory is its octaves in use at the width their counts need: a second's
 * interval at a low rate takes 128 bytes an octave, an hour's slice 256,
 * a long run's totals 512 at most where its counts are.  soakd keeps
 * hundreds of histograms per workload (five per op in every interval
 * slot, total, slice and target), so this, not the bucket count, decides
 * its memory on a long run with many workloads.
 * Recording takes no lock and allocates only when an octave is first used;
 * merging is exact (bucket counts add).  A chunk that cannot be allocated
 * ends the process with a message: a value silently left out of its bucket
 * would make every percentile after it wrong.
 */
#define HIST_SUB_BITS 7
#define HIST_MAX_BITS 45
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)             /* 128 */
#define HIST_LINEAR_LIMIT (2u * HIST_SUB_COUNT)          /* 256: exact below */
#define HIST_BUCKETS (HIST_LINEAR_LIMIT + (HIST_MAX_BITS - HIST_SUB_BITS - 1) * HIST_SUB_COUNT)
#define HIST_MAX_VALUE ((UINT64_C(1) << HIST_MAX_BITS) - 1)
#define HIST_CHUNKS (HIST_BUCKETS / HIST_SUB_COUNT)      /* 39 */
/* The low bits of a chunk's address (malloc'd, so aligned) hold the log2
 * of its counts' width in bytes: 0 for 8-bit counts ... 3 for 64-bit. */
#define HIST_CHUNK_WIDTH ((uintptr_t)3)

struct hist {
	uint64_t count;
	uint64_t sum;      /* of recorded (clamped) values, ns */
	uint64_t min;      /* UINT64_MAX when empty */
	uint64_t max;
	uint64_t clamped;  /* values above HIST_MAX_VALUE */
	/* NULL while the histogram is empty, else a table of HIST_CHUNKS:
	 * entry c, for buckets [c * HIST_SUB_COUNT, (c + 1) * HIST_SUB_COUNT),
	 * is 0 while all of them are zero, else the address of their counts
	 * with the counts' width in HIST_CHUNK_WIDTH.  An empty histogram is
	 * these 48 bytes: most of a run's histograms (a connection's setup,
	 * an op the mix has not drawn this second) are.  Owned: hist_reset or
	 * hist_free releases the table and its chunks. */
	uintptr_t *chunks;
};

/* An empty histogram, in memory of any content (nothing is freed). */
void hist_init(struct hist *h);
/* The same in memory known to be all zero (from calloc): only min is set. */
void hist_init_zeroed(struct hist *h);
/* Empties an initialised histogram and releases its chunks. */
void hist_reset(struct hist *h);
/* Releases the chunks of an initialised histogram before its memory goes
 * (the same as hist_reset). */
void hist_free(struct hist *h);
/* An empty histogram on the heap, or NULL; and its release (NULL is fine). */
struct hist *hist_new(void);
void hist_delete(struct hist *h);
/* The bytes of buckets a histogram holds: 128 B to 1 KiB per octave in use. */
size_t hist_memory(const struct hist *h);
/* Count in bucket b (b < HIST_BUCKETS). */
static inline uint64_t hist_bucket(const struct hist *h, size_t b)
{
	uintptr_t c = h->chunks ? h->chunks[b / HIST_SUB_COUNT] : 0;
	const void *p = (const void *)(c & ~HIST_CHUNK_WIDTH);
	size_t i = b % HIST_SUB_COUNT;

	if (!c)
		return 0;
	switch (c & HIST_CHUNK_WIDTH) {
	case 0:
		return ((const uint8_t *)p)[i];
	case 1:
		return ((const uint16_t *)p)[i];
	case 2:
		return ((const uint32_t *)p)[i];
	default:
		return ((const uint64_t *)p)[i];
	}
}
void hist_record(struct hist *h, uint64_t value_ns);
void hist_record_n(struct hist *h, uint64_t value_ns, uint64_t n);
void hist_merge(struct hist *dst, const struct hist *src);
/* dst (initialised) becomes a copy of src. */
void hist_copy(struct hist *dst, const struct hist *src);
/* Same counts, sum, min, max, clamped and buckets (storage aside). */
bool hist_equal(const struct hist *a, const struct hist *b);

/* Bucket index of a value, and the range [lo, hi] of values a bucket holds. */
size_t hist_bucket_of(uint64_t value_ns);
void hist_bucket_range(size_t bucket, uint64_t *ret_lo, uint64_t *ret_hi);

/*
 * Value at percentile p (0 < p <= 100): the recorded value of rank
 * ceil(p/100 * count), reported as its bucket's midpoint clamped to
 * [min, max].  p = 100 returns max exactly.  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);
/* hist_percentile of the values of h less those of ex, which h holds too
 * (each bucket of ex at most h's): 0 when nothing is left. */
uint64_t hist_percentile_without(const struct hist *h, const struct hist *ex, double p);
/*
 * A 95% confidence interval for the percentile p of what the recorded
 * values were drawn from, free of any assumed distribution: the values
 * of rank count*q -/+ 1.96 * sqrt(count*q*(1-q)) (+1 above), q = p/100,
 * the normal approximation of the binomial count of values below the
 * percentile.  A bound past the recorded values is open: *lo 0, *hi
 * UINT64_MAX.  Returns false when the upper bound is open, when too few
 * values lie above p to bound it (of 540 values, p99.9 is the largest).
 */
bool hist_percentile_interval(const struct hist *h, double p, uint64_t *ret_lo,
			      uint64_t *ret_hi);
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
 * hist_deserialize replaces what ret (initialised) holds, and returns 0, or
 * -EINVAL for malformed or inconsistent input (ret unchanged then).
 */
size_t hist_serialize(const struct hist *h, uint8_t *buf, size_t buflen);
int hist_deserialize(struct hist *ret, const uint8_t *buf, size_t len);
/* Adds a serialised histogram to dst: 0, or -EINVAL (dst unchanged). */
int hist_merge_bytes(struct hist *dst, const uint8_t *buf, size_t len);

/* The same bytes as unpadded base64url text, for JSON; NUL-terminated.
 * hist_to_base64 returns a malloc'd string or NULL; hist_from_base64
 * returns 0, -EINVAL or -ENOMEM. */
char *hist_to_base64(const struct hist *h);
int hist_from_base64(struct hist *ret, const char *text);
/* Merges a base64 histogram into dst; 0, -EINVAL or -ENOMEM (dst unchanged). */
int hist_merge_base64(struct hist *dst, const char *text);

#endif
