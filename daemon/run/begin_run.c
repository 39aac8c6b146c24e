// SPDX-License-Identifier: GPL-2.0-only
/*
 * Beginning a run: a new one, or the one the run directory holds resumed
 * (its log replayed into the results, from its checkpoint on); start_at;
 * and the "new-run" command, which ends one run and begins the next.
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
#include "ctl/dumper.h"
#include "device/dev_facts.h"
#include "drift/drift.h"
#include "host/host.h"
#include "export/export.h"
#include "parse.h"
#include "probes/probes.h"
#include "results/checkpoint.h"
#include "results/results.h"
#include "results/rundir.h"
#include "rfc3339.h"
#include "rundump.h"
#include "runlog.h"
#include "workload/workload.h"

#include "daemon.h"
#include "daemon_int.h"

static bool drift_wanted(const struct daemon *d)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (d->workloads[i]->cfg->drift.enabled)
			return true;
	return false;
}

/* Records of an interval closed this long after the checkpoint's end are
 * past it for every workload: the pass below stops there. */
#define DRIFT_PASS_SLACK_NS (UINT64_C(60) * 1000000000)

/*
 * The checkpoint holds the results, not the drift tests: with drift on,
 * the log up to the checkpoint feeds them first (its references lie at
 * the run's start, before any checkpoint).  That reads the part of the
 * log the checkpoint saves reading, so only when drift is on.
 */
/* How often a resume that reads a long log tells systemd, and by how much
 * it pushes the start's timeout on each time. */
#define RESUME_PING_NS (UINT64_C(5) * 1000000000)
#define RESUME_EXTEND_USEC (UINT64_C(30) * 1000000)

/*
 * A month of intervals takes a while to read, before READY=1: systemd
 * hears from soakd all along.  WATCHDOG=1 for the watchdog, and
 * EXTEND_TIMEOUT_USEC= for the start's own timeout (TimeoutStartSec=, 90 s
 * by default), which pings of the watchdog do not push on: without it
 * systemd stopped the start, and Restart= began the read again, for good.
 */
static bool resume_ping(struct daemon *d, uint64_t n, const char *what)
{
	uint64_t now = mono_ns();
	uint64_t every = d->watchdog_usec ? d->watchdog_usec * 1000 / 4 : RESUME_PING_NS;

	/* A stop (SIGTERM, blocked until the loop reads it) ends the read:
	 * nothing is written before it is done, so the next start reads the
	 * log again, and systemd's stop need not wait for it. */
	if (workload_stop_pending())
		return false;
	if (every > RESUME_PING_NS)
		every = RESUME_PING_NS;
	if (now - d->last_watchdog_ns < every)
		return true;
	sd_notifyf(0, "%sEXTEND_TIMEOUT_USEC=%" PRIu64 "\nSTATUS=resuming run %s: %" PRIu64
		   " records read%s", d->watchdog_usec ? "WATCHDOG=1\n" : "", RESUME_EXTEND_USEC,
		   d->cfg->name, n, what);
	d->last_watchdog_ns = now;
	return true;
}

static bool replay_drift_before(struct daemon *d, uint64_t covered)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t n = 0;
	int r = runlog_open(rundir_log_path(d->rundir), &rd);

	if (r < 0) {
		log_warning_errno(r, "cannot read %s for the drift tests' references",
				  rundir_log_path(d->rundir));
		return true;
	}
	bool go_on = true;
	while ((r = runlog_next(rd, &rec)) > 0) {
		if (n++ % 256 == 0 && !(go_on = resume_ping(d, n, " for drift"))) {
			json_decref(rec);
			break;
		}
		uint64_t at = checkpoint_record_run_ns(rec);
		const char *type = json_string_value(json_object_get(rec, "type"));
		bool interval = type && strcmp(type, "interval") == 0;
		if (results_in_checkpoint(d->results, rec))
			drift_replay(d->drift, d->results, rec);
		json_decref(rec);
		if (interval && at > covered + DRIFT_PASS_SLACK_NS)
			break;
	}
	runlog_close(rd);
	return go_on;
}

/* Replays a resumed run's log into the results: from its checkpoint on,
 * when it has one. */
/* When the run began, by the wall clock: its first interval's start less
 * the run time it started at (run time stands still while soakd is down,
 * and a run with start_at begins after its first record); 0 when the
 * log's first records hold no interval. */
static uint64_t began_wall_ns(struct daemon *d)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t began = 0;

	if (runlog_open(rundir_log_path(d->rundir), &rd) < 0)
		return 0;
	for (int n = 0; n < 4096 && runlog_next(rd, &rec) > 0; n++) {
		bool interval = strcmp(json_string_value(json_object_get(rec, "type")) ?: "",
				       "interval") == 0;
		json_t *wall = json_object_get(rec, "wall_start_ns"), *at = json_object_get(rec, "start_ns");
		if (interval && json_is_integer(wall) && json_is_integer(at) &&
		    json_integer_value(wall) >= json_integer_value(at))
			began = (uint64_t)(json_integer_value(wall) - json_integer_value(at));
		json_decref(rec);
		if (interval)
			break;
	}
	runlog_close(rd);
	return began;
}

/* False when a stop came first (nothing was written: see resume_ping). */
static bool replay(struct daemon *d)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t n = 0, bad = 0, seen = 0;
	int r = runlog_open(rundir_log_path(d->rundir), &rd);

	if (r < 0) {
		log_warning_errno(r, "cannot read %s to resume the run", rundir_log_path(d->rundir));
		return true;
	}
	uint64_t covered = 0;
	json_t *host_state = NULL;
	bool restored = checkpoint_restore(d->rundir, d->results, &covered, &host_state);
	/* The host's records the checkpoint folded: the replay folds only
	 * the later ones (an older checkpoint has none: from the seek on). */
	if (host_state && host_restore(d->host, host_state) < 0)
		log_warning("the checkpoint's host records do not fit: the host's summary starts "
			    "at the checkpoint");
	json_decref(host_state);
	uint64_t host_through = host_folded_through(d->host);
	/* Not from covered: an interval recorded after the checkpoint may
	 * have ended before it (results_in_checkpoint). */
	if (restored &&
	    (r = runlog_seek_run_time(rd, results_checkpoint_seek_ns(d->results) + 1)) < 0) {
		log_warning_errno(r, "cannot seek in %s", rundir_log_path(d->rundir));
		runlog_close(rd);
		return true;
	}
	if (restored) {
		char at[32];
		format_duration(covered, at, sizeof(at));
		log_info("resuming run %s from its checkpoint at %s of run time", d->cfg->name, at);
		if (drift_wanted(d) && !replay_drift_before(d, covered)) {
			runlog_close(rd);
			return false;
		}
	}
	uint64_t gone = 0;
	while ((r = runlog_next(rd, &rec)) > 0) {
		if (seen++ % 256 == 0 && !resume_ping(d, n, "")) {
			json_decref(rec);
			runlog_close(rd);
			return false;
		}
		/* The host's records after the checkpoint's. */
		const char *type = json_string_value(json_object_get(rec, "type"));
		if (type && strcmp(type, "host") == 0 &&
		    checkpoint_record_run_ns(rec) > host_through)
			host_fold(d->host, rec);
		/* Nor the drift tests' references and windows (those up to
		 * it were fed above). */
		bool in_checkpoint = restored && results_in_checkpoint(d->results, rec);
		if (!in_checkpoint)
			drift_replay(d->drift, d->results, rec);
		/* What the checkpoint holds already. */
		if (in_checkpoint) {
			json_decref(rec);
			continue;
		}
		int rr = results_replay(d->results, rec);
		if (rr == -ENOENT)
			gone++;
		else if (rr < 0)
			bad++;
		n++;
		json_decref(rec);
	}
	if (runlog_torn(rd))
		log_notice("the last record of %s was cut short by the crash and is dropped",
			   rundir_log_path(d->rundir));
	if (runlog_corrupt(rd) || bad)
		log_warning("%s: %" PRIu64 " damaged and %" PRIu64 " unusable record(s) skipped",
			    rundir_log_path(d->rundir), runlog_corrupt(rd), bad);
	if (gone)
		log_info("%s: %" PRIu64 " interval(s) of workloads a reload removed stay in the log "
			 "only", rundir_log_path(d->rundir), gone);
	runlog_close(rd);
	log_info("resumed run %s from %" PRIu64 " records", d->cfg->name, n);
	return true;
}

static enum workload_state state_from_name(const char *name)
{
	static const enum workload_state states[] = { WORKLOAD_STOPPED, WORKLOAD_FINISHED,
						      WORKLOAD_FAILED };
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(name, workload_state_name(states[i])) == 0)
			return states[i];
	return WORKLOAD_RUNNING;
}

/*
 * "start_at": the run's time 0 is that wall-clock instant, so a fleet
 * started by an orchestrator at slightly different moments runs its
 * schedules and intervals in step.  The instant becomes a CLOCK_MONOTONIC
 * deadline once, here: a wall clock stepped later (NTP) does not move it,
 * so hosts should have synchronised clocks before soakd starts.
 */
static void apply_start_at(struct daemon *d, uint64_t now)
{
	int64_t ahead = d->cfg->start_at_ns - (int64_t)wall_ns();
	char when[64];

	rfc3339_format(d->cfg->start_at_ns, when, sizeof(when));
	if (ahead <= 0) {
		log_notice("run %s: start_at %s passed %.1f s ago; starting now", d->cfg->name, when,
			   -ahead / 1e9);
		return;
	}
	d->run_start_ns = (int64_t)now + ahead;
	d->results->run_start_ns = d->run_start_ns;
	log_info("run %s waits for start_at %s (in %.1f s)", d->cfg->name, when, ahead / 1e9);
}

/*
 * Starts (or resumes) the run: its directory and log, the results, the
 * timer, and the workloads: at their start, or where a resumed run left
 * them.
 */
int open_run_dir(struct daemon *d, bool new_run)
{
	char dirbuf[4096];
	int r = rundir_open(state_directory(d->opts, dirbuf, sizeof(dirbuf)), d->cfg->name, d->plan,
			    new_run, &d->rundir, &d->resuming);
	if (r < 0)
		return log_error_errno(r, "cannot set up the run directory");
	return 0;
}

/* The devices' facts, recorded with the run. */
static void record_devices(struct daemon *d)
{
	json_t *devices = json_array();
	for (size_t i = 0; i < d->n_workloads; i++)
		for (size_t s = 0; s < d->workloads[i]->n_streams; s++) {
			const struct workload_stream *st = &d->workloads[i]->streams[s];
			if (st->facts)
				json_array_append_new(devices, json_pack("{s:s,s:s,s:o}", "workload",
					d->workloads[i]->cfg->name, "path", st->label,
					"device", dev_facts_json(st->facts)));
		}
	char *text = json_dumps(devices, JSON_INDENT(2));
	if (text) {
		size_t len = strlen(text);
		char *with_nl = malloc(len + 2);
		if (with_nl) {
			memcpy(with_nl, text, len);
			strcpy(with_nl + len, "\n");
			int r = rundir_write_file(d->rundir, "devices.json", with_nl);
			if (r < 0)
				log_warning_errno(r, "cannot record the devices' facts in %s",
						  rundir_path(d->rundir));
			free(with_nl);
		}
		free(text);
	}
	json_decref(devices);
}

int begin_run(struct daemon *d)
{
	bool resume = d->resuming;
	int r;

	record_devices(d);
	host_begin_run(d->host, d->cfg->slice_ns);
	uint64_t now = mono_ns();
	d->checkpointer.last_run_ns = 0;  /* a new run, or set by the resume's own */
	d->run_start_ns = (int64_t)now;
	d->results = results_new(d->cfg, d->workloads, d->n_workloads, d->run_start_ns,
				 d->opts->live_table);
	if (!d->results)
		return log_error_errno(-ENOMEM, "cannot set up results");
	d->results->rundir = d->rundir;
	d->results->wall_offset_ns = (int64_t)wall_ns() - (int64_t)now;
	d->results->probes = d->probes;
	d->results->record_extra = probes_record_extra;
	d->results->record_extra_userdata = d->probes;
	drift_attach(d->drift, d->results);

	uint64_t elapsed = 0;
	if (resume && !replay(d)) {
		log_notice("stopped while reading run %s's log to resume it: nothing was recorded, "
			   "and the next start reads it again", d->cfg->name);
		sd_notify(0, "STOPPING=1");
		d->stopping_sent = true;
		d->preparing.interrupted = true;   /* as asked: not a failure */
		return -1;
	}
	if (resume) {
		checkpoint_used(d->rundir);
		d->results->began_wall_ns = began_wall_ns(d);
		/* Run time goes on from the last record: after a reboot the
		 * run's time 0 lies before this boot's, a negative instant. */
		elapsed = d->results->recorded_end_ns;
		d->run_start_ns = (int64_t)now - (int64_t)elapsed;
		d->results->run_start_ns = d->run_start_ns;
		uint64_t down = d->results->recorded_wall_ns && wall_ns() > d->results->recorded_wall_ns
					? wall_ns() - d->results->recorded_wall_ns : 0;
		char at[32], gap[32];
		format_duration(elapsed, at, sizeof(at));
		format_duration(down, gap, sizeof(gap));
		log_notice("resuming run %s at %s of run time, after %s down", d->cfg->name, at, gap);
		json_t *rec = json_pack("{s:s,s:I,s:I,s:I}", "type", "gap", "run_ns",
					(json_int_t)elapsed, "down_ns", (json_int_t)down,
					"wall_ns", (json_int_t)wall_ns());
		rundir_append(d->rundir, rec);
		json_decref(rec);
	}
	/* StatsD hears the new run's counts from 0, a resumed one's from
	 * what the previous soakd sent of it. */
	exports_begin_run(d->exports, d->results, resume);
	/* version: which soakd recorded what follows, for reports of the run. */
	json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:b,s:s}", "type", "start", "run", d->cfg->name,
				"wall_ns", (json_int_t)wall_ns(), "run_ns", (json_int_t)elapsed,
				"pid", (json_int_t)getpid(), "resumed", resume, "version", SOAK_VERSION);
	rundir_append(d->rundir, rec);
	json_decref(rec);
	/* The next resume starts from here: what this one read, and the
	 * records it just wrote (also those of a crash that cut the old
	 * checkpoint's tail short). */
	if (resume)
		checkpoint(d, now, true);

	r = certify_begin(d, resume);
	if (r == 0)
		r = search_begin(d, resume);
	if (r < 0)
		return r;
	if (resume) {
		/* Reading the log back and the checkpoint took time: run time
		 * goes on from the instant the workloads do, or their schedules
		 * would end that much after the run's duration. */
		now = mono_ns();
		d->run_start_ns = (int64_t)now - (int64_t)elapsed;
		d->results->run_start_ns = d->run_start_ns;
	}
	if (elapsed == 0 && d->cfg->start_at_ns)
		apply_start_at(d, now);
	d->run_end_ns = d->run_start_ns + (int64_t)d->cfg->duration_ns;
	for (size_t i = 0; i < d->n_workloads; i++) {
		d->workloads[i]->run_start_ns = d->run_start_ns;
		d->workloads[i]->run_dir = d->rundir ? rundir_path(d->rundir) : NULL;
	}
	r = arm_timer(d);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_workloads; i++) {
		const struct workload_config *wc = d->workloads[i]->cfg;
		struct workload_results *wr = &d->results->w[i];
		struct workload *w = d->workloads[i];
		char err[256];
		if (d->removed[i])
			continue;     /* a reload took it out (soakctl start --new-run) */
		if (resume && wr->recorded) {
			enum workload_state state = state_from_name(wr->recorded_state);
			d->ever_started = true;
			if (state != WORKLOAD_RUNNING) {
				/* Ended before the restart: it stays ended. */
				w->state = state;
				snprintf(w->reason, sizeof(w->reason), "%s", wr->recorded_reason);
				continue;
			}
			if (certify_holds_stopped(d->certify, i)) {
				/* Its certification was over: the loads that
				 * failed are not run again. */
				w->state = WORKLOAD_STOPPED;
				snprintf(w->reason, sizeof(w->reason), "the certification was over");
				results_record_state(d->results, i);
				continue;
			}
			r = workload_resume(w, mono_ns(), wr->recorded_sched_ns, err, sizeof(err));
			if (r == 0) {
				probes_workload_active(d->probes, i, true);
				results_record_state(d->results, i);
				continue;
			}
			log_error("cannot resume workload %s: %s", wc->name, err);
			return r;
		}
		if (!wc->autostart)
			continue;
		if (mono_at(d->run_start_ns, wc->start_offset_ns) > mono_ns()) {
			d->pending_start_ns[i] = mono_at(d->run_start_ns, wc->start_offset_ns);
			continue;
		}
		if (start_workload(d, i, err, sizeof(err)) < 0) {
			log_error("cannot start workload %s: %s", wc->name, err);
			stop_all(d, "another workload failed to start");
			return -EIO;
		}
	}
	return 0;
}

/* Stops what still runs, counts every op it completes, and writes the
 * run's last records. */
void end_run(struct daemon *d, const char *why)
{
	stop_all(d, why);
	/* A new run that could not start (its directory refused): the old
	 * one ended already, and no workload of the new one was started. */
	if (!d->results)
		return;
	/* No "stopped" record: a workload cut short by soakd stopping (a
	 * reboot, systemctl stop) is still running as far as its run goes,
	 * and resumes when soakd comes back. */
	/* Stopped together, waited for together: a stuck thread costs the
	 * shutdown STOP_TIMEOUT_NS once, not once per workload. */
	uint64_t until = mono_ns() + STOP_TIMEOUT_NS;
	for (size_t i = 0; i < d->n_workloads; i++)
		results_wait(d->results, i, until);
	/* The results are written now rather than after a thread that may
	 * never come back (a device stuck in the kernel): said, not hidden. */
	for (size_t i = 0; i < d->n_workloads; i++)
		if (workload_is_active(d->workloads[i]))
			log_warning("%s: a stream has not ended %.0f s after the stop: the ops it "
				    "did since its last interval are not in the results",
				    d->workloads[i]->cfg->name, STOP_TIMEOUT_NS / 1e9);
	probes_tick(d->probes, mono_ns());
	results_tick(d->results, mono_ns());
	exports_publish(d->exports, d->results, mono_ns());
	print_summary(d);
	results_journal_summary(d->results, why);
	/* Dumps read the log and sync its writer: done before it closes. */
	dumper_cancel_all(d->dumper);
	checkpoint(d, mono_ns(), true);
	rundir_close(d->rundir);
	d->rundir = NULL;
	d->results->rundir = NULL;
}

/*
 * The new run's workloads, built and prepared afresh in its directory: an
 * object workload's write ledger, name tag and pool belong to one run, and
 * the old ones (in the directory moved aside, cleaned up or kept as the
 * old run's "cleanup" said) must not take the new run's writes.
 */
static int renew_workloads(struct daemon *d)
{
	char err[512];

	for (size_t i = 0; i < d->n_workloads; i++) {
		struct workload *old = d->workloads[i], *w = NULL;
		if (d->removed[i])
			continue;
		int r = workload_new(old->cfg, 0, d->cfg->interval_ns, &w, err, sizeof(err));
		if (r == 0) {
			w->slot = i;
			w->resuming = false;
			w->run_dir = rundir_path(d->rundir);
			/* The old one's targets close first: a device is opened
			 * by one workload at a time. */
			workload_release(old);
			r = workload_prepare(w, err, sizeof(err));
		}
		if (r < 0) {
			log_error("workload %s cannot start in the new run: %s", old->cfg->name, err);
			workload_free(w);
			return r;
		}
		probes_workload_active(d->probes, i, false);
		d->workloads[i] = w;
		workload_free(old);
	}
	return 0;
}

/* soakctl start --new-run: the current run ends and a new one starts. */
char *handle_new_run(struct daemon *d)
{
	if (d->state == RUN_STOPPING)
		return proto_error_line("soakd is shutting down");
	log_notice("a new run was asked for: ending run %s", d->cfg->name);
	end_run(d, "a new run was started");
	results_free(d->results);
	d->results = NULL;
	for (size_t i = 0; i < d->n_workloads; i++) {
		d->pending_start_ns[i] = 0;
		if (d->removed[i])
			continue;
		d->workloads[i]->state = WORKLOAD_IDLE;
		d->workloads[i]->reason[0] = '\0';
	}
	d->summary_printed = false;
	d->ever_started = false;
	d->state = RUN_RUNNING;
	if (open_run_dir(d, true) < 0 || renew_workloads(d) < 0 || begin_run(d) < 0) {
		shutdown_run(d, "the new run could not start");
		return proto_error_line("the new run could not start; see soakd's log");
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_workloads; i++)
		json_array_append_new(arr, json_pack("{s:s,s:s}", "name", d->workloads[i]->cfg->name,
						     "state", workload_state_name(d->workloads[i]->state)));
	return reply(json_pack("{s:b,s:s,s:o}", "ok", 1, "run", rundir_path(d->rundir),
			       "workloads", arr));
}

