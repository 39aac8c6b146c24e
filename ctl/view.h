/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_VIEW_H
#define SOAK_CTL_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/*
 * soakctl's views of a run over time: watch (a status table per interval)
 * and plot (an SVG of latency and throughput).  They talk to soakd through
 * soakctl's own request function, so the wire code stays in one place.
 */

struct view_client {
	/* Sends a request and returns 0 with the reply, or soakctl's exit
	 * status (1 refused, 2 no reply) after printing why. */
	int (*request)(void *userdata, json_t *request, json_t **ret_reply);
	/* Prints a status reply as "soakctl status" does. */
	void (*print_status)(json_t *reply);
	void *userdata;
};

/* Until Ctrl-C (exit 0) or until soakd goes away (exit 2, with a message).
 * interval_s 0: once per interval of the run, just after it closes. */
int view_watch(const struct view_client *c, double interval_s);

struct view_plot_options {
	const char *output;            /* NULL: RUN.svg; "-": stdout */
	const char *run_dir;           /* a recorded run instead of soakd */
	const char *const *csv_files;  /* dump/merge CSV files instead of soakd ("-": stdin) */
	int n_csv_files;
	const char *workload, *op;     /* NULL: all */
	uint64_t since_ns, until_ns, slice_ns;  /* passed on to the dump */
};

int view_plot(const struct view_client *c, const struct view_plot_options *o);

#endif
