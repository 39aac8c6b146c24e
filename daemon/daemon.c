// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run: one epoll loop on the main thread owns the control socket, the
 * signals and the interval tick; workload threads do the I/O.
 */
#include "daemon.h"

#include <errno.h>
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

#include "ctl_server.h"
#include "log.h"
#include "loop.h"
#include "parse.h"
#include "results.h"
#include "workload.h"

#define EXIT_WORKLOAD_FAILED 3
#define STOP_TIMEOUT_NS (UINT64_C(10) * 1000000000)
/* The tick fires this long after a boundary, so threads have published. */
#define TICK_GRACE_NS (UINT64_C(20) * 1000000)

enum run_state { RUN_RUNNING, RUN_FINISHED, RUN_STOPPING };

struct daemon {
	const struct run_config *cfg;
	const struct daemon_options *opts;
	struct loop *loop;
	struct ctl_server *ctl;
	struct results *results;
	struct workload **workloads;
	size_t n_workloads;
	uint64_t *pending_start_ns;   /* 0: none */
	int signal_fd, timer_fd;
	uint64_t run_start_ns, run_end_ns;
	uint64_t ticks;
	uint64_t watchdog_usec;
	uint64_t last_watchdog_ns;
	enum run_state state;
	bool quit;
	bool ever_started;
	bool stopping_sent;
	bool summary_printed;
};

static const char *run_state_name(enum run_state s)
{
	return s == RUN_RUNNING ? "running" : s == RUN_FINISHED ? "finished" : "stopping";
}

static struct workload *find_workload(struct daemon *d, const char *name, size_t *ret_index)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (strcmp(d->workloads[i]->cfg->name, name) == 0) {
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
static bool run_is_over(struct daemon *d, uint64_t now)
{
	for (size_t i = 0; i < d->n_workloads; i++)
		if (workload_is_active(d->workloads[i]) || d->pending_start_ns[i])
			return false;
	/* A run whose workloads all wait for soakctl start is not over
	 * before it began. */
	return d->ever_started || (d->run_end_ns && now >= d->run_end_ns);
}

static void tick(struct daemon *d, uint64_t now)
{
	char status[1024];

	for (size_t i = 0; i < d->n_workloads; i++) {
		struct workload *w = d->workloads[i];
		if (d->pending_start_ns[i] && now >= d->pending_start_ns[i]) {
			char err[256];
			if (start_workload(d, i, err, sizeof(err)) < 0)
				log_error("cannot start workload %s: %s", w->cfg->name, err);
		}
		if (results_reap(d->results, i) && !workload_is_active(w))
			log_info("workload %s %s%s%s", w->cfg->name, workload_state_name(w->state),
				 w->reason[0] ? ": " : "", w->reason);
	}
	results_tick(d->results, now);

	if (d->run_end_ns && now >= d->run_end_ns && d->state == RUN_RUNNING) {
		/* Workloads whose schedule ends with the run finish by
		 * themselves; longer ones are cut here. */
		for (size_t i = 0; i < d->n_workloads; i++) {
			struct workload *w = d->workloads[i];
			d->pending_start_ns[i] = 0;
			if (workload_is_active(w) &&
			    w->started_ns + sched_duration(&w->streams[0].sched) >
				    d->run_end_ns + d->cfg->interval_ns)
				workload_request_stop(w, "the run's duration was reached");
		}
	}
	if (d->state == RUN_RUNNING && run_is_over(d, now)) {
		d->state = RUN_FINISHED;
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
	if (d->watchdog_usec && now - d->last_watchdog_ns >= d->watchdog_usec * 1000 / 2) {
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
		/* Reserved for toggling kernel tracing, which this build does
		 * not have; say so rather than die as SIGHUP's default would. */
		log_notice("SIGHUP received: kernel tracing is not available in this build");
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

static char *ctl_handle(void *userdata, const struct proto_request *req)
{
	struct daemon *d = userdata;

	switch (req->cmd) {
	case PROTO_STATUS:
		return reply(results_status_json(d->results, mono_ns(), run_state_name(d->state)));
	case PROTO_START:
	case PROTO_STOP:
		return handle_start_stop(d, req);
	case PROTO_DUMP:
		if (req->format == PROTO_FORMAT_CSV) {
			char *csv = results_dump_csv(d->results);
			if (!csv)
				return proto_error_line("out of memory");
			json_t *v = json_pack("{s:b,s:s}", "ok", 1, "csv", csv);
			free(csv);
			return reply(v);
		}
		return reply(results_dump_json(d->results));
	case PROTO_TRACE:
		return proto_error_line("kernel tracing (eBPF probes) is not available in this build");
	case PROTO_REPORT:
		return reply(results_report_json(d->results));
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

static int setup_timer(struct daemon *d)
{
	uint64_t first = d->run_start_ns + d->cfg->interval_ns + TICK_GRACE_NS;
	struct itimerspec its = {
		.it_value = { (time_t)(first / 1000000000u), (long)(first % 1000000000u) },
		.it_interval = { (time_t)(d->cfg->interval_ns / 1000000000u),
				 (long)(d->cfg->interval_ns % 1000000000u) },
	};

	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer_fd < 0)
		return log_error_errno(-errno, "cannot create timerfd");
	if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return log_error_errno(-errno, "cannot arm timerfd");
	return loop_add(d->loop, d->timer_fd, EPOLLIN, timer_event, d);
}

static int prepare_workloads(struct daemon *d)
{
	char err[512];

	d->n_workloads = d->cfg->n_workloads;
	d->workloads = calloc(d->n_workloads, sizeof(*d->workloads));
	d->pending_start_ns = calloc(d->n_workloads, sizeof(*d->pending_start_ns));
	if (!d->workloads || !d->pending_start_ns)
		return log_error_errno(-ENOMEM, "cannot set up workloads");
	for (size_t i = 0; i < d->n_workloads; i++) {
		const struct workload_config *wc = &d->cfg->workloads[i];
		int r = workload_new(wc, 0, d->cfg->interval_ns, &d->workloads[i], err, sizeof(err));
		if (r == 0)
			r = workload_prepare(d->workloads[i], err, sizeof(err));
		if (r < 0) {
			log_error("workload %s: %s", wc->name, err);
			return r;
		}
	}
	return 0;
}

static void free_daemon(struct daemon *d)
{
	ctl_server_free(d->ctl);
	results_free(d->results);
	for (size_t i = 0; d->workloads && i < d->n_workloads; i++)
		workload_free(d->workloads[i]);
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
	if (ctl_server_open(d.loop, socket_path, ctl_handle, &d, &d.ctl) < 0)
		goto out;
	if (prepare_workloads(&d) < 0)
		goto out;

	d.run_start_ns = mono_ns();
	d.run_end_ns = cfg->duration_ns ? d.run_start_ns + cfg->duration_ns : 0;
	for (size_t i = 0; i < d.n_workloads; i++)
		d.workloads[i]->run_start_ns = d.run_start_ns;
	d.results = results_new(cfg, d.workloads, d.n_workloads, d.run_start_ns, opts->live_table);
	if (!d.results) {
		log_error("out of memory for results");
		goto out;
	}
	if (setup_timer(&d) < 0)
		goto out;
	for (size_t i = 0; i < d.n_workloads; i++) {
		const struct workload_config *wc = &cfg->workloads[i];
		char err[256];
		if (!wc->autostart)
			continue;
		if (wc->start_offset_ns) {
			d.pending_start_ns[i] = d.run_start_ns + wc->start_offset_ns;
			continue;
		}
		if (start_workload(&d, i, err, sizeof(err)) < 0) {
			log_error("cannot start workload %s: %s", wc->name, err);
			stop_all(&d, "another workload failed to start");
			goto out;
		}
	}
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	log_info("run %s: %zu workload(s), control socket %s", cfg->name, d.n_workloads,
		 ctl_server_path(d.ctl));
	sd_notifyf(0, "READY=1\nSTATUS=run %s: %zu workload(s) running", cfg->name, d.n_workloads);

	while (!d.quit) {
		int timeout = -1;
		uint64_t now = mono_ns();
		watchdog(&d, now);
		if (d.watchdog_usec)
			timeout = (int)(d.watchdog_usec / 4000) + 1;
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
		now = mono_ns();
		for (size_t i = 0; i < d.n_workloads; i++)
			if (d.pending_start_ns[i] && now >= d.pending_start_ns[i]) {
				char err[256];
				if (start_workload(&d, i, err, sizeof(err)) < 0)
					log_error("cannot start workload %s: %s",
						  d.workloads[i]->cfg->name, err);
			}
	}

	/* Stop what still runs and count every op it completes. */
	if (!d.stopping_sent)
		sd_notify(0, "STOPPING=1");
	stop_all(&d, "soakd is stopping");
	for (size_t i = 0; i < d.n_workloads; i++)
		results_wait(d.results, i, STOP_TIMEOUT_NS);
	results_tick(d.results, mono_ns());
	print_summary(&d);
	status = EXIT_SUCCESS;
	for (size_t i = 0; i < d.n_workloads; i++)
		if (d.workloads[i]->state == WORKLOAD_FAILED)
			status = EXIT_WORKLOAD_FAILED;
out:
	free_daemon(&d);
	return status;
}
