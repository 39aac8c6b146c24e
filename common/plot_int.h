/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What plot.c (the series read from the CSV) and plot_svg.c (drawing them)
 * share.  Only these two files include this.
 */
#ifndef SOAK_PLOT_INT_H
#define SOAK_PLOT_INT_H

#include <stdbool.h>
#include <stddef.h>

/* Colours: an op's series take the colour of its place in its section. */
#define PALETTE_N ((size_t)10)

/* PANEL_HOST: the host's shares in percent (host_*_pct columns), one
 * series per workload whatever its ops (op "host"). */
enum panel { PANEL_LATENCY, PANEL_RATE, PANEL_HOST };

struct series {
	char *section, *op, *id, *label;
	enum panel panel;
	const char *dash;       /* stroke-dasharray, NULL: solid */
	double width, opacity;
	size_t op_index;        /* colour: the op's place in its section */
	size_t n, cap;
	double *t0, *t1, *v;    /* an interval's start, end (s) and value; NAN: none */
};

/* A drift alarm (the CSV's "drift" column): a mark on its workload's
 * latency panel at the end of the interval it was raised in. */
#define PLOT_MAX_MARKS 256
struct plot_mark {
	char section[64], text[160];
	double t;
};

struct plot {
	char *title;
	struct series *s;
	size_t n, cap;
	double t_min, t_max;
	bool any_point;
	struct plot_mark marks[PLOT_MAX_MARKS];
	size_t n_marks;
};

#endif
