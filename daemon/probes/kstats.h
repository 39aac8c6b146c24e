/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_KSTATS_H
#define SOAK_KSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <linux/types.h>

#include "bpf/soak_bpf.h"
#include "hist.h"

/*
 * Kernel statistics in user space: what the BPF maps counted over one
 * interval (summed over CPUs and diffed against the previous read, by
 * probes.c), turned into the project's histograms, accumulated and
 * reported.  Nothing here touches BPF, so it is tested alone.
 *
 * Conversion error bound: a kernel latency bucket is 1/16 of its lower
 * bound wide (bpf/soak_bpf.h), and all of its count is put at its
 * midpoint, which is within 1/32 (3.125%) of every value the bucket
 * holds; the project's histogram then reports that midpoint within 1/256
 * (0.4%).  Kernel percentiles are therefore within 3.6% of the exact
 * ones (exact below 32 ns).  Counts, errors and bytes are exact.
 */

#define KSTATS_ERROR_BOUND (1.0 / 32 + 1.0 / 256 + 1.0 / (32 * 256))

/* One interval's worth of a device's op, summed over CPUs. */
struct kstats_blk_delta {
	uint64_t bytes, count, errors, unstamped, unissued, queued;
	uint64_t latency[SOAK_LAT_SLOTS];
	uint64_t queue[SOAK_LAT_SLOTS];
	uint64_t size[SOAK_SIZE_SLOTS];
};

struct kstats_tcp_delta {
	uint64_t srtt_samples, connects, connect_failures, retransmits, resets_sent,
		resets_received;
	uint64_t srtt[SOAK_LAT_SLOTS];
	uint64_t connect[SOAK_LAT_SLOTS];
};

struct kstats_blk {
	uint64_t count, errors, bytes;
	uint64_t unstamped;  /* issued, but not timed */
	uint64_t unissued;   /* completed without reaching the driver: not timed */
	struct hist latency;  /* issue -> complete */
	struct hist queue;    /* insert -> issue */
	uint64_t size[SOAK_SIZE_SLOTS];
};

struct kstats_tcp {
	uint64_t connects, connect_failures, retransmits, resets_sent, resets_received;
	struct hist srtt;
	struct hist connect;
};

/* What results and journald carry per interval; times in ns. */
struct kstats_summary {
	uint64_t count, errors, bytes;
	uint64_t p50, p90, p99, p999, max;
};

struct kstats_tcp_summary {
	uint64_t srtt_samples, connects, connect_failures, retransmits, resets_sent,
		resets_received;
	uint64_t srtt_p50, srtt_p99, srtt_max, connect_p50, connect_p99, connect_max;
};

/* Adds a kernel histogram of the given shape to h, each bucket's count at
 * the bucket's midpoint. */
void kstats_hist_add(struct hist *h, const uint64_t *buckets, size_t n, unsigned sub_bits);
/* Percentile p of a kernel histogram (request sizes), as its bucket's lower
 * bound: exact for powers of two, and for multiples of 512 up to 4 KiB;
 * otherwise at most 1/2^sub_bits below.  0 when empty. */
uint64_t kstats_buckets_percentile(const uint64_t *buckets, size_t n, unsigned sub_bits, double p);

/* init: in fresh memory; reset: empties an initialised one; free: releases
 * its histograms' buckets before its memory goes (NULL is fine). */
void kstats_blk_init(struct kstats_blk *s);
void kstats_blk_reset(struct kstats_blk *s);
void kstats_blk_free(struct kstats_blk *s);
void kstats_blk_add(struct kstats_blk *s, const struct kstats_blk_delta *d);
void kstats_blk_merge(struct kstats_blk *dst, const struct kstats_blk *src);
void kstats_blk_summary(const struct kstats_blk *s, struct kstats_summary *ret);
json_t *kstats_blk_json(const struct kstats_blk *s);

void kstats_tcp_init(struct kstats_tcp *s);
void kstats_tcp_reset(struct kstats_tcp *s);
void kstats_tcp_free(struct kstats_tcp *s);
void kstats_tcp_add(struct kstats_tcp *s, const struct kstats_tcp_delta *d);
void kstats_tcp_merge(struct kstats_tcp *dst, const struct kstats_tcp *src);
bool kstats_tcp_empty(const struct kstats_tcp *s);
void kstats_tcp_summary(const struct kstats_tcp *s, struct kstats_tcp_summary *ret);
json_t *kstats_tcp_json(const struct kstats_tcp *s);

/* {"p50", "p90", "p99", "p999", "max", "min", "mean"} in us. */
json_t *kstats_latency_json(const struct hist *h);

#endif
