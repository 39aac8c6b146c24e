// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report's certification and capacity search (the daemon's
 * run/certify*.c and run/search*.c write their records): the steps with
 * their verdicts and why, and the answer; the search's curve, rate
 * against p50, p99 and p99.9, as a chart and a table, and its answer.
 * Records of another shape are shown by their scalar members, so a field
 * added later is not lost.
 */
#include "htmlreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htmlchart.h"
#include "htmlreport_int.h"
#include "plot.h"

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "5/1/0.1 % over 1/8/64 ms", from a record's thresholds_ms and limits_pct. */
static void limits_text(FILE *out, json_t *rec)
{
	json_t *t = json_object_get(rec, "thresholds_ms"), *l = json_object_get(rec, "limits_pct");
	size_t i;
	json_t *v;

	if (!json_array_size(t))
		return;
	fputs(" Judged by: ", out);
	json_array_foreach(t, i, v) {
		json_t *lim = json_array_get(l, i);
		if (json_is_number(lim))
			fprintf(out, "%s≤ %g%% over %g ms", i ? ", " : "", json_number_value(lim),
				json_number_value(v));
		else
			fprintf(out, "%sover %g ms (no limit)", i ? ", " : "", json_number_value(v));
	}
	fputs(".", out);
}

static void cell(FILE *out, const char *key, const char *cls, const char *text)
{
	fprintf(out, "<td class=\"%s\" data-k=\"", cls);
	html_text(out, key);
	fputs("\">", out);
	html_text(out, text);
	fputs("</td>", out);
}

static void cell_num(FILE *out, const char *key, double v)
{
	char buf[48];

	if (isnan(v))
		snprintf(buf, sizeof(buf), "–");
	else
		snprintf(buf, sizeof(buf), "%.1f", v);
	cell(out, key, "num", buf);
}

void html_report_certify(FILE *out, const struct runmodel *m)
{
	json_t *rec, *answer = NULL, *judged = NULL;
	size_t i, steps = 0;
	char key[96], buf[64];

	json_array_foreach(m->certify, i, rec) {
		if (json_object_get(rec, "step"))
			steps++;
		else if (json_object_get(rec, "steps_passed") || json_object_get(rec, "answer"))
			answer = rec;
	}
	if (!steps && !answer)
		return;
	fputs("<h3>Certification</h3>\n", out);
	if (answer) {
		json_t *a = json_object_get(answer, "answer");
		fprintf(out, "<p id=\"certify-answer\" data-answer=\"");
		html_text(out, json_is_string(a) ? json_string_value(a) : "none");
		fputs("\">Answer: <b>", out);
		if (json_is_string(a)) {
			html_text(out, json_string_value(a));
			fputs("</b>", out);
			if (!isnan(num(answer, "rate")))
				fprintf(out, " (%.1f ops/s)", num(answer, "rate"));
		} else {
			fputs("none</b>", out);
		}
		fputs(": ", out);
		html_text(out, str(answer, "why"));
		if (json_is_integer(json_object_get(answer, "steps_passed")))
			fprintf(out, "; %lld of %lld steps passed.",
				(long long)json_integer_value(json_object_get(answer, "steps_passed")),
				(long long)json_integer_value(json_object_get(answer, "steps")));
		limits_text(out, answer);
		fputs("</p>\n", out);
		judged = answer;
	} else {
		fputs("<p id=\"certify-answer\" data-answer=\"pending\">No answer yet: the run "
		      "ended before the certification did.</p>\n", out);
	}
	if (!steps)
		return;
	fputs("<table id=\"certify\"><caption>Certification steps</caption><tr><th>step</th>"
	      "<th class=\"name\">load</th><th>rate (ops/s)</th><th>hold</th><th>verdict</th>"
	      "<th class=\"name\">why</th></tr>\n", out);
	json_array_foreach(m->certify, i, rec) {
		if (!json_object_get(rec, "step"))
			continue;
		bool confirm = json_is_true(json_object_get(rec, "confirm"));
		const char *verdict = str(rec, "verdict");
		long long step = (long long)json_integer_value(json_object_get(rec, "step"));
		const char *what = confirm ? "confirm" : "step";
		if (!judged)
			judged = rec;
		fputs("<tr class=\"certify-step\">", out);
		snprintf(key, sizeof(key), "certify/%s/%lld/step", what, step);
		snprintf(buf, sizeof(buf), confirm ? "confirm %lld" : "%lld of %lld", step,
			 (long long)json_integer_value(json_object_get(rec, "of")));
		cell(out, key, "num", buf);
		snprintf(key, sizeof(key), "certify/%s/%lld/load", what, step);
		cell(out, key, "name", str(rec, "load"));
		snprintf(key, sizeof(key), "certify/%s/%lld/rate", what, step);
		cell_num(out, key, num(rec, "rate"));
		plot_format_elapsed((num(rec, "end_ns") - num(rec, "start_ns")) / 1e9, buf, sizeof(buf));
		snprintf(key, sizeof(key), "certify/%s/%lld/hold", what, step);
		cell(out, key, "num", buf);
		snprintf(key, sizeof(key), "certify/%s/%lld/verdict", what, step);
		cell(out, key, strcmp(verdict, "pass") == 0 ? "PASS" : "FAIL", verdict);
		snprintf(key, sizeof(key), "certify/%s/%lld/why", what, step);
		cell(out, key, "name", str(rec, "why"));
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (!answer && judged) {
		fputs("<p>", out);
		limits_text(out, judged);
		fputs("</p>\n", out);
	}
}

struct probe {
	double rate, us[3], target;
	json_t *rec;
};

static int by_rate(const void *a, const void *b)
{
	double x = ((const struct probe *)a)->rate, y = ((const struct probe *)b)->rate;
	return x < y ? -1 : x > y;
}

void html_report_search(FILE *out, const struct runmodel *m)
{
	json_t *rec, *answer = NULL;
	size_t i, n = 0;

	struct probe *p = calloc(json_array_size(m->search) + 1, sizeof(*p));
	if (!p)
		return;
	json_array_foreach(m->search, i, rec) {
		if (json_object_get(rec, "probe"))
			p[n++] = (struct probe){ num(rec, "rate"), { num(rec, "p50_us"),
					num(rec, "p99_us"), num(rec, "p999_us") }, num(rec, "below_us"), rec };
		else if (json_object_get(rec, "answer_rate"))
			answer = rec;
	}
	if (!n && !answer) {
		free(p);
		return;
	}
	fputs("<section id=\"search\"><h2>Capacity search</h2>\n", out);
	if (answer) {
		json_t *a = json_object_get(answer, "answer_rate");
		fputs("<p id=\"search-answer\" data-answer-rate=\"", out);
		/* The attribute, for tools, holds the log's figure exactly;
		 * the text rounds it. */
		/* Given up (stopped, a probe that could not start): the
		 * highest rate that passed so far, which is no answer. */
		if (json_is_number(a) && json_is_true(json_object_get(answer, "gave_up")))
			fprintf(out, "%.17g\" data-gave-up=\"true\">Given up; the highest rate below "
				     "so far: <b>%.1f ops/s</b>", json_number_value(a),
				json_number_value(a));
		else if (json_is_number(a))
			fprintf(out, "%.17g\">Answer: <b>%.1f ops/s</b>", json_number_value(a),
				json_number_value(a));
		else
			fputs("none\">Answer: <b>none</b>", out);
		/* A record without its target (damaged) prints none. */
		if (isfinite(num(answer, "percentile")) && isfinite(num(answer, "below_us")))
			fprintf(out, " with p%g below %g µs", num(answer, "percentile"),
				num(answer, "below_us"));
		fputs(": ", out);
		html_text(out, str(answer, "why"));
		if (*str(answer, "confidence")) {
			fputs(" (", out);
			html_text(out, str(answer, "confidence"));
			fputs(")", out);
		}
		fputs(".</p>\n", out);
	} else {
		fputs("<p id=\"search-answer\" data-answer-rate=\"pending\">No answer yet: the run "
		      "ended before the search did.</p>\n", out);
	}
	qsort(p, n, sizeof(*p), by_rate);
	if (n) {
		double *x = calloc(n, sizeof(double)), *y = calloc(3 * n, sizeof(double));
		if (x && y) {
			for (size_t k = 0; k < n; k++) {
				x[k] = p[k].rate;
				for (size_t j = 0; j < 3; j++)
					y[j * n + k] = p[k].us[j];
			}
			static const char *const names[] = { "p50", "p99", "p99.9" };
			static const char *const colors[] = { "#1f5fa8", "#b3261e", "#6a3d9a" };
			struct chart_xy_line lines[3];
			for (size_t j = 0; j < 3; j++)
				lines[j] = (struct chart_xy_line){ names[j], names[j], colors[j], y + j * n };
			char desc[256];
			double ar = answer ? num(answer, "answer_rate") : NAN;
			snprintf(desc, sizeof(desc), "Latency (log scale) against the open-loop rate of "
				 "each of the %zu probes; the numbers are in the table below.%s", n,
				 ar > 0 ? " The dashed vertical line is the answer." : "");
			struct chart c = { .id = "search-curve", .title = "Capacity search: latency "
					   "against rate", .desc = desc, .unit = "ops/s" };
			fputs("<figure><figcaption>Latency against rate, per probe</figcaption>\n", out);
			chart_xy(out, &c, x, n, lines, 3, ar > 0 ? ar : 0, "answer");
			fputs("</figure>\n", out);
		}
		free(x);
		free(y);
		fputs("<table id=\"search-curve-table\"><caption>Search probes by rate</caption><tr>"
		      "<th>rate (ops/s)</th><th>p50 (µs)</th><th>p99 (µs)</th><th>p99.9 (µs)</th>"
		      "<th>target (µs)</th><th>verdict</th><th>windows agreeing</th></tr>\n", out);
		for (size_t k = 0; k < n; k++) {
			char key[64], buf[48];
			long long probe = (long long)json_integer_value(json_object_get(p[k].rec, "probe"));
			fputs("<tr class=\"search-probe\">", out);
			snprintf(key, sizeof(key), "search/%lld/rate", probe);
			cell_num(out, key, p[k].rate);
			snprintf(key, sizeof(key), "search/%lld/p50_us", probe);
			cell_num(out, key, p[k].us[0]);
			snprintf(key, sizeof(key), "search/%lld/p99_us", probe);
			cell_num(out, key, p[k].us[1]);
			snprintf(key, sizeof(key), "search/%lld/p999_us", probe);
			cell_num(out, key, p[k].us[2]);
			snprintf(key, sizeof(key), "search/%lld/below_us", probe);
			cell_num(out, key, p[k].target);
			const char *verdict = str(p[k].rec, "verdict");
			snprintf(key, sizeof(key), "search/%lld/verdict", probe);
			cell(out, key, strcmp(verdict, "below") == 0 ? "PASS" : "FAIL", verdict);
			snprintf(buf, sizeof(buf), "%lld of %lld",
				 (long long)json_integer_value(json_object_get(p[k].rec, "agreed")),
				 (long long)json_integer_value(json_object_get(p[k].rec, "windows")));
			cell(out, "", "num", buf);
			fputs("</tr>\n", out);
		}
		fputs("</table>\n", out);
	}
	fputs("</section>\n", out);
	free(p);
}
