// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/rfc3339.h"

#define S INT64_C(1000000000)

static int64_t parse_ok(const char *text)
{
	int64_t ns = -1;
	const char *why = NULL;
	if (rfc3339_parse(text, &ns, &why) != 0)
		fail_msg("\"%s\" refused: %s", text, why);
	return ns;
}

static void parse_bad(const char *text, const char *needle)
{
	int64_t ns = 12345;
	const char *why = NULL;
	if (rfc3339_parse(text, &ns, &why) != -EINVAL)
		fail_msg("\"%s\" accepted as %lld", text, (long long)ns);
	assert_int_equal(ns, 12345);
	if (!why || !strstr(why, needle))
		fail_msg("\"%s\": expected \"%s\" in \"%s\"", text, needle, why ? why : "(null)");
}

static void test_known_instants(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(parse_ok("2000-03-01T00:00:00Z"), INT64_C(951868800) * S);
	/* RFC 3339's own examples (section 5.8). */
	assert_int_equal(parse_ok("1985-04-12T23:20:50.52Z"), INT64_C(482196050) * S + 520000000);
	assert_int_equal(parse_ok("1996-12-19T16:39:57-08:00"), INT64_C(851042397) * S);
	assert_int_equal(parse_ok("1990-12-31T23:59:60Z"), INT64_C(662688000) * S);
	assert_int_equal(parse_ok("2024-02-29T12:00:00+02:00"), INT64_C(1709200800) * S);
	/* Lower-case separators and a space, as RFC 3339 allows. */
	assert_int_equal(parse_ok("2024-02-29t12:00:00z"), parse_ok("2024-02-29T12:00:00Z"));
	assert_int_equal(parse_ok("2024-02-29 12:00:00Z"), parse_ok("2024-02-29T12:00:00Z"));
	assert_int_equal(parse_ok("2025-06-01T12:00:00.000000001Z") % S, 1);
}

/* Every day of many years against the C library's timegm. */
static void test_against_timegm(void **state)
{
	(void)state;
	for (int year = 1970; year <= 2200; year += 7)
		for (int yday = 0; yday < 366; yday += 3) {
			struct tm tm = { .tm_year = year - 1900, .tm_mday = 1 + yday,
					 .tm_hour = yday % 24, .tm_min = yday % 60, .tm_sec = yday % 59 };
			time_t t = timegm(&tm);   /* normalises tm */
			char text[64];
			snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
				 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
			if (tm.tm_year + 1900 > 2200)
				continue;
			assert_int_equal(parse_ok(text), (int64_t)t * S);
		}
}

static void test_offsets_agree(void **state)
{
	(void)state;
	int64_t utc = parse_ok("2025-01-01T00:30:00Z");
	assert_int_equal(parse_ok("2025-01-01T01:30:00+01:00"), utc);
	assert_int_equal(parse_ok("2024-12-31T19:00:00-05:30"), utc);
}

static void test_refused(void **state)
{
	(void)state;
	parse_bad("", "empty");
	parse_bad("2025-06-01T12:00:00", "time zone");
	parse_bad("2025-06-01", "time must follow");
	parse_bad("2025-6-01T12:00:00Z", "YYYY-MM-DD");
	parse_bad("2025-06-01T12:00Z", "HH:MM:SS");
	parse_bad("2025-06-01T24:00:00Z", "out of range");
	parse_bad("2025-06-01T12:60:00Z", "out of range");
	parse_bad("2023-02-29T12:00:00Z", "no such day");
	parse_bad("2025-04-31T12:00:00Z", "no such day");
	parse_bad("2025-13-01T12:00:00Z", "month");
	parse_bad("1969-12-31T23:59:59Z", "year");
	parse_bad("2025-06-01T12:00:00+0200", "+HH:MM");
	parse_bad("2025-06-01T12:00:00+24:00", "offset");
	parse_bad("2025-06-01T12:00:00.Z", "digit");
	parse_bad("2025-06-01T12:00:00Z ", "trailing");
	parse_bad("2025-06-01T12:00:00 UTC", "unexpected");
	parse_bad("1970-01-01T00:00:00+01:00", "before 1970");
	/* 2201 in UTC, which rfc3339_format would write (tests/fuzz/fuzz-parse). */
	parse_bad("2200-12-31T23:59:60-23:59", "after 2200");
	assert_true(parse_ok("2200-12-31T23:59:59Z") > 0);
	parse_bad("tomorrow", "YYYY-MM-DD");
}

static void test_format_round_trip(void **state)
{
	(void)state;
	char buf[64];
	rfc3339_format(parse_ok("2025-06-01T14:00:00+02:00"), buf, sizeof(buf));
	assert_string_equal(buf, "2025-06-01T12:00:00Z");
	rfc3339_format(parse_ok("2025-06-01T12:00:00.250Z"), buf, sizeof(buf));
	assert_string_equal(buf, "2025-06-01T12:00:00.250Z");
	assert_int_equal(parse_ok(buf), parse_ok("2025-06-01T12:00:00.25Z"));
	rfc3339_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_instants),
		cmocka_unit_test(test_against_timegm),
		cmocka_unit_test(test_offsets_agree),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_format_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
