// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: one epoll loop on the main thread owns the control socket, the
 * signals and the interval tick; workload threads do the I/O.  This file
 * is the story of a run: set up (daemon_run), tick, answer (commands.c),
 * reload (daemon/reload), stop.  begin_run.c starts or resumes the run.
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

#include "base/log.h"
#include "base/loop.h"
#include "ctl/ctl_server.h"
#include "ctl/dumper.h"
#include "drift/drift.h"
#include "export/export.h"
#include "host/host.h"
#include "probes/probes.h"
#include "results/checkpoint.h"
#include "results/results.h"
#include "results/rundir.h"
#include "rfc3339.h"
#include "rundump.h"
#include "workload/workload.h"

#include "daemon_int.h"

const char *run_state_name(enum run_state s)
{
	return s == RUN_RUNNING ? "running" : s == RUN_FINISHED ? "finished" : "stopping";
}

/* A run with "start_at" begins at that wall-clock time: until then its
 * start lies ahead on the monotonic clock. */
bool waiting_for_start_at(const struct daemon *d, uint64_t now)
{
	return d->state == RUN_RUNNING && d->results && d->run_start_ns > 0 &&
	       now < (uint64_t)d->run_start_ns;
}

struct workload *find_workload(struct daemon *d, const char *name, size_t *ret_index)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (!d->removed[i] && strcmp(d->workloads[i]->cfg->name, name) == 0) {
			if (ret_index)
				*ret_index = i;
			return d->workloads[i];
		}
	return NULL;
}

int start_workload(struct daemon *d, size_t i, char *err, size_t errlen)
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

void stop_all(struct daemon *d, const char *reason)
{
	for (size_t i = 0; i < d->n_workloads; i++) {
		d->pending_start_ns[i] = 0;
		workload_request_stop(d->workloads[i], reason);
	}
}

void print_summary(struct daemon *d)
{
	if (d->opts->live_table && !d->summary_printed) {
		/* Through the log's queue, after the table's last rows: a
		 * stderr nobody reads holds the loop no more than they do. */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (f) {
			results_print_summary(d->results, f);
			fclose(f);
			log_text(text, len);
			free(text);
		}
	}
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
	if (search_holds_run(d->search) || certify_holds_run(d->certify))
		return false;
	/* A run whose workloads all wait for soakctl start is not over
	 * before it began. */
	return d->ever_started || run_end_reached(d, now);
}

/* Writes a checkpoint of the results as they stand (checkpoint.h): on a
 * thread, or (wait) here and now (startup, shutdown). */
void checkpoint(struct daemon *d, uint64_t now, bool wait)
{
	if (!d->rundir || !d->results)
		return;
	/* One waiting for its start_at is at 0. */
	uint64_t run_ns = mono_since(d->run_start_ns, now);
	checkpointer_write(&d->checkpointer, d->rundir, d->results, run_ns, wait,
			   host_checkpoint(d->host));
}

/* The host's interval beside the workloads' (host.h): while a workload
 * runs, and once more for the interval in which the last one stopped, so
 * an idle soakd (a finished run) writes nothing and its log settles. */
static void sample_host(struct daemon *d, uint64_t now)
{
	if (!d->host)
		return;
	bool active = false;
	for (size_t i = 0; d->results && i < d->n_workloads && !active; i++)
		active = workload_is_active(d->workloads[i]);
	bool sample = (active || d->host_sampled) && d->results && !waiting_for_start_at(d, now);
	d->host_sampled = active && sample;
	if (!sample) {
		host_pause(d->host);    /* no record spans the pause (host.h) */
		return;
	}
	host_watch_workloads(d->host, d->workloads, d->n_workloads);
	json_t *rec = host_sample(d->host, now, d->run_start_ns, d->results->wall_offset_ns);
	if (!rec)
		return;
	if (d->rundir)
		rundir_append(d->rundir, rec);
	json_decref(d->results->host_last);
	d->results->host_last = rec;
}

/* The workloads' ended intervals become records.  A record waits for a
 * stream late to publish its interval: the results are collected again
 * every CATCHUP_EVERY_NS until it comes. */
static void collect_results(struct daemon *d, uint64_t now)
{
	if (!results_tick(d->results, now))
		return;
	if (d->catchup_passes < 1)
		d->catchup_passes = 1;
	if (!d->catchup_next_ns || d->catchup_next_ns > mono_ns() + CATCHUP_EVERY_NS)
		d->catchup_next_ns = mono_ns() + CATCHUP_EVERY_NS;
}

/* The timer expired more than once since it was last read (the loop was
 * held up): the intervals it passed are collected in the next passes. */
static void catch_up_missed(struct daemon *d, uint64_t expirations)
{
	if (expirations <= 1 || !d->results)
		return;
	d->catchup_passes = CATCHUP_PASSES;
	d->catchup_next_ns = mono_ns() + CATCHUP_EVERY_NS;
}

static void tick(struct daemon *d, uint64_t now)
{
	char status[1024];

	if (!d->results)
		return;   /* a new run that could not start: soakd is stopping */

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
	/* CLOCK_REALTIME may have been stepped (NTP after a boot with no
	 * clock, a VM resumed): the records carry the wall clock of now. */
	uint64_t mono = mono_ns();
	d->results->wall_offset_ns = (int64_t)wall_ns() - (int64_t)mono;
	/* The host's interval before the workloads' it covers, so a dump's
	 * CSV rows can carry it. */
	sample_host(d, now);
	collect_results(d, now);
	certify_tick(d, now);
	search_tick(d, now);
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
	char drift[256], cert[256], search[160];
	drift_status(d->drift, drift, sizeof(drift));
	certify_status_line(d->certify, cert, sizeof(cert));
	search_status_line(d->search, search, sizeof(search));
	sd_notifyf(0, "STATUS=%s%s%s%s%s%s%s", status, cert[0] ? "; " : "", cert,
		   search[0] ? "; " : "", search, drift[0] ? "; " : "", drift);
	ctl_server_expire(d->ctl, now);
	d->ticks++;
}

void daemon_watchdog(struct daemon *d, uint64_t now)
{
	/* A quarter of WatchdogSec, checked every eighth: no gap between
	 * pings comes near it, even on a loaded machine. */
	if (d->watchdog_usec && now - d->last_watchdog_ns >= d->watchdog_usec * 1000 / 4) {
		sd_notify(0, "WATCHDOG=1");
		d->last_watchdog_ns = now;
	}
}

static void watchdog_hook(void *arg)
{
	daemon_watchdog(arg, mono_ns());
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
	catch_up_missed(d, expirations);
}

/*
 * While a reload prepares (a layout or a verify fill may take minutes on
 * this thread), the running workloads' intervals are recorded as they
 * end, not merged into one record of the whole wait: the timer's
 * expirations are taken here, and the kernel's, the host's and the
 * workloads' records written.  The rest of the tick (starts, checkpoints,
 * the run's end) waits for the loop.
 */
void tick_records(struct daemon *d)
{
	uint64_t expirations;

	/* Whether an interval ended or not: with intervals longer than
	 * WatchdogSec, a preparation that reports no progress of its own to
	 * systemd (an endpoint's probe) would otherwise go unpinged. */
	daemon_watchdog(d, mono_ns());
	if (d->timer_fd < 0 || !d->results ||
	    read(d->timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	uint64_t now = mono_ns();
	probes_tick(d->probes, now);
	sample_host(d, now);
	collect_results(d, now);
	exports_publish(d->exports, d->results, now);
	catch_up_missed(d, expirations);
}

void shutdown_run(struct daemon *d, const char *why)
{
	if (d->state == RUN_STOPPING)
		return;
	log_info("%s: stopping workloads and flushing results", why);
	sd_notify(0, "STOPPING=1");
	d->stopping_sent = true;
	d->state = RUN_STOPPING;
	/* The run resumes when soakd comes back. */
	for (size_t i = 0; i < d->n_workloads; i++)
		if (d->workloads && d->workloads[i])
			atomic_store(&d->workloads[i]->suspend, true);
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
	if (d->preparing.active) {
		preparing_signal(d, (int)si.ssi_signo);
		return;
	}
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
int arm_timer(struct daemon *d)
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

uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void free_daemon(struct daemon *d)
{
	dumper_free(d->dumper);
	checkpointer_wait(&d->checkpointer);
	rundir_close(d->rundir);
	free(d->plan);
	ctl_server_free(d->ctl);
	results_free(d->results);
	host_free(d->host);
	drift_free(d->drift);
	probes_free(d->probes);
	exports_free(d->exports);
	for (size_t i = 0; d->workloads && i < d->n_workloads; i++)
		workload_free(d->workloads[i]);
	free_view(d->view);
	for (size_t j = 0; j < d->n_reloaded; j++)
		config_free(d->reloaded[j]);
	free(d->reloaded);
	free(d->workloads);
	/* After the workloads: a confirmation's or a search's workload runs
	 * on a definition they hold. */
	certify_free(d->certify);
	search_free(d->search);
	search_free(d->retired_search);
	free(d->pending_start_ns);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	loop_free(d->loop);
}

/*
 * Set up: the loop, signals, the control socket, the run's directory and
 * workloads, the probes and exports, the timer; then the run begins (new or
 * resumed) and systemd hears READY=1.
 */
static int set_up(struct daemon *d)
{
	const struct run_config *cfg = d->cfg;
	const struct daemon_options *opts = d->opts;
	char pathbuf[4096];
	const char *socket_path;
	int r;

	r = loop_new(&d->loop);
	if (r < 0)
		return log_error_errno(r, "cannot create the event loop");
	if (setup_signals(d) < 0)
		return -1;
	socket_path = opts->socket_path ? opts->socket_path
		      : cfg->socket_path ? cfg->socket_path
		      : default_socket_path(pathbuf, sizeof(pathbuf));
	struct ctl_policy policy = { .read_only_for_all = cfg->ctl.read_only_for_all };
	if (ctl_server_open(d->loop, socket_path, &policy, ctl_handle, d, &d->ctl) < 0 ||
	    dumper_new(&d->dumper) < 0)
		return -1;
	d->plan = config_text(config_print_plan, cfg);
	if (!d->plan || open_run_dir(d, opts->new_run) < 0)
		return -1;
	workload_set_progress_hook(prepare_progress, d);
	d->preparing.active = true;
	r = prepare_workloads(d);
	d->preparing.active = false;
	if (r < 0 || d->preparing.interrupted)
		return -1;
	/* Never fatal: without BPF the run goes on, reporting tracing
	 * unavailable and why. */
	d->view = make_view(d);
	r = d->view ? probes_new(d->view, &d->probes) : -ENOMEM;
	if (r < 0)
		log_warning_errno(r, "kernel tracing is unavailable");

	if (exports_new(&cfg->exports, &d->exports) < 0)
		return -1;
	/* Never fatal either: a record without the host is still a result. */
	if (host_new("/proc", "/sys", &d->host) < 0)
		log_warning("the host's counters are unavailable: out of memory");
	if (drift_new(&d->drift) < 0)
		return log_error_errno(-ENOMEM, "cannot set up drift alarms");

	/* Before begin_run: resuming a long run pings the watchdog. */
	if (sd_watchdog_enabled(0, &d->watchdog_usec) <= 0)
		d->watchdog_usec = 0;
	/* So does a wait for workloads to end (a reload's, a stop's). */
	workload_set_wait_hook(watchdog_hook, d);
	if (setup_timer(d) < 0 || begin_run(d) < 0)
		return -1;
	log_info("run %s: %zu workload(s), control socket %s", cfg->name, d->n_workloads,
		 ctl_server_path(d->ctl));
	if (waiting_for_start_at(d, mono_ns())) {
		char when[64];
		rfc3339_format(cfg->start_at_ns, when, sizeof(when));
		sd_notifyf(0, "READY=1\nSTATUS=run %s: waiting for start_at %s", cfg->name, when);
	} else {
		sd_notifyf(0, "READY=1\nSTATUS=run %s: %zu workload(s) running", cfg->name,
			   d->n_workloads);
	}
	return 0;
}

/* How long the loop may wait: until the watchdog's next ping, the next
 * catch-up pass or the next pending start; -1: until an event. */
static int loop_timeout(const struct daemon *d, uint64_t now)
{
	int timeout = -1;

	if (d->watchdog_usec)
		timeout = (int)(d->watchdog_usec / 8000) + 1;
	if (d->catchup_passes) {
		int ms = d->catchup_next_ns > now ? (int)((d->catchup_next_ns - now) / 1000000) + 1 : 0;
		if (timeout < 0 || ms < timeout)
			timeout = ms;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (d->pending_start_ns[i]) {
			int ms = d->pending_start_ns[i] > now
					 ? (int)((d->pending_start_ns[i] - now) / 1000000) + 1 : 0;
			if (timeout < 0 || ms < timeout)
				timeout = ms;
		}
	return timeout;
}

/* After the loop's events (ticks, signals, commands): a test build's
 * requested stall, the catch-up passes after a late tick, and the
 * workloads whose start is due. */
static void run_due(struct daemon *d)
{
	if (d->stall_ns) {
		/* soakctl debug stall: the watchdog test's hang. */
		struct timespec ts = { .tv_sec = (time_t)(d->stall_ns / 1000000000),
				       .tv_nsec = (long)(d->stall_ns % 1000000000) };
		d->stall_ns = 0;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	uint64_t now = mono_ns();
	if (d->catchup_passes && now >= d->catchup_next_ns && d->results) {
		d->catchup_passes--;
		d->catchup_next_ns = now + CATCHUP_EVERY_NS;
		collect_results(d, now);
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (d->pending_start_ns[i] && now >= d->pending_start_ns[i]) {
			char err[256];
			if (start_workload(d, i, err, sizeof(err)) < 0)
				log_error("cannot start workload %s: %s",
					  d->workloads[i]->cfg->name, err);
		}
}

/*
 * The story of a run: set up, then the loop turns until the run is over:
 * the timer ticks (tick), the control socket is answered (commands.c, a
 * reload among them: reload/), signals stop or toggle tracing; then stop.
 */
int daemon_run(const struct run_config *cfg, const struct daemon_options *opts)
{
	struct daemon d = { .cfg = cfg, .opts = opts, .signal_fd = -1, .timer_fd = -1 };
	int r, status = EXIT_FAILURE;

	if (set_up(&d) < 0) {
		/* Stopped while preparing, as asked: not a failure. */
		if (d.preparing.interrupted)
			status = EXIT_SUCCESS;
		goto out;
	}

	while (!d.quit) {
		uint64_t now = mono_ns();
		daemon_watchdog(&d, now);
		r = loop_run_once(d.loop, loop_timeout(&d, now));
		if (r < 0) {
			log_error_errno(r, "event loop failed");
			break;
		}
		run_due(&d);
	}

	if (!d.stopping_sent)
		sd_notify(0, "STOPPING=1");
	end_run(&d, "soakd is stopping");
	status = EXIT_SUCCESS;
	for (size_t i = 0; i < d.n_workloads; i++)
		if (d.workloads[i]->state == WORKLOAD_FAILED)
			status = EXIT_WORKLOAD_FAILED;
out:
	workload_set_progress_hook(NULL, NULL);
	workload_set_wait_hook(NULL, NULL);
	free_daemon(&d);
	return status;
}
