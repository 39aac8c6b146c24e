// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unit parsers (durations, sizes, load multiples), the report's
 * threshold and limit lists and RFC 3339 times: all text users type.
 * Each accepted value must format back to text that parses to the same
 * value, which is what parse.h promises for durations and sizes.
 */
#include "fuzz.h"

#include <math.h>

#include "common/parse.h"
#include "common/report.h"
#include "common/rfc3339.h"

static void check_duration(const char *text)
{
	uint64_t ns, again;
	const char *why = NULL;
	char buf[64];

	if (parse_duration(text, &ns, &why) < 0) {
		FUZZ_CHECK(why && *why);
		return;
	}
	format_duration(ns, buf, sizeof(buf));
	FUZZ_CHECK(parse_duration(buf, &again, &why) == 0);
	FUZZ_CHECK(again == ns);
}

static void check_size(const char *text)
{
	uint64_t bytes, again;
	const char *why = NULL;
	char buf[64];

	if (parse_size(text, &bytes, &why) < 0) {
		FUZZ_CHECK(why && *why);
		return;
	}
	format_size(bytes, buf, sizeof(buf));
	FUZZ_CHECK(parse_size(buf, &again, &why) == 0);
	FUZZ_CHECK(again == bytes);
}

static void check_multiple(const char *text)
{
	const char *why = NULL;
	double multiple;

	if (parse_multiple(text, &multiple, &why) < 0) {
		FUZZ_CHECK(why && *why);
		return;
	}
	FUZZ_CHECK(isfinite(multiple) && multiple > 0);
}

/* "THRESHOLDS" or "THRESHOLDS\nLIMITS", as `soakctl report` takes them. */
static void check_report_options(const char *text)
{
	struct report_options o;
	const char *why = NULL, *limits = strchr(text, '\n');
	char *thresholds = strndup(text, limits ? (size_t)(limits - text) : strlen(text));

	FUZZ_CHECK(thresholds);
	report_default_options(&o);
	if (report_parse_thresholds(thresholds, &o, &why) == 0) {
		FUZZ_CHECK(o.n_thresholds >= 1 && o.n_thresholds <= REPORT_MAX_THRESHOLDS);
		for (size_t i = 0; i < o.n_thresholds; i++)
			FUZZ_CHECK(o.thresholds_ns[i] > 0 &&
				   (i == 0 || o.thresholds_ns[i] > o.thresholds_ns[i - 1]));
	} else {
		FUZZ_CHECK(why && *why);
	}
	why = NULL;
	if (report_parse_limits(limits ? limits + 1 : text, &o, &why) == 0) {
		for (size_t i = 0; i < o.n_thresholds; i++)
			FUZZ_CHECK(o.limits_pct[i] == -1 ||
				   (o.limits_pct[i] >= 0 && o.limits_pct[i] <= 100));
	} else {
		FUZZ_CHECK(why && *why);
	}
	free(thresholds);
}

static void check_rfc3339(const char *text)
{
	const char *why = NULL;
	int64_t ns, again;
	char buf[64];

	if (rfc3339_parse(text, &ns, &why) < 0) {
		FUZZ_CHECK(why && *why);
		return;
	}
	rfc3339_format(ns, buf, sizeof(buf));
	/* The text keeps milliseconds only. */
	FUZZ_CHECK(rfc3339_parse(buf, &again, &why) == 0);
	FUZZ_CHECK(again == ns - ns % 1000000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	check_duration(text);
	check_size(text);
	check_multiple(text);
	check_report_options(text);
	check_rfc3339(text);
	free(text);
	return 0;
}
