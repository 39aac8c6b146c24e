/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * soakctl: argv → one request line → one reply line → printed for people,
 * or as JSON/CSV for scripts.  No daemon logic lives here.
 *
 * Exit status: 0 done; 1 soakd refused the request ("ok": false) or the
 * output could not be written; 2 no valid reply from soakd (cannot connect,
 * timeout, connection closed, malformed reply); 64 usage error.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "proto.h"
#include "report.h"
#include "view.h"
#include "rundump.h"
#include "offline.h"
#include "transact.h"

#ifndef SOAK_VERSION
#define SOAK_VERSION "unknown"
#endif


#define DEFAULT_SOCKET "/run/soakd/soakd.sock"
#define MAX_ARGS 256

static const char usage_line[] =
	"Usage: soakctl [--socket PATH] [--timeout SECONDS] COMMAND [ARGS]\n";

static const char help_text[] =
	"Control a running soakd.\n"
	"\n"
	"Commands:\n"
	"  status [--json]             run state and per-workload rates and latencies\n"
	"  start [NAME...]             start the named workloads (default: all)\n"
	"  start --new-run             end the run and start a new one\n"
	"  stop [NAME...]              stop the named workloads (default: all)\n"
	"  trace [on|off] [blk|tcp]... switch kernel probes, or show their state\n"
	"  reload                      re-read soakd's configuration file: unchanged\n"
	"                              workloads run on with their results, changed\n"
	"                              ones start over, new ones start, removed ones\n"
	"                              stop; a bad file changes nothing (exit 1)\n"
	"  dump [--format json|csv|hdr] [--since D] [--until D] [--slice D]\n"
	"       [--workload NAME] [--op OP] [--service] [--run-dir DIR]\n"
	"                              the run's results: totals (json), one row per\n"
	"                              interval or slice and op (csv), or an\n"
	"                              HdrHistogram interval log (hdr); --since and\n"
	"                              --until are run time; --run-dir reads a\n"
	"                              recorded run without soakd\n"
	"  merge [--format json|csv|hdr] RUN_DIR_OR_LOG...\n"
	"                              runs of several hosts as one: histograms\n"
	"                              merged, counts added, over the time all of\n"
	"                              them ran\n"
	"  report [--slice D] [--thresholds LIST] [--limits LIST] [--workload NAME]\n"
	"         [--op OP] [--service] [--run-dir DIR]\n"
	"                              ACT-style table: per slice (default: as recorded,\n"
	"                              1h) and op, the % of ops over each threshold\n"
	"                              (default 1,8,64 ms), avg and max lines, and a\n"
	"                              verdict against limits (default 5,1,0.1 %);\n"
	"                              reads are judged (or --op); exit 3 on FAIL\n"
	"  watch [--interval S]        the status table again after every interval\n"
	"                              (or every S seconds) until Ctrl-C; exit 2 when\n"
	"                              soakd goes away\n"
	"  plot [--output FILE.svg] [--workload NAME] [--op OP] [--since D] [--until D]\n"
	"       [--slice D] [--run-dir DIR | CSV_FILE...]\n"
	"                              an SVG of p50/p99/p99.9 latency and ops/s over\n"
	"                              time per workload and op (default RUN.svg), from\n"
	"                              soakd, a recorded run, or dump/merge CSV files\n"
	"\n"
	"Options:\n"
	"  --socket PATH      soakd's socket (default: $SOAKD_SOCKET, else\n"
	"                     $RUNTIME_DIRECTORY/soakd.sock, else " DEFAULT_SOCKET ")\n"
	"  --timeout SECONDS  how long to wait for soakd (default: 10)\n"
	"  --help, --version\n"
	"\n"
	"Exit status: 0 done, 1 soakd refused the request, 2 no valid reply from\n"
	"soakd, 3 the report's verdict is FAIL, 64 usage error.\n";

struct options {
	const char *socket;
	double timeout_s;
	const char *format;
	bool json;
	bool report_options_given;
	bool window_given, new_run;
	uint64_t since_ns, until_ns;
	const char *run_dir;          /* dump/report a recorded run, without soakd */
	const char *output;           /* plot */
	double watch_interval_s;      /* watch; 0: the run's interval */
	const char *thresholds, *limits;  /* parsed once all options are read */
	struct report_options report;
	const char *args[MAX_ARGS];   /* args[0] is the command */
	int n_args;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("soakctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%sTry 'soakctl --help' for more.\n", usage_line);
	return EXIT_USAGE;
}

/* The value of option name ("--name VALUE" or "--name=VALUE"), or NULL. */
static const char *option_value(const char *name, int argc, char **argv, int *i, bool *matched)
{
	size_t n = strlen(name);

	*matched = false;
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=') {
		*matched = true;
		return argv[*i] + n + 1;
	}
	if (argv[*i][n] != '\0')
		return NULL;
	*matched = true;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Options are accepted before and after the command; "--" ends them. */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const char *const valued[] = { "--socket", "--timeout", "--format", "--slice",
					      "--thresholds", "--limits", "--workload", "--op",
					      "--since", "--until", "--run-dir", "--output",
					      "--interval" };
	enum { N_VALUED = sizeof(valued) / sizeof(valued[0]) };
	bool options_done = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *value = NULL;
		bool matched = false;
		size_t k;

		if (options_done || a[0] != '-' || a[1] == '\0') {
			if (o->n_args == MAX_ARGS)
				return usage_error("too many arguments (at most %d)", MAX_ARGS);
			o->args[o->n_args++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("%s%s", usage_line, help_text);
			exit(EXIT_SUCCESS);
		} else if (strcmp(a, "--version") == 0) {
			printf("soakctl %s\n", SOAK_VERSION);
			exit(EXIT_SUCCESS);
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--service") == 0) {
			o->report.service = true;
			o->report_options_given = true;
		} else if (strcmp(a, "--new-run") == 0) {
			o->new_run = true;
		} else {
			for (k = 0; k < N_VALUED; k++) {
				value = option_value(valued[k], argc, argv, &i, &matched);
				if (matched)
					break;
			}
			if (k == N_VALUED)
				return usage_error("unknown option '%s'", a);
			if (!value)
				return usage_error("option '%s' needs a value", valued[k]);
			if (k == 0) {
				o->socket = value;
			} else if (k == 1) {
				char *end;

				errno = 0;
				o->timeout_s = strtod(value, &end);
				if (end != value && *end == 's')
					end++;
				if (errno || end == value || *end || !isfinite(o->timeout_s) ||
				    o->timeout_s <= 0 || o->timeout_s > 86400)
					return usage_error("--timeout wants seconds between 0 and 86400, not '%s'",
							   value);
			} else if (k == 2) {
				o->format = value;
			} else if (k == 11) {
				o->output = value;
			} else if (k == 12) {
				char *end;

				errno = 0;
				o->watch_interval_s = strtod(value, &end);
				if (end != value && *end == 's')
					end++;
				if (errno || end == value || *end || !(o->watch_interval_s >= 0.1) ||
				    o->watch_interval_s > 3600)
					return usage_error("--interval wants seconds between 0.1 and 3600, "
							   "not '%s'", value);
			} else if (k >= 8) {
				const char *why = "";
				if (k == 10) {
					o->run_dir = value;
				} else if (parse_duration(value, k == 8 ? &o->since_ns : &o->until_ns,
							  &why) < 0) {
					return usage_error("bad %s '%s': %s", valued[k], value, why);
				} else {
					o->window_given = true;
				}
			} else {
				const char *why = "";
				int r = 0;
				o->report_options_given = true;
				if (k == 3)
					r = parse_duration(value, &o->report.slice_ns, &why);
				else if (k == 4)
					o->thresholds = value;
				else if (k == 5)
					o->limits = value;
				else if (k == 6)
					o->report.workload = value;
				else
					o->report.op = value;
				if (r < 0 || (k == 3 && o->report.slice_ns == 0))
					return usage_error("bad %s '%s': %s", valued[k], value,
							   r < 0 ? why : "must be above 0");
			}
		}
	}
	if (o->n_args == 0)
		return usage_error("no command given");
	/* Thresholds first: they decide how many limits there must be. */
	const char *why = "";
	if (o->thresholds && report_parse_thresholds(o->thresholds, &o->report, &why) < 0)
		return usage_error("bad --thresholds '%s': %s", o->thresholds, why);
	if (o->limits && report_parse_limits(o->limits, &o->report, &why) < 0)
		return usage_error("bad --limits '%s': %s", o->limits, why);
	return 0;
}

static const char *socket_path(const struct options *o, char *buf, size_t buflen)
{
	const char *env;

	if (o->socket)
		return o->socket;
	env = getenv("SOAKD_SOCKET");
	if (env && *env)
		return env;
	env = getenv("RUNTIME_DIRECTORY");
	if (env && *env) {
		/* systemd separates several runtime directories with ':'. */
		snprintf(buf, buflen, "%.*s/soakd.sock", (int)strcspn(env, ":"), env);
		return buf;
	}
	return DEFAULT_SOCKET;
}

/* Build the request; returns 0 or an exit code after saying why. */
static int build_request(const struct options *o, json_t **ret)
{
	const char *cmd = o->args[0];
	json_t *req = NULL, *names = NULL;
	int first = 1, i;

	if (o->json && strcmp(cmd, "status") != 0)
		return usage_error("--json is only for 'status' (use 'dump --format json')");
	if (o->format && strcmp(cmd, "dump") != 0)
		return usage_error("--format is only for 'dump'");
	bool is_dump = strcmp(cmd, "dump") == 0, is_report = strcmp(cmd, "report") == 0;
	if ((o->thresholds || o->limits) && !is_report)
		return usage_error("--thresholds and --limits are for 'report'");
	if (o->report_options_given && !is_report && !is_dump && strcmp(cmd, "merge") != 0)
		return usage_error("--slice, --workload, --op and --service are for 'dump', 'report' "
				   "and 'merge'");
	if (o->window_given && !is_dump && strcmp(cmd, "merge") != 0)
		return usage_error("--since and --until are for 'dump' and 'merge'");
	if (o->run_dir && !is_dump && !is_report)
		return usage_error("--run-dir is for 'dump' and 'report'");
	if (o->new_run && strcmp(cmd, "start") != 0)
		return usage_error("--new-run is for 'start'");
	if (o->new_run && o->n_args > 1)
		return usage_error("start --new-run starts every workload anew; it takes no names");
	if (o->until_ns && o->until_ns <= o->since_ns)
		return usage_error("--until must be after --since");
	if (o->format && strcmp(o->format, "json") != 0 && strcmp(o->format, "csv") != 0 &&
	    strcmp(o->format, "hdr") != 0)
		return usage_error("--format must be json, csv or hdr, not '%s'", o->format);

	if (strcmp(cmd, "status") == 0 || strcmp(cmd, "report") == 0 || strcmp(cmd, "dump") == 0) {
		if (o->n_args > 1)
			return usage_error("'%s' takes no arguments", cmd);
		req = proto_request_new(cmd[0] == 's' ? PROTO_STATUS :
					cmd[0] == 'r' ? PROTO_REPORT : PROTO_DUMP);
		if (req && cmd[0] == 'd') {
			char buf[64];
			json_object_set_new(req, "format", json_string(o->format ? o->format : "json"));
			if (o->since_ns) {
				format_duration(o->since_ns, buf, sizeof(buf));
				json_object_set_new(req, "since", json_string(buf));
			}
			if (o->until_ns) {
				format_duration(o->until_ns, buf, sizeof(buf));
				json_object_set_new(req, "until", json_string(buf));
			}
			if (o->report.slice_ns) {
				format_duration(o->report.slice_ns, buf, sizeof(buf));
				json_object_set_new(req, "slice", json_string(buf));
			}
			if (o->report.workload)
				json_object_set_new(req, "workload", json_string(o->report.workload));
			if (o->report.op)
				json_object_set_new(req, "op", json_string(o->report.op));
			if (o->report.service)
				json_object_set_new(req, "service", json_true());
		}
	} else if (strcmp(cmd, "start") == 0 || strcmp(cmd, "stop") == 0) {
		req = proto_request_new(cmd[2] == 'a' ? PROTO_START : PROTO_STOP);
		if (req && o->new_run)
			json_object_set_new(req, "new_run", json_true());
		if (req && o->n_args > 1)
			json_object_set_new(req, "workloads", names = json_array());
	} else if (strcmp(cmd, "trace") == 0) {
		req = proto_request_new(PROTO_TRACE);
		if (req && o->n_args > 1 &&
		    (strcmp(o->args[1], "on") == 0 || strcmp(o->args[1], "off") == 0)) {
			json_object_set_new(req, "state", json_string(o->args[1]));
			first = 2;
		}
		if (req && o->n_args > first)
			json_object_set_new(req, "probes", names = json_array());
	} else if (strcmp(cmd, "reload") == 0) {
		if (o->n_args > 1)
			return usage_error("'reload' takes no arguments: soakd re-reads the file it "
					   "was started with");
		req = proto_request_new(PROTO_RELOAD);
	} else if (strcmp(cmd, "debug") == 0) {
		/* Not in --help: only soakd built with -Dtest_hooks=true serves it. */
		if (o->n_args != 3 || strcmp(o->args[1], "stall") != 0)
			return usage_error("usage: soakctl debug stall DURATION");
		req = proto_request_new(PROTO_DEBUG);
		if (req)
			json_object_set_new(req, "stall", json_string(o->args[2]));
	} else {
		return usage_error("unknown command '%s' (expected status, start, stop, trace, reload, "
				   "dump, merge, report, watch, plot)",
				   cmd);
	}
	if (!req) {
		fprintf(stderr, "soakctl: out of memory\n");
		return EXIT_FAILURE;
	}
	for (i = first; names && i < o->n_args; i++)
		json_array_append_new(names, json_string(o->args[i]));
	*ret = req;
	return 0;
}

static const char *field_str(json_t *obj, const char *key, const char *fallback)
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

static void print_status(json_t *reply)
{
	json_t *workloads = json_object_get(reply, "workloads"), *w, *ops, *op;
	int wname = 8, wop = 2, wstate = 5;
	char elapsed[64], b[7][32];
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
	printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %8s\n", wname, "WORKLOAD", wop, "OP",
	       wstate, "STATE", "TARGET/s", "ACHIEVED/s", "P50(us)", "P99(us)", "MAX(us)", "ERRORS",
	       "LAG(ms)");
	json_array_foreach(workloads, i, w) {
		const char *name = field_str(w, "name", "?"), *state = field_str(w, "state", "?");
		const char *lag = field_num(w, "lag_ms", 1, b[6], sizeof(b[6]));

		ops = json_object_get(w, "ops");
		if (json_object_size(ops) == 0)
			printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %8s\n", wname, name, wop,
			       "-", wstate, state, "-", "-", "-", "-", "-", "-", lag);
		json_object_foreach(ops, opname, op)
			printf("%-*s  %-*s  %-*s  %10s  %10s  %9s  %9s  %9s  %7s  %8s\n", wname, name,
			       wop, opname, wstate, state,
			       field_num(op, "rate_target", 1, b[0], sizeof(b[0])),
			       field_num(op, "rate_achieved", 1, b[1], sizeof(b[1])),
			       field_num(op, "p50_us", 1, b[2], sizeof(b[2])),
			       field_num(op, "p99_us", 1, b[3], sizeof(b[3])),
			       field_num(op, "max_us", 1, b[4], sizeof(b[4])),
			       field_num(op, "errors", 0, b[5], sizeof(b[5])), lag);
		reason = field_str(w, "reason", NULL);
		if (reason)
			printf("  %s %s: %s\n", name, state, reason);
	}
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

static int print_reply(const struct options *o, json_t *reply)
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
	}
	return 0;
}

/* dump/report --run-dir and merge: from run directories, no soakd. */
static int run_offline(struct options *o)
{
	const char *cmd = o->args[0];
	bool merge = strcmp(cmd, "merge") == 0;
	json_t *reply = NULL;
	char err[512] = "";
	int r;

	if (!merge && strcmp(cmd, "dump") != 0 && strcmp(cmd, "report") != 0)
		return usage_error("--run-dir is for 'dump' and 'report'");
	if (o->json)
		return usage_error("--json is only for 'status'");
	if ((o->thresholds || o->limits) && strcmp(cmd, "report") != 0)
		return usage_error("--thresholds and --limits are for 'report'");
	if (merge && o->n_args < 2)
		return usage_error("merge needs run directories or interval logs to merge");
	if (!merge && o->n_args > 1)
		return usage_error("'%s' takes no arguments", cmd);
	if (o->format && strcmp(cmd, "report") == 0)
		return usage_error("--format is for 'dump' and 'merge'");
	struct rundump_filter f = {
		.since_ns = o->since_ns, .until_ns = o->until_ns, .slice_ns = o->report.slice_ns,
		.workload = o->report.workload, .op = o->report.op, .service = o->report.service,
	};
	enum rundump_format format = strcmp(cmd, "report") == 0 ? RUNDUMP_REPORT
				     : !o->format || strcmp(o->format, "json") == 0 ? RUNDUMP_JSON
				     : strcmp(o->format, "csv") == 0 ? RUNDUMP_CSV : RUNDUMP_HDR;
	if (format == RUNDUMP_REPORT) {
		/* The report merges slices itself; read them at its length. */
		f.slice_ns = o->report.slice_ns ? o->report.slice_ns : UINT64_C(3600) * 1000000000;
		o->report.slice_ns = 0;
		f.workload = NULL;
		f.op = NULL;
	}
	if (merge)
		r = offline_merge(o->args + 1, (size_t)(o->n_args - 1), format, &f, &reply, err,
				  sizeof(err));
	else
		r = offline_dump(o->run_dir, format, &f, &reply, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "soakctl: %s\n", err);
		return EXIT_REFUSED;
	}
	const char *notes = json_string_value(json_object_get(reply, "notes"));
	if (notes)
		fprintf(stderr, "soakctl: %s\n", notes);
	if (merge && !o->format)
		o->format = "json";
	struct options as_dump = *o;
	if (merge)
		as_dump.args[0] = "dump";
	r = print_reply(&as_dump, reply);
	json_decref(reply);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "soakctl: cannot write output: %s\n", strerror(errno));
		return r ? r : EXIT_REFUSED;
	}
	return r;
}

/* view.h's way to soakd: one request, one reply. */
static int request_soakd(void *userdata, json_t *request, json_t **ret_reply)
{
	const struct options *o = userdata;
	char pathbuf[4096], *line = proto_encode_line(request);
	int r;

	if (!line) {
		fprintf(stderr, "soakctl: out of memory\n");
		return EXIT_FAILURE;
	}
	r = ctl_transact(socket_path(o, pathbuf, sizeof(pathbuf)), o->timeout_s, line, ret_reply);
	free(line);
	return r;
}

/* watch and plot: options checked here, the work in view.c. */
static int run_view(struct options *o)
{
	const char *cmd = o->args[0];
	struct view_client client = { .request = request_soakd, .print_status = print_status,
				      .userdata = o };

	if (o->json || o->format || o->thresholds || o->limits || o->report.service || o->new_run)
		return usage_error("'%s' takes none of --json, --format, --thresholds, --limits, "
				   "--service, --new-run", cmd);
	if (strcmp(cmd, "watch") == 0) {
		if (o->n_args > 1 || o->output || o->run_dir || o->window_given || o->report.slice_ns ||
		    o->report.workload || o->report.op)
			return usage_error("'watch' takes only --interval");
		return view_watch(&client, o->watch_interval_s);
	}
	if (o->watch_interval_s)
		return usage_error("--interval is for 'watch'");
	if (o->run_dir && o->n_args > 1)
		return usage_error("plot reads --run-dir or CSV files, not both");
	struct view_plot_options po = {
		.output = o->output, .run_dir = o->run_dir,
		.csv_files = o->args + 1, .n_csv_files = o->n_args - 1,
		.workload = o->report.workload, .op = o->report.op,
		.since_ns = o->since_ns, .until_ns = o->until_ns, .slice_ns = o->report.slice_ns,
	};
	if (po.n_csv_files > 0 && (o->window_given || o->report.slice_ns))
		return usage_error("--since, --until and --slice are for plots from soakd or "
				   "--run-dir; cut CSV files with dump or merge");
	return view_plot(&client, &po);
}

int main(int argc, char **argv)
{
	struct options o = { .timeout_s = 10 };

	report_default_options(&o.report);
	struct proto_request check;
	char pathbuf[4096], err[256], *line;
	const char *path;
	json_t *req = NULL, *reply = NULL;
	int r;

	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	if (strcmp(o.args[0], "watch") == 0 || strcmp(o.args[0], "plot") == 0)
		return run_view(&o);
	if (o.output || o.watch_interval_s)
		return usage_error("--output is for 'plot', --interval for 'watch'");
	if (strcmp(o.args[0], "merge") == 0 || o.run_dir)
		return run_offline(&o);
	r = build_request(&o, &req);
	if (r)
		return r;
	line = proto_encode_line(req);
	json_decref(req);
	if (!line) {
		fprintf(stderr, "soakctl: out of memory\n");
		return EXIT_FAILURE;
	}
	/* soakd would refuse what its parser refuses; say so without asking. */
	if (proto_parse_request(line, strlen(line) - 1, &check, err, sizeof(err)) < 0) {
		free(line);
		return usage_error("%s", err);
	}
	proto_request_done(&check);

	path = socket_path(&o, pathbuf, sizeof(pathbuf));
	const char *text_key = strcmp(o.args[0], "dump") != 0 || !o.format ? NULL
			       : strcmp(o.format, "csv") == 0 ? "csv"
			       : strcmp(o.format, "hdr") == 0 ? "hdr" : NULL;
	r = ctl_transact_stream(path, o.timeout_s, line, text_key, &reply);
	free(line);
	if (r)
		return r;
	r = print_reply(&o, reply);
	/* What was printed may lack records: say so, and exit 1. */
	if (json_is_true(json_object_get(reply, "incomplete"))) {
		fprintf(stderr, "soakctl: this dump is incomplete: %s\n",
			field_str(reply, "incomplete_reason", "soakd did not say why"));
		r = r ? r : EXIT_REFUSED;
	}
	json_decref(reply);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "soakctl: cannot write output: %s\n", strerror(errno));
		return r ? r : EXIT_REFUSED;
	}
	return r;
}
