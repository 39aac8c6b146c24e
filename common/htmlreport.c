// SPDX-License-Identifier: GPL-2.0-only
#include "htmlreport.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htmlchart.h"
#include "htmlreport_int.h"
#include "plot.h"

static const char css[] =
	":root{--fg:#1a1a1a;--muted:#4d4d4d;--bg:#fff;--line:#c8c8c8;--pass:#1b5e20;"
	"--fail:#b71c1c}\n"
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
	"background:var(--bg);margin:0 auto;padding:1em 1.5em;max-width:1200px}\n"
	"h1{font-size:1.6em;margin:.2em 0}h2{border-bottom:2px solid var(--line);margin-top:1.6em}"
	"h3{margin:1.2em 0 .3em}\n"
	"p.meta{color:var(--muted);margin:.2em 0}\n"
	"table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums;font-size:.92em;"
	"display:block;overflow-x:auto;max-width:100%}"
	"th,td{border:1px solid var(--line);padding:.2em .5em;text-align:right}"
	"th{background:#f0f0f0}td.name,th.name{text-align:left}\n"
	".verdict{font-size:1.4em;font-weight:700;padding:.4em .8em;border-radius:4px;"
	"display:inline-block;color:#fff}\n"
	".PASS{background:var(--pass)}.FAIL{background:var(--fail)}"
	"td.PASS,td.FAIL{color:#fff;font-weight:700;text-align:center}\n"
	"td.over{background:#fde0dc;font-weight:700}\n"
	".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(540px,1fr));gap:.8em}\n"
	"figure{margin:0;border:1px solid var(--line);padding:.3em}"
	"figcaption{font-weight:600;font-size:.95em}\n"
	"svg.chart{width:100%;height:auto;display:block}"
	"svg .plot{fill:#fff;stroke:#888}svg .grid{stroke:#e2e2e2}"
	"svg .tick,svg .legend{font:14px sans-serif;fill:#222}"
	"svg .series{fill:none;stroke-width:1.6}svg .band{opacity:.35}\n"
	"pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}\n"
	"ul.alarms li{margin:.2em 0}\n"
	"@media print{body{max-width:none;font-size:11px}.charts{grid-template-columns:1fr 1fr}"
	"figure,table,section.op{break-inside:avoid}#js-tools,nav{display:none}"
	"table{display:table;max-width:none;font-size:.85em}pre{white-space:pre-wrap}"
	".verdict,td.PASS,td.FAIL{print-color-adjust:exact;-webkit-print-color-adjust:exact}}\n"
	"body.wide{max-width:none}\n";

/* JavaScript is only a convenience: a button for a full-width page. */
static const char script[] =
	"document.addEventListener('DOMContentLoaded',function(){"
	"var b=document.createElement('button');b.id='js-tools';b.type='button';"
	"b.textContent='Full width';b.onclick=function(){document.body.classList.toggle('wide')};"
	"var h=document.querySelector('header');if(h)h.appendChild(b);});";

void html_page_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>",
	      out);
	html_text(out, title);
	fprintf(out, "</title>\n<style>%s</style>\n<script>%s</script>\n</head><body>\n", css, script);
}

void html_page_end(FILE *out)
{
	fputs("<footer><p class=\"meta\">soakctl " SOAK_VERSION "</p></footer>\n</body></html>\n",
	      out);
}

/* A number of the tables, tagged for the tests: decimals 0 prints an integer. */
static void cell_num(FILE *out, const char *w, const char *op, const char *key, int decimals,
		     double v, const char *cls)
{
	fprintf(out, "<td%s%s%s data-k=\"", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	html_text(out, w);
	fputc('/', out);
	html_text(out, op);
	fprintf(out, "/%s\">", key);
	fprintf(out, "%.*f</td>", decimals, v);
}

static double active_s(const struct rm_op *o)
{
	return o->active_s;
}

static void threshold_label(uint64_t ns, char *buf, size_t len)
{
	chart_format_us(ns / 1e3, buf, len);
}

static void verdict_table(FILE *out, const struct runmodel *m, const struct report_options *ro)
{
	char label[48];

	fputs("<table id=\"act-table\"><caption>Share of ops over each latency threshold in the "
	      "worst slice, against its limit (judged ops decide the verdict)</caption>\n<tr><th "
	      "class=\"name\">workload</th><th class=\"name\">op</th><th>verdict</th><th>ops</th>"
	      "<th>errors</th><th>missed</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th>",
	      out);
	for (size_t j = 0; j < ro->n_thresholds; j++) {
		threshold_label(ro->thresholds_ns[j], label, sizeof(label));
		fprintf(out, "<th>%% &gt; %s", label);
		if (ro->limits_pct[j] >= 0)
			fprintf(out, "<br>(limit %g%%)", ro->limits_pct[j]);
		fputs("</th>", out);
	}
	fputs("<th class=\"name\">verification</th></tr>\n", out);
	for (size_t i = 0; i < m->n; i++) {
		const struct rm_workload *w = m->w[i];
		for (size_t k = 0; k < w->n_ops; k++) {
			const struct rm_op *o = &w->ops[k];
			bool judged = report_op_judged(ro, html_has_read(w), o->name);
			if (html_op_unused(o))
				continue;
			bool pass = html_op_passes(o, ro);
			fputs("<tr><td class=\"name\">", out);
			html_text(out, w->name);
			fputs("</td><td class=\"name\">", out);
			html_text(out, o->name);
			fprintf(out, "</td><td class=\"%s\" data-k=\"", judged ? (pass ? "PASS" : "FAIL") : "");
			html_text(out, w->name);
			fputc('/', out);
			html_text(out, o->name);
			fprintf(out, "/verdict\">%s</td>", judged ? (pass ? "PASS" : "FAIL") : "not judged");
			cell_num(out, w->name, o->name, "count", 0, (double)o->count, NULL);
			cell_num(out, w->name, o->name, "errors", 0, (double)o->errors,
				 o->errors ? "over" : NULL);
			cell_num(out, w->name, o->name, "missed", 0, (double)o->missed,
				 o->missed ? "over" : NULL);
			cell_num(out, w->name, o->name, "p50_us", 3, hist_percentile(o->lat, 50) / 1e3, NULL);
			cell_num(out, w->name, o->name, "p99_us", 3, hist_percentile(o->lat, 99) / 1e3, NULL);
			cell_num(out, w->name, o->name, "p999_us", 3,
				 hist_percentile(o->lat, 99.9) / 1e3, NULL);
			cell_num(out, w->name, o->name, "max_us", 3, hist_max(o->lat) / 1e3, NULL);
			for (size_t j = 0; j < ro->n_thresholds; j++) {
				double p = html_worst_pct(o, ro->thresholds_ns[j]);
				char key[48];
				snprintf(key, sizeof(key), "over_%gms", ro->thresholds_ns[j] / 1e6);
				cell_num(out, w->name, o->name, key, 2, p,
					 report_over_limit(ro, j, p) ? "over" : NULL);
			}
			fputs("<td class=\"name\">", out);
			bool any = false;
			for (size_t v = 0; v < o->n_verify; v++)
				if (o->verify[v].value && strcmp(o->verify[v].name, "checked") != 0) {
					fprintf(out, "%s<b>", any ? ", " : "");
					html_text(out, o->verify[v].name);
					fputs("</b> <span data-k=\"", out);
					html_text(out, w->name);
					fputc('/', out);
					html_text(out, o->name);
					fputs("/verify.", out);
					html_text(out, o->verify[v].name);
					fprintf(out, "\">%" PRIu64 "</span>", o->verify[v].value);
					any = true;
				}
			for (size_t v = 0; v < o->n_verify; v++)
				if (strcmp(o->verify[v].name, "checked") == 0)
					fprintf(out, "%s%" PRIu64 " checked", any ? "; " : "",
						o->verify[v].value), any = true;
			if (o->corrupt && !any)
				fprintf(out, "<b>corrupt</b> %" PRIu64, o->corrupt), any = true;
			if (!any)
				fputs("-", out);
			fputs("</td></tr>\n", out);
		}
	}
	fputs("</table>\n", out);
}

static void alarms(FILE *out, const struct runmodel *m)
{
	char a[32], b[32];
	size_t n = 0;

	fputs("<h3>Alarms</h3><ul class=\"alarms\" id=\"alarms\">\n", out);
	for (size_t i = 0; i < m->n; i++) {
		const struct rm_workload *w = m->w[i];
		for (size_t k = 0; k < w->n_ops; k++) {
			const struct rm_op *o = &w->ops[k];
			if (o->missed || o->errors) {
				fputs("<li>", out);
				html_text(out, w->name);
				fputc(' ', out);
				html_text(out, o->name);
				fprintf(out, ": %" PRIu64 " missed, %" PRIu64 " failed of %.0f scheduled</li>\n",
					o->missed, o->errors, o->target_ops);
				n++;
			}
			for (size_t v = 0; v < o->n_verify; v++)
				if (o->verify[v].value && strcmp(o->verify[v].name, "checked") != 0) {
					fputs("<li class=\"verify\">", out);
					html_text(out, w->name);
					fputc(' ', out);
					html_text(out, o->name);
					fprintf(out, ": verification <b>");
					html_text(out, o->verify[v].name);
					fprintf(out, "</b> %" PRIu64 "</li>\n", o->verify[v].value);
					n++;
				}
		}
		if (w->n_late) {
			fputs("<li class=\"late\">", out);
			html_text(out, w->name);
			fprintf(out, ": %zu interval%s where soakd itself was late (generator_late):", w->n_late,
				w->n_late == 1 ? "" : "s");
			for (size_t k = 0; k < w->n_late && k < 20; k++) {
				plot_format_elapsed(w->late[k].t0, a, sizeof(a));
				plot_format_elapsed(w->late[k].t1, b, sizeof(b));
				fprintf(out, " %s–%s (%.1f ms)", a, b, w->late[k].ms);
			}
			fputs(w->n_late > 20 ? " …</li>\n" : "</li>\n", out);
			n++;
		}
		if (w->stalled_intervals) {
			fputs("<li>", out);
			html_text(out, w->name);
			fprintf(out, ": %" PRIu64 " intervals soakd did not see (stalled)</li>\n",
				w->stalled_intervals);
			n++;
		}
	}
	for (size_t i = 0; i < m->n_events; i++) {
		const struct rm_event *e = &m->events[i];
		plot_format_elapsed(e->t, a, sizeof(a));
		fprintf(out, "<li class=\"event\" data-event=\"");
		html_text(out, e->event);
		fprintf(out, "\">at %s: <b>", a);
		/* "drift of p99", "drift", or the metric alone. */
		html_text(out, e->event[0] ? e->event : e->metric);
		if (e->event[0] && e->metric[0]) {
			fputs(" of ", out);
			html_text(out, e->metric);
		}
		fputs("</b> ", out);
		html_text(out, e->workload);
		fputc(' ', out);
		html_text(out, e->op);
		fputs(": ", out);
		html_text(out, e->message);
		fputs("</li>\n", out);
		n++;
	}
	if (!n)
		fputs("<li>none: no missed or failed ops, no verification failures, soakd never "
		      "late, no drift alarms</li>\n", out);
	fputs("</ul>\n", out);
}

static void bands_of(const struct runmodel *m, const struct rm_workload *w, struct chart_band *b,
		     size_t max, size_t *ret_n)
{
	size_t n = 0;

	for (size_t i = 0; w && i < w->n_late && n < max; i++)
		b[n++] = (struct chart_band){ w->late[i].t0, w->late[i].t1, "#f4b400" };
	for (size_t i = 0; i < m->n_gaps && n < max; i++)
		b[n++] = (struct chart_band){ m->gaps[i].run_s, m->gaps[i].run_s + 0.001, "#777" };
	*ret_n = n;
}

static void figure(FILE *out, const char *caption)
{
	fputs("<figure><figcaption>", out);
	html_text(out, caption);
	fputs("</figcaption>\n", out);
}

/* The kernel series of an op: blk.read for read and large_block_read. */
static const char *kernel_op(const char *op)
{
	if (strstr(op, "read") || strcmp(op, "get") == 0 || strcmp(op, "GET") == 0)
		return "read";
	if (strstr(op, "write") || strcmp(op, "put") == 0 || strcmp(op, "PUT") == 0)
		return "write";
	return op;
}

static void op_section(FILE *out, const struct runmodel *m, const struct rm_workload *w,
		       const struct rm_op *o, struct chart_band *bands, size_t n_bands)
{
	char id[256], title[256], desc[512], ids[8][192], labels[8][96];
	struct chart c = { .id = id, .title = title, .desc = desc, .t_end = m->end_s,
			   .bands = bands, .n_bands = n_bands };

	fputs("<section class=\"op\" data-op=\"", out);
	html_text(out, o->name);
	fputs("\"><h3>", out);
	html_text(out, w->name);
	fputs(" · ", out);
	html_text(out, o->name);
	fprintf(out, "</h3><p class=\"meta\">%" PRIu64 " ops, %.1f ops/s (scheduled %.0f), "
		     "%" PRIu64 " errors, %" PRIu64 " missed</p>\n<div class=\"charts\">\n",
		o->count, active_s(o) > 0 ? o->count / active_s(o) : 0, o->target_ops, o->errors,
		o->missed);

	/* Latency over time, with the kernel's view of the same op beside. */
	const struct rm_series *lat[] = { o->s_p50, o->s_p99, o->s_p999, o->s_max };
	static const char *const stat[] = { "p50", "p99", "p999", "max" };
	static const char *const nice[] = { "p50", "p99", "p99.9", "max" };
	static const char *const colors[] = { "#1f5fa8", "#b3261e", "#6a3d9a", "#4d4d4d" };
	struct chart_line lines[8];
	size_t n = 0;
	for (size_t i = 0; i < 4; i++) {
		snprintf(ids[n], sizeof(ids[n]), "%s/%s/%s", w->name, o->name, stat[i]);
		lines[n] = (struct chart_line){ lat[i], nice[i], ids[n], colors[i], i == 3 };
		n++;
	}
	snprintf(id, sizeof(id), "lat-%s-%s", w->name, o->name);
	snprintf(title, sizeof(title), "%s %s: latency over time", w->name, o->name);
	snprintf(desc, sizeof(desc), "p50, p99, p99.9 and max latency from the intended time per "
		 "interval, log scale; shaded: intervals where soakd was late. Whole run: p99 %.1f µs, "
		 "max %.1f µs.", hist_percentile(o->lat, 99) / 1e3, hist_max(o->lat) / 1e3);
	figure(out, "Latency (log scale)");
	c.unit = "µs";
	c.log_y = true;
	chart_time(out, &c, lines, n);
	fputs("</figure>\n", out);

	n = 0;
	static const char *const families[] = { "blk", "tcp" };
	for (size_t f = 0; f < 2 && n < 4; f++)
		for (size_t i = 1; i < 4 && n < 4; i += 2) {   /* p99 and max */
			char name[96];
			/* TCP's series is the connections' smoothed RTT, whatever the op. */
			const char *kop = f == 1 ? "srtt" : kernel_op(o->name);
			snprintf(name, sizeof(name), "%s.%s.%s", families[f], kop, stat[i]);
			const struct rm_series *s = runmodel_find(w->kernel, w->n_kernel, name);
			if (!s)
				continue;
			snprintf(ids[n], sizeof(ids[n]), "%s/%s/kernel.%s", w->name, o->name, name);
			snprintf(labels[n], sizeof(labels[n]), "kernel %s %s %s", families[f], kop,
				 nice[i]);
			lines[n] = (struct chart_line){ s, labels[n], ids[n], i == 1 ? "#2e7d32" : "#4d4d4d",
							i == 3 };
			n++;
		}
	if (n) {
		snprintf(id, sizeof(id), "kern-%s-%s", w->name, o->name);
		snprintf(title, sizeof(title), "%s %s: kernel latency over time", w->name, o->name);
		snprintf(desc, sizeof(desc), "The kernel's latency of the same kind of request "
			 "(block layer issue to complete, or TCP), p99 and max per interval.");
		figure(out, "Kernel latency, same time axis (log scale)");
		chart_time(out, &c, lines, n);
		fputs("</figure>\n", out);
	}

	snprintf(ids[0], sizeof(ids[0]), "%s/%s/ops_per_s", w->name, o->name);
	snprintf(ids[1], sizeof(ids[1]), "%s/%s/target_per_s", w->name, o->name);
	lines[0] = (struct chart_line){ o->s_rate, "achieved", ids[0], "#1f5fa8", false };
	lines[1] = (struct chart_line){ o->s_target, "target", ids[1], "#4d4d4d", true };
	snprintf(id, sizeof(id), "rate-%s-%s", w->name, o->name);
	snprintf(title, sizeof(title), "%s %s: throughput against target", w->name, o->name);
	snprintf(desc, sizeof(desc), "Ops per second completed per interval and the scheduled rate.");
	figure(out, "Throughput (ops/s)");
	c.unit = "ops/s";
	c.log_y = false;
	chart_time(out, &c, lines, 2);
	fputs("</figure>\n", out);

	if (o->errors || o->missed) {
		snprintf(ids[0], sizeof(ids[0]), "%s/%s/errors", w->name, o->name);
		snprintf(ids[1], sizeof(ids[1]), "%s/%s/missed", w->name, o->name);
		lines[0] = (struct chart_line){ o->s_errors, "errors", ids[0], "#b3261e", false };
		lines[1] = (struct chart_line){ o->s_missed, "missed", ids[1], "#e65100", true };
		snprintf(id, sizeof(id), "err-%s-%s", w->name, o->name);
		snprintf(title, sizeof(title), "%s %s: errors and missed ops", w->name, o->name);
		snprintf(desc, sizeof(desc), "Failed and missed ops per interval: %" PRIu64
			 " errors and %" PRIu64 " missed in all.", o->errors, o->missed);
		figure(out, "Errors and missed ops per interval");
		c.unit = "";
		chart_time(out, &c, lines, 2);
		fputs("</figure>\n", out);
	}

	long worst = runmodel_worst_slice(o);
	struct hist *scratch = hist_new();
	const struct hist *h[2] = { o->lat, worst >= 0 && scratch ?
					    runmodel_slice(o, (size_t)worst, scratch) : NULL };
	char wl[64];
	plot_format_elapsed((double)worst * (m->slice_ns / 1e9), wl, sizeof(wl));
	snprintf(labels[0], sizeof(labels[0]), "whole run");
	snprintf(labels[1], sizeof(labels[1]), "worst slice (from %s)", wl);
	snprintf(ids[0], sizeof(ids[0]), "%s/%s/spectrum", w->name, o->name);
	snprintf(ids[1], sizeof(ids[1]), "%s/%s/spectrum-worst", w->name, o->name);
	const char *lab[2] = { labels[0], labels[1] }, *idp[2] = { ids[0], ids[1] };
	snprintf(id, sizeof(id), "spec-%s-%s", w->name, o->name);
	snprintf(title, sizeof(title), "%s %s: latency by percentile", w->name, o->name);
	snprintf(desc, sizeof(desc), "Percentile spectrum, x axis 1/(1-p) on a log scale (90%%, "
		 "99%%, 99.9%%, ...), for the whole run and the slice with the highest p99.9.");
	figure(out, "Latency by percentile (HdrHistogram style)");
	chart_spectrum(out, &c, h, lab, idp, h[1] ? 2 : 1);
	hist_delete(scratch);
	fputs("</figure>\n</div></section>\n", out);
}

int html_report_write(FILE *out, const struct html_report_input *in)
{
	const struct runmodel *m = in->m;
	struct html_verdict v = html_run_verdict(m, in->o);
	const char *word = html_verdict_word(&v);
	char when[64] = "", len[32];

	html_page_begin(out, in->title);
	if (m->wall_start_ns) {
		time_t t = (time_t)(m->wall_start_ns / 1000000000);
		struct tm tm;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t, &tm));
	}
	plot_format_elapsed(m->end_s, len, sizeof(len));
	fputs("<header><h1>", out);
	html_text(out, in->title);
	fputs("</h1><p class=\"meta\">", out);
	html_text(out, in->source);
	fprintf(out, " · started %s · %s of run time · %zu workload%s</p></header>\n",
		when[0] ? when : "(unknown)", len, m->n, m->n == 1 ? "" : "s");

	fprintf(out, "<section id=\"verdict\" data-verdict=\"%s\"><h2>Verdict</h2>\n"
		     "<p><span class=\"verdict %s\">%s</span> ", word,
		strcmp(word, "PASS") == 0 ? "PASS" : "FAIL", word);
	html_verdict_reasons(out, &v);
	char sl[32];
	plot_format_elapsed(m->slice_ns / 1e9, sl, sizeof(sl));
	fprintf(out, " Slices of %s.</p>\n", sl);
	verdict_table(out, m, in->o);
	html_report_certify(out, m);
	alarms(out, m);
	fputs("</section>\n", out);

	fputs("<nav><h2>Workloads</h2><ul>", out);
	for (size_t i = 0; i < m->n; i++) {
		fputs("<li><a href=\"#w-", out);
		html_text(out, m->w[i]->name);
		fputs("\">", out);
		html_text(out, m->w[i]->name);
		fputs("</a></li>", out);
	}
	fputs("</ul></nav>\n", out);
	for (size_t i = 0; i < m->n; i++) {
		const struct rm_workload *w = m->w[i];
		struct chart_band bands[64];
		size_t nb;
		bands_of(m, w, bands, 64, &nb);
		fputs("<section class=\"workload\" id=\"w-", out);
		html_text(out, w->name);
		fputs("\" data-workload=\"", out);
		html_text(out, w->name);
		fputs("\"><h2>Workload ", out);
		html_text(out, w->name);
		fputs("</h2><p class=\"meta\">state ", out);
		html_text(out, w->state[0] ? w->state : "unknown");
		if (w->reason[0]) {
			fputs(": ", out);
			html_text(out, w->reason);
		}
		fprintf(out, " · %" PRIu64 " intervals</p>\n", w->intervals);
		for (size_t k = 0; k < w->n_ops; k++)
			if (!html_op_unused(&w->ops[k]))
				op_section(out, m, w, &w->ops[k], bands, nb);
		fputs("</section>\n", out);
	}
	html_report_search(out, m);
	html_report_host(out, m);
	html_report_facts(out, m, in->plan, in->devices);
	html_page_end(out);
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return strcmp(word, "PASS") == 0 ? 0 : 1;
}
