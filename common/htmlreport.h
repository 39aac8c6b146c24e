/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HTMLREPORT_H
#define SOAK_HTMLREPORT_H

#include <stdio.h>

#include <jansson.h>

#include "report.h"
#include "runmodel.h"

/*
 * soakctl report --html: one self-contained HTML file of a run, to mail or
 * archive.  Inline CSS and SVG only: no script, no external font, image or
 * style, so it reads the same offline, with JavaScript disabled and on
 * paper (@media print).
 *
 * The verdict comes first: per workload and op the ACT table (the worst
 * slice's share over each threshold against its limit, by report.c's
 * rule), missed ops, errors, every nonzero verification class, the
 * certification's answer and steps with their verdicts where the run has
 * one, generator_late intervals and drift alarms.  Then per workload and op:
 * latency over time (p50, p99, p99.9, max; log scale) beside the kernel's
 * block or TCP series, throughput against target, errors and misses, and a
 * percentile spectrum of the whole run and the worst slice.  Host panels,
 * the configuration (values of secret-looking keys never shown), device
 * facts, soakd's version, restarts and gaps close it; a capacity search's
 * curve (chart and table) and answer come before the host panels.
 *
 * Elements the tests look for: id="verdict" with data-verdict="PASS|FAIL|
 * INCONCLUSIVE|NO DATA",
 * per workload a <section class="workload" data-workload="NAME">, and in
 * the tables td[data-k="WORKLOAD/OP/KEY"] holding the plain number.
 */

struct html_report_input {
	const struct runmodel *m;
	const struct report_options *o;
	const char *title;
	const char *source;         /* where it was read from, shown in the header */
	json_t *plan;               /* the resolved plan (plan.json), or NULL */
	json_t *devices;            /* device facts (devices.json), or NULL */
};

/* Returns 0 when the verdict is PASS, 1 when it is FAIL, INCONCLUSIVE
 * (soakd itself was late: its latencies there are not the device's, as
 * soakctl report says; or no slice to judge a limit by) or NO DATA; -EIO
 * when the output could not be written. */
int html_report_write(FILE *out, const struct html_report_input *in);

/* The page's frame, shared with soakctl cmp --html. */
void html_page_begin(FILE *out, const char *title);
void html_page_end(FILE *out);

/* Whether a configuration key may hold a secret: its value is never shown. */
bool html_secret_key(const char *key);

#endif
