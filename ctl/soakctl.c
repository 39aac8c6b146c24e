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
#include "reply.h"

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
