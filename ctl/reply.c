// SPDX-License-Identifier: GPL-2.0-only
/*
 * soakd's replies printed for people: the status table, text replies,
 * and JSON as it came for --json.
 */
#include "reply.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "certify_print.h"
#include "report.h"
#include "view.h"
#include "rundump.h"
#include "transact.h"

const char *field_str(json_t *obj, const char *key, const char *fallback)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : fallback;
}

/* A number for the table: decimals places, or "-" when absent. */
static const char *field_num(json_t *obj, const char *key, int decimals, char *buf, size_t buflen)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return "-";
	snprintf(buf, buflen, "%.*f", decimals, json_number_value(v));
	return buf;
}

static void format_elapsed(double s, char *buf, size_t buflen)
{
	unsigned long long t = s > 0 && s < 1e15 ? (unsigned long long)s : 0;

	if (t >= 86400)
		snprintf(buf, buflen, "%llud%02lluh%02llum", t / 86400, t / 3600 % 24, t / 60 % 60);
	else if (t >= 3600)
		snprintf(buf, buflen, "%lluh%02llum%02llus", t / 3600, t / 60 % 60, t % 60);
	else if (t >= 60)
		snprintf(buf, buflen, "%llum%02llus", t / 60, t % 60);
	else
		snprintf(buf, buflen, "%llus", t);
}

/* "name state (reason)" for workloads and probes. */
static void print_states(json_t *array, const char *sep)
{
	size_t i;
	json_t *v;

	json_array_foreach(array, i, v) {
		const char *reason = field_str(v, "reason", NULL);

		printf("%s%s: %s", sep, field_str(v, "name", "?"), field_str(v, "state", "?"));
		if (reason)
			printf(" (%s)", reason);
		putchar('\n');
	}
}

static void print_trace_summary(json_t *trace)
{
	const char *key, *sep = "trace: ";
	json_t *v;

	if (json_is_array(json_object_get(trace, "probes"))) {
		print_states(json_object_get(trace, "probes"), "trace ");
		return;
	}
	json_object_foreach(trace, key, v) {
		const char *state = json_is_string(v) ? json_string_value(v) : field_str(v, "state", NULL);
		const char *reason = field_str(v, "reason", NULL);

		if (!state)
			continue;
		printf("%s%s %s", sep, key, state);
		if (reason)
			printf(" (%s)", reason);
		sep = ", ";
	}
	if (strcmp(sep, ", ") == 0)
		putchar('\n');
}

static int max_width(int w, const char *s)
{
	int n = (int)strlen(s);

	return n > w ? n : w;
}

/* Before the run: "preparing d1 /dev/loop3: verify fill 37.5% (... blocks), about 12s left" */
static void print_preparing(json_t *p)
{
	char eta[64] = "";

	if (!json_is_object(p))
		return;
	if (json_is_number(json_object_get(p, "eta_s"))) {
		char left[48];
		format_elapsed(json_number_value(json_object_get(p, "eta_s")), left, sizeof(left));
		snprintf(eta, sizeof(eta), ", about %s left", left);
	}
	printf("preparing %s %s: %s %.1f%% (%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
	       " %s)%s\n", field_str(p, "workload", "?"), field_str(p, "target", "?"),
	       field_str(p, "what", "?"), json_number_value(json_object_get(p, "percent")),
	       json_integer_value(json_object_get(p, "done")),
	       json_integer_value(json_object_get(p, "total")), field_str(p, "unit", ""), eta);
}

void print_status(json_t *reply)
{
	json_t *workloads = json_object_get(reply, "workloads"), *w, *ops, *op;
	int wname = 8, wop = 2, wstate = 5;
	char elapsed[64], b[8][32];
	const char *opname, *reason;
	size_t i;

	format_elapsed(json_number_value(json_object_get(reply, "elapsed_s")), elapsed,
		       sizeof(elapsed));
	if (field_str(reply, "start_at", NULL))
		printf("run %s: waiting for start_at %s (in %.0fs)\n", field_str(reply, "run", "?"),
		       field_str(reply, "start_at", "?"),
		       ceil(json_number_value(json_object_get(reply, "starts_in_s"))));
	else
		printf("run %s: %s, elapsed %s\n", field_str(reply, "run", "?"),
		       field_str(reply, "state", "?"), elapsed);
	if (json_is_object(json_object_get(reply, "trace")))
		print_trace_summary(json_object_get(reply, "trace"));
	print_preparing(json_object_get(reply, "preparing"));
	if (json_is_object(json_object_get(reply, "preparing")))
		return;
	if (json_array_size(workloads) == 0) {
		printf("no workloads\n");
		return;
	}

	json_array_foreach(workloads, i, w) {
		wname = max_width(wname, field_str(w, "name", "?"));
		wstate = max_width(wstate, field_str(w, "state", "?"));
		json_object_foreach(json_object_get(w, "ops"), opname, op)
			wop = max_width(wop, opname);
	}
	putchar('\n');
	printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %7s  %8s\n", wname, "WORKLOAD", wop,
	       "OP", wstate, "STATE", "TARGET/s", "ACHIEVED/s", "P50(us)", "P99(us)", "MAX(us)",
	       "ERRORS", "MISSED", "LAG(ms)");
	json_array_foreach(workloads, i, w) {
		const char *name = field_str(w, "name", "?"), *state = field_str(w, "state", "?");
		const char *lag = field_num(w, "lag_ms", 1, b[6], sizeof(b[6]));

		ops = json_object_get(w, "ops");
		if (json_object_size(ops) == 0)
			printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %7s  %8s\n", wname, name,
			       wop, "-", wstate, state, "-", "-", "-", "-", "-", "-", "-", lag);
		json_object_foreach(ops, opname, op)
			printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %7s  %8s\n", wname,
			       name, wop, opname, wstate, state,
			       field_num(op, "rate_target", 1, b[0], sizeof(b[0])),
			       field_num(op, "rate_achieved", 1, b[1], sizeof(b[1])),
			       field_num(op, "p50_us", 1, b[2], sizeof(b[2])),
			       field_num(op, "p99_us", 1, b[3], sizeof(b[3])),
			       field_num(op, "max_us", 1, b[4], sizeof(b[4])),
			       field_num(op, "errors", 0, b[5], sizeof(b[5])),
			       field_num(op, "missed", 0, b[7], sizeof(b[7])), lag);
		reason = field_str(w, "reason", NULL);
		if (reason)
			printf("  %s %s: %s\n", name, state, reason);
	}
	certify_print_status(json_object_get(reply, "certify"), stdout);
	search_print(json_object_get(reply, "search"), stdout);
	/* Drift alarms on now (soakd.json(5), "drift"). */
	const char *drift = field_str(json_object_get(reply, "drift"), "alarms_on", NULL);
	if (drift && *drift)
		printf("%s\n", drift);
}

/* Print the string field key of reply as it is; 0 or an exit code. */
static int print_text(json_t *reply, const char *key, bool add_newline)
{
	const char *text = field_str(reply, key, NULL);
	size_t n;

	if (!text) {
		fprintf(stderr, "soakctl: soakd's reply has no \"%s\" text\n", key);
		return EXIT_NO_REPLY;
	}
	n = strlen(text);
	fwrite(text, 1, n, stdout);
	if (add_newline && n > 0 && text[n - 1] != '\n')
		putchar('\n');
	return 0;
}

int print_reply(const struct options *o, json_t *reply)
{
	const char *cmd = o->args[0];

	if ((strcmp(cmd, "status") == 0 && o->json) ||
	    (strcmp(cmd, "dump") == 0 && (!o->format || strcmp(o->format, "json") == 0))) {
		json_object_del(reply, "ok");
		/* 15 digits: 0.3 stays "0.3" rather than 0.29999999999999999. */
		json_dumpf(reply, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
		putchar('\n');
	} else if (strcmp(cmd, "status") == 0) {
		print_status(reply);
	} else if (strcmp(cmd, "dump") == 0) {
		return print_text(reply, strcmp(o->format, "hdr") == 0 ? "hdr" : "csv", false);
	} else if (strcmp(cmd, "report") == 0) {
		int r = report_print(reply, &o->report, stdout);
		if (r >= 0)
			certify_print_report(json_object_get(reply, "certify"), stdout);
		if (r >= 0)
			search_print(json_object_get(reply, "search"), stdout);
		if (r == -EDOM || r == -ENOENT)
			return EXIT_USAGE;
		return r < 0 ? EXIT_NO_REPLY : r ? EXIT_REPORT_FAIL : 0;
	} else if (strcmp(cmd, "trace") == 0) {
		size_t i;
		json_t *v;
		print_states(json_object_get(reply, "probes"), "");
		/* Targets the block probes cannot see, and why. */
		json_array_foreach(json_object_get(reply, "probes"), i, v) {
			const char *unwatched = field_str(v, "unwatched", NULL);
			if (unwatched)
				printf("%s: cannot watch %s\n", field_str(v, "name", "?"), unwatched);
		}
	} else if (strcmp(cmd, "debug") == 0) {
		printf("soakd's main loop stalled for %s\n", field_str(reply, "stalled", "?"));
	} else {
		print_states(json_object_get(reply, "workloads"), "");
		if (field_str(reply, "message", NULL))
			printf("%s\n", field_str(reply, "message", ""));
	}
	return 0;
}
