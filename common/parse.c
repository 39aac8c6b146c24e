/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define NSEC_PER_MIN (60 * NSEC_PER_SEC)
#define NSEC_PER_HOUR (60 * NSEC_PER_MIN)
#define NSEC_PER_DAY (24 * NSEC_PER_HOUR)

static int fail(const char **ret_why, int err, const char *why)
{
	if (ret_why)
		*ret_why = why;
	return err;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Letters, plus any non-ASCII byte so that "µs" reads as one unit. */
static size_t unit_length(const char *p)
{
	size_t n = 0;

	while ((to_lower(p[n]) >= 'a' && to_lower(p[n]) <= 'z') || (unsigned char)p[n] >= 0x80)
		n++;
	return n;
}

static int trailing(const char *p, bool after_unit, const char **ret_why)
{
	if (is_space(*p))
		return fail(ret_why, -EINVAL, "whitespace not allowed");
	return fail(ret_why, -EINVAL,
		    after_unit ? "trailing characters after unit" : "trailing characters after number");
}

/*
 * A number as typed: whole + frac / frac_scale, trailing zeros of the
 * fraction dropped so that "1.50" needs no more precision than "1.5".
 */
struct decimal {
	uint64_t whole;
	uint64_t frac;
	uint64_t frac_scale;
};

/*
 * Reads digits[.digits] and moves *pos past them.  Not strtod: it would
 * take hex, "inf", "nan", leading space and the locale's decimal comma,
 * and rounds where a size must be exact.
 */
static int parse_decimal(const char **pos, struct decimal *ret, const char **ret_why)
{
	struct decimal d = { 0, 0, 1 };
	const char *p = *pos;
	unsigned zeros = 0, i;

	if (*p == '-')
		return fail(ret_why, -EINVAL, "negative value");
	if (*p == '+')
		return fail(ret_why, -EINVAL, "leading '+' not allowed");
	if (is_space(*p))
		return fail(ret_why, -EINVAL, "whitespace not allowed");
	if (!is_digit(*p))
		return fail(ret_why, -EINVAL, "expected a number");
	if (p[0] == '0' && to_lower(p[1]) == 'x' && (is_digit(p[2]) || memchr("abcdef", to_lower(p[2]), 6)))
		return fail(ret_why, -EINVAL, "hexadecimal not supported");

	for (; is_digit(*p); p++)
		if (__builtin_mul_overflow(d.whole, 10, &d.whole) ||
		    __builtin_add_overflow(d.whole, (unsigned)(*p - '0'), &d.whole))
			return fail(ret_why, -ERANGE, "value too large");

	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return fail(ret_why, -EINVAL, "expected digits after '.'");
		for (; is_digit(*p); p++) {
			if (*p == '0') {
				zeros++;
				continue;
			}
			/* frac < frac_scale, so only the scale can overflow. */
			for (i = 0; i <= zeros; i++) {
				if (__builtin_mul_overflow(d.frac_scale, 10, &d.frac_scale))
					return fail(ret_why, -EINVAL, "too many digits after '.'");
				d.frac *= 10;
			}
			d.frac += (unsigned)(*p - '0');
			zeros = 0;
		}
	}
	*pos = p;
	*ret = d;
	return 0;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/*
 * d * unit, exactly: frac * unit / frac_scale must be whole.  Reducing by
 * the gcd first keeps every intermediate below unit, so nothing needs more
 * than 64 bits.
 */
static int scale_decimal(const struct decimal *d, uint64_t unit, uint64_t *ret_value,
			 const char *inexact, const char **ret_why)
{
	uint64_t whole, g = gcd(unit, d->frac_scale), den = d->frac_scale / g, value;

	if (d->frac % den)
		return fail(ret_why, -EINVAL, inexact);
	if (__builtin_mul_overflow(d->whole, unit, &whole) ||
	    __builtin_add_overflow(whole, d->frac / den * (unit / g), &value))
		return fail(ret_why, -ERANGE, "value too large");
	*ret_value = value;
	return 0;
}

struct unit {
	const char *name;
	uint64_t factor;
};

static const struct unit duration_units[] = {
	{ "ns", 1 },
	{ "us", NSEC_PER_USEC },
	{ "\xc2\xb5s", NSEC_PER_USEC }, /* U+00B5 MICRO SIGN */
	{ "\xce\xbcs", NSEC_PER_USEC }, /* U+03BC GREEK SMALL LETTER MU, what some keyboards give */
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", NSEC_PER_MIN },
	{ "h", NSEC_PER_HOUR },
	{ "d", NSEC_PER_DAY },
};

int parse_duration(const char *text, uint64_t *ret_ns, const char **ret_why)
{
	const char *p = text, *start;
	uint64_t total = 0, term, factor;
	struct decimal d;
	size_t len, i;
	int r;

	if (!text || !*text)
		return fail(ret_why, -EINVAL, "empty");
	while (*p) {
		start = p;
		r = parse_decimal(&p, &d, ret_why);
		if (r < 0)
			return r;
		len = unit_length(p);
		if (!len) {
			/* Seconds only when the number stands alone: "1h30" is more
			 * likely a slip than 1h0m30s. */
			if (*p)
				return trailing(p, false, ret_why);
			if (start != text)
				return fail(ret_why, -EINVAL, "missing unit after number");
			factor = NSEC_PER_SEC;
		} else {
			for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
				if (strlen(duration_units[i].name) == len &&
				    !memcmp(p, duration_units[i].name, len))
					break;
			if (i == sizeof(duration_units) / sizeof(duration_units[0]))
				return fail(ret_why, -EINVAL, "unknown unit");
			factor = duration_units[i].factor;
			p += len;
			if (*p && !is_digit(*p))
				return trailing(p, true, ret_why);
		}
		r = scale_decimal(&d, factor, &term, "fraction finer than a nanosecond", ret_why);
		if (r < 0)
			return r;
		if (__builtin_add_overflow(total, term, &total))
			return fail(ret_why, -ERANGE, "value too large");
	}
	*ret_ns = total;
	return 0;
}

/* K, Ki, KiB binary; KB decimal; likewise M, G, T; any case. */
static int size_unit(const char *name, size_t len, uint64_t *ret_factor)
{
	static const char prefixes[] = "kmgt";
	uint64_t binary = 1, decimal = 1;
	const char *at;
	char second = len > 1 ? to_lower(name[1]) : '\0';
	size_t i;

	if (len == 1 && to_lower(name[0]) == 'b') {
		*ret_factor = 1;
		return 0;
	}
	at = memchr(prefixes, to_lower(name[0]), strlen(prefixes));
	if (!at || len > 3)
		return -EINVAL;
	for (i = 0; i <= (size_t)(at - prefixes); i++) {
		binary *= 1024;
		decimal *= 1000;
	}
	if (len == 1 || (len == 2 && second == 'i') || (len == 3 && second == 'i' && to_lower(name[2]) == 'b'))
		*ret_factor = binary;
	else if (len == 2 && second == 'b')
		*ret_factor = decimal;
	else
		return -EINVAL;
	return 0;
}

int parse_size(const char *text, uint64_t *ret_bytes, const char **ret_why)
{
	const char *p = text;
	uint64_t factor = 1;
	struct decimal d;
	size_t len;
	int r;

	if (!text || !*text)
		return fail(ret_why, -EINVAL, "empty");
	r = parse_decimal(&p, &d, ret_why);
	if (r < 0)
		return r;
	len = unit_length(p);
	if (len) {
		if (size_unit(p, len, &factor) < 0)
			return fail(ret_why, -EINVAL, "unknown unit");
		p += len;
	}
	if (*p)
		return trailing(p, len > 0, ret_why);
	return scale_decimal(&d, factor, ret_bytes, "not a whole number of bytes", ret_why);
}

int parse_multiple(const char *text, double *ret_multiple, const char **ret_why)
{
	const char *p = text;
	struct decimal d;
	double multiple;
	int r;

	if (!text || !*text)
		return fail(ret_why, -EINVAL, "empty");
	r = parse_decimal(&p, &d, ret_why);
	if (r < 0)
		return r;
	if (*p == 'x' || *p == 'X') {
		p++;
		if (*p)
			return trailing(p, true, ret_why);
	} else if (*p) {
		if (unit_length(p))
			return fail(ret_why, -EINVAL, "unknown unit");
		return trailing(p, false, ret_why);
	}
	multiple = (double)d.whole + (double)d.frac / (double)d.frac_scale;
	/* A zero load has no schedule: rates are derived by dividing by it. */
	if (multiple <= 0)
		return fail(ret_why, -EINVAL, "multiple must be greater than zero");
	*ret_multiple = multiple;
	return 0;
}

/* "<whole>[.<rem>]<unit>", rem having `digits` places, its trailing zeros cut. */
static size_t put_fixed(char *out, size_t size, uint64_t whole, uint64_t rem, int digits, const char *unit)
{
	char frac[24];
	size_t n;
	int r;

	if (!rem) {
		r = snprintf(out, size, "%" PRIu64 "%s", whole, unit);
	} else {
		snprintf(frac, sizeof(frac), "%0*" PRIu64, digits, rem);
		for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
			frac[n - 1] = '\0';
		r = snprintf(out, size, "%" PRIu64 ".%s%s", whole, frac, unit);
	}
	if (r < 0)
		return 0;
	return (size_t)r < size ? (size_t)r : size - 1;
}

/*
 * Exact, so that parse_duration() reads back the same value: sub-minute
 * values in the largest unit that fits, longer ones as d/h/m/s terms.
 */
void format_duration(uint64_t ns, char *buf, unsigned buflen)
{
	static const struct unit terms[] = {
		{ "d", NSEC_PER_DAY }, { "h", NSEC_PER_HOUR }, { "m", NSEC_PER_MIN },
	};
	char text[64];
	size_t n = 0, i;

	if (!buf || !buflen)
		return;
	if (ns == 0)
		snprintf(text, sizeof(text), "0s");
	else if (ns < NSEC_PER_USEC)
		put_fixed(text, sizeof(text), ns, 0, 0, "ns");
	else if (ns < NSEC_PER_MSEC)
		put_fixed(text, sizeof(text), ns / NSEC_PER_USEC, ns % NSEC_PER_USEC, 3, "us");
	else if (ns < NSEC_PER_SEC)
		put_fixed(text, sizeof(text), ns / NSEC_PER_MSEC, ns % NSEC_PER_MSEC, 6, "ms");
	else {
		for (i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
			if (ns < terms[i].factor)
				continue;
			n += put_fixed(text + n, sizeof(text) - n, ns / terms[i].factor, 0, 0, terms[i].name);
			ns %= terms[i].factor;
		}
		if (ns || !n)
			put_fixed(text + n, sizeof(text) - n, ns / NSEC_PER_SEC, ns % NSEC_PER_SEC, 9, "s");
	}
	snprintf(buf, buflen, "%s", text);
}

/* Largest unit that shows the value exactly with at most three decimals. */
static size_t size_text(char *out, size_t size, uint64_t bytes, uint64_t base, const char *const units[5])
{
	uint64_t factor, best_factor = 1;
	size_t i, best = 0;

	for (i = 1, factor = base; i < 5 && bytes >= factor; i++, factor *= base) {
		if ((bytes % factor) * 1000 % factor == 0) {
			best = i;
			best_factor = factor;
		}
	}
	return put_fixed(out, size, bytes / best_factor, (bytes % best_factor) * 1000 / best_factor, 3,
			 units[best]);
}

/*
 * Binary units unless decimal ones say it shorter: 4096 is "4KiB" but
 * 10^9 is "1GB", not "976562.5KiB".  Either way parse_size() reads it back.
 */
void format_size(uint64_t bytes, char *buf, unsigned buflen)
{
	static const char *const binary[5] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const decimal[5] = { "B", "KB", "MB", "GB", "TB" };
	char as_binary[48], as_decimal[48];

	if (!buf || !buflen)
		return;
	if (size_text(as_decimal, sizeof(as_decimal), bytes, 1000, decimal) <
	    size_text(as_binary, sizeof(as_binary), bytes, 1024, binary))
		snprintf(buf, buflen, "%s", as_decimal);
	else
		snprintf(buf, buflen, "%s", as_binary);
}
