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

#include "proto.h"
#include "report.h"
#include "view.h"
#include "search_view.h"
#include "verdicts.h"
#include "rundump.h"
#include "offline.h"
#include "transact.h"

#include "args.h"
#include "cmp.h"
#include "htmlreport.h"
#include "reply.h"
#include "runfiles.h"

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
	bool plan_slice = false;
	if (format == RUNDUMP_REPORT) {
		/* The report merges slices itself; read them at its length:
		 * the run's own, as soakd's report and the HTML judge it (a
		 * report is never of a merge). */
		f.slice_ns = o->report.slice_ns;
		if (!f.slice_ns)
			plan_slice = (f.slice_ns = run_files_plan_slice(o->run_dir)) != 0;
		if (!f.slice_ns)
			f.slice_ns = UINT64_C(3600) * 1000000000;
		o->report.slice_ns = 0;
		f.workload = NULL;
		f.op = NULL;
	}
	if (merge)
		r = offline_merge(o->args + 1, (size_t)(o->n_args - 1), format, &f, &reply, err,
				  sizeof(err));
	else
		r = offline_dump(o->run_dir, format, &f, &reply, err, sizeof(err));
	/* More of the run's own slices than a report holds (short slices,
	 * a long run): an hour's, as before there was a plan to read. */
	if (r == 0 && plan_slice && report_reply_slices(reply) > REPORT_MAX_SLICES) {
		fprintf(stderr, "soakctl: the run's %zu slices are more than a report's %d: "
			"slices of 1h (or give --slice)\n", report_reply_slices(reply),
			REPORT_MAX_SLICES);
		json_decref(reply);
		f.slice_ns = UINT64_C(3600) * 1000000000;
		r = offline_dump(o->run_dir, format, &f, &reply, err, sizeof(err));
	}
	if (r < 0) {
		fprintf(stderr, "soakctl: %s\n", err);
		return EXIT_REFUSED;
	}
	/* A certification's verdicts and a search's curve, as soakd adds them. */
	if (!merge && (format == RUNDUMP_REPORT || format == RUNDUMP_JSON))
		verdicts_from_log(o->run_dir, reply);
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
	int r = view_plot(&client, &po);
	return r ? r : search_view_plot(&client, &po);
}

/* report --html: from --run-dir, or from the run directory soakd names. */
static int run_html_report(struct options *o)
{
	char dir[4096], title[4200], source[4200];
	struct run_files rf;
	int r;

	if (o->n_args > 1 || o->json || o->format || o->report.workload || o->report.op ||
	    o->report.service || o->window_given)
		return usage_error("report --html takes only --slice, --thresholds, --limits and "
				   "--run-dir");
	if (o->run_dir) {
		snprintf(dir, sizeof(dir), "%s", o->run_dir);
		snprintf(source, sizeof(source), "recorded run %s", o->run_dir);
	} else {
		json_t *req = proto_request_new(PROTO_STATUS), *reply = NULL;
		if (!req)
			return EXIT_FAILURE;
		r = request_soakd(o, req, &reply);
		json_decref(req);
		if (r)
			return r;
		const char *rd = json_string_value(json_object_get(reply, "run_dir"));
		snprintf(dir, sizeof(dir), "%s", rd ? rd : "");
		json_decref(reply);
		if (!dir[0]) {
			fprintf(stderr, "soakctl: soakd did not say where its run directory is; "
					"use --run-dir DIR\n");
			return EXIT_REFUSED;
		}
		snprintf(source, sizeof(source), "live run in %s", dir);
	}
	r = run_files_load(&rf, dir, o->report.slice_ns);
	if (r) {
		if (!o->run_dir)
			fprintf(stderr, "soakctl: report --html reads the run directory of soakd on this "
					"host: run it as a user who can read %s, or copy the directory "
					"and use --run-dir\n", dir);
		run_files_done(&rf);
		return r;
	}
	snprintf(title, sizeof(title), "soakd run %s", rf.m->run[0] ? rf.m->run : dir);
	FILE *f = output_open(o->html);
	if (!f) {
		run_files_done(&rf);
		return EXIT_REFUSED;
	}
	struct html_report_input in = { .m = rf.m, .o = &o->report, .title = title,
					.source = source, .plan = rf.plan, .devices = rf.devices };
	int verdict = html_report_write(f, &in);
	r = output_close(f, o->html);
	run_files_done(&rf);
	if (r == 0 && strcmp(o->html, "-") != 0)
		fprintf(stderr, "soakctl: wrote %s (verdict %s)\n", o->html,
			verdict ? "FAIL, INCONCLUSIVE or NO DATA" : "PASS");
	return r ? r : verdict > 0 ? EXIT_REPORT_FAIL : 0;
}

static int run_cmp(struct options *o)
{
	if (o->n_args != 3)
		return usage_error("cmp needs two runs: RUN_A RUN_B (run directories or interval logs)");
	if (o->format && strcmp(o->format, "json") != 0 && strcmp(o->format, "text") != 0)
		return usage_error("cmp's --format is text or json, not '%s'", o->format);
	if (o->json || o->run_dir || o->report.workload || o->report.op || o->window_given ||
	    o->thresholds || o->limits || o->report.service)
		return usage_error("cmp takes only --format, --html and --slice");
	return cmp_runs(o->args[1], o->args[2], o->format, o->html, o->report.slice_ns,
			o->min_change_pct >= 0 ? o->min_change_pct : CMP_DEFAULT_MIN_CHANGE_PCT);
}

int main(int argc, char **argv)
{
	struct options o = { .timeout_s = 10, .min_change_pct = -1 };

	report_default_options(&o.report);
	struct proto_request check;
	char pathbuf[4096], err[256], *line;
	const char *path;
	json_t *req = NULL, *reply = NULL;
	int r;

	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	if (o.min_change_pct >= 0 && strcmp(o.args[0], "cmp") != 0)
		return usage_error("--min-change is for 'cmp'");
	if (strcmp(o.args[0], "watch") == 0 || strcmp(o.args[0], "plot") == 0)
		return run_view(&o);
	if (strcmp(o.args[0], "cmp") == 0)
		return run_cmp(&o);
	if (o.html && strcmp(o.args[0], "report") != 0)
		return usage_error("--html is for 'report' and 'cmp'");
	if (o.html)
		return run_html_report(&o);
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
