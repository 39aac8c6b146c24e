/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_WORKLOAD_H
#define SOAK_WORKLOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "sched.h"
#include "stats.h"

/*
 * A workload is one configured load: an engine (device, later object) and
 * one or more streams, each a thread with its own I/O queue and its own
 * statistics.  The main thread starts and stops workloads and collects the
 * streams' intervals; the streams never wait for it.
 */

enum workload_state {
	WORKLOAD_IDLE,      /* prepared, not started */
	WORKLOAD_RUNNING,
	WORKLOAD_STOPPING,  /* stop requested, threads draining */
	WORKLOAD_STOPPED,   /* stopped by request or by the end of the run */
	WORKLOAD_FINISHED,  /* schedule completed */
	WORKLOAD_FAILED,    /* stopped by an error or max_lag */
};

enum stream_outcome {
	STREAM_RUNNING,
	STREAM_FINISHED,
	STREAM_STOPPED,
	STREAM_FAILED,
};

#define WORKLOAD_REASON_MAX 256

struct workload;
struct dev_facts;           /* dev_facts.h */

struct workload_stream {
	struct workload *workload;
	size_t index;
	const char *label;          /* e.g. the target path */
	pthread_t thread;
	bool thread_started;
	struct stream_stats stats;
	struct sched sched;         /* this stream's share of the rate */
	void *engine;               /* engine's per-stream state */
	struct dev_facts *facts;    /* its device, read at prepare; NULL if none */
	_Atomic uint64_t lag_ns;    /* how late the next due op is, now */
	/* When the thread stopped taking ops from its schedule (stream_cut),
	 * 0 while it takes them. */
	_Atomic uint64_t cut_ns;
	/* An audit reading every object of the run's ledger (object
	 * workloads): objects read so far, of how many; total 0: none. */
	_Atomic uint64_t audit_done, audit_total;
	/* Set by the thread before `outcome` is stored with release order. */
	char reason[WORKLOAD_REASON_MAX];
	/* Set by the thread before `outcome`: it leaves I/O the device never
	 * answered, and the kernel holds its exit until that I/O ends, so the
	 * main thread detaches it rather than wait in a join. */
	bool left_io;
	_Atomic int outcome;
};

struct json_t;

struct workload_engine {
	const char *name;
	/* How many streams (threads) the workload runs, and what each is
	 * called in results: a device per stream, or object client threads. */
	size_t (*n_streams)(const struct workload_config *cfg);
	const char *(*stream_label)(const struct workload_config *cfg, size_t index);
	/* Opens and checks what the workload needs (before READY=1).  On
	 * failure returns a negative errno and writes why to err. */
	int (*prepare)(struct workload *w, char *err, size_t errlen);
	void *(*thread_main)(void *stream);
	/* Optional, main thread, before a start or resume changes anything:
	 * refuses it (a negative errno, why in err) while what the last run
	 * left behind is still in use, e.g. a device's I/O still in flight. */
	int (*can_start)(struct workload *w, char *err, size_t errlen);
	/* Optional, main thread, before a workload is built over targets a
	 * reload or start would take: refuses (a negative errno, why in err)
	 * while another's I/O still in flight holds one of them. */
	int (*targets_free)(const struct workload_config *cfg, char *err, size_t errlen);
	void (*release)(struct workload *w);
	/* Optional, main thread: adds the engine's own figures to the
	 * workload's interval record (a jansson object) as it is written. */
	void (*record_extra)(struct workload *w, struct json_t *rec);
};

struct workload {
	const struct workload_config *cfg;
	size_t slot;                /* its index in the daemon's workloads, results and probes */
	const struct workload_engine *engine;
	const char *op_names[STATS_MAX_OPS];
	double op_share[STATS_MAX_OPS]; /* fraction of the target rate per op */
	size_t n_ops;
	struct workload_stream *streams;
	size_t n_streams;

	enum workload_state state;
	char reason[WORKLOAD_REASON_MAX];
	_Atomic bool stop_requested;
	/* Stop requests so far (soakctl, the run's end, a drift alarm...):
	 * an engine's end-of-run work, begun after one stop, gives way to
	 * the next. */
	_Atomic unsigned stop_requests;
	/* When the first stop was requested (CLOCK_MONOTONIC), 0: none.  The
	 * schedule ends there, not when a thread notices (workload_cut_at). */
	_Atomic uint64_t stop_ns;
	/* Set before a stop request when the run goes on later (soakd
	 * stopping, a reload replacing the workload): engines keep what the
	 * run holds (object workloads leave their objects for the resume). */
	_Atomic bool suspend;
	int64_t started_ns;         /* schedule origin, CLOCK_MONOTONIC (see mono_since) */
	uint64_t resume_ns;         /* resumed run: the schedule goes on from here */
	bool resuming;              /* set before prepare: a resumed run does not prep again */
	/* With resuming: targets (bit k: targets[k]) a reload's replacement
	 * names and the definition it replaces did not; the device engine
	 * decides which of them are new to the run (dev_setup.c). */
	uint64_t new_targets;
	const char *run_dir;        /* set before prepare: the run's directory (object ledgers,
				     * device verify state) */
	int64_t run_start_ns;       /* interval boundaries: run_start + k * interval */
	uint64_t interval_ns;
	void *engine_data;
	bool released;              /* targets closed (workload_release) */
};

/*
 * CLOCK_MONOTONIC restarts near 0 at every boot.  A run's time 0 and a
 * schedule's origin are instants on it, and a run resumed after a reboot
 * began before this boot: those origins are signed and may be negative.
 * Times are measured from an origin with mono_since() and instants placed
 * after one with mono_at(), never by subtracting or adding unsigned
 * instants, which wrap.
 */
uint64_t mono_ns(void);

/* Nanoseconds from origin to t; 0 when t is not after it. */
static inline uint64_t mono_since(int64_t origin_ns, uint64_t t_ns)
{
	if (origin_ns < 0)
		return t_ns + (uint64_t)-origin_ns;
	return t_ns > (uint64_t)origin_ns ? t_ns - (uint64_t)origin_ns : 0;
}

/* The instant offset after origin; 0 when it was before this boot,
 * UINT64_MAX when it is beyond the clock's range. */
static inline uint64_t mono_at(int64_t origin_ns, uint64_t offset_ns)
{
	if (origin_ns < 0)
		return offset_ns > (uint64_t)-origin_ns ? offset_ns - (uint64_t)-origin_ns : 0;
	return offset_ns > UINT64_MAX - (uint64_t)origin_ns ? UINT64_MAX
							   : (uint64_t)origin_ns + offset_ns;
}

/* The interval boundary at or after t. */
uint64_t workload_next_boundary(const struct workload *w, uint64_t t_ns);

int workload_new(const struct workload_config *cfg, int64_t run_start_ns, uint64_t interval_ns,
		 struct workload **ret, char *err, size_t errlen);
int workload_prepare(struct workload *w, char *err, size_t errlen);
/* Refuses (a negative errno, why in err) a workload whose targets another
 * workload's I/O still in flight holds; 0 when it may be prepared. */
int workload_targets_free(const struct workload *w, char *err, size_t errlen);
int workload_start(struct workload *w, uint64_t now_ns, char *err, size_t errlen);
/* Starts a workload at position pos_ns of its schedule, as if it had been
 * started pos_ns ago (a resumed run). */
int workload_resume(struct workload *w, uint64_t now_ns, uint64_t pos_ns, char *err,
		    size_t errlen);
void workload_request_stop(struct workload *w, const char *reason);
/* Joins streams that have ended, folding their last slots through fn;
 * updates state.  Returns true when the state changed. */
bool workload_reap(struct workload *w, stream_consume_fn fn, void **userdata_per_stream);
/* Called every 5 ms or so while workload_wait or workload_join waits (the
 * daemon pings systemd's watchdog there); NULL: none. */
void workload_set_wait_hook(void (*hook)(void *arg), void *arg);
/* Waits until until_ns (mono_ns) at the latest for all streams to end:
 * workloads stopped together are waited for together. */
void workload_wait(struct workload *w, uint64_t until_ns, stream_consume_fn fn,
		   void **userdata_per_stream);
/* Asks the streams to stop and waits, however long, for each to end: its
 * thread joined (or let go, when it left I/O the device never answered)
 * and its last slots folded through fn.  A stream past a stop's deadline
 * is one of these: joined without its slots, its last ops would vanish. */
void workload_join(struct workload *w, stream_consume_fn fn, void **userdata_per_stream);
void workload_free(struct workload *w);
/* Ends the threads (which must have been reaped) and closes the targets,
 * keeping what was measured: a reload replacing w opens them anew. */
void workload_release(struct workload *w);

bool workload_is_active(const struct workload *w);
const char *workload_state_name(enum workload_state s);
/* An audit's progress over the streams: false when none runs. */
bool workload_audit(const struct workload *w, uint64_t *ret_done, uint64_t *ret_total);
/* Largest current lag over the streams. */
uint64_t workload_lag_ns(const struct workload *w);
/* The thread takes no more ops from its schedule (stopped, failed or at its
 * end) and has counted those due by now_ns: what the schedule would make
 * due after now_ns is no op of the run, and no interval's target counts it
 * while the thread drains, cleans up or sweeps.  The first call counts. */
void stream_cut(struct workload_stream *s, uint64_t now_ns);
/* Where a thread ending at now_ns cuts its schedule: at the first stop
 * request when one came before now_ns (the ops due after it, up to when
 * the thread saw it, were not the run's: nobody asked for them), else
 * now_ns. */
uint64_t workload_cut_at(const struct workload *w, uint64_t now_ns);
/* Target ops over [from, to) (absolute CLOCK_MONOTONIC), summed over streams,
 * each up to its cut. */
double workload_target_ops(const struct workload *w, uint64_t from_ns, uint64_t to_ns);
/* How much of [from, to) lies inside the workload's schedule: the time its
 * target ops are spread over (rate_target), never a drain after its end or
 * after the last of its streams' cuts. */
uint64_t workload_scheduled_ns(const struct workload *w, uint64_t from_ns, uint64_t to_ns);

/*
 * Long work before a run can begin (a device's verify fill or resume
 * check, its prep), on the main thread in prepare: it reports its
 * progress here, often (every MiB or so), and stops at once, its state
 * consistent, when this returns false (soakd is to stop).  soakd's hook
 * shows the progress in status and answers the control socket meanwhile;
 * without one, or on another thread than the hook's, false means SIGTERM
 * or SIGINT is pending.
 */
struct workload_progress {
	const char *workload, *target; /* names, NULL: not known */
	const char *what;              /* e.g. "verify fill" */
	uint64_t done, total;          /* in units of `unit` */
	const char *unit;              /* "blocks", "bytes" */
};
typedef bool (*workload_progress_fn)(void *userdata, const struct workload_progress *p);
void workload_set_progress_hook(workload_progress_fn fn, void *userdata);
bool workload_progress(const struct workload_progress *p);
/* This thread is the one that set the hook (soakd's main thread): code
 * shared with other threads reports progress only then. */
bool workload_progress_here(void);
/* SIGTERM or SIGINT is pending (blocked, not read yet). */
bool workload_stop_pending(void);

/* Called by stream threads. */
void stream_finish(struct workload_stream *s, enum stream_outcome outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

extern const struct workload_engine dev_engine;
extern const struct workload_engine obj_engine;

#endif
