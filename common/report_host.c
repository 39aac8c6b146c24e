// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether the host may explain a latency spike (report_host_flags in
 * report.h): the report's slices of one op beside the host's slices of the
 * same run (rundump_host: the most steal and iowait, and the busiest target
 * device, in each recorded slice).
 */
#include "report.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The most of field over the host slices that fall in report slice i. */
static double host_max(json_t *host_slices, size_t i, size_t per, const char *field)
{
	double m = -1;
	size_t k;
	json_t *s;

	json_array_foreach(host_slices, k, s) {
		json_int_t index = json_integer_value(json_object_get(s, "index"));
		if (index < 0 || (size_t)index / per != i)
			continue;
		double v = json_number_value(json_object_get(s, field));
		m = v > m ? v : m;
	}
	return m;
}

size_t report_host_flags(FILE *out, const char *workload, const char *op,
			 const struct hist *slices, size_t n_slices, size_t per, json_t *host_slices)
{
	uint64_t p99[REPORT_MAX_SLICES < 4096 ? REPORT_MAX_SLICES : 4096];
	size_t n = 0, flagged = 0;

	if (!json_is_array(host_slices) || per == 0 || n_slices < REPORT_SPIKE_MIN_SLICES ||
	    n_slices > sizeof(p99) / sizeof(p99[0]))
		return 0;
	for (size_t i = 0; i < n_slices; i++)
		if (slices[i].count)
			p99[n++] = hist_percentile(&slices[i], 99);
	if (n < REPORT_SPIKE_MIN_SLICES)
		return 0;
	qsort(p99, n, sizeof(p99[0]), cmp_u64);
	uint64_t median = p99[n / 2];
	for (size_t i = 0; median && i < n_slices; i++) {
		if (!slices[i].count)
			continue;
		uint64_t p = hist_percentile(&slices[i], 99);
		if ((double)p <= REPORT_SPIKE_FACTOR * (double)median)
			continue;
		double steal = host_max(host_slices, i, per, "steal_max");
		double iowait = host_max(host_slices, i, per, "iowait_max");
		double util = host_max(host_slices, i, per, "util_max");
		bool by_steal = steal >= REPORT_STEAL_PCT;
		bool by_iowait = iowait >= REPORT_IOWAIT_PCT && util >= 0 && util < REPORT_BUSY_PCT;
		if (!by_steal && !by_iowait)
			continue;
		fprintf(out, "%s %s: slice %zu's p99 of %.3f ms is %.1fx the median slice's: the host "
			"may explain it:", workload, op, i + 1, p / 1e6, (double)p / (double)median);
		if (by_steal)
			fprintf(out, " steal up to %.1f%% of the CPUs (a hypervisor ran others)",
				steal);
		if (by_iowait)
			fprintf(out, "%s iowait up to %.1f%% while the targets' devices were at most "
				"%.1f%% busy (other devices kept the CPUs waiting)", by_steal ? ";" : "",
				iowait, util);
		fputc('\n', out);
		flagged++;
	}
	return flagged;
}
