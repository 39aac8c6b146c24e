/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the run's files share: struct daemon, the state of one soakd, and
 * the functions one of them calls in another.  Only the files of
 * daemon/run and daemon/reload include this; everything else sees the run
 * through daemon.h (daemon_run) and its own subsystem's interface.
 */
#ifndef SOAK_DAEMON_INT_H
#define SOAK_DAEMON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "config/config.h"
#include "proto.h"
#include "results/checkpoint.h"

struct daemon_options;
struct certify;
struct search;
struct host;
struct drift;

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
	struct host *host;            /* the host's counters (daemon/host); NULL: none */
	bool host_sampled;            /* a workload ran at the last tick: the host was sampled */
	struct drift *drift;          /* drift alarms (daemon/drift); NULL: none */
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
	/* Workloads being prepared (set_up, before the run begins): a
	 * verify fill or check, a prep; the control socket answers status
	 * with this progress meanwhile, and stop, SIGTERM or SIGINT
	 * interrupt it. */
	struct {
		bool active, interrupted;
		const char *workload;
		char target[256], what[96], unit[16];
		uint64_t done, total;
		uint64_t since_ns, since_done; /* when this target's `what` began */
		uint64_t next_poll_ns;
	} preparing;
	bool reloading;                /* a reload prepares its workloads */
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
	struct certify *certify;       /* the run's certification (certify_int.h); NULL: none */
	/* The run's capacity search (search_int.h); NULL: none.  The workload
	 * it searches runs on its copy of the definition; a new run's search
	 * leaves the old one retired until the workloads go. */
	struct search *search, *retired_search;
};

/* daemon.c: the lifecycle, the tick, signals, the watchdog. */

const char *run_state_name(enum run_state s);

/* A run with "start_at" begins at that wall-clock time: until then its
 * start lies ahead on the monotonic clock. */
bool waiting_for_start_at(const struct daemon *d, uint64_t now);

struct workload *find_workload(struct daemon *d, const char *name, size_t *ret_index);

/* preparing.c: the workloads' preparation, served (set_up's prepare).
 * The progress hook (workload_set_progress_hook) with the daemon; what
 * status says meanwhile; a control request meanwhile. */
bool prepare_progress(void *userdata, const struct workload_progress *p);
int prepare_workloads(struct daemon *d);
json_t *preparing_status_json(const struct daemon *d);
char *handle_preparing(struct daemon *d, const struct proto_request *req);
/* A signal read meanwhile: SIGTERM and SIGINT stop the preparation. */
void preparing_signal(struct daemon *d, int signo);

int start_workload(struct daemon *d, size_t i, char *err, size_t errlen);

/* A reload's long preparation: the intervals that end meanwhile are
 * recorded (daemon.c). */
void tick_records(struct daemon *d);
/* WATCHDOG=1 when a quarter of WatchdogSec has passed since the last. */
void daemon_watchdog(struct daemon *d, uint64_t now);

void stop_all(struct daemon *d, const char *reason);

void print_summary(struct daemon *d);

/* Writes a checkpoint of the results as they stand (checkpoint.h): on a
 * thread, or (wait) here and now (startup, shutdown). */
void checkpoint(struct daemon *d, uint64_t now, bool wait);

void shutdown_run(struct daemon *d, const char *why);

/* What print writes of cfg, malloc'd; NULL: out of memory. */
char *config_text(void (*print)(const struct run_config *cfg, FILE *out),
		  const struct run_config *cfg);

/* The probes' view of the run: cfg's settings, the workloads by slot. */
struct run_config *make_view(const struct daemon *d);

void free_view(struct run_config *v);

/* Ticks a little after each interval boundary of the run. */
int arm_timer(struct daemon *d);

const char *state_directory(const struct daemon_options *opts, char *buf, size_t len);

uint64_t wall_ns(void);

/* begin_run.c: a new or resumed run, replay, start_at. */

/* The run's directory under the state directory: a new one, or the one
 * that holds this run already (then d->resuming). */
int open_run_dir(struct daemon *d, bool new_run);

/*
 * Starts (or resumes) the run: its directory and log, the results, the
 * timer, and the workloads: at their start, or where a resumed run left
 * them.
 */
int begin_run(struct daemon *d);

/* Stops what still runs, counts every op it completes, and writes the
 * run's last records. */
void end_run(struct daemon *d, const char *why);

/* soakctl start --new-run: the current run ends and a new one starts. */
char *handle_new_run(struct daemon *d);

/* certify.c, certify_out.c: the run's certification (the "certify"
 * block; what a step's verdict rests on is in certify_int.h). */

/* Starts judging the run's certification, if it has one (d->certify
 * stays NULL otherwise): at a new run, or resuming one (the log's
 * verdicts and the current step's intervals read back).  After the
 * results are set up, before the workloads start.  0 or -errno. */
int certify_begin(struct daemon *d, bool resume);
void certify_free(struct certify *c);

/* A resumed run's certified workload (slot) that must not run again: the
 * certification was over (or its steps were, the confirmation not yet
 * begun) when soakd stopped, though the workload was still draining. */
bool certify_holds_stopped(const struct certify *c, size_t slot);
/* After each tick's results: judges the steps whose hold has ended. */
void certify_tick(struct daemon *d, uint64_t now_ns);
/* The steps are over and the confirmation starts at the next tick: the
 * run is not over for the certified workloads being idle meanwhile. */
bool certify_holds_run(const struct certify *c);

/* status: the current step and the verdicts so far; report and dump:
 * every verdict with its table, and the answer.  NULL without one. */
json_t *certify_status_json(const struct certify *c);
json_t *certify_report_json(const struct certify *c);
/* systemd's STATUS= part: the step held and how long, the verdicts so far,
 * or the answer ("" without a certification). */
void certify_status_line(const struct certify *c, char *buf, size_t len);

/* search.c, search_out.c: the run's capacity search ("search"). */

/* Starts the search, if the run has one (d->search stays NULL
 * otherwise), with the workload's first probe, or resuming the probe a
 * resumed run was in.  After the results are set up, before the
 * workloads start.  0 or -errno. */
int search_begin(struct daemon *d, bool resume);
void search_free(struct search *s);
/* After each tick's results: a probe that ended is judged, the next one
 * started. */
void search_tick(struct daemon *d, uint64_t now_ns);
/* A probe (or the soak after the answer) waits to start again: the run is
 * not over for the searched workload being idle meanwhile. */
bool search_holds_run(const struct search *s);
json_t *search_status_json(const struct search *s);
json_t *search_report_json(const struct search *s);
/* systemd's STATUS= part: the probe running and the bracket so far, the
 * answer, the soak ("" without a search). */
void search_status_line(const struct search *s, char *buf, size_t len);

/* commands.c: the control commands' handlers. */

/* v (consumed) as the line to send back. */
char *reply(json_t *v);

/* The control server's handler: one request, its reply line. */
char *ctl_handle(void *userdata, const struct proto_request *req);

#endif
