/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HTMLCHART_H
#define SOAK_HTMLCHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hist.h"
#include "runmodel.h"

/*
 * Inline SVG charts for the HTML report: no script, no external font, a
 * role="img" with <title> and <desc> (and aria-labelledby) on each, sized
 * by a viewBox so they scale to the page.
 *
 * Time charts put every series on the run's time axis.  A series with more
 * points than the plot has pixel columns is drawn one column at a time
 * from its lowest to its highest value in that column (min/max
 * decimation), so a spike of one interval in a week-long run stays
 * visible.  A line breaks where a series has no value (an interval with no
 * ops) and where time jumps (soakd was down).
 */

struct chart_line {
	const struct rm_series *s;
	const char *label;     /* legend text */
	const char *id;        /* data-series attribute: "WORKLOAD/OP/p99" */
	const char *color;
	bool dashed;
};

struct chart_band {
	double t0, t1;         /* shaded span (generator_late, gaps) */
	const char *color;
};

struct chart {
	const char *id;        /* element id, unique in the page */
	const char *title, *desc;
	const char *unit;      /* "µs" (latency axis), "ops/s", "%", "B/s", "" */
	bool log_y;
	double t_end;          /* time axis [0, t_end] s */
	const struct chart_band *bands;
	size_t n_bands;
};

#define CHART_W 960
#define CHART_H 260

void chart_time(FILE *out, const struct chart *c, const struct chart_line *lines, size_t n);

/* A percentile spectrum in HdrHistogram's style: x = 1/(1-p) on a log
 * axis (0%, 90%, 99%, 99.9%, ...), y = latency, one line per histogram. */
void chart_spectrum(FILE *out, const struct chart *c, const struct hist *const *hists,
		    const char *const *labels, const char *const *ids, size_t n);

/* An x-y chart: x linear from 0 (c->unit is its unit, "ops/s"), y
 * latency in µs on a log scale, one line per series of n_pts points
 * (x[i], y[i][k]) joined in the order given; NAN y: no point.  A vertical
 * line at x_mark when it is > 0 (an answer), labelled mark_label. */
struct chart_xy_line {
	const char *label, *id, *color;
	const double *y;
};
void chart_xy(FILE *out, const struct chart *c, const double *x, size_t n_pts,
	      const struct chart_xy_line *lines, size_t n, double x_mark, const char *mark_label);

/* Text for HTML and attributes: &, <, >, " and ' escaped; control
 * characters dropped. */
void html_text(FILE *out, const char *s);
/* "250 µs", "1.5 ms" from µs. */
void chart_format_us(double us, char *buf, size_t len);

#endif
