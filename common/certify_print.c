// SPDX-License-Identifier: GPL-2.0-only
#include "certify_print.h"

#include <stdbool.h>
#include <string.h>

#include "runlog.h"

/* A string of the record, its control characters as '?': read from a log
 * copied from elsewhere, it could send escape sequences to the reader's
 * terminal.  Up to eight in one printf. */
static const char *text(json_t *obj, const char *key, const char *fallback)
{
	static char bufs[8][1024];
	static unsigned next;
	const char *s = json_string_value(json_object_get(obj, key));

	if (!s)
		return fallback;
	char *b = bufs[next++ % 8];
	runlog_clean_name(b, sizeof(bufs[0]), s);
	return b;
}

static double num(json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

void certify_print_status(json_t *c, FILE *out)
{
	json_t *v;
	size_t i;

	if (!json_is_object(c))
		return;
	if (json_object_get(c, "answer")) {
		fprintf(out, "\ncertify: over after %zu step(s): the answer is %s (%s)\n",
			json_array_size(json_object_get(c, "verdicts")),
			text(c, "answer", "none"),
			text(c, "answer_why", ""));
	} else {
		bool confirming = strcmp(text(c, "state", ""), "confirming") == 0;
		fprintf(out, "\ncertify: %sstep %.0f of %.0f (%s, %.1f ops/s), %.0f s of %.0f s held\n",
			confirming ? "confirming " : "", num(c, "step"), num(c, "of"),
			text(c, "load", "?"), num(c, "rate"), num(c, "held_s"), num(c, "hold_s"));
	}
	json_array_foreach(json_object_get(c, "verdicts"), i, v)
		fprintf(out, "  %s %-3.0f %-6s %10.1f/s  %s: %s\n",
			json_is_true(json_object_get(v, "confirm")) ? "confirm" : "step",
			num(v, "step"), text(v, "load", "?"), num(v, "rate"),
			text(v, "verdict", "?"), text(v, "why", ""));
}

/* "1 ms" columns as the report's: whole ms as integers. */
static void threshold_heads(json_t *thresholds, FILE *out)
{
	json_t *t;
	size_t i;

	json_array_foreach(thresholds, i, t) {
		char head[32];
		snprintf(head, sizeof(head), ">%gms%%", json_number_value(t));
		fprintf(out, "  %9s", head);
	}
}

static void table(json_t *workloads, size_t n_thresholds, const char *prefix, FILE *out)
{
	json_t *w, *op, *pct;
	const char *name;
	size_t i, t;

	json_array_foreach(workloads, i, w) {
		json_object_foreach(json_object_get(w, "ops"), name, op) {
			fprintf(out, "%s%-10s %-12s %10.0f %7.0f %7.0f %9.1f", prefix,
				text(w, "workload", "?"), name, num(op, "count"), num(op, "errors"),
				num(op, "missed"), num(op, "p99_us"));
			json_array_foreach(json_object_get(op, "over_pct"), t, pct)
				fprintf(out, "  %9.3f", json_number_value(pct));
			for (t = json_array_size(json_object_get(op, "over_pct")); t < n_thresholds; t++)
				fprintf(out, "  %9s", "-");
			fprintf(out, "%s\n", json_is_true(json_object_get(op, "judged")) ? "" : "  (not judged)");
		}
		if (num(w, "generator_late") > 0)
			fprintf(out, "%s%-10s generator_late in %.0f of %.0f intervals\n", prefix,
				text(w, "workload", "?"), num(w, "generator_late"), num(w, "intervals"));
	}
}

void certify_print_report(json_t *c, FILE *out)
{
	json_t *thresholds = json_object_get(c, "thresholds_ms");
	json_t *limits = json_object_get(c, "limits_pct");
	json_t *answer = json_object_get(c, "answer"), *v, *l;
	size_t i, n = json_array_size(thresholds);

	if (!json_is_object(c))
		return;
	fprintf(out, "\ncertification: limits");
	json_array_foreach(limits, i, l) {
		if (json_is_number(l))
			fprintf(out, "%s %g%% over %g ms", i ? "," : "", json_number_value(l),
				json_number_value(json_array_get(thresholds, i)));
	}
	fprintf(out, " (missed ops count as over every threshold)\n");
	fprintf(out, "%-5s %-7s %12s  %-7s %-10s %-12s %10s %7s %7s %9s", "STEP", "LOAD", "RATE/s",
		"VERDICT", "WORKLOAD", "OP", "COUNT", "ERRORS", "MISSED", "P99(us)");
	threshold_heads(thresholds, out);
	fputc('\n', out);
	json_array_foreach(json_object_get(c, "steps"), i, v) {
		char prefix[64], step[16];
		/* "c2": the confirmation of step 2. */
		snprintf(step, sizeof(step), "%s%.0f",
			 json_is_true(json_object_get(v, "confirm")) ? "c" : "", num(v, "step"));
		snprintf(prefix, sizeof(prefix), "%-5s %-7s %12.1f  %-7s ", step,
			 text(v, "load", "?"), num(v, "rate"), text(v, "verdict", "?"));
		table(json_object_get(v, "workloads"), n, prefix, out);
		if (strcmp(text(v, "verdict", ""), "pass") != 0)
			fprintf(out, "      why: %s\n", text(v, "why", "?"));
	}
	if (!answer) {
		fprintf(out, "certification: not over yet\n");
		return;
	}
	json_t *a = json_object_get(answer, "answer");
	if (!json_is_string(a)) {
		fprintf(out, "answer: none (%s)\n", text(answer, "why", ""));
		return;
	}
	fprintf(out, "answer: %s, %.1f ops/s (%s)\n", text(answer, "answer", "?"), num(answer, "rate"),
		text(answer, "why", ""));
	fprintf(out, "  %-10s %-12s %10s %7s %7s %9s", "WORKLOAD", "OP", "COUNT", "ERRORS",
		"MISSED", "P99(us)");
	threshold_heads(thresholds, out);
	fputc('\n', out);
	table(json_object_get(answer, "table"), n, "  ", out);
}

static void json_us(json_t *v, char *buf, size_t len)
{
	if (json_is_number(v))
		snprintf(buf, len, "%.1f", json_number_value(v));
	else
		snprintf(buf, len, "missed");
}

void search_print(json_t *s, FILE *out)
{
	json_t *curve = json_object_get(s, "curve"), *answer = json_object_get(s, "answer"), *v;
	char pct[32], head[32];
	size_t i;

	if (!json_is_object(s))
		return;
	/* The judged percentile: missed ops count as slower than any. */
	snprintf(head, sizeof(head), "P%g+MISS", num(s, "percentile"));
	fprintf(out, "\nsearch: p%g below %.0f us, %.0f s windows%s%s\n", num(s, "percentile"),
		num(s, "below_us"), num(s, "window_s"),
		json_object_get(s, "state") ? ", " : "", text(s, "state", ""));
	fprintf(out, "%-5s %12s %10s %10s %10s %10s  %-6s %s\n", "PROBE", "RATE/s", "P50(us)",
		"P99(us)", "P99.9(us)", head, "VERDICT", "WINDOWS AGREED");
	json_array_foreach(curve, i, v) {
		json_us(json_object_get(v, "percentile_us"), pct, sizeof(pct));
		fprintf(out, "%-5.0f %12.1f %10.1f %10.1f %10.1f %10s  %-6s %.0f of %.0f\n",
			num(v, "probe"), num(v, "rate"), num(v, "p50_us"), num(v, "p99_us"),
			num(v, "p999_us"), pct, text(v, "verdict", "?"), num(v, "agreed"),
			num(v, "windows"));
	}
	if (!answer)
		return;
	if (json_is_number(json_object_get(answer, "answer_rate")))
		fprintf(out, "answer: %.1f ops/s with p%g below %.0f us (%s; %s)\n",
			num(answer, "answer_rate"), num(s, "percentile"), num(s, "below_us"),
			text(answer, "confidence", ""), text(answer, "why", ""));
	else
		fprintf(out, "answer: none (%s)\n", text(answer, "why", ""));
}
