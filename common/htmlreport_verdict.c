// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report's verdict (htmlreport_int.h): which ops are judged, and
 * what makes the run FAIL, INCONCLUSIVE, NO DATA or PASS.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "htmlreport_int.h"
#include "report.h"
#include "runlog.h"

/* An op the workload has but never scheduled (a mix without it): no row,
 * no panels. */
bool html_op_unused(const struct rm_op *o)
{
	return !o->count && !o->errors && !o->missed && !(o->target_ops > 0);
}

/* A read op that ran: one a reload's new definition dropped is kept
 * empty, and must not leave the new definition's ops unjudged. */
bool html_has_read(const struct rm_workload *w)
{
	const struct rm_op *o = runmodel_op(w, "read");
	return o && !html_op_unused(o);
}

/* The worst slice's share over threshold j, in percent. */
double html_worst_pct(const struct rm_op *o, uint64_t threshold_ns)
{
	struct hist *scratch = hist_new();
	double worst = 0;

	for (size_t i = 0; scratch && i < o->n_slices; i++) {
		const struct hist *h = runmodel_slice(o, i, scratch);
		if (h && h->count) {
			double p = report_pct_above(h, threshold_ns);
			if (p > worst)
				worst = p;
		}
	}
	hist_delete(scratch);
	return worst;
}

bool html_op_passes(const struct rm_op *o, const struct report_options *ro)
{
	for (size_t j = 0; j < ro->n_thresholds; j++)
		if (report_over_limit(ro, j, html_worst_pct(o, ro->thresholds_ns[j])))
			return false;
	return true;
}

/* Verification classes that are not failures: what was and was not looked at. */
static bool verify_failure(const struct rm_counter *c)
{
	return c->value && strcmp(c->name, "checked") != 0 && strcmp(c->name, "unchecked") != 0 &&
	       strcmp(c->name, "uncertain") != 0 && strcmp(c->name, "flush_failed") != 0;
}


/* The whole run's share over a threshold in percent: at most the worst
 * slice's, so over a limit it shows the limit broken. */
static bool run_over_limit(const struct rm_op *o, const struct report_options *ro)
{
	for (size_t j = 0; o->lat && o->lat->count && j < ro->n_thresholds; j++)
		if (report_over_limit(ro, j, report_pct_above(o->lat, ro->thresholds_ns[j])))
			return true;
	return false;
}

/* As soakctl report judges, and more: a judged op over a limit fails, and
 * so do failed ops of a judged op, wrong data read back by any op (a
 * missed op is judged by its wait, in the latency histograms) and a
 * workload that failed; soakd's own lateness, intervals in no slice and
 * ops with no slices at all make a pass INCONCLUSIVE. */
struct html_verdict html_run_verdict(const struct runmodel *m, const struct report_options *ro)
{
	struct html_verdict v = { .slices_dropped = m->slices_dropped };

	for (size_t i = 0; i < m->n; i++) {
		v.late_intervals += m->w[i]->n_late;
		/* Failed for soakd's own lateness (its reason says so): no
		 * verdict on the device, INCONCLUSIVE; failed otherwise, FAIL. */
		if (strcmp(m->w[i]->state, "failed") == 0) {
			if (strstr(m->w[i]->reason, RUNLOG_REASON_SOAKD_LATE))
				v.soakd_failed++;
			else
				v.failed_workloads++;
		}
		for (size_t k = 0; k < m->w[i]->n_ops; k++) {
			const struct rm_op *o = &m->w[i]->ops[k];
			bool wrong = o->corrupt > 0;
			for (size_t c = 0; c < o->n_verify; c++)
				wrong |= verify_failure(&o->verify[c]);
			v.wrong_data += wrong;
			for (size_t c = 0; c < o->n_verify; c++)
				v.failed_flushes += o->verify[c].value &&
						    strcmp(o->verify[c].name, "flush_failed") == 0;
			if (html_op_unused(o) || !report_op_judged(ro, html_has_read(m->w[i]), o->name))
				continue;
			v.judged++;
			if (!o->n_slices && (o->count || o->missed)) {
				v.unsliced++;
				v.over_limit += run_over_limit(o, ro);
			} else {
				v.over_limit += !html_op_passes(o, ro);
			}
			v.failed_ops += o->errors > 0;
		}
	}
	return v;
}

const char *html_verdict_word(const struct html_verdict *v)
{
	if (v->over_limit || v->failed_ops || v->wrong_data || v->failed_workloads ||
	    v->failed_flushes)
		return "FAIL";
	if (!v->judged)
		return "NO DATA";
	return v->late_intervals || v->soakd_failed || v->unsliced || v->slices_dropped
		       ? "INCONCLUSIVE" : "PASS";
}

void html_verdict_reasons(FILE *out, const struct html_verdict *v)
{
	const char *sep = "";

	if (v->failed_workloads)
		fprintf(out, "%s%d workload%s failed", sep, v->failed_workloads,
			v->failed_workloads == 1 ? "" : "s"), sep = "; ";
	if (!v->judged) {
		fprintf(out, "%sno intervals recorded.", sep);
		return;
	}
	if (v->over_limit)
		fprintf(out, "%s%d judged op%s over a limit", sep, v->over_limit,
			v->over_limit == 1 ? "" : "s"), sep = "; ";
	if (v->failed_ops)
		fprintf(out, "%sfailed ops in %d judged op%s", sep, v->failed_ops,
			v->failed_ops == 1 ? "" : "s"), sep = "; ";
	if (v->wrong_data)
		fprintf(out, "%swrong data read back by %d op%s", sep, v->wrong_data,
			v->wrong_data == 1 ? "" : "s"), sep = "; ";
	if (v->failed_flushes)
		fprintf(out, "%sfailed cache flushes in %d op%s: the writes may not be durable", sep,
			v->failed_flushes, v->failed_flushes == 1 ? "" : "s"), sep = "; ";
	if (v->late_intervals)
		fprintf(out, "%ssoakd itself was late in %" PRIu64 " interval%s: its latencies there "
			     "are not the device's", sep, v->late_intervals,
			v->late_intervals == 1 ? "" : "s"), sep = "; ";
	if (v->soakd_failed)
		fprintf(out, "%s%d workload%s failed because soakd itself was late, not for the "
			     "device", sep, v->soakd_failed, v->soakd_failed == 1 ? "" : "s"), sep = "; ";
	if (v->unsliced)
		fprintf(out, "%s%d judged op%s came with totals only (a dump, not a run directory "
			     "or log): the limits hold per slice, which totals cannot show kept",
			sep, v->unsliced, v->unsliced == 1 ? "" : "s"), sep = "; ";
	if (v->slices_dropped)
		fprintf(out, "%s%" PRIu64 " op interval%s past the report's %d slices (use a "
			     "longer --slice) %s judged by no slice", sep, v->slices_dropped,
			v->slices_dropped == 1 ? "" : "s", RM_MAX_SLICES,
			v->slices_dropped == 1 ? "is" : "are"), sep = "; ";
	if (!*sep)
		fputs("every judged op stayed within its limits in every slice; none failed and no "
		      "data read back was wrong", out);
	fputs(".", out);
}

