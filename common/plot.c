// SPDX-License-Identifier: GPL-2.0-only
#include "plot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Geometry, in SVG user units (pixels). */
#define WIDTH 1120
#define LEFT 84                 /* room for the y tick labels */
#define PANEL_W 760
#define LEGEND_X (LEFT + PANEL_W + 28)
#define TITLE_H 58
#define SECTION_HEAD 28
#define LATENCY_H 240
#define RATE_H 150
#define AXIS_H 34               /* x tick labels under a panel */
#define SECTION_GAP 26
#define LEGEND_LINE 16

#define MAX_COLUMNS 256

enum panel { PANEL_LATENCY, PANEL_RATE };

struct series {
	char *section, *op, *id, *label;
	enum panel panel;
	const char *dash;       /* stroke-dasharray, NULL: solid */
	double width, opacity;
	size_t op_index;        /* colour: the op's place in its section */
	size_t n, cap;
	double *t0, *t1, *v;    /* an interval's start, end (s) and value; NAN: none */
};

struct plot {
	char *title;
	struct series *s;
	size_t n, cap;
	double t_min, t_max;
	bool any_point;
};

/* What one CSV column becomes. */
struct metric {
	size_t column;
	enum panel panel;
	char id[64], label[64];
	const char *dash;
	double width, opacity;
};

/* A (section, op) seen in the CSV and its series, one per metric. */
struct group {
	char *section, *op;
	size_t *series;
};

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
};
#define PALETTE_N (sizeof(palette) / sizeof(palette[0]))

struct plot *plot_new(const char *title)
{
	struct plot *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->title = strdup(title ? title : "soakd");
	if (!p->title) {
		free(p);
		return NULL;
	}
	return p;
}

void plot_free(struct plot *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct series *s = &p->s[i];
		free(s->section);
		free(s->op);
		free(s->id);
		free(s->label);
		free(s->t0);
		free(s->t1);
		free(s->v);
	}
	free(p->s);
	free(p->title);
	free(p);
}

size_t plot_series_count(const struct plot *p)
{
	return p->n;
}

static size_t section_op_index(const struct plot *p, const char *section, const char *op)
{
	size_t k = 0;
	const char *seen[PALETTE_N * 8];

	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->s[i].section, section) != 0)
			continue;
		bool known = false;
		for (size_t j = 0; j < k; j++)
			known = known || strcmp(seen[j], p->s[i].op) == 0;
		if (known)
			continue;
		if (strcmp(p->s[i].op, op) == 0)
			return k;
		if (k < sizeof(seen) / sizeof(seen[0]))
			seen[k++] = p->s[i].op;
	}
	return k;
}

static int add_series(struct plot *p, const char *section, const char *op,
		      const struct metric *m, size_t *ret)
{
	struct series *s;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct series *grown = realloc(p->s, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		p->s = grown;
		p->cap = cap;
	}
	size_t op_index = section_op_index(p, section, op);
	s = &p->s[p->n];
	*s = (struct series){ .panel = m->panel, .dash = m->dash, .width = m->width,
			      .opacity = m->opacity, .op_index = op_index };
	if (asprintf(&s->id, "%s/%s/%s", section, op, m->id) < 0) {
		s->id = NULL;
		return -ENOMEM;
	}
	if (asprintf(&s->label, "%s %s", op, m->label) < 0) {
		free(s->id);
		return -ENOMEM;
	}
	s->section = strdup(section);
	s->op = strdup(op);
	if (!s->section || !s->op) {
		free(s->section);
		free(s->op);
		free(s->id);
		free(s->label);
		return -ENOMEM;
	}
	*ret = p->n++;
	return 0;
}

static int add_point(struct series *s, double t0, double t1, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		double *a = realloc(s->t0, cap * sizeof(double));
		if (!a)
			return -ENOMEM;
		s->t0 = a;
		a = realloc(s->t1, cap * sizeof(double));
		if (!a)
			return -ENOMEM;
		s->t1 = a;
		a = realloc(s->v, cap * sizeof(double));
		if (!a)
			return -ENOMEM;
		s->v = a;
		s->cap = cap;
	}
	s->t0[s->n] = t0;
	s->t1[s->n] = t1;
	s->v[s->n] = v;
	s->n++;
	return 0;
}

/* Splits line (modified in place) at commas; returns the field count. */
static size_t split(char *line, char **fields, size_t max)
{
	size_t n = 0;

	for (char *f = line;; f++) {
		if (n < max)
			fields[n] = f;
		n++;
		f = strchr(f, ',');
		if (!f)
			break;
		*f = '\0';
	}
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The metrics a header holds; returns their number. */
static size_t header_metrics(char **names, size_t n, struct metric *m, size_t max)
{
	static const struct {
		const char *column, *id, *label, *dash;
		enum panel panel;
		double width, opacity;
	} known[] = {
		{ "latency_p50_us", "p50", "p50", NULL, PANEL_LATENCY, 1.2, 1 },
		{ "latency_p99_us", "p99", "p99", "7 3", PANEL_LATENCY, 1.6, 1 },
		{ "latency_p999_us", "p999", "p99.9", "2 2", PANEL_LATENCY, 1.6, 1 },
		{ "rate_achieved", "ops_per_s", "ops/s", NULL, PANEL_RATE, 1.5, 1 },
		{ "rate_target", "target_per_s", "target ops/s", "5 4", PANEL_RATE, 1.2, 0.6 },
	};
	size_t k = 0;

	for (size_t c = 0; c < n && c < MAX_COLUMNS && k < max; c++) {
		for (size_t j = 0; j < sizeof(known) / sizeof(known[0]); j++)
			if (strcmp(names[c], known[j].column) == 0) {
				m[k] = (struct metric){ .column = c, .panel = known[j].panel,
							.dash = known[j].dash, .width = known[j].width,
							.opacity = known[j].opacity };
				snprintf(m[k].id, sizeof(m[k].id), "%s", known[j].id);
				snprintf(m[k].label, sizeof(m[k].label), "%s", known[j].label);
				k++;
			}
		/* Kernel latencies as columns: "kernel_blk_p99_us" and the like. */
		if (strncmp(names[c], "kernel", 6) == 0 && ends_with(names[c], "_us") &&
		    strlen(names[c]) < 60) {
			m[k] = (struct metric){ .column = c, .panel = PANEL_LATENCY, .dash = "8 3 2 3",
						.width = 1.3, .opacity = 0.9 };
			snprintf(m[k].id, sizeof(m[k].id), "%.*s", (int)strlen(names[c]) - 3,
				 names[c]);
			snprintf(m[k].label, sizeof(m[k].label), "%s", m[k].id);
			k++;
		}
	}
	return k;
}

static ssize_t column_of(char **names, size_t n, const char *name)
{
	for (size_t c = 0; c < n && c < MAX_COLUMNS; c++)
		if (strcmp(names[c], name) == 0)
			return (ssize_t)c;
	return -1;
}

static bool parse_number(const char *text, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || errno || !isfinite(v))
		return false;
	*ret = v;
	return true;
}

static void free_groups(struct group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].section);
		free(g[i].op);
		free(g[i].series);
	}
	free(g);
}

int plot_add_csv(struct plot *p, const char *csv, const struct plot_filter *filter, char *err,
		 size_t errlen)
{
	char *text = strdup(csv), *line, *next, *names[MAX_COLUMNS], *fields[MAX_COLUMNS];
	struct metric metrics[32];
	struct group *groups = NULL;
	size_t n_names, n_metrics, n_groups = 0, lineno = 1;
	ssize_t c_workload, c_op, c_start, c_end, c_target;
	int r = -EINVAL;

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	next = strchr(text, '\n');
	if (next)
		*next++ = '\0';
	n_names = split(text, names, MAX_COLUMNS);
	if (n_names > MAX_COLUMNS)
		n_names = MAX_COLUMNS;
	c_workload = column_of(names, n_names, "workload");
	c_op = column_of(names, n_names, "op");
	c_start = column_of(names, n_names, "start_s");
	c_end = column_of(names, n_names, "end_s");
	c_target = column_of(names, n_names, "target");
	if (c_workload < 0 || c_op < 0 || c_start < 0 || c_end < 0) {
		snprintf(err, errlen, "the CSV header has no workload, op, start_s and end_s "
				      "columns; is it soakctl dump --format csv?");
		goto out;
	}
	n_metrics = header_metrics(names, n_names, metrics, sizeof(metrics) / sizeof(metrics[0]));
	if (n_metrics == 0) {
		snprintf(err, errlen, "the CSV has no latency or rate columns to plot");
		goto out;
	}

	for (line = next; line && *line; line = next) {
		size_t n_fields;
		double t0, t1;
		struct group *g = NULL;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		n_fields = split(line, fields, MAX_COLUMNS);
		if (n_fields < n_names) {
			snprintf(err, errlen, "line %zu has %zu fields, the header %zu", lineno,
				 n_fields, n_names);
			goto out;
		}
		/* Per-target rows repeat their workload's totals. */
		if (c_target >= 0 && fields[c_target][0])
			continue;
		const char *section = fields[c_workload], *op = fields[c_op];
		if ((filter && filter->workload && strcmp(filter->workload, section) != 0) ||
		    (filter && filter->op && strcmp(filter->op, op) != 0))
			continue;
		if (!parse_number(fields[c_start], &t0) || !parse_number(fields[c_end], &t1) ||
		    t1 < t0) {
			snprintf(err, errlen, "line %zu: bad start_s or end_s", lineno);
			goto out;
		}
		for (size_t i = 0; i < n_groups && !g; i++)
			if (strcmp(groups[i].section, section) == 0 && strcmp(groups[i].op, op) == 0)
				g = &groups[i];
		if (!g) {
			struct group *grown = realloc(groups, (n_groups + 1) * sizeof(*grown));
			if (!grown)
				goto nomem;
			groups = grown;
			g = &groups[n_groups];
			*g = (struct group){ .section = strdup(section), .op = strdup(op),
					     .series = calloc(n_metrics, sizeof(size_t)) };
			n_groups++;
			if (!g->section || !g->op || !g->series)
				goto nomem;
			/* Reuse the series of an earlier plot_add_csv call. */
			for (size_t k = 0; k < n_metrics; k++) {
				char id[256];
				bool found = false;
				snprintf(id, sizeof(id), "%s/%s/%s", section, op, metrics[k].id);
				for (size_t i = 0; i < p->n && !found; i++)
					if (strcmp(p->s[i].id, id) == 0) {
						g->series[k] = i;
						found = true;
					}
				if (!found && add_series(p, section, op, &metrics[k], &g->series[k]) < 0)
					goto nomem;
			}
		}
		for (size_t k = 0; k < n_metrics; k++) {
			double v;
			if (!parse_number(fields[metrics[k].column], &v)) {
				snprintf(err, errlen, "line %zu: column %s is not a number", lineno,
					 names[metrics[k].column]);
				goto out;
			}
			/* No ops, no latency: a break in the line, not a zero. */
			if (metrics[k].panel == PANEL_LATENCY && v <= 0)
				v = NAN;
			if (add_point(&p->s[g->series[k]], t0, t1, v) < 0)
				goto nomem;
		}
		if (!p->any_point || t0 < p->t_min)
			p->t_min = t0;
		if (!p->any_point || t1 > p->t_max)
			p->t_max = t1;
		p->any_point = true;
	}
	r = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	r = -ENOMEM;
out:
	free_groups(groups, n_groups);
	free(text);
	return r;
}

void plot_format_latency(double us, char *buf, size_t len)
{
	if (us < 1)
		snprintf(buf, len, "%g ns", us * 1e3);
	else if (us < 1e3)
		snprintf(buf, len, "%g µs", us);
	else if (us < 1e6)
		snprintf(buf, len, "%g ms", us / 1e3);
	else
		snprintf(buf, len, "%g s", us / 1e6);
}

void plot_format_rate(double v, char *buf, size_t len)
{
	if (v >= 1e6)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%gk", v / 1e3);
	else
		snprintf(buf, len, "%g", v);
}

void plot_format_elapsed(double s, char *buf, size_t len)
{
	unsigned long long t = s > 0 ? (unsigned long long)llround(s) : 0;

	/* Fractions only on short runs' half and tenth seconds. */
	if (s > 0 && s < 60 && fabs(s - (double)t) > 1e-6) {
		snprintf(buf, len, "%.3gs", s);
		return;
	}
	unsigned long long d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, sec = t % 60;

	if (d)
		snprintf(buf, len, h ? "%llud%lluh" : "%llud", d, h);
	else if (h)
		snprintf(buf, len, m ? "%lluh%llum" : "%lluh", h, m);
	else if (m)
		snprintf(buf, len, sec ? "%llum%llus" : "%llum", m, sec);
	else
		snprintf(buf, len, "%llus", sec);
}

double plot_nice_step(double span, int max_ticks)
{
	static const double mult[] = { 1, 2, 5 };

	if (!(span > 0) || max_ticks < 1)
		return 1;
	double raw = span / max_ticks, base = pow(10, floor(log10(raw)));
	for (int e = 0; e < 2; e++, base *= 10)
		for (size_t k = 0; k < 3; k++)
			if (mult[k] * base >= raw)
				return mult[k] * base;
	return base;
}

/* Time steps people count in: seconds, minutes, hours, days. */
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

	for (double t = ceil(f->t_min / step) * step; t <= f->t_max + step * 1e-9; t += step) {
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
	for (double v = f->lo; v <= f->hi + step * 1e-9; v += step) {
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
		f->panel == PANEL_LATENCY ? "latency" : "throughput");
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
	for (int panel = PANEL_LATENCY; panel <= PANEL_RATE; panel++) {
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
					LEGEND_X, y + 4, panel == PANEL_LATENCY ? "latency" : "throughput");
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
		height += (legend_h > section_h ? legend_h : section_h) + SECTION_GAP;
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
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">time "
			     "since the run started</text>\n", LEFT + PANEL_W / 2.0,
			rate.top + RATE_H + 30);
		size_t lines = legend(out, p, sections[k], lat.top + 6);
		fputs("</g>\n", out);

		double legend_h = SECTION_HEAD + (lines + 2) * LEGEND_LINE + 16;
		double used = SECTION_HEAD + LATENCY_H + AXIS_H + RATE_H + AXIS_H + 16;
		y += (legend_h > used ? legend_h : used) + SECTION_GAP;
	}
	fputs("</svg>\n", out);
	free(sections);
	return ferror(out) ? -EIO : 0;
}
