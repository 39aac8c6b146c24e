// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: one epoll loop on the main thread owns the control socket, the
 * signals and the interval tick; workload threads do the I/O.
 */
#include "daemon.h"

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

#include "results/checkpoint.h"
#include "config/config_trace.h"
#include "ctl/ctl_server.h"
#include "device/dev_facts.h"
#include "ctl/dumper.h"
#include "export/export.h"
#include "base/log.h"
#include "base/loop.h"
#include "parse.h"
#include "probes/probes.h"
#include "results/results.h"
#include "rfc3339.h"
#include "results/rundir.h"
#include "rundump.h"
#include "runlog.h"
#include "workload/workload.h"

#define EXIT_WORKLOAD_FAILED 3
#define STOP_TIMEOUT_NS (UINT64_C(10) * 1000000000)
/* The tick fires this long after a boundary, so threads have published. */
#define TICK_GRACE_NS (UINT64_C(20) * 1000000)
#define CHECKPOINT_EVERY_NS (UINT64_C(3600) * 1000000000)
#define CATCHUP_PASSES 10
#define CATCHUP_EVERY_NS (UINT64_C(50) * 1000000)

enum run_state { RUN_RUNNING, RUN_FINISHED, RUN_STOPPING };

struct daemon {
	const struct run_config *cfg;  /* the configuration in force (reload changes it) */
	struct run_config **reloaded;  /* configurations reloads read, still in use */
	size_t n_reloaded;
	/* The run's settings from cfg, with the workloads by slot: what the
	 * probes watch.  Its workload entries are copies of the slots' own. */
	struct run_config *view;
	const struct daemon_options *opts;
	struct loop *loop;
	struct ctl_server *ctl;
	struct dumper *dumper;         /* dumps from the log, off the loop */
	struct results *results;
	struct rundir *rundir;
	bool resuming;                /* the run directory holds this run: go on with it */
	char *plan;                   /* the resolved configuration, as recorded */
	struct probes *probes;        /* NULL: kernel tracing unavailable */
	struct exports *exports;      /* NULL: none configured */
	struct workload **workloads;  /* [CONFIG_MAX_WORKLOADS]: a reload appends */
	size_t n_workloads;
	bool removed[CONFIG_MAX_WORKLOADS]; /* a reload took it out of the configuration */
	uint64_t *pending_start_ns;   /* 0: none */
	int signal_fd, timer_fd;
	/* The run's time 0 and end on CLOCK_MONOTONIC: signed, as a run
	 * resumed after a reboot began before this boot (see mono_since). */
	int64_t run_start_ns, run_end_ns;
	uint64_t ticks;
	uint64_t watchdog_usec;
	uint64_t last_watchdog_ns;
	enum run_state state;
	uint64_t finished_ns;          /* CLOCK_MONOTONIC when the run finished */
	bool quit;
	bool ever_started;
	bool stopping_sent;
	bool summary_printed;
	uint64_t stall_ns;             /* test builds: block the main loop this long */
	/* After a late tick (soakd frozen): the threads publish the intervals
	 * they closed meanwhile as they wake; these extra passes write them
	 * as they come, before a thread's ring fills again. */
	unsigned catchup_passes;
	uint64_t catchup_next_ns;
	/* Checkpoints of the results (resuming reads them, not the whole log). */
	struct checkpointer checkpointer;
};

static const char *run_state_name(enum run_state s)
{
	return s == RUN_RUNNING ? "running" : s == RUN_FINISHED ? "finished" : "stopping";
}

/* A run with "start_at" begins at that wall-clock time: until then its
 * start lies ahead on the monotonic clock. */
static bool waiting_for_start_at(const struct daemon *d, uint64_t now)
{
	return d->state == RUN_RUNNING && d->results && d->run_start_ns > 0 &&
	       now < (uint64_t)d->run_start_ns;
}

static struct workload *find_workload(struct daemon *d, const char *name, size_t *ret_index)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (!d->removed[i] && strcmp(d->workloads[i]->cfg->name, name) == 0) {
			if (ret_index)
				*ret_index = i;
			return d->workloads[i];
		}
	return NULL;
}

static int start_workload(struct daemon *d, size_t i, char *err, size_t errlen)
{
	struct workload *w = d->workloads[i];
	int r = workload_start(w, mono_ns(), err, errlen);
	if (r == 0) {
		d->pending_start_ns[i] = 0;
		d->ever_started = true;
		probes_workload_active(d->probes, i, true);
		results_record_state(d->results, i);
		log_info("workload %s started", w->cfg->name);
		if (d->state == RUN_FINISHED)
			d->state = RUN_RUNNING;
	}
	return r;
}

static void stop_all(struct daemon *d, const char *reason)
{
	for (size_t i = 0; i < d->n_workloads; i++) {
		d->pending_start_ns[i] = 0;
		workload_request_stop(d->workloads[i], reason);
	}
}

static void print_summary(struct daemon *d)
{
	if (d->opts->live_table && !d->summary_printed)
		results_print_summary(d->results, stderr);
	d->summary_printed = true;
}

/* Everything done: no workload running or waiting to start, and the run's
 * duration, if any, over. */
/* A run with a "duration" has reached it. */
static bool run_end_reached(const struct daemon *d, uint64_t now)
{
	return d->cfg->duration_ns && (int64_t)now >= d->run_end_ns;
}

static bool run_is_over(struct daemon *d, uint64_t now)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (workload_is_active(d->workloads[i]) || d->pending_start_ns[i])
			return false;
	/* A run whose workloads all wait for soakctl start is not over
	 * before it began. */
	return d->ever_started || run_end_reached(d, now);
}

/* Writes a checkpoint of the results as they stand (checkpoint.h): on a
 * thread, or (wait) here and now (startup, shutdown). */
static void checkpoint(struct daemon *d, uint64_t now, bool wait)
{
	if (!d->rundir || !d->results)
		return;
	/* One waiting for its start_at is at 0. */
	uint64_t run_ns = mono_since(d->run_start_ns, now);
	checkpointer_write(&d->checkpointer, d->rundir, d->results, run_ns, wait);
}

static void tick(struct daemon *d, uint64_t now)
{
	char status[1024];

	/* The kernel's interval first, so the workloads' records can carry it. */
	probes_tick(d->probes, now);
	for (size_t i = 0; i < d->n_workloads; i++) {
		struct workload *w = d->workloads[i];
		if (d->pending_start_ns[i] && now >= d->pending_start_ns[i]) {
			char err[256];
			if (start_workload(d, i, err, sizeof(err)) < 0)
				log_error("cannot start workload %s: %s", w->cfg->name, err);
		}
		if (results_reap(d->results, i) && !workload_is_active(w)) {
			log_info("workload %s %s%s%s", w->cfg->name, workload_state_name(w->state),
				 w->reason[0] ? ": " : "", w->reason);
			results_record_state(d->results, i);
		}
		probes_workload_active(d->probes, i, workload_is_active(w));
	}
	results_tick(d->results, now);
	exports_publish(d->exports, d->results, now);
	if (mono_since(d->run_start_ns, now) >= d->checkpointer.last_run_ns + CHECKPOINT_EVERY_NS)
		checkpoint(d, now, false);

	if (run_end_reached(d, now) && d->state == RUN_RUNNING) {
		/* Workloads whose schedule ends with the run finish by
		 * themselves; longer ones are cut here. */
		for (size_t i = 0; i < d->n_workloads; i++) {
			struct workload *w = d->workloads[i];
			d->pending_start_ns[i] = 0;
			if (workload_is_active(w) &&
			    mono_at(w->started_ns, sched_duration(&w->streams[0].sched)) >
				    mono_at(d->run_end_ns, d->cfg->interval_ns))
				workload_request_stop(w, "the run's duration was reached");
		}
	}
	if (d->state == RUN_RUNNING && run_is_over(d, now)) {
		d->state = RUN_FINISHED;
		d->finished_ns = now;
		log_info("run %s finished", d->cfg->name);
		print_summary(d);
		if (d->cfg->exit_on_finish)
			d->quit = true;
	}

	results_status_line(d->results, status, sizeof(status));
	sd_notifyf(0, "STATUS=%s", status);
	ctl_server_expire(d->ctl, now);
	d->ticks++;
}

static void watchdog(struct daemon *d, uint64_t now)
{
	/* A quarter of WatchdogSec, checked every eighth: no gap between
	 * pings comes near it, even on a loaded machine. */
	if (d->watchdog_usec && now - d->last_watchdog_ns >= d->watchdog_usec * 1000 / 4) {
		sd_notify(0, "WATCHDOG=1");
		d->last_watchdog_ns = now;
	}
}

static void timer_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t expirations;

	(void)l;
	(void)events;
	if (read(fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	tick(d, mono_ns());
	if (expirations > 1 && d->results) {
		d->catchup_passes = CATCHUP_PASSES;
		d->catchup_next_ns = mono_ns() + CATCHUP_EVERY_NS;
	}
}

static void shutdown_run(struct daemon *d, const char *why)
{
	if (d->state == RUN_STOPPING)
		return;
	log_info("%s: stopping workloads and flushing results", why);
	sd_notify(0, "STOPPING=1");
	d->stopping_sent = true;
	d->state = RUN_STOPPING;
	stop_all(d, why);
	d->quit = true;
}

/* SIGHUP, as aisloader's: every available probe family off if any is on,
 * else all on. */
static void toggle_tracing(struct daemon *d)
{
	bool on = false;

	if (probes_toggle_all(d->probes, &on) == 0) {
		log_notice("SIGHUP received: kernel tracing is unavailable (blk: %s; tcp: %s)",
			   probes_reason(d->probes, PROBE_BLK), probes_reason(d->probes, PROBE_TCP));
		return;
	}
	log_notice("SIGHUP received: kernel tracing %s (blk %s, tcp %s)", on ? "on" : "off",
		   probe_state_name(probes_state(d->probes, PROBE_BLK)),
		   probe_state_name(probes_state(d->probes, PROBE_TCP)));
}

static void signal_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct daemon *d = userdata;
	struct signalfd_siginfo si;

	(void)l;
	(void)events;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	switch (si.ssi_signo) {
	case SIGTERM:
	case SIGINT:
		shutdown_run(d, si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	case SIGHUP:
		toggle_tracing(d);
		break;
	}
}

static char *reply(json_t *v)
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
		for (size_t i = 0; i < d->n_workloads; i++)
			if (!d->removed[i])
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

static char *handle_new_run(struct daemon *d);

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
	job->filter = (struct rundump_filter){
		.since_ns = req->since_ns, .until_ns = req->until_ns, .slice_ns = req->slice_ns,
		.workload = req->workload ? strdup(req->workload) : NULL,
		.op = req->op ? strdup(req->op) : NULL, .service = req->service,
	};
	job->log_path = strdup(rundir_log_path(d->rundir));
	job->rundir = d->rundir;
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
	return v;
}

static uint64_t wall_ns(void);

/* What print writes of cfg, malloc'd; NULL: out of memory. */
static char *config_text(void (*print)(const struct run_config *cfg, FILE *out),
			 const struct run_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	print(cfg, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The probes' view of the run: cfg's settings, the workloads by slot. */
static struct run_config *make_view(const struct daemon *d)
{
	struct run_config *v = malloc(sizeof(*v));
	if (!v)
		return NULL;
	*v = *d->cfg;
	v->n_workloads = d->n_workloads;
	v->workloads = calloc(d->n_workloads ? d->n_workloads : 1, sizeof(*v->workloads));
	if (!v->workloads) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		v->workloads[i] = *d->workloads[i]->cfg;
	return v;
}

static void free_view(struct run_config *v)
{
	if (v)
		free(v->workloads);
	free(v);
}

static bool config_owns(const struct run_config *c, const struct workload_config *wc)
{
	return wc >= c->workloads && wc < c->workloads + c->n_workloads;
}

/* Frees the configurations earlier reloads read that nothing uses now. */
static void drop_unused_configs(struct daemon *d)
{
	size_t k = 0;
	for (size_t j = 0; j < d->n_reloaded; j++) {
		struct run_config *c = d->reloaded[j];
		bool used = c == d->cfg;
		for (size_t i = 0; !used && i < d->n_workloads; i++)
			used = config_owns(c, d->workloads[i]->cfg);
		if (used)
			d->reloaded[k++] = c;
		else
			config_free(c);
	}
	d->n_reloaded = k;
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void print_trace(const struct run_config *cfg, FILE *out)
{
	trace_config_print(&cfg->trace, out);
}

/* What a reload cannot change: the run itself.  NULL when nothing of it
 * changed, else the setting's name. */
static const char *run_setting_changed(const struct run_config *a, const struct run_config *b)
{
	if (strcmp(a->name, b->name) != 0)
		return "\"run\": \"name\"";
	if (a->duration_ns != b->duration_ns)
		return "\"run\": \"duration\"";
	if (a->interval_ns != b->interval_ns)
		return "\"run\": \"interval\"";
	if (a->slice_ns != b->slice_ns)
		return "\"run\": \"slice\"";
	if (a->exit_on_finish != b->exit_on_finish)
		return "\"run\": \"on_finish\"";
	if (a->start_at_ns != b->start_at_ns)
		return "\"run\": \"start_at\"";
	if (!same_string(a->socket_path, b->socket_path))
		return "\"run\": \"socket\"";
	return NULL;
}

enum reload_change { RELOAD_KEPT, RELOAD_REPLACED, RELOAD_ADDED, RELOAD_REMOVED };

static const char *const reload_change_names[] = {
	[RELOAD_KEPT] = "kept",
	[RELOAD_REPLACED] = "replaced",
	[RELOAD_ADDED] = "added",
	[RELOAD_REMOVED] = "removed",
};

struct reload_plan {
	struct run_config *cfg;
	/* Per new workload j: its slot, and its new workload object unless kept. */
	size_t slot[CONFIG_MAX_WORKLOADS];
	enum reload_change change[CONFIG_MAX_WORKLOADS];
	struct workload *fresh[CONFIG_MAX_WORKLOADS];
	struct workload *old[CONFIG_MAX_WORKLOADS];  /* replaced, released, freed once swapped */
	bool remove[CONFIG_MAX_WORKLOADS];   /* per slot */
	bool exports_changed;
	struct exports *exports;             /* the new ones, when changed */
	size_t n_slots;                      /* slots after the reload */
};

static void reload_plan_free(struct reload_plan *p)
{
	for (size_t j = 0; p->cfg && j < p->cfg->n_workloads; j++)
		workload_free(p->fresh[j]);
	exports_free(p->exports);
	config_free(p->cfg);
}

/*
 * Reads the configuration again and works out what changes, preparing
 * every added workload (safety checks, files, connections) before anything
 * runs differently; replacements are built here and prepared by
 * swap_replaced, which can still undo them, so a reload either happens
 * whole or not at all.
 */
static int plan_reload(struct daemon *d, struct reload_plan *p, char **ret_err)
{
	char *errs = NULL;
	size_t errs_len = 0;
	FILE *ef = open_memstream(&errs, &errs_len);
	int r;

	if (!ef)
		return -ENOMEM;
	r = config_load(d->cfg->path, ef, &p->cfg);
	fclose(ef);
	if (r < 0) {
		/* One located error per line; the last newline is noise. */
		if (errs && errs_len && errs[errs_len - 1] == '\n')
			errs[errs_len - 1] = '\0';
		*ret_err = errs;
		return r;
	}
	free(errs);
	const char *fixed = run_setting_changed(d->cfg, p->cfg);
	if (fixed)
		return asprintf(ret_err, "%s: %s differs from the running configuration; a reload "
				"changes workloads, \"trace\", \"exports\" and \"ctl\", while a new "
				"%s needs a restart (systemctl restart soakd), which starts a new run",
				d->cfg->path, fixed, fixed + 9) < 0 ? -ENOMEM : -EINVAL;

	bool seen[CONFIG_MAX_WORKLOADS] = { false };
	p->n_slots = d->n_workloads;
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		const struct workload_config *wc = &p->cfg->workloads[j];
		size_t i;
		for (i = 0; i < d->n_workloads; i++)
			if (strcmp(d->workloads[i]->cfg->name, wc->name) == 0)
				break;
		if (i < d->n_workloads) {
			seen[i] = true;
			char *was = config_workload_text(d->workloads[i]->cfg);
			char *now = config_workload_text(wc);
			if (!was || !now) {
				free(was);
				free(now);
				return -ENOMEM;
			}
			p->change[j] = !d->removed[i] && strcmp(was, now) == 0 ? RELOAD_KEPT
											: RELOAD_REPLACED;
			free(was);
			free(now);
			p->slot[j] = i;
		} else if (p->n_slots == CONFIG_MAX_WORKLOADS) {
			return asprintf(ret_err, "%s: workload \"%s\" would be the %dth this soakd has "
					"run (removed ones count until it restarts); restart soakd "
					"to start it", d->cfg->path, wc->name,
					CONFIG_MAX_WORKLOADS + 1) < 0 ? -ENOMEM : -ENOSPC;
		} else {
			p->change[j] = RELOAD_ADDED;
			p->slot[j] = p->n_slots++;
		}
		if (p->change[j] == RELOAD_KEPT)
			continue;
		char err[512];
		r = workload_new(wc, 0, p->cfg->interval_ns, &p->fresh[j], err, sizeof(err));
		if (r == 0) {
			p->fresh[j]->slot = p->slot[j];
			/* A replacement opens its devices once the workload it
			 * replaces has let go of them (swap_replaced); it does
			 * not prep devices the run has already aged. */
			if (p->change[j] == RELOAD_REPLACED)
				p->fresh[j]->resuming = true;
			else
				r = workload_prepare(p->fresh[j], err, sizeof(err));
		}
		if (r < 0)
			return asprintf(ret_err, "%s: workload \"%s\": %s", d->cfg->path, wc->name,
					err) < 0 ? -ENOMEM : r;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		p->remove[i] = !seen[i] && !d->removed[i];

	/* New exports are set up now, so a bad one refuses the reload. */
	const struct export_config *a = &d->cfg->exports, *b = &p->cfg->exports;
	p->exports_changed = !same_string(a->prom_textfile, b->prom_textfile) ||
			     !same_string(a->statsd_address, b->statsd_address) ||
			     !same_string(a->statsd_prefix, b->statsd_prefix);
	if (p->exports_changed && exports_new(b, &p->exports) < 0)
		return asprintf(ret_err, "%s: \"exports\" cannot be set up (see the log above)",
				d->cfg->path) < 0 ? -ENOMEM : -EINVAL;
	return 0;
}

/* Starts a new or replacing workload as the configuration says: now, or
 * at its start offset into the run. */
static void start_reloaded(struct daemon *d, size_t i, bool was_running, bool was_pending)
{
	const struct workload_config *wc = d->workloads[i]->cfg;
	uint64_t at = mono_at(d->run_start_ns, wc->start_offset_ns);
	char err[256];

	/* A workload waiting for its start (offset, start_at) waits for the
	 * new definition's; one that ran goes on at once. */
	if (d->state == RUN_STOPPING || (!was_running && !was_pending && !wc->autostart))
		return;
	if (!was_running && (at > mono_ns() || waiting_for_start_at(d, mono_ns()))) {
		d->pending_start_ns[i] = at;
		return;
	}
	if (start_workload(d, i, err, sizeof(err)) < 0)
		log_error("reload: cannot start workload %s: %s", wc->name, err);
}

/* What a replaced workload was, to put it back if its replacement
 * cannot start. */
struct replaced_state {
	const struct workload_config *cfg;
	bool running;
	uint64_t pending_start_ns;
	uint64_t sched_ns;
	enum workload_state state;
	char reason[WORKLOAD_REASON_MAX];
};

/* Builds the old definition again in slot i, where it left off; old is
 * the released workload itself. */
static void restore_replaced(struct daemon *d, size_t i, const struct replaced_state *was,
			     struct workload *old)
{
	struct workload *w = NULL;
	char err[512];
	int r;

	if (d->removed[i]) {
		/* An earlier reload removed it; it stays as it was, closed. */
		results_rebind_workload(d->results, i, old);
		d->workloads[i] = old;
		return;
	}
	d->pending_start_ns[i] = was->pending_start_ns;
	r = workload_new(was->cfg, 0, d->cfg->interval_ns, &w, err, sizeof(err));
	if (r == 0) {
		w->slot = i;
		w->resuming = true;
		w->run_start_ns = d->run_start_ns;
		r = workload_prepare(w, err, sizeof(err));
	}
	if (r == 0) {
		results_rebind_workload(d->results, i, w);
		d->workloads[i] = w;
		workload_free(old);
		if (was->running) {
			r = workload_resume(w, mono_ns(), was->sched_ns, err, sizeof(err));
			if (r == 0) {
				probes_workload_active(d->probes, i, true);
				results_record_state(d->results, i);
				return;
			}
		} else {
			w->state = was->state;
			snprintf(w->reason, sizeof(w->reason), "%s", was->reason);
			return;
		}
	}
	log_error("reload: workload %s cannot go on under its old definition either: %s",
		  was->cfg->name, err);
	if (w && d->workloads[i] == w) {
		/* Built and rebound, but could not resume. */
		w->state = WORKLOAD_FAILED;
	} else {
		/* The old one stays in its slot with its results, ended. */
		workload_free(w);
		results_rebind_workload(d->results, i, old);
		d->workloads[i] = old;
		old->state = WORKLOAD_FAILED;
		w = old;
	}
	snprintf(w->reason, sizeof(w->reason), "a reload could not replace it nor restore it: "
		 "%.180s", err);
	results_record_state(d->results, i);
}

/*
 * Stops the workloads a reload replaces (their last intervals are
 * recorded), lets go of their devices and prepares their replacements.
 * If one cannot be prepared, every replaced workload goes on under its
 * old definition where it left off, and the error is returned.
 */
static int swap_replaced(struct daemon *d, struct reload_plan *p, bool *was_running,
			 bool *was_pending, char **ret_err)
{
	struct replaced_state *was = calloc(CONFIG_MAX_WORKLOADS, sizeof(*was));
	bool any = false;
	int r = 0;

	if (!was)
		return -ENOMEM;
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		struct workload *old = d->workloads[i];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		any = true;
		was[i].cfg = old->cfg;
		was[i].running = !d->removed[i] && workload_is_active(old);
		was[i].pending_start_ns = d->removed[i] ? 0 : d->pending_start_ns[i];
		was_running[i] = was[i].running;
		was_pending[i] = was[i].pending_start_ns != 0;
		d->pending_start_ns[i] = 0;
		workload_request_stop(old, "replaced by a reload");
	}
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		struct workload *old = d->workloads[i];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		results_wait(d->results, i, STOP_TIMEOUT_NS);
		if (was[i].running) {
			was[i].sched_ns = mono_since(old->started_ns, mono_ns());
			results_record_state(d->results, i);
		} else {
			was[i].state = old->state;
			snprintf(was[i].reason, sizeof(was[i].reason), "%s", old->reason);
		}
		probes_workload_active(d->probes, i, false);
		/* Closes its devices: the replacement opens them exclusively. */
		workload_release(old);
	}
	for (size_t j = 0; any && j < p->cfg->n_workloads && r == 0; j++) {
		char err[512];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		r = workload_prepare(p->fresh[j], err, sizeof(err));
		if (r < 0 && asprintf(ret_err, "%s: workload \"%s\": %s", d->cfg->path,
				      p->cfg->workloads[j].name, err) < 0)
			*ret_err = NULL;
	}
	if (r < 0) {
		/* Every replacement lets go of its targets before any old
		 * definition opens them again (two may have swapped devices). */
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED) {
				workload_free(p->fresh[j]);
				p->fresh[j] = NULL;
			}
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED)
				restore_replaced(d, p->slot[j], &was[p->slot[j]], d->workloads[p->slot[j]]);
	} else {
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED)
				p->old[j] = d->workloads[p->slot[j]];
	}
	free(was);
	return r;
}

/* soakctl reload (systemctl reload): see soakctl(1). */
static char *handle_reload(struct daemon *d)
{
	struct reload_plan *p = calloc(1, sizeof(*p));
	char *err = NULL;
	int r;

	if (!p)
		return proto_error_line("out of memory");
	if (d->state == RUN_STOPPING) {
		free(p);
		return proto_error_line("soakd is shutting down");
	}
	sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
	r = plan_reload(d, p, &err);
	if (r < 0) {
		char *line;
		if (!err && r == -ENOMEM)
			err = strdup("out of memory");
		/* Every line of it in the journal, where systemctl reload
		 * points. */
		for (char *l = err, *next; l && *l; l = next) {
			next = strchr(l, '\n');
			if (next)
				*next++ = '\0';
			log_error("reload refused: %s", l);
			if (next)
				next[-1] = '\n';
		}
		log_notice("the configuration was not reloaded; soakd runs on with the one it had");
		line = proto_error_line("the configuration was not reloaded (soakd runs on with the "
					"one it had): %s", err ? err : strerror(-r));
		free(err);
		reload_plan_free(p);
		free(p);
		sd_notify(0, "READY=1");
		return line;
	}

	/* Replacements first: they are the part that can still fail. */
	bool was_running[CONFIG_MAX_WORKLOADS] = { false }, was_pending[CONFIG_MAX_WORKLOADS] = { false };
	r = swap_replaced(d, p, was_running, was_pending, &err);
	if (r < 0) {
		log_error("reload refused: %s", err ? err : strerror(-r));
		log_notice("the configuration was not reloaded; the workloads it would have "
			   "replaced go on under their old definitions");
		char *line = proto_error_line("the configuration was not reloaded (the workloads it "
					      "would have replaced stopped for a moment and go on "
					      "under their old definitions): %s",
					      err ? err : strerror(-r));
		free(err);
		reload_plan_free(p);
		free(p);
		sd_notify(0, "READY=1");
		return line;
	}

	/* Removed workloads stop; their last intervals are recorded as they
	 * end. */
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i]) {
			d->pending_start_ns[i] = 0;
			workload_request_stop(d->workloads[i], "removed from the configuration by a reload");
		}
	for (size_t i = 0; i < d->n_workloads; i++) {
		if (!p->remove[i])
			continue;
		bool was_active = workload_is_active(d->workloads[i]);
		results_wait(d->results, i, STOP_TIMEOUT_NS);
		if (was_active)
			results_record_state(d->results, i);
		probes_workload_active(d->probes, i, false);
		/* Its devices are free for a later reload's workloads; its
		 * results stay. */
		workload_release(d->workloads[i]);
		d->removed[i] = true;
	}

	/* The new definitions take their slots. */
	json_t *names[4] = { json_array(), json_array(), json_array(), json_array() };
	json_t *arr = json_array();
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		json_array_append_new(names[p->change[j]], json_string(p->cfg->workloads[j].name));
		if (p->change[j] == RELOAD_KEPT)
			continue;
		p->fresh[j]->run_start_ns = d->run_start_ns;
		if (results_set_workload(d->results, i, p->fresh[j]) < 0) {
			/* Only memory can fail here; the slot keeps what it had. */
			log_error("reload: out of memory setting up workload %s; it is left out",
				  p->cfg->workloads[j].name);
			continue;
		}
		d->workloads[i] = p->fresh[j];
		p->fresh[j] = NULL;
		exports_forget(d->exports, i);
		workload_free(p->old[j]);
		p->old[j] = NULL;
		d->removed[i] = false;
		if (i == d->n_workloads)
			d->n_workloads++;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i])
			json_array_append_new(names[RELOAD_REMOVED],
					      json_string(d->workloads[i]->cfg->name));

	/* The run goes on under the new configuration. */
	bool workloads_changed = json_array_size(names[RELOAD_REPLACED]) ||
				 json_array_size(names[RELOAD_ADDED]) ||
				 json_array_size(names[RELOAD_REMOVED]);
	char *was_trace = config_text(print_trace, d->cfg), *now_trace = config_text(print_trace, p->cfg);
	bool trace_changed = !was_trace || !now_trace || strcmp(was_trace, now_trace) != 0;
	free(was_trace);
	free(now_trace);

	struct run_config **grown = realloc(d->reloaded, (d->n_reloaded + 1) * sizeof(*grown));
	if (grown) {
		d->reloaded = grown;
		d->reloaded[d->n_reloaded++] = p->cfg;
	} else {
		log_error("reload: out of memory keeping the configuration; it leaks");
	}
	d->cfg = p->cfg;
	p->cfg = NULL;
	/* The run's settings are the same; the old file may be freed below. */
	d->results->cfg = d->cfg;
	struct ctl_policy policy = { .read_only_for_all = d->cfg->ctl.read_only_for_all };
	ctl_server_set_policy(d->ctl, &policy);

	struct run_config *view = make_view(d);
	if (view && (workloads_changed || trace_changed)) {
		/* New programs watch the new set of devices and endpoints;
		 * unless "trace" changed, each family keeps its state. */
		enum probe_state was[PROBE_FAMILIES];
		for (int f = 0; f < PROBE_FAMILIES; f++)
			was[f] = probes_state(d->probes, (enum probe_family)f);
		probes_free(d->probes);
		d->probes = NULL;
		if (probes_new(view, &d->probes) < 0)
			log_warning("reload: kernel tracing is unavailable (out of memory)");
		for (int f = 0; f < PROBE_FAMILIES && !trace_changed; f++) {
			char why[PROBE_REASON_LEN];
			if (was[f] != PROBE_UNAVAILABLE &&
			    probes_state(d->probes, (enum probe_family)f) != was[f] &&
			    probes_set(d->probes, (enum probe_family)f, was[f] == PROBE_ON, why,
				       sizeof(why)) < 0)
				log_warning("reload: %s", why);
		}
		d->results->probes = d->probes;
		d->results->record_extra_userdata = d->probes;
		for (size_t i = 0; i < d->n_workloads; i++)
			probes_workload_active(d->probes, i, workload_is_active(d->workloads[i]));
	}
	if (view && d->view && !(workloads_changed || trace_changed)) {
		/* The probes keep the view they have: the same workloads, and
		 * the same trace settings, now read from the new configuration
		 * (the old one may be freed below). */
		struct workload_config *entries = d->view->workloads;
		*d->view = *view;
		free(view->workloads);
		free(view);
		d->view->workloads = entries;
	} else if (view) {
		free_view(d->view);
		d->view = view;
	}
	if (p->exports_changed) {
		exports_free(d->exports);
		d->exports = p->exports;
		p->exports = NULL;
	}

	/* The log says what changed before plan.json does: a crash between
	 * the two starts a new run rather than mixing definitions. */
	uint64_t now = mono_ns();
	json_t *rec = json_pack("{s:s,s:I,s:I,s:O,s:O,s:O,s:O}", "type", "reload",
				"run_ns", (json_int_t)mono_since(d->run_start_ns, now),
				"wall_ns", (json_int_t)wall_ns(), "kept", names[RELOAD_KEPT],
				"replaced", names[RELOAD_REPLACED], "added", names[RELOAD_ADDED],
				"removed", names[RELOAD_REMOVED]);
	if (d->rundir && rec) {
		rundir_append(d->rundir, rec);
		rundir_sync(d->rundir);
	}
	json_decref(rec);
	char *plan = config_text(config_print_plan, d->cfg);
	if (plan) {
		free(d->plan);
		d->plan = plan;
		if (d->rundir && (r = rundir_set_plan(d->rundir, plan)) < 0)
			log_warning_errno(r, "reload: cannot record the new plan in %s; a restart "
					  "will start a new run", rundir_path(d->rundir));
	}

	/* Start what the new configuration runs. */
	for (size_t j = 0; j < d->cfg->n_workloads; j++)
		if (p->change[j] != RELOAD_KEPT)
			start_reloaded(d, p->slot[j], was_running[p->slot[j]], was_pending[p->slot[j]]);
	drop_unused_configs(d);

	char *list[4];
	for (int c = 0; c < 4; c++) {
		list[c] = json_dumps(names[c], JSON_COMPACT);
		json_decref(names[c]);
	}
	log_notice("configuration reloaded: kept %s, replaced %s, added %s, removed %s",
		   list[0] ? list[0] : "?", list[1] ? list[1] : "?", list[2] ? list[2] : "?",
		   list[3] ? list[3] : "?");
	for (int c = 0; c < 4; c++)
		free(list[c]);
	sd_notify(0, "READY=1");

	for (size_t j = 0; j < d->cfg->n_workloads; j++) {
		struct workload *w = d->workloads[p->slot[j]];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", w->cfg->name, "state",
						     workload_state_name(w->state), "reason",
						     reload_change_names[p->change[j]]));
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i])
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name",
				d->workloads[i]->cfg->name, "state",
				workload_state_name(d->workloads[i]->state), "reason", "removed"));
	reload_plan_free(p);
	free(p);
	return reply(json_pack("{s:b,s:o}", "ok", 1, "workloads", arr));
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

static char *ctl_handle(void *userdata, const struct proto_request *req)
{
	struct daemon *d = userdata;

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
			return reply_off_loop(d, results_dump_json(d->results));
		return handle_dump_from_log(d, req);
	case PROTO_TRACE:
		return handle_trace(d, req);
	case PROTO_REPORT:
		return reply_off_loop(d, results_report_json(d->results));
	case PROTO_RELOAD:
		return handle_reload(d);
	case PROTO_DEBUG:
		return handle_debug(d, req);
	}
	return proto_error_line("unhandled command");
}

static const char *default_socket_path(char *buf, size_t len)
{
	const char *dir = getenv("RUNTIME_DIRECTORY");
	if (dir && *dir) {
		/* systemd may pass several directories separated by ':'. */
		size_t n = strcspn(dir, ":");
		snprintf(buf, len, "%.*s/soakd.sock", (int)n, dir);
		return buf;
	}
	mkdir("/run/soakd", 0755);
	return "/run/soakd/soakd.sock";
}

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	/* A file target past RLIMIT_FSIZE is an error to report (EFBIG),
	 * not a reason to lose the run. */
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked in every thread: workload threads inherit this mask. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	d->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->signal_fd < 0)
		return log_error_errno(-errno, "cannot create signalfd");
	return loop_add(d->loop, d->signal_fd, EPOLLIN, signal_event, d);
}

/* Ticks a little after each interval boundary of the run. */
static int arm_timer(struct daemon *d)
{
	uint64_t now = mono_ns();
	uint64_t k = mono_since(d->run_start_ns, now) / d->cfg->interval_ns + 1;
	/* Short intervals get a proportionally short grace, so the tick
	 * still falls inside the interval after the boundary. */
	uint64_t grace = d->cfg->interval_ns / 4 < TICK_GRACE_NS ? d->cfg->interval_ns / 4
								   : TICK_GRACE_NS;
	uint64_t first = mono_at(d->run_start_ns, k * d->cfg->interval_ns + grace);
	struct itimerspec its = {
		.it_value = { (time_t)(first / 1000000000u), (long)(first % 1000000000u) },
		.it_interval = { (time_t)(d->cfg->interval_ns / 1000000000u),
				 (long)(d->cfg->interval_ns % 1000000000u) },
	};

	if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return log_error_errno(-errno, "cannot arm timerfd");
	return 0;
}

static int setup_timer(struct daemon *d)
{
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer_fd < 0)
		return log_error_errno(-errno, "cannot create timerfd");
	return loop_add(d->loop, d->timer_fd, EPOLLIN, timer_event, d);
}

static const char *state_directory(const struct daemon_options *opts, char *buf, size_t len)
{
	const char *dir = getenv("STATE_DIRECTORY");
	if (opts->state_dir)
		return opts->state_dir;
	if (dir && *dir) {
		snprintf(buf, len, "%.*s", (int)strcspn(dir, ":"), dir);
		return buf;
	}
	return "/var/lib/soakd";
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Replays a resumed run's log into the results: from its checkpoint on,
 * when it has one. */
static void replay(struct daemon *d)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t n = 0, bad = 0;
	int r = runlog_open(rundir_log_path(d->rundir), &rd);

	if (r < 0) {
		log_warning_errno(r, "cannot read %s to resume the run", rundir_log_path(d->rundir));
		return;
	}
	uint64_t covered = 0;
	bool restored = checkpoint_restore(d->rundir, d->results, &covered);
	if (restored && (r = runlog_seek_run_time(rd, covered + 1)) < 0) {
		log_warning_errno(r, "cannot seek in %s", rundir_log_path(d->rundir));
		runlog_close(rd);
		return;
	}
	if (restored) {
		char at[32];
		format_duration(covered, at, sizeof(at));
		log_info("resuming run %s from its checkpoint at %s of run time", d->cfg->name, at);
	}
	uint64_t gone = 0;
	while ((r = runlog_next(rd, &rec)) > 0) {
		/* A month of intervals takes a while to read: systemd hears
		 * from soakd all along. */
		if (n % 256 == 0 && d->watchdog_usec) {
			uint64_t now = mono_ns();
			if (now - d->last_watchdog_ns >= d->watchdog_usec * 1000 / 4) {
				sd_notifyf(0, "WATCHDOG=1\nSTATUS=resuming run %s: %" PRIu64
					   " records read", d->cfg->name, n);
				d->last_watchdog_ns = now;
			}
		}
		/* What the checkpoint holds already. */
		if (restored && checkpoint_record_run_ns(rec) <= covered) {
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
static int open_run_dir(struct daemon *d, bool new_run)
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

static int begin_run(struct daemon *d)
{
	bool resume = d->resuming;
	int r;

	record_devices(d);
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

	uint64_t elapsed = 0;
	if (resume) {
		replay(d);
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
	json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:b}", "type", "start", "run", d->cfg->name,
				"wall_ns", (json_int_t)wall_ns(), "run_ns", (json_int_t)elapsed,
				"pid", (json_int_t)getpid(), "resumed", resume);
	rundir_append(d->rundir, rec);
	json_decref(rec);
	/* The next resume starts from here: what this one read, and the
	 * records it just wrote (also those of a crash that cut the old
	 * checkpoint's tail short). */
	if (resume)
		checkpoint(d, now, true);

	if (elapsed == 0 && d->cfg->start_at_ns)
		apply_start_at(d, now);
	d->run_end_ns = d->run_start_ns + (int64_t)d->cfg->duration_ns;
	for (size_t i = 0; i < d->n_workloads; i++)
		d->workloads[i]->run_start_ns = d->run_start_ns;
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
static void end_run(struct daemon *d, const char *why)
{
	stop_all(d, why);
	/* No "stopped" record: a workload cut short by soakd stopping (a
	 * reboot, systemctl stop) is still running as far as its run goes,
	 * and resumes when soakd comes back. */
	for (size_t i = 0; i < d->n_workloads; i++)
		results_wait(d->results, i, STOP_TIMEOUT_NS);
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

/* soakctl start --new-run: the current run ends and a new one starts. */
static char *handle_new_run(struct daemon *d)
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
	if (open_run_dir(d, true) < 0 || begin_run(d) < 0) {
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

static int prepare_workloads(struct daemon *d)
{
	char err[512];

	d->n_workloads = d->cfg->n_workloads;
	d->workloads = calloc(CONFIG_MAX_WORKLOADS, sizeof(*d->workloads));
	d->pending_start_ns = calloc(CONFIG_MAX_WORKLOADS, sizeof(*d->pending_start_ns));
	if (!d->workloads || !d->pending_start_ns)
		return log_error_errno(-ENOMEM, "cannot set up workloads");
	for (size_t i = 0; i < d->n_workloads; i++) {
		const struct workload_config *wc = &d->cfg->workloads[i];
		int r = workload_new(wc, 0, d->cfg->interval_ns, &d->workloads[i], err, sizeof(err));
		if (r == 0) {
			d->workloads[i]->slot = i;
			d->workloads[i]->resuming = d->resuming;
			r = workload_prepare(d->workloads[i], err, sizeof(err));
		}
		if (r < 0) {
			log_error("workload %s: %s", wc->name, err);
			return r;
		}
	}
	return 0;
}

static void free_daemon(struct daemon *d)
{
	dumper_free(d->dumper);
	checkpointer_wait(&d->checkpointer);
	rundir_close(d->rundir);
	free(d->plan);
	ctl_server_free(d->ctl);
	results_free(d->results);
	probes_free(d->probes);
	exports_free(d->exports);
	for (size_t i = 0; d->workloads && i < d->n_workloads; i++)
		workload_free(d->workloads[i]);
	free_view(d->view);
	for (size_t j = 0; j < d->n_reloaded; j++)
		config_free(d->reloaded[j]);
	free(d->reloaded);
	free(d->workloads);
	free(d->pending_start_ns);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	loop_free(d->loop);
}

int daemon_run(const struct run_config *cfg, const struct daemon_options *opts)
{
	struct daemon d = { .cfg = cfg, .opts = opts, .signal_fd = -1, .timer_fd = -1 };
	char pathbuf[4096];
	const char *socket_path;
	int r, status = EXIT_FAILURE;

	r = loop_new(&d.loop);
	if (r < 0)
		return log_error_errno(r, "cannot create the event loop"), EXIT_FAILURE;
	if (setup_signals(&d) < 0)
		goto out;
	socket_path = opts->socket_path ? opts->socket_path
		      : cfg->socket_path ? cfg->socket_path
		      : default_socket_path(pathbuf, sizeof(pathbuf));
	struct ctl_policy policy = { .read_only_for_all = cfg->ctl.read_only_for_all };
	if (ctl_server_open(d.loop, socket_path, &policy, ctl_handle, &d, &d.ctl) < 0 ||
	    dumper_new(&d.dumper) < 0)
		goto out;
	d.plan = config_text(config_print_plan, cfg);
	if (!d.plan || open_run_dir(&d, opts->new_run) < 0 || prepare_workloads(&d) < 0)
		goto out;
	/* Never fatal: without BPF the run goes on, reporting tracing
	 * unavailable and why. */
	d.view = make_view(&d);
	r = d.view ? probes_new(d.view, &d.probes) : -ENOMEM;
	if (r < 0)
		log_warning_errno(r, "kernel tracing is unavailable");

	if (exports_new(&cfg->exports, &d.exports) < 0)
		goto out;

	/* Before begin_run: resuming a long run pings the watchdog. */
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	if (setup_timer(&d) < 0 || begin_run(&d) < 0)
		goto out;
	log_info("run %s: %zu workload(s), control socket %s", cfg->name, d.n_workloads,
		 ctl_server_path(d.ctl));
	if (waiting_for_start_at(&d, mono_ns())) {
		char when[64];
		rfc3339_format(cfg->start_at_ns, when, sizeof(when));
		sd_notifyf(0, "READY=1\nSTATUS=run %s: waiting for start_at %s", cfg->name, when);
	} else {
		sd_notifyf(0, "READY=1\nSTATUS=run %s: %zu workload(s) running", cfg->name,
			   d.n_workloads);
	}

	while (!d.quit) {
		int timeout = -1;
		uint64_t now = mono_ns();
		watchdog(&d, now);
		if (d.watchdog_usec)
			timeout = (int)(d.watchdog_usec / 8000) + 1;
		if (d.catchup_passes) {
			int ms = d.catchup_next_ns > now ? (int)((d.catchup_next_ns - now) / 1000000) + 1 : 0;
			if (timeout < 0 || ms < timeout)
				timeout = ms;
		}
		for (size_t i = 0; i < d.n_workloads; i++)
			if (d.pending_start_ns[i]) {
				int ms = d.pending_start_ns[i] > now
						 ? (int)((d.pending_start_ns[i] - now) / 1000000) + 1 : 0;
				if (timeout < 0 || ms < timeout)
					timeout = ms;
			}
		r = loop_run_once(d.loop, timeout);
		if (r < 0) {
			log_error_errno(r, "event loop failed");
			break;
		}
		if (d.stall_ns) {
			/* soakctl debug stall: the watchdog test's hang. */
			struct timespec ts = { .tv_sec = (time_t)(d.stall_ns / 1000000000),
					       .tv_nsec = (long)(d.stall_ns % 1000000000) };
			d.stall_ns = 0;
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
		now = mono_ns();
		if (d.catchup_passes && now >= d.catchup_next_ns && d.results) {
			results_tick(d.results, now);
			d.catchup_passes--;
			d.catchup_next_ns = now + CATCHUP_EVERY_NS;
		}
		for (size_t i = 0; i < d.n_workloads; i++)
			if (d.pending_start_ns[i] && now >= d.pending_start_ns[i]) {
				char err[256];
				if (start_workload(&d, i, err, sizeof(err)) < 0)
					log_error("cannot start workload %s: %s",
						  d.workloads[i]->cfg->name, err);
			}
	}

	if (!d.stopping_sent)
		sd_notify(0, "STOPPING=1");
	end_run(&d, "soakd is stopping");
	status = EXIT_SUCCESS;
	for (size_t i = 0; i < d.n_workloads; i++)
		if (d.workloads[i]->state == WORKLOAD_FAILED)
			status = EXIT_WORKLOAD_FAILED;
out:
	free_daemon(&d);
	return status;
}
