// SPDX-License-Identifier: GPL-2.0-only
#include "rfc3339.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#define NS_PER_S INT64_C(1000000000)

static bool is_leap(long year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

/* Leap years in [1, year). */
static long leaps_before(long year)
{
	year--;
	return year / 4 - year / 100 + year / 400;
}

static int days_in_month(long year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

/* Exactly n decimal digits at *p; advances *p. */
static bool digits(const char **p, int n, long *ret)
{
	long v = 0;

	for (int i = 0; i < n; i++) {
		char ch = (*p)[i];
		if (ch < '0' || ch > '9')
			return false;
		v = v * 10 + (ch - '0');
	}
	*p += n;
	*ret = v;
	return true;
}

static bool expect(const char **p, char ch)
{
	if (**p != ch)
		return false;
	(*p)++;
	return true;
}

static int fail(const char **ret_why, const char *why)
{
	if (ret_why)
		*ret_why = why;
	return -EINVAL;
}

int rfc3339_parse(const char *text, int64_t *ret_ns, const char **ret_why)
{
	const char *p = text;
	long year, month, day, hour, minute, second, oh = 0, om = 0;
	int64_t frac_ns = 0, offset_s = 0;

	if (!text || !*text)
		return fail(ret_why, "empty");
	if (!digits(&p, 4, &year) || !expect(&p, '-') || !digits(&p, 2, &month) ||
	    !expect(&p, '-') || !digits(&p, 2, &day))
		return fail(ret_why, "the date must read YYYY-MM-DD");
	if (*p != 'T' && *p != 't' && *p != ' ')
		return fail(ret_why, "a time must follow the date: YYYY-MM-DDTHH:MM:SSZ");
	p++;
	if (!digits(&p, 2, &hour) || !expect(&p, ':') || !digits(&p, 2, &minute) ||
	    !expect(&p, ':') || !digits(&p, 2, &second))
		return fail(ret_why, "the time must read HH:MM:SS");
	if (*p == '.') {
		int64_t scale = NS_PER_S / 10;
		p++;
		if (*p < '0' || *p > '9')
			return fail(ret_why, "a digit must follow the decimal point");
		for (; *p >= '0' && *p <= '9'; p++) {
			frac_ns += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;
		p++;
		if (!digits(&p, 2, &oh) || !expect(&p, ':') || !digits(&p, 2, &om))
			return fail(ret_why, "the offset must read +HH:MM or -HH:MM");
		if (oh > 23 || om > 59)
			return fail(ret_why, "the offset is out of range");
		offset_s = sign * (oh * 3600 + om * 60);
	} else if (*p == '\0') {
		return fail(ret_why, "a time zone is needed: end with Z (UTC) or an offset such as +02:00");
	} else {
		return fail(ret_why, "unexpected characters after the time");
	}
	if (*p)
		return fail(ret_why, "trailing characters after the time zone");

	if (year < 1970 || year > 2200)
		return fail(ret_why, "the year must be between 1970 and 2200");
	if (month < 1 || month > 12)
		return fail(ret_why, "the month must be 01 to 12");
	if (day < 1 || day > days_in_month(year, (int)month))
		return fail(ret_why, "no such day in that month");
	if (hour > 23 || minute > 59 || second > 60)
		return fail(ret_why, "the time of day is out of range");

	static const int before_month[] = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
	int64_t days = (int64_t)(year - 1970) * 365 + leaps_before(year) - leaps_before(1970) +
		       before_month[month - 1] + (month > 2 && is_leap(year)) + day - 1;
	int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
	if (secs < 0)
		return fail(ret_why, "the time is before 1970");
	/* The years bound the instant, not the local date it was written in:
	 * "2200-12-31T23:30:00-01:00" is in 2201, which rfc3339_format would
	 * write and this function then refuse.  2201-01-01T00:00:00Z: */
	if (secs >= INT64_C(7289654400))
		return fail(ret_why, "the time is after 2200");
	*ret_ns = secs * NS_PER_S + frac_ns;
	return 0;
}

void rfc3339_format(int64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / NS_PER_S);
	int64_t frac = ns % NS_PER_S;
	struct tm tm;

	if (frac < 0) {
		frac += NS_PER_S;
		secs--;
	}
	if (!gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	if (frac / 1000000)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)(frac / 1000000));
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
