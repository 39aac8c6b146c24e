// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control commands' handlers: what each request the control socket
 * (daemon/ctl) reads does to the run, and its reply.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "base/log.h"
#include "base/loop.h"
#include "ctl/ctl_server.h"
#include "ctl/dumper.h"
#include "drift/drift.h"
#include "export/export.h"
#include "host/host.h"
#include "parse.h"
#include "probes/probes.h"
#include "results/results.h"
#include "results/rundir.h"
#include "rfc3339.h"
#include "rundump.h"
#include "workload/workload.h"

#include "daemon_int.h"
#include "reload/reload.h"

char *reply(json_t *v)
{
	char *line = proto_encode_line(v);
	json_decref(v);
	return line ? line : proto_error_line("out of memory");
}

static char *handle_start_stop(struct daemon *d, const struct proto_request *req)
{
	bool start = req->cmd == PROTO_START;
	size_t idx[CONFIG_MAX_WORKLOADS];
	size_t n = 0;

	if (req->n_names == 0) {
		/* Not those a refused reload left without targets: named,
		 * they are refused with the reason. */
		for (size_t i = 0; i < d->n_workloads; i++)
			if (!d->removed[i] && !(start && d->workloads[i]->released))
				idx[n++] = i;
	} else {
		for (size_t k = 0; k < req->n_names; k++) {
			size_t i;
			if (!find_workload(d, req->names[k], &i))
				return proto_error_line("no workload named \"%s\"", req->names[k]);
			idx[n++] = i;
		}
	}
	if (start && d->state == RUN_STOPPING)
		return proto_error_line("soakd is shutting down");
	if (start && waiting_for_start_at(d, mono_ns())) {
		char when[64];
		rfc3339_format(d->cfg->start_at_ns, when, sizeof(when));
		return proto_error_line("run %s waits for its start_at, %s: its workloads start "
					"then", d->cfg->name, when);
	}

	json_t *arr = json_array();
	for (size_t k = 0; k < n; k++) {
		struct workload *w = d->workloads[idx[k]];
		char err[256] = "";
		if (start && !workload_is_active(w)) {
			if (start_workload(d, idx[k], err, sizeof(err)) < 0) {
				json_decref(arr);
				return proto_error_line("cannot start %s: %s", w->cfg->name, err);
			}
		} else if (!start) {
			d->pending_start_ns[idx[k]] = 0;
			if (workload_is_active(w)) {
				workload_request_stop(w, "stopped by soakctl");
				log_info("workload %s stopping at a client's request", w->cfg->name);
			}
		}
		json_array_append_new(arr, json_pack("{s:s,s:s}", "name", w->cfg->name, "state",
						     workload_state_name(w->state)));
	}
	return reply(json_pack("{s:b,s:o}", "ok", 1, "workloads", arr));
}

/* soakctl trace [on|off] [blk|tcp]...: without names, every family; a
 * family named explicitly must be available. */
static char *handle_trace(struct daemon *d, const struct proto_request *req)
{
	bool chosen[PROBE_FAMILIES] = { false };
	char err[PROBE_REASON_LEN] = "";
	int switched = 0;

	for (size_t k = 0; k < req->n_names; k++) {
		int f = probe_family_from_name(req->names[k]);
		if (f < 0)
			return proto_error_line("no probe named \"%s\" (expected blk or tcp)",
						req->names[k]);
		chosen[f] = true;
	}
	for (int f = 0; f < PROBE_FAMILIES && req->trace_state != PROTO_TRACE_QUERY; f++) {
		bool on = req->trace_state == PROTO_TRACE_ON;
		if (req->n_names ? !chosen[f]
				 : probes_state(d->probes, (enum probe_family)f) == PROBE_UNAVAILABLE)
			continue;
		if (probes_set(d->probes, (enum probe_family)f, on, err, sizeof(err)) < 0)
			return proto_error_line("%s", err);
		log_info("kernel tracing of %s switched %s by soakctl",
			 probe_family_name((enum probe_family)f), on ? "on" : "off");
		switched++;
	}
	if (req->trace_state != PROTO_TRACE_QUERY && !switched)
		return proto_error_line("kernel tracing is unavailable: blk: %s; tcp: %s",
					probes_reason(d->probes, PROBE_BLK),
					probes_reason(d->probes, PROBE_TCP));
	return reply(json_pack("{s:b,s:o}", "ok", 1, "probes", probes_trace_json(d->probes)));
}

/* What the run knows now of each workload's state, for dumps that do not
 * read the log from its start. */
static json_t *workload_states(struct daemon *d)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < d->n_workloads; i++) {
		const struct workload *w = d->workloads[i];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", w->cfg->name,
						     "state", workload_state_name(w->state),
						     "reason", w->reason));
	}
	return arr;
}

/*
 * Per-interval, per-slice and filtered results come from the run's log, so
 * live and finished runs are dumped by one code.  The log is read and the
 * reply written on a dumper thread (dumper.h): the loop only hands the
 * request over.
 */
/* The host's summary (dump) or slices (report) beside the results. */
static json_t *with_host(struct daemon *d, json_t *reply, bool report)
{
	host_add_to_reply(d->host, reply, report);
	return reply;
}

static json_t *with_certify(struct daemon *d, json_t *v);

static char *handle_dump_from_log(struct daemon *d, const struct proto_request *req)
{
	if (!d->rundir)
		return proto_error_line("this run is not being recorded, so only its totals can "
					"be dumped");
	if (!dumper_has_room(d->dumper))
		return proto_error_line("soakd is already building %d dumps; try again when one "
					"is done", DUMPER_MAX_JOBS);
	struct dump_job *job = calloc(1, sizeof(*job));
	if (!job)
		return proto_error_line("out of memory");
	job->format = req->format == PROTO_FORMAT_CSV ? RUNDUMP_CSV
		      : req->format == PROTO_FORMAT_HDR ? RUNDUMP_HDR : RUNDUMP_JSON;
	job->chunks = req->chunks;
	job->filter = (struct rundump_filter){
		.since_ns = req->since_ns, .until_ns = req->until_ns, .slice_ns = req->slice_ns,
		.workload = req->workload ? strdup(req->workload) : NULL,
		.op = req->op ? strdup(req->op) : NULL, .service = req->service,
	};
	job->log_path = strdup(rundir_log_path(d->rundir));
	job->rundir = d->rundir;
	/* What an unfiltered dump has beside the totals, as it is now: the
	 * log holds it too, but before --since it is not read. */
	if (job->format == RUNDUMP_JSON)
		job->sections = with_certify(d, json_object());
	job->states = workload_states(d);
	struct ctl_stream *st = NULL;
	if (!job->log_path || !job->states || (req->workload && !job->filter.workload) ||
	    (req->op && !job->filter.op) || !(st = ctl_server_defer(d->ctl))) {
		dump_job_free(job);
		return proto_error_line("out of memory");
	}
	int r = dumper_start(d->dumper, job, st);
	if (r < 0) {
		char *line = proto_error_line("cannot start a dump: %s", strerror(-r));
		/* Nothing was sent yet: the line fits the socket's buffer. */
		int w = line ? ctl_stream_write(st, line, strlen(line)) : -ENOMEM;
		free(line);
		ctl_stream_done(st, w == 0);
	}
	return CTL_REPLY_DEFERRED;
}

/* A reply that can be large (a month's report, totals of many targets):
 * built here, where the results live, but encoded and sent by a dumper
 * thread, so the loop does not wait on it. */
static char *reply_off_loop(struct daemon *d, json_t *v)
{
	if (!v)
		return proto_error_line("out of memory");
	if (!dumper_has_room(d->dumper))
		return reply(v);
	struct ctl_stream *st = ctl_server_defer(d->ctl);
	if (!st)
		return reply(v);
	int r = dumper_send(d->dumper, v, st);
	if (r < 0) {
		char *line = proto_error_line("cannot send the reply: %s", strerror(-r));
		int w = line ? ctl_stream_write(st, line, strlen(line)) : -ENOMEM;
		free(line);
		ctl_stream_done(st, w == 0);
	}
	return CTL_REPLY_DEFERRED;
}

/* A dump or report, with the certification's verdicts if the run has one,
 * the search's curve, and the run's drift alarms ([] for none). */
static json_t *with_certify(struct daemon *d, json_t *v)
{
	if (v && d->certify)
		json_object_set_new(v, "certify", certify_report_json(d->certify));
	if (v && d->search)
		json_object_set_new(v, "search", search_report_json(d->search));
	if (v && drift_events(d->drift))
		json_object_set_new(v, "drift", json_deep_copy(drift_events(d->drift)));
	return v;
}

/* The results' status, and what only the run knows: start_at, exports. */
static json_t *status_json(struct daemon *d)
{
	uint64_t now = mono_ns();
	bool waiting = waiting_for_start_at(d, now);
	json_t *v = results_status_json(d->results, now,
					waiting ? "waiting" : run_state_name(d->state));

	if (v && waiting) {
		char when[64];
		rfc3339_format(d->cfg->start_at_ns, when, sizeof(when));
		json_object_set_new(v, "elapsed_s", json_real(0));
		json_object_set_new(v, "start_at", json_string(when));
		json_object_set_new(v, "starts_in_s", json_real(((uint64_t)d->run_start_ns - now) / 1e9));
	}
	/* A finished run's time stopped when it finished. */
	if (v && d->state == RUN_FINISHED && d->finished_ns)
		json_object_set_new(v, "elapsed_s",
				    json_real(mono_since(d->run_start_ns, d->finished_ns) / 1e9));
	if (v && d->exports)
		json_object_set_new(v, "exports", exports_status_json(d->exports));
	/* Drift alarms: every test's state, the line STATUS= shows. */
	if (v && drift_state(d->drift) && json_object_size(drift_state(d->drift))) {
		char line[512];
		drift_status(d->drift, line, sizeof(line));
		json_object_set_new(v, "drift", json_pack("{s:O,s:s,s:I}", "tests",
			drift_state(d->drift), "alarms_on", line,
			"alarms", (json_int_t)drift_alarms(d->drift)));
	}
	/* Where the run's files are, for soakctl report --html on this host. */
	if (v && d->rundir)
		json_object_set_new(v, "run_dir", json_string(rundir_path(d->rundir)));
	if (v && d->certify)
		json_object_set_new(v, "certify", certify_status_json(d->certify));
	if (v && d->search)
		json_object_set_new(v, "search", search_status_json(d->search));
	return v;
}

static char *handle_debug(struct daemon *d, const struct proto_request *req)
{
#ifdef SOAK_TEST_HOOKS
	char buf[64];
	format_duration(req->stall_ns, buf, sizeof(buf));
	log_warning("debug: the main loop stalls for %s at a client's request", buf);
	d->stall_ns = req->stall_ns;
	return reply(json_pack("{s:b,s:s}", "ok", 1, "stalled", buf));
#else
	(void)d;
	(void)req;
	return proto_error_line("unknown command 'debug': this soakd was built without test hooks "
				"(meson -Dtest_hooks=true)");
#endif
}

char *ctl_handle(void *userdata, const struct proto_request *req)
{
	struct daemon *d = userdata;

	if (d->preparing.active)
		return handle_preparing(d, req);
	/* A new run that could not start: soakd is on its way out. */
	if (!d->results)
		return proto_error_line("soakd is stopping: the new run could not start (see its log)");
	switch (req->cmd) {
	case PROTO_STATUS:
		return reply(status_json(d));
	case PROTO_START:
		if (req->new_run)
			return handle_new_run(d);
		return handle_start_stop(d, req);
	case PROTO_STOP:
		return handle_start_stop(d, req);
	case PROTO_DUMP:
		if (req->format == PROTO_FORMAT_JSON && !req->has_filters)
			return reply_off_loop(d, with_host(d, with_certify(d, results_dump_json(d->results)),
							   false));
		return handle_dump_from_log(d, req);
	case PROTO_TRACE:
		return handle_trace(d, req);
	case PROTO_REPORT:
		return reply_off_loop(d, with_host(d, with_certify(d, results_report_json(d->results)),
						   true));
	case PROTO_RELOAD:
		return handle_reload(d);
	case PROTO_DEBUG:
		return handle_debug(d, req);
	}
	return proto_error_line("unhandled command");
}

