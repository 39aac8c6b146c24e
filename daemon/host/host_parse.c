// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parsers of the kernel's host counters (host_parse.h).  They read what
 * proc(5) and Documentation/block/stat.rst describe and nothing more:
 * unknown lines are skipped, a missing required field is -EINVAL.
 */
#include "host_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next unsigned decimal after *p (spaces skipped); -EINVAL if none. */
static int next_u64(const char **p, uint64_t *ret)
{
	const char *s = *p;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	*ret = v;
	*p = end;
	return 0;
}

static const char *line_starting(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, prefix, n) == 0)
			return l + n;
	return NULL;
}

int host_parse_stat(const char *text, struct host_cpu_ticks *ret)
{
	const char *p = line_starting(text, "cpu ");
	uint64_t *f[] = { &ret->user, &ret->nice, &ret->system, &ret->idle,
			  &ret->iowait, &ret->irq, &ret->softirq, &ret->steal };

	if (!p)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (next_u64(&p, f[i]) < 0)
			return -EINVAL;
	return 0;
}

uint64_t host_cpu_total(const struct host_cpu_ticks *t)
{
	/* guest and guest_nice are already counted in user and nice. */
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

int host_parse_meminfo(const char *text, struct host_mem *ret)
{
	const char *total = line_starting(text, "MemTotal:");
	const char *avail = line_starting(text, "MemAvailable:");
	uint64_t t, a;

	if (!total || !avail || next_u64(&total, &t) < 0 || next_u64(&avail, &a) < 0)
		return -EINVAL;
	/* Printed in kB (KiB), whatever the line's unit says. */
	ret->total = t * 1024;
	ret->available = a * 1024;
	return 0;
}

static int psi_total(const char *line, uint64_t *ret)
{
	const char *eol = strchr(line, '\n');
	const char *t = strstr(line, "total=");

	if (!t || (eol && t > eol))
		return -EINVAL;
	t += strlen("total=");
	return next_u64(&t, ret);
}

int host_parse_psi(const char *text, struct host_psi *ret)
{
	const char *some = line_starting(text, "some ");
	const char *full = line_starting(text, "full ");

	if (!some || psi_total(some, &ret->some_us) < 0)
		return -EINVAL;
	ret->has_full = full && psi_total(full, &ret->full_us) == 0;
	if (!ret->has_full)
		ret->full_us = 0;
	return 0;
}

int host_parse_netdev(const char *text, struct host_netdev *ret, size_t max, size_t *ret_n)
{
	size_t n = 0;

	/* Two header lines, then "  NAME: rx_bytes packets errs drop fifo
	 * frame compressed multicast tx_bytes ...". */
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *colon = strchr(l, ':');
		const char *eol = strchr(l, '\n');
		const char *bar = strchr(l, '|');
		/* The header lines have '|' and no ':'. */
		if (!colon || (eol && colon > eol) || (bar && (!eol || bar < eol)))
			continue;
		while (*l == ' ')
			l++;
		size_t len = (size_t)(colon - l);
		if (len == 0 || len >= HOST_IFNAME)
			return -EINVAL;
		const char *p = colon + 1;
		uint64_t v[9];
		for (size_t i = 0; i < 9; i++)
			if (next_u64(&p, &v[i]) < 0)
				return -EINVAL;
		if (n < max) {
			memcpy(ret[n].name, l, len);
			ret[n].name[len] = '\0';
			ret[n].rx_bytes = v[0];
			ret[n].tx_bytes = v[8];
			n++;
		}
	}
	*ret_n = n;
	return 0;
}

int host_parse_snmp_retrans(const char *text, uint64_t *ret)
{
	/* A header line "Tcp: Name Name ..." and a value line "Tcp: v v ...". */
	const char *names = line_starting(text, "Tcp:");
	const char *values = names ? line_starting(names, "Tcp:") : NULL;
	size_t column = 0;

	if (!values)
		return -EINVAL;
	for (const char *p = names;;) {
		while (*p == ' ')
			p++;
		if (*p == '\n' || !*p)
			return -EINVAL;
		size_t len = strcspn(p, " \n");
		if (len == strlen("RetransSegs") && strncmp(p, "RetransSegs", len) == 0)
			break;
		p += len;
		column++;
	}
	for (size_t i = 0;; i++) {
		uint64_t v;
		while (*values == ' ')
			values++;
		/* Some columns (MaxConn) are signed. */
		if (*values == '-')
			values++;
		if (next_u64(&values, &v) < 0)
			return -EINVAL;
		if (i == column) {
			*ret = v;
			return 0;
		}
	}
}

int host_parse_blkstat(const char *text, struct host_blkstat *ret)
{
	uint64_t f[11];
	const char *p = text;

	/* read ios, merges, sectors, ticks; write ios, merges, sectors,
	 * ticks; in_flight, io_ticks, time_in_queue; then discard and flush
	 * fields on newer kernels, not needed here. */
	for (size_t i = 0; i < 11; i++)
		if (next_u64(&p, &f[i]) < 0)
			return -EINVAL;
	ret->read_sectors = f[2];
	ret->write_sectors = f[6];
	ret->io_ticks_ms = f[9];
	ret->time_in_queue_ms = f[10];
	return 0;
}

static uint64_t le(const uint8_t *b, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

int host_parse_nvme_smart(const uint8_t *log, size_t len, struct host_nvme_smart *ret)
{
	if (len < HOST_NVME_SMART_LEN)
		return -EINVAL;
	uint64_t kelvin = le(log + 1, 2);
	/* 0 K is "not reported"; anything this far from room temperature is
	 * not a reading either. */
	if (kelvin == 0 || kelvin > 273 + 200)
		return -EINVAL;
	ret->critical_warning = log[0];
	ret->temp_c = (int)kelvin - 273;
	ret->pct_used = log[5];
	/* A 128-bit counter: bytes 160..175; past 2^64 it saturates. */
	ret->media_errors = le(log + 168, 8) ? UINT64_MAX : le(log + 160, 8);
	return 0;
}
