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

#include "plot_int.h"

#define MAX_COLUMNS 256

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
		/* The host beside the numbers: "host_cpu_iowait_pct" -> "cpu_iowait". */
		if (strncmp(names[c], "host_", 5) == 0 && ends_with(names[c], "_pct") &&
		    strlen(names[c]) < 60 && k < max) {
			m[k] = (struct metric){ .column = c, .panel = PANEL_HOST, .width = 1.3,
						.opacity = 0.9 };
			snprintf(m[k].id, sizeof(m[k].id), "%.*s", (int)strlen(names[c]) - 9,
				 names[c] + 5);
			snprintf(m[k].label, sizeof(m[k].label), "%.56s %%", m[k].id);
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
	ssize_t c_workload, c_op, c_start, c_end, c_target, c_drift;
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
	c_drift = column_of(names, n_names, "drift");
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
				/* The host's series are the workload's, not an op's. */
				const char *series_op = metrics[k].panel == PANEL_HOST ? "host" : op;
				snprintf(id, sizeof(id), "%s/%s/%s", section, series_op, metrics[k].id);
				for (size_t i = 0; i < p->n && !found; i++)
					if (strcmp(p->s[i].id, id) == 0) {
						g->series[k] = i;
						found = true;
					}
				if (!found && add_series(p, section, series_op, &metrics[k],
							 &g->series[k]) < 0)
					goto nomem;
				/* A colour per host series: they share one "op". */
				if (!found && metrics[k].panel == PANEL_HOST) {
					size_t nth = 0;
					for (size_t j = 0; j < k; j++)
						nth += metrics[j].panel == PANEL_HOST;
					p->s[g->series[k]].op_index = nth;
				}
			}
		}
		for (size_t k = 0; k < n_metrics; k++) {
			double v;
			/* Before the host's first interval its columns are empty. */
			if (metrics[k].panel == PANEL_HOST && !fields[metrics[k].column][0])
				v = NAN;
			else if (!parse_number(fields[metrics[k].column], &v)) {
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
		if (c_drift >= 0 && fields[c_drift][0] && p->n_marks < PLOT_MAX_MARKS) {
			struct plot_mark *m = &p->marks[p->n_marks++];
			snprintf(m->section, sizeof(m->section), "%s", section);
			snprintf(m->text, sizeof(m->text), "drift: %.60s %.60s", op, fields[c_drift]);
			m->t = t1;
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
