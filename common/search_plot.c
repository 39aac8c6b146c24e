// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search's curve as a self-contained SVG (certify_print.h):
 * latency (log scale) against the open-loop rate, p50, p99 and p99.9 per
 * probe sorted by rate, the target as a dashed line and the answer as a
 * vertical one.  Axis labels use plot.h's formatting.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>

#include "certify_print.h"
#include "plot.h"

#define W 720
#define H 420
#define LEFT 80
#define RIGHT 150
#define TOP 40
#define BOTTOM 50

struct point {
	double rate, us[3];
};

static int by_rate(const void *a, const void *b)
{
	double x = ((const struct point *)a)->rate, y = ((const struct point *)b)->rate;
	return x < y ? -1 : x > y;
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

struct axes {
	double x0, x1, ly0, ly1;   /* rate range; log10 of the latency range */
};

static double px(const struct axes *a, double rate)
{
	return LEFT + (rate - a->x0) / (a->x1 - a->x0) * (W - LEFT - RIGHT);
}

static double py(const struct axes *a, double us)
{
	double l = log10(us > 0.1 ? us : 0.1);
	return TOP + (a->ly1 - l) / (a->ly1 - a->ly0) * (H - TOP - BOTTOM);
}

static void axes_draw(const struct axes *a, FILE *out)
{
	char label[32];
	double step = plot_nice_step(a->x1 - a->x0, 8);

	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		     "stroke=\"#888\"/>\n", LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
	int n = 0;
	for (double x = ceil(a->x0 / step) * step; x <= a->x1 + step / 1e6 && n < PLOT_MAX_TICKS;
	     x += step, n++) {
		plot_format_rate(x, label, sizeof(label));
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			px(a, x), H - BOTTOM + 18, label);
	}
	n = 0;
	for (double l = ceil(a->ly0); l <= a->ly1 && n < PLOT_MAX_TICKS; l += 1, n++) {
		plot_format_latency(pow(10, l), label, sizeof(label));
		fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			LEFT, W - RIGHT, py(a, pow(10, l)), py(a, pow(10, l)), LEFT - 6,
			py(a, pow(10, l)) + 4, label);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ops/s (open loop)</text>\n",
		(W - RIGHT + LEFT) / 2, H - 12);
}

int search_plot_svg(json_t *search, const char *title, FILE *out)
{
	static const char *const names[3] = { "p50", "p99", "p99.9" };
	static const char *const keys[3] = { "p50_us", "p99_us", "p999_us" };
	static const char *const colours[3] = { "#1f77b4", "#d62728", "#9467bd" };
	json_t *curve = json_object_get(search, "curve"), *v;
	size_t n = json_array_size(curve), i;
	struct axes a = { .x0 = 0, .x1 = 0, .ly0 = 1e9, .ly1 = -1e9 };

	if (!n)
		return -ENOENT;
	struct point *pts = calloc(n, sizeof(*pts));
	if (!pts)
		return -ENOMEM;
	json_array_foreach(curve, i, v) {
		pts[i].rate = num(v, "rate");
		for (int k = 0; k < 3; k++) {
			pts[i].us[k] = num(v, keys[k]);
			double l = log10(pts[i].us[k] > 0.1 ? pts[i].us[k] : 0.1);
			a.ly0 = l < a.ly0 ? l : a.ly0;
			a.ly1 = l > a.ly1 ? l : a.ly1;
		}
		a.x1 = pts[i].rate > a.x1 ? pts[i].rate : a.x1;
	}
	qsort(pts, n, sizeof(*pts), by_rate);
	double target = num(search, "below_us");
	double lt = log10(target > 0.1 ? target : 0.1);
	a.ly0 = floor(fmin(a.ly0, lt));
	a.ly1 = ceil(fmax(a.ly1, lt) + 0.01);
	a.x1 = a.x1 > 0 ? a.x1 * 1.05 : 1;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		     "width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		     "<text x=\"%d\" y=\"24\" font-size=\"15\">", W, H, LEFT);
	for (const char *c = title; c && *c; c++)   /* the run's name: escape what XML needs */
		fputs(*c == '<' ? "&lt;" : *c == '&' ? "&amp;" : *c == '>' ? "&gt;" : (char[]){ *c, 0 },
		      out);
	fprintf(out, ": latency against rate</text>\n");
	axes_draw(&a, out);
	fprintf(out, "<line data-series=\"target\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
		     "stroke=\"#2ca02c\" stroke-dasharray=\"6,4\"/>\n", LEFT, W - RIGHT, py(&a, target),
		py(&a, target));
	json_t *answer = json_object_get(json_object_get(search, "answer"), "answer_rate");
	/* A search given up has no answer: its highest rate below so far
	 * is drawn dotted, under another name. */
	bool gave_up = json_is_true(json_object_get(json_object_get(search, "answer"), "gave_up"));
	if (json_is_number(answer))
		fprintf(out, "<line data-series=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
			     "stroke=\"#2ca02c\"%s/>\n", gave_up ? "below-so-far" : "answer",
			px(&a, json_number_value(answer)), px(&a, json_number_value(answer)), TOP,
			H - BOTTOM, gave_up ? " stroke-dasharray=\"2,3\"" : "");
	for (int k = 0; k < 3; k++) {
		fprintf(out, "<path data-series=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"",
			names[k], colours[k]);
		for (i = 0; i < n; i++)
			fprintf(out, "%s%.1f %.1f", i ? " L" : "M", px(&a, pts[i].rate),
				py(&a, pts[i].us[k]));
		fprintf(out, "\"/>\n");
		for (i = 0; i < n; i++)
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				px(&a, pts[i].rate), py(&a, pts[i].us[k]), colours[k]);
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", W - RIGHT + 12,
			TOP + 16 + 18 * k, colours[k], names[k]);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#2ca02c\">target</text>\n</svg>\n",
		W - RIGHT + 12, TOP + 16 + 18 * 3);
	free(pts);
	return ferror(out) ? -EIO : 0;
}
