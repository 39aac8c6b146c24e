// SPDX-License-Identifier: GPL-2.0-only
#include "htmlchart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

/* Plot area inside the viewBox. */
#define L 70
#define R 24
#define T 12
#define B 40
#define PW (CHART_W - L - R)
#define PH (CHART_H - T - B)

void html_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if (c >= 0x20 && c != 0x7f)
				fputc(c, out);
		}
	}
}

void chart_format_us(double us, char *buf, size_t len)
{
	char raw[64];

	if (us < 1e3)
		snprintf(raw, sizeof(raw), "%.4g µs", us);
	else if (us < 1e6)
		snprintf(raw, sizeof(raw), "%.4g ms", us / 1e3);
	else
		snprintf(raw, sizeof(raw), "%.4g s", us / 1e6);
	snprintf(buf, len, "%s", raw);
}

static void format_value(const char *unit, double v, char *buf, size_t len)
{
	char n[32];

	if (unit && strcmp(unit, "µs") == 0) {
		chart_format_us(v, buf, len);
		return;
	}
	plot_format_rate(v, n, sizeof(n));
	snprintf(buf, len, "%s%s%s", n, unit && *unit && strcmp(unit, "ops/s") ? " " : "",
		 unit && strcmp(unit, "ops/s") ? unit : "");
}

struct axis {
	double lo, hi;
	bool log;
};

static double y_of(const struct axis *a, double v)
{
	double f;

	if (a->log) {
		if (!(v > 0))
			v = a->lo;
		f = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	} else {
		f = (v - a->lo) / (a->hi - a->lo);
	}
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return T + PH - f * PH;
}

static void y_axis(FILE *out, const struct axis *a, const char *unit)
{
	char label[48];

	if (a->log) {
		int n = 0;
		for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001 && n < PLOT_MAX_TICKS;
		     d *= 10, n++) {
			if (d < a->lo * 0.9999)
				continue;
			double y = y_of(a, d);
			format_value(unit, d, label, sizeof(label));
			fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
				     "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				L, L + PW, y, y, L - 4, y + 4, label);
		}
		return;
	}
	double step = plot_nice_step(a->hi - a->lo, 5);
	int n = 0;
	for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-6 && n < PLOT_MAX_TICKS;
	     v += step, n++) {
		double y = y_of(a, v);
		format_value(unit, v, label, sizeof(label));
		fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			     "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			L, L + PW, y, y, L - 4, y + 4, label);
	}
}

static void open_svg(FILE *out, const struct chart *c)
{
	fprintf(out, "<svg class=\"chart\" id=\"");
	html_text(out, c->id);
	fprintf(out, "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"", CHART_W, CHART_H);
	html_text(out, c->id);
	fputs("-t ", out);
	html_text(out, c->id);
	fputs("-d\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"", out);
	html_text(out, c->id);
	fputs("-t\">", out);
	html_text(out, c->title);
	fputs("</title><desc id=\"", out);
	html_text(out, c->id);
	fputs("-d\">", out);
	html_text(out, c->desc);
	/* The chart's own numbers follow (desc_range), then close_desc. */
}

/* " LABEL: LO to HI UNIT." in the description: the chart's numbers as
 * text, for a screen reader or a page that cannot show the SVG. */
static void desc_range(FILE *out, const char *unit, const char *label, double lo, double hi)
{
	char a[48], b[48];

	fputc(' ', out);
	html_text(out, label);
	if (!isfinite(lo) || !isfinite(hi)) {
		fputs(": no values.", out);
		return;
	}
	format_value(unit, lo, a, sizeof(a));
	format_value(unit, hi, b, sizeof(b));
	fprintf(out, ": %s to %s.", a, b);
}

static void close_desc(FILE *out, const struct chart *c)
{
	fputs("</desc>\n", out);
	fprintf(out, "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", L, T, PW,
		PH);
}

static void legend(FILE *out, const char *const *labels, const char *const *colors,
		   const bool *dashed, size_t n)
{
	double x = L;

	for (size_t i = 0; i < n; i++) {
		double y = CHART_H - 8;
		fprintf(out, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
			     "stroke-width=\"3\"%s/><text class=\"legend\" x=\"%.0f\" y=\"%.0f\">",
			x, x + 18, y - 4, y - 4, colors[i],
			dashed && dashed[i] ? " stroke-dasharray=\"5 3\"" : "", x + 22, y);
		html_text(out, labels[i]);
		fputs("</text>\n", out);
		x += 30 + 7.0 * (double)strlen(labels[i]);
	}
}

/* The min/max of each pixel column: one path that goes down and up it. */
static void time_path(FILE *out, const struct chart_line *line, const struct axis *ya,
		      double t_end)
{
	const struct rm_series *s = line->s;
	double lo[PW], hi[PW];
	bool has[PW], cont[PW];

	for (int i = 0; i < PW; i++) {
		has[i] = false;
		cont[i] = false;
	}
	double prev_end = -1;
	int prev_col = -1;
	for (size_t i = 0; s && i < s->n; i++) {
		const struct rm_point *p = &s->pts[i];
		double mid = (p->t0 + p->t1) / 2;
		/* Clamped before the cast: a damaged log's times may be anything. */
		double at = mid / t_end * (PW - 1) + 0.5;
		int col = !(at >= 0) ? 0 : at >= PW - 1 ? PW - 1 : (int)at;
		if (isnan(p->v)) {
			prev_col = -1;
			continue;
		}
		/* A jump in time (a gap) breaks the line, as does an empty interval. */
		bool joined = prev_col >= 0 && p->t0 - prev_end < (p->t1 - p->t0) * 0.5 + 1e-3;
		double vmax = isnan(p->vmax) ? p->v : p->vmax;
		if (!has[col]) {
			has[col] = true;
			lo[col] = p->v;
			hi[col] = vmax;
			cont[col] = joined && prev_col >= 0 && prev_col != col;
		} else {
			if (p->v < lo[col])
				lo[col] = p->v;
			if (vmax > hi[col])
				hi[col] = vmax;
		}
		prev_end = p->t1;
		prev_col = col;
	}
	fprintf(out, "<path class=\"series\" data-series=\"");
	html_text(out, line->id);
	fprintf(out, "\" stroke=\"%s\"%s d=\"", line->color,
		line->dashed ? " stroke-dasharray=\"5 3\"" : "");
	for (int col = 0; col < PW; col++) {
		if (!has[col])
			continue;
		double x = L + col, y1 = y_of(ya, lo[col]), y2 = y_of(ya, hi[col]);
		fprintf(out, "%c%.1f %.1f", cont[col] ? 'L' : 'M', x, y1);
		/* A lone point still shows: a short tick. */
		fprintf(out, "L%.1f %.1f", x + (y1 == y2 && !cont[col] ? 1.5 : 0), y2);
	}
	fputs("\"/>\n", out);
}

static void x_axis_time(FILE *out, double t_end)
{
	double step = plot_nice_step(t_end, 8);
	char label[32];

	if (step >= 30) {   /* whole minutes, hours or days */
		static const double human[] = { 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
						21600, 43200, 86400, 172800, 604800 };
		for (size_t i = 0; i < sizeof(human) / sizeof(human[0]); i++)
			if (human[i] >= t_end / 8) {
				step = human[i];
				break;
			}
	}
	int n = 0;
	for (double t = 0; t <= t_end + 1e-9 && n < PLOT_MAX_TICKS; t += step, n++) {
		double x = L + t / t_end * (PW - 1);
		plot_format_elapsed(t, label, sizeof(label));
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			     "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, x, T, T + PH, x, T + PH + 14, label);
	}
}

void chart_time(FILE *out, const struct chart *c, const struct chart_line *lines, size_t n)
{
	struct axis ya = { .lo = INFINITY, .hi = -INFINITY, .log = c->log_y };
	double t_end = c->t_end > 0 ? c->t_end : 1;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; lines[i].s && k < lines[i].s->n; k++) {
			double v = lines[i].s->pts[k].v, vmax = lines[i].s->pts[k].vmax;
			if (!isnan(vmax) && vmax > ya.hi && (!ya.log || vmax > 0))
				ya.hi = vmax;
			if (isnan(v) || (ya.log && !(v > 0)))
				continue;
			if (v < ya.lo)
				ya.lo = v;
			if (v > ya.hi)
				ya.hi = v;
		}
	if (!isfinite(ya.lo)) {
		ya.lo = ya.log ? 1 : 0;
		ya.hi = ya.log ? 10 : 1;
	}
	if (ya.log) {
		ya.lo = pow(10, floor(log10(ya.lo)));
		ya.hi = pow(10, ceil(log10(ya.hi * 1.0001)));
	} else {
		ya.lo = ya.lo > 0 ? 0 : ya.lo;
		ya.hi = ya.hi > ya.lo ? ya.hi * 1.1 : ya.lo + 1;
	}
	open_svg(out, c);
	for (size_t i = 0; i < n; i++) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t k = 0; lines[i].s && k < lines[i].s->n; k++) {
			const struct rm_point *p = &lines[i].s->pts[k];
			if (!isnan(p->v) && p->v < lo)
				lo = p->v;
			if (!isnan(p->vmax) && p->vmax > hi)
				hi = p->vmax;
			else if (!isnan(p->v) && p->v > hi)
				hi = p->v;
		}
		desc_range(out, c->unit, lines[i].label, lo, hi);
	}
	close_desc(out, c);
	for (size_t i = 0; i < c->n_bands; i++) {
		double x0 = L + c->bands[i].t0 / t_end * (PW - 1);
		double x1 = L + c->bands[i].t1 / t_end * (PW - 1);
		fprintf(out, "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			     "fill=\"%s\"/>\n", x0, T, x1 - x0 < 1 ? 1 : x1 - x0, PH, c->bands[i].color);
	}
	y_axis(out, &ya, c->unit);
	x_axis_time(out, t_end);
	for (size_t i = 0; i < n; i++)
		time_path(out, &lines[i], &ya, t_end);
	const char *labels[16], *colors[16];
	bool dashed[16];
	size_t k = n < 16 ? n : 16;
	for (size_t i = 0; i < k; i++) {
		labels[i] = lines[i].label;
		colors[i] = lines[i].color;
		dashed[i] = lines[i].dashed;
	}
	legend(out, labels, colors, dashed, k);
	fputs("</svg>\n", out);
}

void chart_spectrum(FILE *out, const struct chart *c, const struct hist *const *hists,
		    const char *const *labels, const char *const *ids, size_t n)
{
	static const char *const colors[] = { "#1f5fa8", "#b3261e", "#2e7d32", "#6a3d9a" };
	struct axis ya = { .lo = INFINITY, .hi = -INFINITY, .log = true };
	double xmax = 1;   /* decades of 1/(1-p) */

	for (size_t i = 0; i < n; i++) {
		if (!hists[i] || !hists[i]->count)
			continue;
		double d = ceil(log10((double)hists[i]->count));
		if (d > xmax)
			xmax = d;
		double lo = hist_percentile(hists[i], 0.0001) / 1e3, hi = hist_max(hists[i]) / 1e3;
		if (lo > 0 && lo < ya.lo)
			ya.lo = lo;
		if (hi > ya.hi)
			ya.hi = hi;
	}
	if (xmax > 7)
		xmax = 7;
	if (!isfinite(ya.lo) || !(ya.hi > 0)) {
		ya.lo = 1;
		ya.hi = 10;
	}
	ya.lo = pow(10, floor(log10(ya.lo)));
	ya.hi = pow(10, ceil(log10(ya.hi * 1.0001)));
	open_svg(out, c);
	for (size_t i = 0; i < n; i++) {
		char p50[48], p99[48], p999[48], max[48];
		if (!hists[i] || !hists[i]->count)
			continue;
		chart_format_us(hist_percentile(hists[i], 50) / 1e3, p50, sizeof(p50));
		chart_format_us(hist_percentile(hists[i], 99) / 1e3, p99, sizeof(p99));
		chart_format_us(hist_percentile(hists[i], 99.9) / 1e3, p999, sizeof(p999));
		chart_format_us(hist_max(hists[i]) / 1e3, max, sizeof(max));
		fputc(' ', out);
		html_text(out, labels[i]);
		fprintf(out, ": p50 %s, p99 %s, p99.9 %s, max %s.", p50, p99, p999, max);
	}
	close_desc(out, c);
	y_axis(out, &ya, "µs");
	for (int d = 0; d <= (int)xmax; d++) {
		double x = L + d / xmax * (PW - 1);
		char label[16];
		if (d == 0)
			snprintf(label, sizeof(label), "0%%");
		else
			snprintf(label, sizeof(label), "%.*f%%", d > 2 ? d - 2 : 0, 100 - pow(10, 2 - d));
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			     "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, x, T, T + PH, x, T + PH + 14, label);
	}
	for (size_t i = 0; i < n; i++) {
		if (!hists[i] || !hists[i]->count)
			continue;
		fprintf(out, "<path class=\"series\" data-series=\"");
		html_text(out, ids[i]);
		fprintf(out, "\" stroke=\"%s\" d=\"", colors[i % 4]);
		double top = log10((double)hists[i]->count);
		if (top > xmax)
			top = xmax;
		for (int k = 0; k <= PW; k += 2) {
			double dec = k / (double)PW * xmax;
			if (dec > top)
				break;
			double p = 100 * (1 - pow(10, -dec));
			double v = hist_percentile(hists[i], p > 0 ? p : 0.0001) / 1e3;
			fprintf(out, "%c%.1f %.1f", k ? 'L' : 'M', L + dec / xmax * (PW - 1),
				y_of(&ya, v));
		}
		fputs("\"/>\n", out);
	}
	bool dashed[4] = { false, false, false, false };
	const char *cols[4] = { colors[0], colors[1], colors[2], colors[3] };
	legend(out, labels, cols, dashed, n < 4 ? n : 4);
	fputs("</svg>\n", out);
}

void chart_xy(FILE *out, const struct chart *c, const double *x, size_t n_pts,
	      const struct chart_xy_line *lines, size_t n, double x_mark, const char *mark_label)
{
	struct axis ya = { .lo = INFINITY, .hi = -INFINITY, .log = true };
	double xmax = x_mark > 0 ? x_mark : 0;
	char label[48];

	for (size_t k = 0; k < n_pts; k++) {
		if (x[k] > xmax)
			xmax = x[k];
		for (size_t i = 0; i < n; i++) {
			double v = lines[i].y[k];
			if (!(v > 0))
				continue;
			if (v < ya.lo)
				ya.lo = v;
			if (v > ya.hi)
				ya.hi = v;
		}
	}
	if (!isfinite(ya.lo)) {
		ya.lo = 1;
		ya.hi = 10;
	}
	ya.lo = pow(10, floor(log10(ya.lo)));
	ya.hi = pow(10, ceil(log10(ya.hi * 1.0001)));
	xmax = xmax > 0 ? xmax * 1.05 : 1;
	open_svg(out, c);
	for (size_t i = 0; i < n; i++) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t k = 0; k < n_pts; k++) {
			if (lines[i].y[k] > 0 && lines[i].y[k] < lo)
				lo = lines[i].y[k];
			if (lines[i].y[k] > hi)
				hi = lines[i].y[k];
		}
		desc_range(out, "µs", lines[i].label, lo, hi);
	}
	close_desc(out, c);
	y_axis(out, &ya, "µs");
	double step = plot_nice_step(xmax, 8);
	int ticks = 0;
	for (double v = 0; v <= xmax + step * 1e-6 && ticks < PLOT_MAX_TICKS; v += step, ticks++) {
		double px = L + v / xmax * (PW - 1);
		format_value(c->unit, v, label, sizeof(label));
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			     "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			px, px, T, T + PH, px, T + PH + 14, label);
	}
	for (size_t i = 0; i < n; i++) {
		bool pen = false;
		fprintf(out, "<path class=\"series\" data-series=\"");
		html_text(out, lines[i].id);
		fprintf(out, "\" stroke=\"%s\" d=\"", lines[i].color);
		for (size_t k = 0; k < n_pts; k++) {
			if (!(lines[i].y[k] > 0)) {
				pen = false;
				continue;
			}
			double px = L + x[k] / xmax * (PW - 1), py = y_of(&ya, lines[i].y[k]);
			/* A lone point still shows: a short tick. */
			fprintf(out, "%c%.1f %.1fL%.1f %.1f", pen ? 'L' : 'M', px, py, px + (pen ? 0 : 1.5),
				py);
			pen = true;
		}
		fputs("\"/>\n", out);
	}
	const char *labels[17], *colors[17];
	bool dashed[17];
	size_t k = n < 16 ? n : 16;
	for (size_t i = 0; i < k; i++) {
		labels[i] = lines[i].label;
		colors[i] = lines[i].color;
		dashed[i] = false;
	}
	if (x_mark > 0) {
		double px = L + x_mark / xmax * (PW - 1);
		fprintf(out, "<line class=\"mark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
			     "stroke=\"#1a1a1a\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
			px, px, T, T + PH);
		labels[k] = mark_label;
		colors[k] = "#1a1a1a";
		dashed[k++] = true;
	}
	legend(out, labels, colors, dashed, k);
	fputs("</svg>\n", out);
}
