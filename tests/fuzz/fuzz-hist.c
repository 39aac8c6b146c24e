// SPDX-License-Identifier: GPL-2.0-only
/*
 * The histogram deserialisers: the compact binary form and its base64url
 * text, which come back from interval logs and ctl replies.  hist.h makes
 * both canonical (one encoding per histogram), so an accepted input must
 * serialise back to exactly the same bytes; the histogram it gives must
 * also answer percentiles within [min, max] and encode for HdrHistogram.
 */
#include "fuzz.h"

#include "common/hist.h"
#include "common/report.h"
#include "common/rundump.h"

static struct hist h, again;

static void check_hist(const struct hist *x)
{
	static const double ps[] = { 0, 1, 50, 90, 99, 99.9, 99.99, 100 };
	uint64_t sum = 0;

	for (size_t b = 0; b < HIST_BUCKETS; b++)
		sum += hist_bucket(x, b);
	FUZZ_CHECK(sum == x->count);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t v = hist_percentile(x, ps[i]);
		FUZZ_CHECK(!x->count || (v >= x->min && v <= x->max));
	}
	FUZZ_CHECK(hist_count_above(x, 0) <= x->count);
	FUZZ_CHECK(hist_count_above(x, x->max) == 0);
	double pct = report_pct_above(x, x->count ? x->min + (x->max - x->min) / 2 : 0);
	FUZZ_CHECK(pct >= 0 && pct <= 100);
	(void)hist_mean(x);
	free(rundump_hdr_encode(x));
}

/* The binary form: the input itself. */
static void check_binary(const uint8_t *data, size_t size)
{
	uint8_t *out;
	size_t n;
	char *text;

	if (hist_deserialize(&h, data, size) < 0)
		return;
	check_hist(&h);
	n = hist_serialize(&h, NULL, 0);
	FUZZ_CHECK(n == size);
	out = malloc(n);
	FUZZ_CHECK(out);
	FUZZ_CHECK(hist_serialize(&h, out, n) == n);
	FUZZ_CHECK(memcmp(out, data, n) == 0);
	free(out);

	text = hist_to_base64(&h);
	FUZZ_CHECK(text);
	FUZZ_CHECK(hist_from_base64(&again, text) == 0);
	FUZZ_CHECK(hist_equal(&again, &h));
	free(text);

	/* Merging into an empty histogram copies it, as does merging the
	 * bytes. */
	hist_reset(&again);
	hist_merge(&again, &h);
	FUZZ_CHECK(hist_equal(&again, &h));
	hist_reset(&again);
	FUZZ_CHECK(hist_merge_bytes(&again, data, size) == 0);
	FUZZ_CHECK(hist_equal(&again, &h));
}

/* The text form: the input as a C string. */
static void check_base64(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *out;

	if (hist_from_base64(&h, text) == 0) {
		check_hist(&h);
		out = hist_to_base64(&h);
		FUZZ_CHECK(out);
		FUZZ_CHECK(strcmp(out, text) == 0);
		free(out);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_binary(data, size);
	check_base64(data, size);
	return 0;
}
