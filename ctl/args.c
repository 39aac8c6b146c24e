// SPDX-License-Identifier: GPL-2.0-only
/*
 * soakctl's command line: options, help, and the request line they make.
 */
#include "args.h"

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
#include "transact.h"

#ifndef SOAK_VERSION
#define SOAK_VERSION "unknown"
#endif

#define DEFAULT_SOCKET "/run/soakd/soakd.sock"

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
	"  report --html FILE [--slice D] [--thresholds LIST] [--limits LIST]\n"
	"         [--run-dir DIR]\n"
	"                              one self-contained HTML page of the run: the\n"
	"                              verdict, latency, throughput and kernel series\n"
	"                              over time, percentile spectra, host panels,\n"
	"                              configuration and devices (\"-\": stdout)\n"
	"  cmp [--format text|json] [--html FILE] [--min-change PCT] RUN_A RUN_B\n"
	"                              two recorded runs (directories, logs or JSON\n"
	"                              dumps) per workload and op: throughput,\n"
	"                              p50/p99/p99.9,\n"
	"                              errors, missed and verification counts, each\n"
	"                              change marked when it exceeds the runs' own\n"
	"                              slice-to-slice noise and PCT (default 10) % of\n"
	"                              A's value; exit 3 when one does\n"
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
	"  --timeout SECONDS  how long to wait for each part of soakd's reply (default: 10)\n"
	"  --help, --version\n"
	"\n"
	"Exit status: 0 done, 1 soakd refused the request, 2 no valid reply from\n"
	"soakd, 3 the report's verdict is FAIL, 64 usage error.\n";

int usage_error(const char *fmt, ...)
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
int parse_args(int argc, char **argv, struct options *o)
{
	static const char *const valued[] = { "--socket", "--timeout", "--format", "--slice",
					      "--thresholds", "--limits", "--workload", "--op",
					      "--since", "--until", "--run-dir", "--output",
					      "--interval", "--html", "--min-change" };
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
			} else if (k == 13) {
				o->html = value;
			} else if (k == 14) {
				char *end;

				errno = 0;
				o->min_change_pct = strtod(value, &end);
				if (end != value && *end == '%')
					end++;
				if (errno || end == value || *end || !(o->min_change_pct >= 0) ||
				    o->min_change_pct > 1000)
					return usage_error("--min-change wants a percentage between 0 and 1000, "
							   "not '%s'", value);
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

const char *socket_path(const struct options *o, char *buf, size_t buflen)
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
int build_request(const struct options *o, json_t **ret)
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
			/* The text in chunks, with soakd's keep-alives between
			 * them (transact.c). */
			if (o->format && strcmp(o->format, "json") != 0)
				json_object_set_new(req, "chunks", json_true());
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
