/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "parse.h"

#define SEC UINT64_C(1000000000)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct good {
	const char *text;
	uint64_t value;
};

struct bad {
	const char *text;
	int ret;
	const char *why; /* NULL: any message */
};

static const uint64_t untouched = UINT64_C(0xdeadbeefdeadbeef);

static void check_good(int (*parse)(const char *, uint64_t *, const char **), const struct good *cases, size_t n)
{
	const char *why;
	uint64_t value;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		why = NULL;
		value = untouched;
		r = parse(cases[i].text, &value, &why);
		if (r != 0)
			fail_msg("'%s': %d (%s)", cases[i].text, r, why ? why : "no reason");
		if (value != cases[i].value)
			fail_msg("'%s': got %llu want %llu", cases[i].text, (unsigned long long)value,
				 (unsigned long long)cases[i].value);
	}
}

static void check_bad(int (*parse)(const char *, uint64_t *, const char **), const struct bad *cases, size_t n)
{
	const char *why;
	uint64_t value;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		why = NULL;
		value = untouched;
		r = parse(cases[i].text, &value, &why);
		if (r != cases[i].ret)
			fail_msg("'%s': returned %d, want %d", cases[i].text ? cases[i].text : "(null)", r,
				 cases[i].ret);
		/* ret_* untouched on failure, and always a reason. */
		assert_true(value == untouched);
		assert_non_null(why);
		if (cases[i].why && strcmp(why, cases[i].why))
			fail_msg("'%s': why '%s', want '%s'", cases[i].text, why, cases[i].why);
		/* ret_why may be NULL. */
		assert_int_equal(parse(cases[i].text, &value, NULL), cases[i].ret);
	}
}

static void test_duration_good(void **state)
{
	static const struct good cases[] = {
		{ "1h30m", 5400 * SEC },
		{ "2d", 2 * 86400 * SEC },
		{ "500ms", 500000000 },
		{ "90s", 90 * SEC },
		{ "90", 90 * SEC },
		{ "0", 0 },
		{ "0s", 0 },
		{ "1.5s", 1500000000 },
		{ "1.50s", 1500000000 },
		{ "0.5ms", 500000 },
		{ "1ns", 1 },
		{ "250us", 250000 },
		{ "250\xc2\xb5s", 250000 },
		{ "250\xce\xbcs", 250000 },
		{ "1m", 60 * SEC },
		{ "1m30s", 90 * SEC },
		{ "1ms30s", 30 * SEC + 1000000 },
		{ "1s1s", 2 * SEC },
		{ "30m1h", 5400 * SEC },
		{ "1d2h3m4s5ms6us7ns", 93784005006007 },
		{ "007s", 7 * SEC },
		{ "1.000000000000000000000s", SEC },
		{ "0.000000001s", 1 },
		{ "18446744073709551615ns", UINT64_MAX },
		{ "18446744073.709551615s", UINT64_MAX },
		{ "213503d23h34m33.709551615s", UINT64_MAX },
	};

	(void)state;
	check_good(parse_duration, cases, ARRAY_SIZE(cases));
}

static void test_duration_bad(void **state)
{
	static const struct bad cases[] = {
		{ NULL, -EINVAL, "empty" },
		{ "", -EINVAL, "empty" },
		{ "-1s", -EINVAL, "negative value" },
		{ "-0", -EINVAL, "negative value" },
		{ "+1s", -EINVAL, "leading '+' not allowed" },
		{ "99999999999999999999", -ERANGE, "value too large" },
		{ "300000000d", -ERANGE, "value too large" },
		{ "18446744073709551616ns", -ERANGE, "value too large" },
		{ "18446744073709551615ns1ns", -ERANGE, "value too large" },
		{ "18446744074s", -ERANGE, "value too large" },
		{ "10sx", -EINVAL, "unknown unit" },
		{ "10s!", -EINVAL, "trailing characters after unit" },
		{ "10!", -EINVAL, "trailing characters after number" },
		{ "1h 30m", -EINVAL, "whitespace not allowed" },
		{ " 1s", -EINVAL, "whitespace not allowed" },
		{ "1s ", -EINVAL, "whitespace not allowed" },
		{ "1 s", -EINVAL, "whitespace not allowed" },
		{ "ms", -EINVAL, "expected a number" },
		{ "s", -EINVAL, "expected a number" },
		{ "nan", -EINVAL, "expected a number" },
		{ "inf", -EINVAL, "expected a number" },
		{ "infinity", -EINVAL, "expected a number" },
		{ "0x10", -EINVAL, "hexadecimal not supported" },
		{ "0x1As", -EINVAL, "hexadecimal not supported" },
		{ "1e3s", -EINVAL, "unknown unit" },
		{ "1h30", -EINVAL, "missing unit after number" },
		{ "1q", -EINVAL, "unknown unit" },
		{ "1S", -EINVAL, "unknown unit" },
		{ "1\xc2\xb5", -EINVAL, "unknown unit" },
		{ ".5s", -EINVAL, "expected a number" },
		{ "1.s", -EINVAL, "expected digits after '.'" },
		{ "1..5s", -EINVAL, "expected digits after '.'" },
		{ "1.5.5s", -EINVAL, "trailing characters after number" },
		{ "0.1ns", -EINVAL, "fraction finer than a nanosecond" },
		{ "1.0000000001s", -EINVAL, "fraction finer than a nanosecond" },
		{ "0.00000000000000000001s", -EINVAL, "too many digits after '.'" },
		{ "1s-1s", -EINVAL, "trailing characters after unit" },
		{ "1s,", -EINVAL, "trailing characters after unit" },
	};

	(void)state;
	check_bad(parse_duration, cases, ARRAY_SIZE(cases));
}

static void test_size_good(void **state)
{
	static const struct good cases[] = {
		{ "4KiB", 4096 },
		{ "8M", 8388608 },
		{ "1GB", 1000000000 },
		{ "4096", 4096 },
		{ "1.5GiB", 1610612736 },
		{ "0.5GiB", 536870912 },
		{ "0", 0 },
		{ "0B", 0 },
		{ "512B", 512 },
		{ "512b", 512 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "4Ki", 4096 },
		{ "4ki", 4096 },
		{ "4kib", 4096 },
		{ "4KIB", 4096 },
		{ "4KB", 4000 },
		{ "4kb", 4000 },
		{ "4Kb", 4000 },
		{ "1MiB", 1048576 },
		{ "1MB", 1000000 },
		{ "1Gi", 1073741824 },
		{ "1g", 1073741824 },
		{ "1T", UINT64_C(1) << 40 },
		{ "1TiB", UINT64_C(1) << 40 },
		{ "1TB", UINT64_C(1000000000000) },
		{ "1.5K", 1536 },
		{ "0.001KB", 1 },
		{ "1.0", 1 },
		{ "16777215TiB", UINT64_C(16777215) << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "18446744073709551615B", UINT64_MAX },
	};

	(void)state;
	check_good(parse_size, cases, ARRAY_SIZE(cases));
}

static void test_size_bad(void **state)
{
	static const struct bad cases[] = {
		{ NULL, -EINVAL, "empty" },
		{ "", -EINVAL, "empty" },
		{ "-1", -EINVAL, "negative value" },
		{ "-0", -EINVAL, "negative value" },
		{ "+4K", -EINVAL, "leading '+' not allowed" },
		{ "99999999999999999999", -ERANGE, "value too large" },
		{ "18446744073709551616", -ERANGE, "value too large" },
		{ "20000000TiB", -ERANGE, "value too large" },
		{ "16777216TiB", -ERANGE, "value too large" },
		{ "4KiBB", -EINVAL, "unknown unit" },
		{ "4KiB!", -EINVAL, "trailing characters after unit" },
		{ "4 KiB", -EINVAL, "whitespace not allowed" },
		{ "4KiB ", -EINVAL, "whitespace not allowed" },
		{ "4-", -EINVAL, "trailing characters after number" },
		{ "KiB", -EINVAL, "expected a number" },
		{ "nan", -EINVAL, "expected a number" },
		{ "inf", -EINVAL, "expected a number" },
		{ "0x1000", -EINVAL, "hexadecimal not supported" },
		{ "4P", -EINVAL, "unknown unit" },
		{ "4bb", -EINVAL, "unknown unit" },
		{ "4ib", -EINVAL, "unknown unit" },
		{ "4KiBs", -EINVAL, "unknown unit" },
		{ "4Kx", -EINVAL, "unknown unit" },
		{ "4\xc2\xb5", -EINVAL, "unknown unit" },
		{ "1.5", -EINVAL, "not a whole number of bytes" },
		{ "1.1KiB", -EINVAL, "not a whole number of bytes" },
		{ "0.0001KB", -EINVAL, "not a whole number of bytes" },
		{ "1e6", -EINVAL, "unknown unit" },
		{ "4.K", -EINVAL, "expected digits after '.'" },
		{ "4K4K", -EINVAL, "trailing characters after unit" },
	};

	(void)state;
	check_bad(parse_size, cases, ARRAY_SIZE(cases));
}

static void test_multiple(void **state)
{
	static const struct {
		const char *text;
		double value;
	} good[] = {
		{ "30x", 30.0 }, { "1.5x", 1.5 }, { "2", 2.0 }, { "2X", 2.0 }, { "0.25", 0.25 }, { "100x", 100.0 },
	};
	static const struct {
		const char *text;
		int ret;
		const char *why;
	} bad[] = {
		{ NULL, -EINVAL, "empty" },
		{ "", -EINVAL, "empty" },
		{ "x", -EINVAL, "expected a number" },
		{ "-1x", -EINVAL, "negative value" },
		{ "-0", -EINVAL, "negative value" },
		{ "+2x", -EINVAL, "leading '+' not allowed" },
		{ "0", -EINVAL, "multiple must be greater than zero" },
		{ "0.0x", -EINVAL, "multiple must be greater than zero" },
		{ "0x10", -EINVAL, "hexadecimal not supported" },
		{ "30xx", -EINVAL, "trailing characters after unit" },
		{ "30 x", -EINVAL, "whitespace not allowed" },
		{ "30k", -EINVAL, "unknown unit" },
		{ "30!", -EINVAL, "trailing characters after number" },
		{ "nan", -EINVAL, "expected a number" },
		{ "inf", -EINVAL, "expected a number" },
		{ "99999999999999999999x", -ERANGE, "value too large" },
	};
	const char *why;
	double value;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		value = -1;
		if (parse_multiple(good[i].text, &value, &why) != 0)
			fail_msg("'%s': %s", good[i].text, why);
		assert_true(value == good[i].value);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		value = -1;
		why = NULL;
		if (parse_multiple(bad[i].text, &value, &why) != bad[i].ret)
			fail_msg("'%s' accepted or wrong error", bad[i].text ? bad[i].text : "(null)");
		assert_true(value == -1);
		assert_non_null(why);
		if (strcmp(why, bad[i].why))
			fail_msg("'%s': why '%s', want '%s'", bad[i].text, why, bad[i].why);
	}
}

static void test_format_duration(void **state)
{
	static const struct good cases[] = {
		{ "0s", 0 },
		{ "1ns", 1 },
		{ "999ns", 999 },
		{ "1us", 1000 },
		{ "1.5us", 1500 },
		{ "1.001us", 1001 },
		{ "500ms", 500000000 },
		{ "1.234567ms", 1234567 },
		{ "1s", SEC },
		{ "1.5s", 1500000000 },
		{ "59.999999999s", 60 * SEC - 1 },
		{ "1m", 60 * SEC },
		{ "1m30s", 90 * SEC },
		{ "1h30m", 5400 * SEC },
		{ "1h0.5s", 3600 * SEC + 500000000 },
		{ "2d", 2 * 86400 * SEC },
		{ "1d2h3m4.005006007s", 93784005006007 },
		{ "213503d23h34m33.709551615s", UINT64_MAX },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		format_duration(cases[i].value, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
	}
	/* Truncated but terminated; a zero-length buffer is left alone. */
	format_duration(5400 * SEC, buf, 3);
	assert_string_equal(buf, "1h");
	buf[0] = 'z';
	format_duration(1, buf, 0);
	assert_int_equal(buf[0], 'z');
}

static void test_format_size(void **state)
{
	static const struct good cases[] = {
		{ "0B", 0 },
		{ "1B", 1 },
		{ "512B", 512 },
		{ "1KB", 1000 },
		{ "1023B", 1023 },
		{ "4KiB", 4096 },
		{ "1.5KiB", 1536 },
		{ "8MiB", 8388608 },
		{ "1.5GiB", 1610612736 },
		{ "1GB", 1000000000 },
		{ "2MB", 2000000 },
		{ "1TiB", UINT64_C(1) << 40 },
		{ "1025B", 1025 },
		{ "16777215TiB", UINT64_C(16777215) << 40 },
		{ "18446744073709551615B", UINT64_MAX },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		format_size(cases[i].value, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
	}
	format_size(4096, buf, 2);
	assert_string_equal(buf, "4");
}

/* Whatever is printed reads back as the same value. */
static void test_format_roundtrip(void **state)
{
	uint64_t x = 88172645463325252ull, v, back;
	const char *why;
	char buf[64];
	int i, shift;

	(void)state;
	for (i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* All magnitudes, and round numbers as often as ragged ones. */
		shift = (int)(x % 64);
		v = x >> shift;
		if (i & 1)
			v = (v % 100000) << (x % 40);

		format_duration(v, buf, sizeof(buf));
		if (parse_duration(buf, &back, &why) != 0 || back != v)
			fail_msg("duration %llu -> '%s' -> %s", (unsigned long long)v, buf, why);
		format_size(v, buf, sizeof(buf));
		if (parse_size(buf, &back, &why) != 0 || back != v)
			fail_msg("size %llu -> '%s' -> %s", (unsigned long long)v, buf, why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_good),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_size_good),
		cmocka_unit_test(test_size_bad),
		cmocka_unit_test(test_multiple),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_format_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
