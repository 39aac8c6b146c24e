// SPDX-License-Identifier: GPL-2.0-only
#include "cmp.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmp_answers.h"
#include "htmlchart.h"
#include "htmlreport.h"
#include "runfiles.h"
#include "transact.h"

#define MAX_SLICE_VALUES 20000

static const char *const stats[] = { "rate", "p50", "p99", "p999" };
static const char *const stat_names[] = { "ops/s", "p50 µs", "p99 µs", "p99.9 µs" };

static double whole(const struct rm_op *o, const char *stat)
{
	if (strcmp(stat, "rate") == 0)
		return o->active_s > 0 ? o->count / o->active_s : 0;
	double p = strcmp(stat, "p50") == 0 ? 50 : strcmp(stat, "p99") == 0 ? 99 : 99.9;
	return hist_percentile(o->lat, p) / 1e3;
}

/* The spread of a statistic over a run's slices; -1 with fewer than 2. */
static double spread(const struct rm_op *o, const char *stat, uint64_t slice_ns)
{
	static double v[MAX_SLICE_VALUES];
	size_t n = runmodel_slice_values(o, stat, slice_ns, v, MAX_SLICE_VALUES);

	if (n < 2)
		return -1;
	double lo = v[0], hi = v[0];
	for (size_t i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return hi - lo;
}

/* hist_percentile_interval in µs, an open upper bound as infinity. */
static bool confidence(const struct hist *h, double p, double *lo, double *hi)
{
	uint64_t l, u;
	bool bounded = hist_percentile_interval(h, p, &l, &u);

	*lo = l / 1e3;
	*hi = bounded ? u / 1e3 : INFINITY;
	return bounded;
}

static json_t *range_json(double lo, double hi)
{
	return json_pack("[f,o]", lo, isinf(hi) ? json_null() : json_real(hi));
}

static uint64_t verify_of(const struct rm_op *o, const char *name)
{
	for (size_t i = 0; i < o->n_verify; i++)
		if (strcmp(o->verify[i].name, name) == 0)
			return o->verify[i].value;
	return 0;
}

/* An exact counter: marked when it grows and growth is bad (counts). */
static json_t *counter(uint64_t a, uint64_t b, bool counts, bool *any)
{
	bool significant = counts && b > a;

	*any |= significant;
	return json_pack("{s:I,s:I,s:b,s:b}", "a", (json_int_t)a, "b", (json_int_t)b, "changed",
			 a != b, "significant", significant);
}

/* Verification classes that are not failures: what was and was not looked at. */
static bool verify_failure_class(const char *name)
{
	return strcmp(name, "checked") != 0 && strcmp(name, "unchecked") != 0 &&
	       strcmp(name, "uncertain") != 0;
}

/* A string of a recorded run, for a terminal: control characters (C0,
 * DEL, C1 as UTF-8) as '?'. */
static void clean_text(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && n + 1 < len; p++) {
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			out[n++] = '?';
			p++;
		} else
			out[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
	}
	out[n] = '\0';
}

/* A note beside the table (marked: a change, as a CHANGED row is). */
static void add_note(json_t *notes, bool marked, bool *significant, const char *fmt, ...)
{
	char text[512], clean[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	clean_text(text, clean, sizeof(clean));
	json_array_append_new(notes, json_pack("{s:s,s:b}", "text", clean, "significant", marked));
	*significant |= marked;
}

/* What the table cannot show: a workload or op in one run only, one
 * that failed in one run only, and soakd's own lateness in either. */
static void compare_runs(const struct runmodel *a, const struct runmodel *b, json_t *notes,
			 bool *significant)
{
	for (int side = 0; side < 2; side++) {
		const struct runmodel *x = side ? b : a, *y = side ? a : b;
		for (size_t i = 0; i < x->n; i++) {
			const struct rm_workload *wx = x->w[i], *wy = runmodel_workload(y, wx->name);
			if (!wy) {
				add_note(notes, true, significant, "workload %s is only in %s", wx->name,
					 side ? "B" : "A");
				continue;
			}
			for (size_t k = 0; k < wx->n_ops; k++)
				if (!runmodel_op(wy, wx->ops[k].name))
					add_note(notes, true, significant, "%s %s is only in %s",
						 wx->name, wx->ops[k].name, side ? "B" : "A");
			if (strcmp(wx->state, "failed") == 0 && strcmp(wy->state, "failed") != 0)
				add_note(notes, true, significant, "workload %s failed in %s%s%s",
					 wx->name, side ? "B" : "A", wx->reason[0] ? ": " : "",
					 wx->reason);
			if (wx->n_late)
				add_note(notes, false, significant, "in %s, soakd itself was late in %zu "
					 "interval(s) of %s: its latencies there are not the device's",
					 side ? "B" : "A", wx->n_late, wx->name);
		}
	}
}

/* The comparison as JSON: what text and HTML print, too. */
static json_t *compare(const struct runmodel *a, const struct runmodel *b, double min_change_pct,
		       bool *ret_significant, bool *ret_noise_known)
{
	json_t *ws = json_array();
	bool noise_known = false;
	bool significant = false;

	for (size_t i = 0; i < a->n; i++) {
		const struct rm_workload *wa = a->w[i], *wb = runmodel_workload(b, wa->name);
		if (!wb)
			continue;
		json_t *ops = json_object();
		for (size_t k = 0; k < wa->n_ops; k++) {
			const struct rm_op *oa = &wa->ops[k], *ob = runmodel_op(wb, oa->name);
			if (!ob)
				continue;
			json_t *op = json_object();
			for (size_t s = 0; s < 4; s++) {
				double va = whole(oa, stats[s]), vb = whole(ob, stats[s]);
				double na = spread(oa, stats[s], a->slice_ns);
				double nb = spread(ob, stats[s], b->slice_ns);
				/* A dump has no slices: the other run's noise stands. */
				double noise = na > nb ? na : nb;
				noise_known |= noise >= 0;
				double change = vb - va;
				bool sig = noise >= 0 && fabs(change) > noise &&
					   fabs(change) > min_change_pct / 100 * fabs(va);
				json_t *m = json_pack("{s:f,s:f,s:f}", "a", va, "b", vb, "change", change);
				if (s > 0) {
					/* A percentile changed only where the two runs'
					 * confidence intervals for it do not overlap. */
					double p = s == 1 ? 50 : s == 2 ? 99 : 99.9, alo, ahi, blo, bhi;
					bool bounded_a = confidence(oa->lat, p, &alo, &ahi);
					bool bounded = confidence(ob->lat, p, &blo, &bhi) && bounded_a;
					sig = sig && (vb > va ? blo > ahi : alo > bhi);
					json_object_set_new(m, "a_range", range_json(alo, ahi));
					json_object_set_new(m, "b_range", range_json(blo, bhi));
					json_object_set_new(m, "few_ops", json_boolean(!bounded));
				}
				significant |= sig;
				json_object_set_new(m, "change_pct", va != 0 ? json_real(100 * change / va)
									 : json_null());
				json_object_set_new(m, "noise", noise >= 0 ? json_real(noise) : json_null());
				json_object_set_new(m, "significant", json_boolean(sig));
				json_object_set_new(op, stats[s], m);
			}
			json_object_set_new(op, "count", json_pack("{s:I,s:I}", "a", (json_int_t)oa->count,
								  "b", (json_int_t)ob->count));
			json_object_set_new(op, "errors", counter(oa->errors, ob->errors, true, &significant));
			json_object_set_new(op, "missed", counter(oa->missed, ob->missed, true, &significant));
			json_t *ver = json_object();
			for (int side = 0; side < 2; side++) {
				const struct rm_op *o = side ? ob : oa;
				for (size_t v = 0; v < o->n_verify; v++) {
					const char *name = o->verify[v].name;
					if (json_object_get(ver, name))
						continue;
					json_object_set_new(ver, name,
							    counter(verify_of(oa, name), verify_of(ob, name),
								    verify_failure_class(name), &significant));
				}
			}
			json_object_set_new(op, "verify", ver);
			json_object_set_new(ops, oa->name, op);
		}
		json_array_append_new(ws, json_pack("{s:s,s:o}", "name", wa->name, "ops", ops));
	}
	*ret_significant = significant;
	*ret_noise_known = noise_known;
	return ws;
}

/* Width for %-*s that pads text to cols characters (UTF-8: µ is 2 bytes). */
static int pad(const char *text, int cols)
{
	int extra = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		extra += (*p & 0xC0) == 0x80;
	return cols + extra;
}

static void print_text(json_t *ws, const char *na, const char *nb, FILE *out)
{
	size_t i;
	json_t *w;

	fprintf(out, "A: %s\nB: %s\n", na, nb);
	fprintf(out, "%-14s %-18s %-20s %14s %14s %9s %12s\n", "workload", "op", "metric", "A", "B",
		"change", "noise");
	json_array_foreach(ws, i, w) {
		const char *wname = json_string_value(json_object_get(w, "name")), *op;
		json_t *o;
		json_object_foreach(json_object_get(w, "ops"), op, o) {
			for (size_t s = 0; s < 4; s++) {
				json_t *m = json_object_get(o, stats[s]);
				json_t *pct = json_object_get(m, "change_pct"), *noise = json_object_get(m, "noise");
				char change[32] = "-", nz[32] = "unknown";
				if (json_is_number(pct))
					snprintf(change, sizeof(change), "%+.1f%%", json_number_value(pct));
				if (json_is_number(noise))
					snprintf(nz, sizeof(nz), "±%.3f", json_number_value(noise));
				fprintf(out, "%-14s %-18s %-*s %14.3f %14.3f %9s %12s%s\n", wname, op,
					pad(stat_names[s], 20), stat_names[s], json_number_value(json_object_get(m, "a")),
					json_number_value(json_object_get(m, "b")), change, nz,
					json_is_true(json_object_get(m, "significant")) ? "  CHANGED"
					: json_is_true(json_object_get(m, "few_ops")) ? "  too few ops" : "");
			}
			static const char *const counters[] = { "count", "errors", "missed" };
			for (size_t c = 0; c < 3; c++) {
				json_t *m = json_object_get(o, counters[c]);
				fprintf(out, "%-14s %-18s %-20s %14" JSON_INTEGER_FORMAT " %14" JSON_INTEGER_FORMAT
					"%s\n", wname, op, counters[c],
					json_integer_value(json_object_get(m, "a")),
					json_integer_value(json_object_get(m, "b")),
					json_is_true(json_object_get(m, "significant")) ? "  CHANGED" : "");
			}
			const char *vn;
			json_t *m;
			json_object_foreach(json_object_get(o, "verify"), vn, m) {
				char label[64];
				snprintf(label, sizeof(label), "verify.%s", vn);
				clean_text(label, label, sizeof(label));
				fprintf(out, "%-14s %-18s %-20s %14" JSON_INTEGER_FORMAT " %14"
					JSON_INTEGER_FORMAT "%s\n", wname, op, label,
					json_integer_value(json_object_get(m, "a")),
					json_integer_value(json_object_get(m, "b")),
					json_is_true(json_object_get(m, "significant")) ? "  CHANGED" : "");
			}
		}
	}
}

static void td_num(FILE *out, const char *key, const char *w, const char *op, const char *fmt_kind,
		   double v)
{
	fputs("<td data-k=\"", out);
	html_text(out, w);
	fputc('/', out);
	html_text(out, op);
	fputc('/', out);
	html_text(out, key);
	fputs("\">", out);
	if (strcmp(fmt_kind, "int") == 0)
		fprintf(out, "%.0f</td>", v);
	else
		fprintf(out, "%.3f</td>", v);
}

static void print_notes_text(json_t *notes, FILE *out)
{
	size_t i;
	json_t *n;

	json_array_foreach(notes, i, n)
		fprintf(out, "note: %s%s\n", json_string_value(json_object_get(n, "text")),
			json_is_true(json_object_get(n, "significant")) ? "  CHANGED" : "");
}

static void print_html(json_t *ws, json_t *answers, json_t *notes, const char *na,
		       const char *nb, bool significant, bool noise_known, double min_change_pct,
		       FILE *out)
{
	/* Nothing changed, but no rate or latency could have been marked
	 * (no slices on either side): no green badge for that. */
	const char *word = significant ? "CHANGED" : noise_known ? "NO CHANGE" : "NOT MARKED";
	size_t i;
	json_t *w;

	html_page_begin(out, "soakd: comparison of two runs");
	fputs("<header><h1>Comparison of two runs</h1><p class=\"meta\">A: ", out);
	html_text(out, na);
	fputs("<br>B: ", out);
	html_text(out, nb);
	fprintf(out, "</p></header>\n<section id=\"cmp\" data-changed=\"%s\"><h2>Changes</h2>\n"
		     "<p><span class=\"verdict %s\">%s</span> A change is marked when it exceeds the "
		     "larger slice-to-slice spread of the two runs and %g%% of A's value, and a "
		     "percentile when the two runs' 95%% confidence intervals for it do not overlap "
		     "(too few ops: a run has too few ops past it to bound it); counters "
		     "when they grow, and an answer of a certification or capacity search when it "
		     "is another.</p>\n<table><tr><th class=\"name\">workload</th><th class=\"name\">"
		     "op</th><th class=\"name\">metric</th><th>A</th><th>B</th><th>change</th>"
		     "<th>noise (spread)</th></tr>\n",
		significant ? "yes" : noise_known ? "no" : "unknown",
		significant || !noise_known ? "FAIL" : "PASS", word, min_change_pct);
	json_array_foreach(ws, i, w) {
		const char *wname = json_string_value(json_object_get(w, "name")), *op;
		json_t *o;
		json_object_foreach(json_object_get(w, "ops"), op, o) {
			for (size_t s = 0; s < 4; s++) {
				json_t *m = json_object_get(o, stats[s]);
				json_t *pct = json_object_get(m, "change_pct"), *noise = json_object_get(m, "noise");
				bool sig = json_is_true(json_object_get(m, "significant"));
				char key[32];
				fprintf(out, "<tr%s><td class=\"name\">", sig ? " class=\"changed\"" : "");
				html_text(out, wname);
				fputs("</td><td class=\"name\">", out);
				html_text(out, op);
				fprintf(out, "</td><td class=\"name\">%s</td>", stat_names[s]);
				snprintf(key, sizeof(key), "%s.a", stats[s]);
				td_num(out, key, wname, op, "real", json_number_value(json_object_get(m, "a")));
				snprintf(key, sizeof(key), "%s.b", stats[s]);
				td_num(out, key, wname, op, "real", json_number_value(json_object_get(m, "b")));
				if (json_is_number(pct))
					fprintf(out, "<td%s>%+.1f%%%s</td>", sig ? " class=\"over\"" : "",
						json_number_value(pct), sig ? " CHANGED" : "");
				else
					fputs("<td>-</td>", out);
				if (json_is_number(noise))
					fprintf(out, "<td>±%.3f%s</td></tr>\n", json_number_value(noise),
						json_is_true(json_object_get(m, "few_ops")) && !sig
						? " (too few ops)" : "");
				else
					fputs("<td>unknown</td></tr>\n", out);
			}
			static const char *const counters[] = { "errors", "missed" };
			for (size_t c = 0; c < 2; c++) {
				json_t *m = json_object_get(o, counters[c]);
				fputs("<tr><td class=\"name\">", out);
				html_text(out, wname);
				fputs("</td><td class=\"name\">", out);
				html_text(out, op);
				fprintf(out, "</td><td class=\"name\">%s</td>", counters[c]);
				td_num(out, counters[c], wname, op, "int",
				       (double)json_integer_value(json_object_get(m, "a")));
				td_num(out, counters[c], wname, op, "int",
				       (double)json_integer_value(json_object_get(m, "b")));
				fprintf(out, "<td>%s</td><td>exact</td></tr>\n",
					json_is_true(json_object_get(m, "significant")) ? "CHANGED" : "");
			}
			const char *vn;
			json_t *vm;
			json_object_foreach(json_object_get(o, "verify"), vn, vm) {
				char key[64];
				fputs("<tr><td class=\"name\">", out);
				html_text(out, wname);
				fputs("</td><td class=\"name\">", out);
				html_text(out, op);
				fputs("</td><td class=\"name\">verify ", out);
				html_text(out, vn);
				fputs("</td>", out);
				snprintf(key, sizeof(key), "verify.%s.a", vn);
				td_num(out, key, wname, op, "int",
				       (double)json_integer_value(json_object_get(vm, "a")));
				snprintf(key, sizeof(key), "verify.%s.b", vn);
				td_num(out, key, wname, op, "int",
				       (double)json_integer_value(json_object_get(vm, "b")));
				fprintf(out, "<td>%s</td><td>exact</td></tr>\n",
					json_is_true(json_object_get(vm, "significant")) ? "CHANGED" : "");
			}
		}
	}
	fputs("</table>\n", out);
	size_t k;
	json_t *n;
	if (json_array_size(notes))
		fputs("<ul class=\"notes\">\n", out);
	json_array_foreach(notes, k, n) {
		bool marked = json_is_true(json_object_get(n, "significant"));
		fputs(marked ? "<li class=\"changed\">" : "<li>", out);
		html_text(out, json_string_value(json_object_get(n, "text")));
		fputs(marked ? " CHANGED</li>\n" : "</li>\n", out);
	}
	if (json_array_size(notes))
		fputs("</ul>\n", out);
	fputs("</section>\n", out);
	cmp_answers_html(answers, out);
	html_page_end(out);
}

int cmp_runs(const char *run_a, const char *run_b, const char *format, const char *html,
	     uint64_t slice_ns, double min_change_pct)
{
	struct run_files a, b;
	bool significant = false;
	int r;

	r = run_files_load(&a, run_a, slice_ns);
	if (r == 0)
		r = run_files_load(&b, run_b, slice_ns);
	else
		memset(&b, 0, sizeof(b));
	if (r) {
		run_files_done(&a);
		run_files_done(&b);
		return r;
	}
	bool noise_known;
	json_t *ws = compare(a.m, b.m, min_change_pct, &significant, &noise_known);
	json_t *answers = cmp_answers(a.m, b.m, &significant);
	json_t *notes = json_array();
	compare_runs(a.m, b.m, notes, &significant);
	if (json_array_size(ws) && !noise_known)
		add_note(notes, false, &significant, "neither run has two slices of an op to tell its "
			 "noise by (dumps, or runs of one slice): changes of rates and latencies "
			 "are shown, not marked");
	if (json_array_size(ws) == 0) {
		fprintf(stderr, "soakctl: %s and %s have no workload in common\n", run_a, run_b);
		r = EXIT_REFUSED;
	} else if (format && strcmp(format, "json") == 0) {
		json_t *doc = json_pack("{s:s,s:s,s:f,s:O,s:b}", "a", run_a, "b", run_b,
					"min_change_pct", min_change_pct, "workloads", ws,
					"significant", significant);
		if (doc && answers)
			json_object_set(doc, "answers", answers);
		if (doc)
			json_object_set(doc, "notes", notes);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		print_text(ws, run_a, run_b, stdout);
		print_notes_text(notes, stdout);
		cmp_answers_text(answers, stdout);
	}
	if (r == 0 && html) {
		FILE *f = output_open(html);
		if (!f) {
			r = EXIT_REFUSED;
		} else {
			print_html(ws, answers, notes, run_a, run_b, significant, noise_known,
				   min_change_pct, f);
			r = output_close(f, html);
		}
	}
	json_decref(ws);
	json_decref(answers);
	json_decref(notes);
	run_files_done(&a);
	run_files_done(&b);
	if (r == 0 && fflush(stdout) != 0)
		r = EXIT_REFUSED;
	return r ? r : significant ? EXIT_REPORT_FAIL : 0;
}
