/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PLOT_H
#define SOAK_PLOT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Plots of a run over time as one self-contained SVG file (no script, no
 * external font or style), for soakctl plot.
 *
 * The input is the dump's CSV (one row per interval, workload and op), read
 * by column name, so columns added later do not disturb it.  Each workload
 * gets a section of two panels on one shared time axis: latency (log
 * scale) with p50, p99 and p99.9 per op, and throughput (ops/s achieved,
 * and the target) per op.  Any op is drawn the same way, so kernel series
 * that arrive as rows (op "kernel.blk.read") sit beside the application's;
 * extra latency columns named kernel*_us are drawn as further latency lines
 * of their row's op.  Columns named host_*_pct (the host's CPU shares and
 * pressure, its busiest target device's utilisation) fill a third panel,
 * "host %", 0 to 100, one line each per workload ("WORKLOAD/host/cpu_steal").
 * A "drift" column names the drift alarms raised in a row's interval: each
 * is a dashed red line (class "drift") across its workload's latency panel.  Every line is a <path> with a data-series attribute
 * ("WORKLOAD/OP/p99") and a legend entry.
 *
 * An interval with no ops has no latency: the line breaks there, and where
 * the run had a gap (soakd was down), both lines break.  Long runs are
 * reduced to one point per pixel column: the highest latency and the mean
 * rate of the intervals it covers, so spikes stay visible.
 */

struct plot;

struct plot_filter {
	const char *workload;   /* NULL: all */
	const char *op;         /* NULL: all */
};

struct plot *plot_new(const char *title);
void plot_free(struct plot *p);
/* Adds the rows of a dump CSV that pass the filter.  Returns 0, or -EINVAL
 * with why in err (no header, a missing column, a malformed number),
 * or -ENOMEM. */
int plot_add_csv(struct plot *p, const char *csv, const struct plot_filter *filter, char *err,
		 size_t errlen);
/* Number of series (lines) added so far. */
size_t plot_series_count(const struct plot *p);
/* Writes the SVG document; 0 or -EIO. */
int plot_write_svg(const struct plot *p, FILE *out);

/* Axis helpers, exposed for tests. */
/* "250 µs", "1.5 ms", "2 s" for a latency given in microseconds. */
void plot_format_latency(double us, char *buf, size_t len);
/* "0", "1.5k", "20k", "1.2M" */
void plot_format_rate(double v, char *buf, size_t len);
/* "0s", "45s", "2m", "1h30m", "2d4h" */
void plot_format_elapsed(double s, char *buf, size_t len);
/* A step of 1, 2 or 5 times a power of ten, giving at most max_ticks ticks over span. */
double plot_nice_step(double span, int max_ticks);
/* No axis draws more ticks than this, whatever its numbers: a range of a
 * log copied from elsewhere can be infinite, or so far from 0 that adding
 * a step changes nothing, and a tick loop would never end. */
#define PLOT_MAX_TICKS 64

#endif
