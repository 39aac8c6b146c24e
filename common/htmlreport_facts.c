// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report's host panels and facts: host records as charts on the
 * run's time axis, the configuration with secret-looking values removed,
 * device facts, soakd's versions, restarts and gaps.
 */
#include "htmlreport.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htmlchart.h"
#include "htmlreport_int.h"
#include "plot.h"

bool html_secret_key(const char *key)
{
	static const char *const words[] = { "secret", "password", "passwd", "token", "access_key",
					     "session", "private", "auth" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(key, words[i]))
			return true;
	return false;
}

static json_t *redact(json_t *v)
{
	const char *key;
	json_t *m;

	if (json_is_object(v)) {
		json_t *c = json_object();
		json_object_foreach(v, key, m)
			json_object_set_new(c, key, html_secret_key(key) ? json_string("(not shown)")
									 : redact(m));
		return c;
	}
	if (json_is_array(v)) {
		json_t *c = json_array();
		size_t i;
		json_array_foreach(v, i, m)
			json_array_append_new(c, redact(m));
		return c;
	}
	return json_deep_copy(v);
}

static void print_scalar(FILE *out, json_t *v);

/* A host panel: the series whose names start with prefix and end with
 * suffix (NULL: any), one line each. */
static void host_chart(FILE *out, const struct runmodel *m, const char *caption, const char *id,
		       const char *prefix, const char *suffix, const char *unit)
{
	static const char *const colors[] = { "#1f5fa8", "#b3261e", "#2e7d32", "#6a3d9a",
					       "#e65100", "#4d4d4d", "#00695c", "#ad1457" };
	struct chart_line lines[8];
	char labels[8][96], ids[8][112];
	size_t n = 0, plen = strlen(prefix);

	for (size_t i = 0; i < m->n_host && n < 8; i++) {
		const char *name = m->host[i]->name;
		size_t len = strlen(name), slen = suffix ? strlen(suffix) : 0;
		if (strncmp(name, prefix, plen) != 0)
			continue;
		if (suffix && (len < slen || strcmp(name + len - slen, suffix) != 0))
			continue;
		snprintf(labels[n], sizeof(labels[n]), "%.*s", (int)(len - plen - slen),
			 name + plen);
		snprintf(ids[n], sizeof(ids[n]), "host/%s", name);
		lines[n] = (struct chart_line){ m->host[i], labels[n], ids[n], colors[n], false };
		n++;
	}
	if (!n)
		return;
	char title[160], desc[256];
	snprintf(title, sizeof(title), "host: %s", caption);
	snprintf(desc, sizeof(desc), "%s per host interval, on the run's time axis.", caption);
	struct chart c = { .id = id, .title = title, .desc = desc, .unit = unit, .t_end = m->end_s };
	fputs("<figure><figcaption>", out);
	html_text(out, caption);
	fputs("</figcaption>\n", out);
	chart_time(out, &c, lines, n);
	fputs("</figure>\n", out);
}

void html_report_host(FILE *out, const struct runmodel *m)
{
	if (!m->n_host)
		return;
	fputs("<section id=\"host\"><h2>Host</h2><div class=\"charts\">\n", out);
	host_chart(out, m, "CPU (% of all CPUs)", "host-cpu", "cpu.", NULL, "%");
	host_chart(out, m, "Pressure stall (% of the interval)", "host-psi", "psi.", NULL, "%");
	host_chart(out, m, "Memory", "host-mem", "mem.", NULL, "B");
	host_chart(out, m, "Device utilisation (%)", "host-util", "disks.", ".util_pct", "%");
	host_chart(out, m, "Device queue depth", "host-queue", "disks.", ".queue_depth", "");
	host_chart(out, m, "Device reads (B/s)", "host-rd", "disks.", ".read_Bps", "B/s");
	host_chart(out, m, "Device writes (B/s)", "host-wr", "disks.", ".write_Bps", "B/s");
	host_chart(out, m, "Network receive (B/s)", "host-rx", "net.", ".rx_Bps", "B/s");
	host_chart(out, m, "Network send (B/s)", "host-tx", "net.", ".tx_Bps", "B/s");
	host_chart(out, m, "TCP", "host-tcp", "tcp.", NULL, "");
	fputs("</div></section>\n", out);
}

static void print_scalar(FILE *out, json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		html_text(out, json_string_value(v));
	else if (json_is_integer(v))
		fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%g", json_real_value(v));
		fputs(buf, out);
	} else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "yes" : "no", out);
	else
		fputs("-", out);
}

static void devices_table(FILE *out, json_t *devices)
{
	static const char *const keys[] = { "path", "size_bytes", "model", "vendor", "serial",
					    "firmware", "rotational", "logical_block_size",
					    "physical_block_size", "scheduler", "write_cache",
					    "backing_file", "kind" };
	size_t i;
	json_t *d;

	fputs("<table id=\"devices\"><tr><th class=\"name\">workload</th>", out);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		fprintf(out, "<th class=\"name\">%s</th>", keys[k]);
	fputs("</tr>\n", out);
	json_array_foreach(devices, i, d) {
		json_t *dev = json_object_get(d, "device");
		fputs("<tr><td class=\"name\">", out);
		print_scalar(out, json_object_get(d, "workload"));
		fputs("</td>", out);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fputs("<td class=\"name\">", out);
			print_scalar(out, json_object_get(json_is_object(dev) ? dev : d, keys[k]));
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

void html_report_facts(FILE *out, const struct runmodel *m, json_t *plan, json_t *devices)
{
	char a[32], b[32], when[64];

	fputs("<section id=\"run\"><h2>Run</h2>\n<table id=\"restarts\"><tr><th class=\"name\">"
	      "started (UTC)</th><th>at run time</th><th class=\"name\">how</th><th class=\"name\">"
	      "soakd</th></tr>\n", out);
	for (size_t i = 0; i < m->n_restarts; i++) {
		const struct rm_restart *r = &m->restarts[i];
		time_t t = (time_t)(r->wall_ns / 1000000000);
		struct tm tm;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
		plot_format_elapsed(r->run_s, a, sizeof(a));
		fprintf(out, "<tr><td class=\"name\">%s</td><td>%s</td><td class=\"name\">%s</td>"
			     "<td class=\"name soakd-version\">", when, a, r->resumed ? "resumed" : "new run");
		html_text(out, r->version[0] ? r->version : "(not recorded)");
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	if (m->n_gaps) {
		fputs("<table id=\"gaps\"><tr><th>gap at run time</th><th>soakd down for</th></tr>\n",
		      out);
		for (size_t i = 0; i < m->n_gaps; i++) {
			plot_format_elapsed(m->gaps[i].run_s, a, sizeof(a));
			plot_format_elapsed(m->gaps[i].down_s, b, sizeof(b));
			fprintf(out, "<tr><td>%s</td><td>%s</td></tr>\n", a, b);
		}
		fputs("</table>\n", out);
	} else {
		fputs("<p>No gaps: soakd was up for the whole run.</p>\n", out);
	}
	if (m->skipped)
		fprintf(out, "<p>%" PRIu64 " records of the log were not understood and skipped.</p>\n",
			m->skipped);
	if (json_is_array(devices) && json_array_size(devices)) {
		fputs("<h3>Devices</h3>\n", out);
		devices_table(out, devices);
	}
	if (plan) {
		json_t *shown = redact(plan);
		char *text = shown ? json_dumps(shown, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		fputs("<h3>Configuration (resolved plan; secrets never shown)</h3>\n<pre id=\"config\">",
		      out);
		/* Line by line: html_text drops control characters, the
		 * dump's line breaks with them (JSON escapes those in strings). */
		for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			html_text(out, line);
			if (nl)
				fputc('\n', out);
		}
		fputs("</pre>\n", out);
		free(text);
		json_decref(shown);
	}
	fputs("</section>\n", out);
}
