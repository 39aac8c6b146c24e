// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plot drawn as one self-contained SVG file: sections of panels on a
 * shared time axis, each series a <path> with its legend entry.
 */
#include "plot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

/* Geometry, in SVG user units (pixels). */
#define WIDTH 1120
#define LEFT 84                 /* room for the y tick labels */
#define PANEL_W 760
#define LEGEND_X (LEFT + PANEL_W + 28)
#define TITLE_H 58
#define SECTION_HEAD 28
#define LATENCY_H 240
#define RATE_H 150
#define HOST_H 120              /* the host's shares, when the CSV has them */
#define AXIS_H 34               /* x tick labels under a panel */
#define SECTION_GAP 26
#define LEGEND_LINE 16

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
};
_Static_assert(sizeof(palette) / sizeof(palette[0]) == PALETTE_N, "PALETTE_N counts the palette");

static double time_step(double span, int max_ticks)
{
	static const double steps[] = {
		1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
		43200, 86400, 172800, 604800,
	};
	double raw = span / max_ticks;

	if (raw < 1)
		return plot_nice_step(span, max_ticks);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] >= raw)
			return steps[i];
	return ceil(raw / 604800) * 604800;
}

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
	}
}

struct frame {
	double top, height;
	enum panel panel;
	double lo, hi;          /* latency: log10 of µs; rate: ops/s */
	double t_min, t_max, t_step;
};

/* A series whose values are all missing (a kernel column of an op the
 * kernel does not see) is neither drawn nor listed. */
static bool has_values(const struct series *s)
{
	for (size_t k = 0; k < s->n; k++)
		if (!isnan(s->v[k]))
			return true;
	return false;
}

static double frame_x(const struct frame *f, double t)
{
	return LEFT + (t - f->t_min) / (f->t_max - f->t_min) * PANEL_W;
}

static double frame_y(const struct frame *f, double v)
{
	double k = f->panel == PANEL_LATENCY ? (log10(v) - f->lo) / (f->hi - f->lo)
					     : (v - f->lo) / (f->hi - f->lo);
	return f->top + f->height - k * f->height;
}

static void x_axis(FILE *out, const struct frame *f)
{
	double step = f->t_step;
	char label[32];

	int n = 0;
	for (double t = ceil(f->t_min / step) * step; t <= f->t_max + step * 1e-9 && n < PLOT_MAX_TICKS;
	     t += step, n++) {
		double x = frame_x(f, t);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
			x, f->top, x, f->top + f->height);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
			x, f->top + f->height, x, f->top + f->height + 4);
		plot_format_elapsed(t, label, sizeof(label));
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
			f->top + f->height + 16, label);
	}
}

static void y_axis(FILE *out, const struct frame *f)
{
	char label[32];

	if (f->panel == PANEL_LATENCY) {
		for (int e = (int)f->lo; e <= (int)f->hi; e++) {
			for (int m = 1; m < 10; m++) {
				double v = m * pow(10, e), y;
				if (log10(v) > f->hi + 1e-9)
					break;
				y = frame_y(f, v);
				fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
					     "stroke=\"%s\"/>\n", LEFT, y, LEFT + PANEL_W, y,
					m == 1 ? "#d0d0d0" : "#f0f0f0");
				if (m != 1)
					continue;
				plot_format_latency(v, label, sizeof(label));
				fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
					LEFT - 6, y + 4, label);
			}
		}
		return;
	}
	double step = plot_nice_step(f->hi - f->lo, 5);
	int n = 0;
	for (double v = f->lo; v <= f->hi + step * 1e-9 && n < PLOT_MAX_TICKS; v += step, n++) {
		double y = frame_y(f, v);
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			LEFT, y, LEFT + PANEL_W, y, v == f->lo ? "#333" : "#e4e4e4");
		plot_format_rate(v, label, sizeof(label));
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6,
			y + 4, label);
	}
}

struct pen {
	FILE *out;
	bool down;
	size_t in_segment;
};

static void pen_point(struct pen *pen, double x, double y)
{
	fprintf(pen->out, "%s%.1f %.1f", pen->down ? " L" : " M", x, y);
	pen->down = true;
	pen->in_segment++;
}

static void pen_lift(struct pen *pen)
{
	/* A lone point is a dot (round caps), not nothing. */
	if (pen->down && pen->in_segment == 1)
		fputs(" h0.1", pen->out);
	pen->down = false;
	pen->in_segment = 0;
}

/* One point per pixel column: the highest latency, or the mean rate. */
static void series_path(FILE *out, const struct series *s, const struct frame *f)
{
	struct pen pen = { .out = out };
	long col = LONG_MIN;
	double agg = 0, x_at = 0;
	size_t agg_n = 0;

	for (size_t i = 0; i < s->n; i++) {
		bool gap = i > 0 && s->t0[i] > s->t1[i - 1] + 0.5 * (s->t1[i - 1] - s->t0[i - 1]) + 1e-3;
		double x = frame_x(f, s->t1[i]);
		long c = (long)floor(x);

		if (agg_n && (gap || isnan(s->v[i]) || c != col)) {
			pen_point(&pen, x_at, frame_y(f, f->panel == PANEL_RATE ? agg / agg_n : agg));
			agg_n = 0;
		}
		if (gap || isnan(s->v[i]))
			pen_lift(&pen);
		if (isnan(s->v[i]))
			continue;
		if (agg_n == 0) {
			agg = s->v[i];
			col = c;
		} else if (f->panel == PANEL_RATE) {
			agg += s->v[i];
		} else if (s->v[i] > agg) {
			agg = s->v[i];
		}
		agg_n++;
		x_at = x;
	}
	if (agg_n)
		pen_point(&pen, x_at, frame_y(f, f->panel == PANEL_RATE ? agg / agg_n : agg));
	pen_lift(&pen);
}

static void draw_panel(FILE *out, const struct plot *p, const char *section, struct frame *f,
		       const char *title, int clip_id)
{
	fprintf(out, "<g class=\"panel\" data-panel=\"%s\">\n",
		f->panel == PANEL_LATENCY ? "latency" : f->panel == PANEL_RATE ? "throughput" : "host");
	fprintf(out, "<clipPath id=\"clip%d\"><rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"/>"
		     "</clipPath>\n", clip_id, LEFT, f->top - 2, PANEL_W, f->height + 4);
	fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#fcfcfc\" "
		     "stroke=\"none\"/>\n", LEFT, f->top, PANEL_W, f->height);
	y_axis(out, f);
	x_axis(out, f);
	fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"none\" "
		     "stroke=\"#333\"/>\n", LEFT, f->top, PANEL_W, f->height);
	fprintf(out, "<text x=\"%d\" y=\"%.1f\" transform=\"rotate(-90 %d %.1f)\" "
		     "text-anchor=\"middle\" font-size=\"12\">",
		18, f->top + f->height / 2, 18, f->top + f->height / 2);
	put_escaped(out, title);
	fputs("</text>\n", out);
	fprintf(out, "<g clip-path=\"url(#clip%d)\" fill=\"none\" stroke-linejoin=\"round\" "
		     "stroke-linecap=\"round\">\n", clip_id);
	for (size_t i = 0; i < p->n; i++) {
		const struct series *s = &p->s[i];
		if (s->panel != f->panel || strcmp(s->section, section) != 0 || !has_values(s))
			continue;
		fputs("<path data-series=\"", out);
		put_escaped(out, s->id);
		fprintf(out, "\" stroke=\"%s\" stroke-width=\"%.1f\"", palette[s->op_index % PALETTE_N],
			s->width);
		if (s->dash)
			fprintf(out, " stroke-dasharray=\"%s\"", s->dash);
		if (s->opacity < 1)
			fprintf(out, " stroke-opacity=\"%.2f\"", s->opacity);
		fputs(" d=\"", out);
		series_path(out, s, f);
		fputs("\"><title>", out);
		put_escaped(out, s->section);
		fputc(' ', out);
		put_escaped(out, s->label);
		fputs("</title></path>\n", out);
	}
	/* Drift alarms: a red line across the latency panel. */
	for (size_t i = 0; f->panel == PANEL_LATENCY && i < p->n_marks; i++) {
		const struct plot_mark *m = &p->marks[i];
		if (strcmp(m->section, section) != 0)
			continue;
		double x = frame_x(f, m->t);
		fprintf(out, "<line class=\"drift\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			     "stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"><title>",
			x, f->top, x, f->top + f->height);
		put_escaped(out, m->text);
		fputs("</title></line>\n", out);
	}
	fputs("</g>\n</g>\n", out);
}

/* The value range of a section's panel; false when it has no value. */
static bool panel_range(const struct plot *p, const char *section, enum panel panel, double *lo,
			double *hi)
{
	bool any = false;

	for (size_t i = 0; i < p->n; i++) {
		const struct series *s = &p->s[i];
		if (s->panel != panel || strcmp(s->section, section) != 0)
			continue;
		for (size_t k = 0; k < s->n; k++) {
			if (isnan(s->v[k]))
				continue;
			if (!any || s->v[k] < *lo)
				*lo = s->v[k];
			if (!any || s->v[k] > *hi)
				*hi = s->v[k];
			any = true;
		}
	}
	return any;
}

static size_t legend(FILE *out, const struct plot *p, const char *section, double top)
{
	size_t lines = 0;
	double extra = 0;

	fputs("<g class=\"legend\">\n", out);
	for (int panel = PANEL_LATENCY; panel <= PANEL_HOST; panel++) {
		bool header = false;
		for (size_t i = 0; i < p->n; i++) {
			const struct series *s = &p->s[i];
			double y;
			if (s->panel != (enum panel)panel || strcmp(s->section, section) != 0 ||
			    !has_values(s))
				continue;
			if (!header) {
				if (lines)
					extra += 8;
				y = top + lines * LEGEND_LINE + extra;
				fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n",
					LEGEND_X, y + 4, panel == PANEL_LATENCY ? "latency"
							 : panel == PANEL_RATE ? "throughput" : "host %");
				lines++;
				header = true;
			}
			y = top + lines * LEGEND_LINE + extra;
			fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
				     "stroke-width=\"%.1f\"", LEGEND_X, y, LEGEND_X + 30, y,
				palette[s->op_index % PALETTE_N], s->width + 0.4);
			if (s->dash)
				fprintf(out, " stroke-dasharray=\"%s\"", s->dash);
			if (s->opacity < 1)
				fprintf(out, " stroke-opacity=\"%.2f\"", s->opacity);
			fprintf(out, "/>\n<text x=\"%d\" y=\"%.1f\" data-legend=\"", LEGEND_X + 38, y + 4);
			put_escaped(out, s->id);
			fputs("\">", out);
			put_escaped(out, s->label);
			fputs("</text>\n", out);
			lines++;
		}
	}
	fputs("</g>\n", out);
	return lines;
}

int plot_write_svg(const struct plot *p, FILE *out)
{
	const char **sections = calloc(p->n ? p->n : 1, sizeof(char *));
	size_t n_sections = 0;
	double height, y;
	int clip = 0;

	if (!sections)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		bool seen = false;
		for (size_t k = 0; k < n_sections && !seen; k++)
			seen = strcmp(sections[k], p->s[i].section) == 0;
		if (!seen)
			sections[n_sections++] = p->s[i].section;
	}

	double section_h = SECTION_HEAD + LATENCY_H + AXIS_H + RATE_H + AXIS_H + 16;
	height = TITLE_H + 10;
	for (size_t k = 0; k < n_sections; k++) {
		size_t entries = 2;
		for (size_t i = 0; i < p->n; i++)
			entries += strcmp(p->s[i].section, sections[k]) == 0;
		double legend_h = SECTION_HEAD + entries * LEGEND_LINE + 16;
		double lo = 0, hi = 0;
		double host_h = panel_range(p, sections[k], PANEL_HOST, &lo, &hi) ? HOST_H + AXIS_H : 0;
		height += (legend_h > section_h + host_h ? legend_h : section_h + host_h) +
			  SECTION_GAP;
	}
	if (n_sections == 0)
		height += 60;

	double t_min = p->any_point ? p->t_min : 0, t_max = p->any_point ? p->t_max : 1;
	if (t_max - t_min < 1e-6)
		t_max = t_min + 1;
	/* The axis runs from tick to tick. */
	double t_step = time_step(t_max - t_min, 10);
	t_min = floor(t_min / t_step + 1e-9) * t_step;
	t_max = ceil(t_max / t_step - 1e-9) * t_step;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		     "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Helvetica, "
		     "Arial, sans-serif\" font-size=\"11\" fill=\"#222\">\n", WIDTH, height, WIDTH,
		height);
	fputs("<title>", out);
	put_escaped(out, p->title);
	fputs("</title>\n<desc>Latency (p50, p99, p99.9; log scale) and throughput per interval, "
	      "per workload and op, written by soakctl plot.</desc>\n", out);
	fprintf(out, "<rect width=\"%d\" height=\"%.0f\" fill=\"white\"/>\n", WIDTH, height);
	fprintf(out, "<text x=\"%d\" y=\"26\" font-size=\"18\" font-weight=\"bold\">", LEFT);
	put_escaped(out, p->title);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"46\" fill=\"#555\">latency from each op's intended "
		     "start (log scale) and ops per second, per interval; x: time since the run "
		     "started</text>\n", LEFT);
	if (n_sections == 0)
		fprintf(out, "<text x=\"%d\" y=\"%d\">no intervals to plot</text>\n", LEFT,
			TITLE_H + 30);

	y = TITLE_H + 10;
	for (size_t k = 0; k < n_sections; k++) {
		struct frame lat = { .top = y + SECTION_HEAD, .height = LATENCY_H,
				     .panel = PANEL_LATENCY, .t_min = t_min, .t_max = t_max,
				     .t_step = t_step };
		struct frame rate = { .top = lat.top + LATENCY_H + AXIS_H, .height = RATE_H,
				      .panel = PANEL_RATE, .t_min = t_min, .t_max = t_max,
				      .t_step = t_step };
		double lo = 0, hi = 0;

		if (panel_range(p, sections[k], PANEL_LATENCY, &lo, &hi)) {
			lat.lo = floor(log10(lo));
			lat.hi = ceil(log10(hi));
		} else {
			lat.lo = 1;
			lat.hi = 3;
		}
		if (lat.hi - lat.lo < 1)
			lat.hi = lat.lo + 1;
		lo = hi = 0;
		panel_range(p, sections[k], PANEL_RATE, &lo, &hi);
		rate.lo = 0;
		double step = plot_nice_step(hi > 0 ? hi : 1, 5);
		rate.hi = hi > 0 ? ceil(hi / step) * step : 1;
		if (rate.hi < hi * 1.02)
			rate.hi += step;

		fputs("<g class=\"section\" data-workload=\"", out);
		put_escaped(out, sections[k]);
		fprintf(out, "\">\n<text x=\"%d\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">"
			     "workload ", LEFT, y + 18);
		put_escaped(out, sections[k]);
		fputs("</text>\n", out);
		draw_panel(out, p, sections[k], &lat, "latency", clip++);
		draw_panel(out, p, sections[k], &rate, "ops/s", clip++);
		/* The host beside the numbers: shares of the CPUs or of the
		 * interval, 0 to 100. */
		struct frame host = { .top = rate.top + RATE_H + AXIS_H, .height = HOST_H,
				      .panel = PANEL_HOST, .lo = 0, .hi = 100, .t_min = t_min,
				      .t_max = t_max, .t_step = t_step };
		double host_h = 0;
		lo = hi = 0;
		if (panel_range(p, sections[k], PANEL_HOST, &lo, &hi)) {
			draw_panel(out, p, sections[k], &host, "host %", clip++);
			host_h = HOST_H + AXIS_H;
		}
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">time "
			     "since the run started</text>\n", LEFT + PANEL_W / 2.0,
			rate.top + RATE_H + host_h + 30);
		size_t lines = legend(out, p, sections[k], lat.top + 6);
		fputs("</g>\n", out);

		double legend_h = SECTION_HEAD + (lines + 2) * LEGEND_LINE + 16;
		double used = SECTION_HEAD + LATENCY_H + AXIS_H + RATE_H + AXIS_H + host_h + 16;
		y += (legend_h > used ? legend_h : used) + SECTION_GAP;
	}
	fputs("</svg>\n", out);
	free(sections);
	return ferror(out) ? -EIO : 0;
}
