/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The HTML report's later sections (host panels, configuration, device
 * facts, restarts and gaps), written by htmlreport_facts.c for
 * htmlreport.c, and its verdict.  Only the htmlreport*.c files include
 * this.
 */
#ifndef SOAK_HTMLREPORT_INT_H
#define SOAK_HTMLREPORT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "runmodel.h"

void html_report_host(FILE *out, const struct runmodel *m);
/* htmlreport_certify.c: the certification's answer and steps table with
 * their verdicts, and the capacity search's curve (chart and table) and
 * answer; nothing when the run has none. */
void html_report_certify(FILE *out, const struct runmodel *m);
void html_report_search(FILE *out, const struct runmodel *m);
void html_report_facts(FILE *out, const struct runmodel *m, json_t *plan, json_t *devices);

/* htmlreport_verdict.c: the run's verdict, as soakctl report judges, and
 * more. */
struct report_options;
struct html_verdict {
	int judged;
	int over_limit, failed_ops, wrong_data;   /* ops with each */
	int failed_workloads;
	int soakd_failed;          /* workloads failed for soakd's own lateness */
	int failed_flushes;        /* ops with failed cache flushes (verify) */
	/* Judged ops with ops but no slice (a dump's totals): their limits,
	 * per slice, cannot be shown kept; only a whole run over one shows
	 * one broken (the worst slice is at least the run's share). */
	int unsliced;
	uint64_t late_intervals;
	uint64_t slices_dropped;   /* intervals in no slice (runmodel.h) */
};

/* An op the workload has but never scheduled (a mix without it). */
bool html_op_unused(const struct rm_op *o);
/* A read op that ran (ACT judges reads). */
bool html_has_read(const struct rm_workload *w);
/* The worst slice's share of ops over threshold_ns, in percent. */
double html_worst_pct(const struct rm_op *o, uint64_t threshold_ns);
/* Every slice of o within every limit of ro. */
bool html_op_passes(const struct rm_op *o, const struct report_options *ro);
struct html_verdict html_run_verdict(const struct runmodel *m, const struct report_options *ro);
const char *html_verdict_word(const struct html_verdict *v);
/* Why, in a sentence ending in '.'. */
void html_verdict_reasons(FILE *out, const struct html_verdict *v);

#endif
