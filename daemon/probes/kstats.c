// SPDX-License-Identifier: GPL-2.0-only
#include "kstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t bucket_midpoint(size_t slot, unsigned sub_bits)
{
	__u64 lo, width;

	soak_hist_range((__u32)slot, sub_bits, &lo, &width);
	return lo + (width - 1) / 2;
}

void kstats_hist_add(struct hist *h, const uint64_t *buckets, size_t n, unsigned sub_bits)
{
	for (size_t i = 0; i < n; i++)
		if (buckets[i])
			hist_record_n(h, bucket_midpoint(i, sub_bits), buckets[i]);
}

uint64_t kstats_buckets_percentile(const uint64_t *buckets, size_t n, unsigned sub_bits, double p)
{
	uint64_t total = 0, rank, seen = 0;
	__u64 lo, width;
	size_t i;

	for (i = 0; i < n; i++)
		total += buckets[i];
	if (!total)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)total - 1e-9);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < n; i++) {
		seen += buckets[i];
		if (seen >= rank)
			break;
	}
	soak_hist_range((__u32)(i < n ? i : n - 1), sub_bits, &lo, &width);
	return lo;
}

void kstats_blk_init(struct kstats_blk *s)
{
	memset(s, 0, sizeof(*s));
	hist_init(&s->latency);
	hist_init(&s->queue);
}

void kstats_blk_free(struct kstats_blk *s)
{
	if (!s)
		return;
	hist_free(&s->latency);
	hist_free(&s->queue);
}

void kstats_blk_reset(struct kstats_blk *s)
{
	kstats_blk_free(s);
	kstats_blk_init(s);
}

void kstats_blk_add(struct kstats_blk *s, const struct kstats_blk_delta *d)
{
	s->count += d->count;
	s->errors += d->errors;
	s->bytes += d->bytes;
	s->unstamped += d->unstamped;
	s->unissued += d->unissued;
	kstats_hist_add(&s->latency, d->latency, SOAK_LAT_SLOTS, SOAK_LAT_SUB_BITS);
	kstats_hist_add(&s->queue, d->queue, SOAK_LAT_SLOTS, SOAK_LAT_SUB_BITS);
	for (size_t i = 0; i < SOAK_SIZE_SLOTS; i++)
		s->size[i] += d->size[i];
}

void kstats_blk_merge(struct kstats_blk *dst, const struct kstats_blk *src)
{
	dst->count += src->count;
	dst->errors += src->errors;
	dst->bytes += src->bytes;
	dst->unstamped += src->unstamped;
	dst->unissued += src->unissued;
	hist_merge(&dst->latency, &src->latency);
	hist_merge(&dst->queue, &src->queue);
	for (size_t i = 0; i < SOAK_SIZE_SLOTS; i++)
		dst->size[i] += src->size[i];
}

void kstats_blk_summary(const struct kstats_blk *s, struct kstats_summary *ret)
{
	*ret = (struct kstats_summary){
		.count = s->count, .errors = s->errors, .bytes = s->bytes,
		.p50 = hist_percentile(&s->latency, 50), .p90 = hist_percentile(&s->latency, 90),
		.p99 = hist_percentile(&s->latency, 99), .p999 = hist_percentile(&s->latency, 99.9),
		.max = hist_max(&s->latency),
	};
}

json_t *kstats_latency_json(const struct hist *h)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
			 "p50", hist_percentile(h, 50) / 1e3, "p90", hist_percentile(h, 90) / 1e3,
			 "p99", hist_percentile(h, 99) / 1e3,
			 "p999", hist_percentile(h, 99.9) / 1e3, "max", hist_max(h) / 1e3,
			 "min", hist_min(h) / 1e3, "mean", hist_mean(h) / 1e3);
}

json_t *kstats_blk_json(const struct kstats_blk *s)
{
	char *hist_text = hist_to_base64(&s->latency);
	json_t *j = json_pack(
		"{s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:{s:I,s:I,s:I},s:s?}",
		"count", (json_int_t)s->count, "errors", (json_int_t)s->errors,
		"bytes", (json_int_t)s->bytes, "unstamped", (json_int_t)s->unstamped,
		"unissued", (json_int_t)s->unissued,
		"latency_us", kstats_latency_json(&s->latency),
		"queue_us", kstats_latency_json(&s->queue),
		"size_bytes",
		"p50", (json_int_t)kstats_buckets_percentile(s->size, SOAK_SIZE_SLOTS,
							     SOAK_SIZE_SUB_BITS, 50),
		"p99", (json_int_t)kstats_buckets_percentile(s->size, SOAK_SIZE_SLOTS,
							     SOAK_SIZE_SUB_BITS, 99),
		"max", (json_int_t)kstats_buckets_percentile(s->size, SOAK_SIZE_SLOTS,
							     SOAK_SIZE_SUB_BITS, 100),
		"latency_hist", hist_text);
	free(hist_text);
	return j;
}

void kstats_tcp_init(struct kstats_tcp *s)
{
	memset(s, 0, sizeof(*s));
	hist_init(&s->srtt);
	hist_init(&s->connect);
}

void kstats_tcp_free(struct kstats_tcp *s)
{
	if (!s)
		return;
	hist_free(&s->srtt);
	hist_free(&s->connect);
}

void kstats_tcp_reset(struct kstats_tcp *s)
{
	kstats_tcp_free(s);
	kstats_tcp_init(s);
}

void kstats_tcp_add(struct kstats_tcp *s, const struct kstats_tcp_delta *d)
{
	s->connects += d->connects;
	s->connect_failures += d->connect_failures;
	s->retransmits += d->retransmits;
	s->resets_sent += d->resets_sent;
	s->resets_received += d->resets_received;
	kstats_hist_add(&s->srtt, d->srtt, SOAK_LAT_SLOTS, SOAK_LAT_SUB_BITS);
	kstats_hist_add(&s->connect, d->connect, SOAK_LAT_SLOTS, SOAK_LAT_SUB_BITS);
}

void kstats_tcp_merge(struct kstats_tcp *dst, const struct kstats_tcp *src)
{
	dst->connects += src->connects;
	dst->connect_failures += src->connect_failures;
	dst->retransmits += src->retransmits;
	dst->resets_sent += src->resets_sent;
	dst->resets_received += src->resets_received;
	hist_merge(&dst->srtt, &src->srtt);
	hist_merge(&dst->connect, &src->connect);
}

bool kstats_tcp_empty(const struct kstats_tcp *s)
{
	return !s->srtt.count && !s->connect.count && !s->connect_failures && !s->retransmits &&
	       !s->resets_sent && !s->resets_received;
}

void kstats_tcp_summary(const struct kstats_tcp *s, struct kstats_tcp_summary *ret)
{
	*ret = (struct kstats_tcp_summary){
		.srtt_samples = s->srtt.count, .connects = s->connects,
		.connect_failures = s->connect_failures, .retransmits = s->retransmits,
		.resets_sent = s->resets_sent, .resets_received = s->resets_received,
		.srtt_p50 = hist_percentile(&s->srtt, 50),
		.srtt_p99 = hist_percentile(&s->srtt, 99),
		.srtt_max = hist_max(&s->srtt),
		.connect_p50 = hist_percentile(&s->connect, 50),
		.connect_p99 = hist_percentile(&s->connect, 99),
		.connect_max = hist_max(&s->connect),
	};
}

/* "latency_us" is the smoothed RTT, so kernel.tcp has the same shape as
 * every other latency in a dump. */
json_t *kstats_tcp_json(const struct kstats_tcp *s)
{
	return json_pack("{s:I,s:o,s:o,s:I,s:I,s:o,s:I,s:I,s:I}",
			 "srtt_samples", (json_int_t)s->srtt.count,
			 "latency_us", kstats_latency_json(&s->srtt),
			 "srtt_us", kstats_latency_json(&s->srtt),
			 "connects", (json_int_t)s->connects,
			 "connect_failures", (json_int_t)s->connect_failures,
			 "connect_us", kstats_latency_json(&s->connect),
			 "retransmits", (json_int_t)s->retransmits,
			 "resets_sent", (json_int_t)s->resets_sent,
			 "resets_received", (json_int_t)s->resets_received);
}
