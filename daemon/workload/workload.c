// SPDX-License-Identifier: GPL-2.0-only
#include "workload.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "run/cpu_prio.h"

/* A join that has waited this long says so, once. */
#define JOIN_WARN_NS (UINT64_C(5) * 1000000000)

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set and cleared by the main thread while stream threads may ask
 * workload_progress_here() (a sweep's requests): the hook is published
 * last and read first, atomically; its thread and userdata are read only
 * once it is seen. */
static _Atomic(workload_progress_fn) progress_fn;
static void *progress_userdata;
static pthread_t progress_thread;

void workload_set_progress_hook(workload_progress_fn fn, void *userdata)
{
	atomic_store_explicit(&progress_fn, NULL, memory_order_release);
	if (!fn)
		return;
	progress_userdata = userdata;
	progress_thread = pthread_self();
	atomic_store_explicit(&progress_fn, fn, memory_order_release);
}

/* The hook, where this thread is the one that set it; else NULL. */
static workload_progress_fn hook_here(void)
{
	workload_progress_fn fn = atomic_load_explicit(&progress_fn, memory_order_acquire);

	return fn && pthread_equal(progress_thread, pthread_self()) ? fn : NULL;
}

bool workload_progress_here(void)
{
	return hook_here() != NULL;
}

bool workload_stop_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

bool workload_progress(const struct workload_progress *p)
{
	workload_progress_fn fn = hook_here();

	if (fn)
		return fn(progress_userdata, p);
	return !workload_stop_pending();
}

uint64_t workload_next_boundary(const struct workload *w, uint64_t t_ns)
{
	uint64_t k = mono_since(w->run_start_ns, t_ns) / w->interval_ns + 1;
	return mono_at(w->run_start_ns, k * w->interval_ns);
}

const char *workload_state_name(enum workload_state s)
{
	switch (s) {
	case WORKLOAD_IDLE: return "idle";
	case WORKLOAD_RUNNING: return "running";
	case WORKLOAD_STOPPING: return "stopping";
	case WORKLOAD_STOPPED: return "stopped";
	case WORKLOAD_FINISHED: return "finished";
	case WORKLOAD_FAILED: return "failed";
	}
	return "unknown";
}

bool workload_is_active(const struct workload *w)
{
	return w->state == WORKLOAD_RUNNING || w->state == WORKLOAD_STOPPING;
}

int workload_new(const struct workload_config *cfg, int64_t run_start_ns, uint64_t interval_ns,
		 struct workload **ret, char *err, size_t errlen)
{
	struct workload *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->cfg = cfg;
	w->engine = cfg->type == WORKLOAD_OBJECT ? &obj_engine : &dev_engine;
	w->run_start_ns = run_start_ns;
	w->interval_ns = interval_ns;
	w->state = WORKLOAD_IDLE;
	w->n_streams = w->engine->n_streams(cfg);
	w->streams = calloc(w->n_streams, sizeof(*w->streams));
	if (!w->streams) {
		free(w);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->n_streams; i++) {
		w->streams[i].workload = w;
		w->streams[i].index = i;
		w->streams[i].label = w->engine->stream_label(cfg, i);
	}
	*ret = w;
	return 0;
}

int workload_prepare(struct workload *w, char *err, size_t errlen)
{
	int r = w->engine->prepare(w, err, errlen);
	if (r < 0)
		return r;
	for (size_t i = 0; i < w->n_streams; i++) {
		r = stream_stats_init(&w->streams[i].stats, w->n_ops, 0);
		if (r < 0) {
			snprintf(err, errlen, "cannot allocate statistics: %s", strerror(-r));
			return r;
		}
	}
	return 0;
}

int workload_targets_free(const struct workload *w, char *err, size_t errlen)
{
	return w->engine->targets_free ? w->engine->targets_free(w->cfg, err, errlen) : 0;
}

/* Every engine's thread: ahead of the control plane for the CPU. */
static void *stream_thread(void *arg)
{
	struct workload_stream *s = arg;

	cpu_prio_workload_thread();
	return s->workload->engine->thread_main(s);
}

static int stream_sched_init(struct workload *w, struct workload_stream *s)
{
	const struct workload_config *cfg = w->cfg;
	double rate = cfg->rate > 0 ? cfg->rate / (double)w->n_streams : 1;
	int r = sched_init(&s->sched, rate, cfg->steps, cfg->n_steps,
			   cfg->arrival == ARRIVAL_POISSON, cfg->seed * 7919 + s->index + 1);
	if (r < 0)
		return r;
	/* The streams share the rate: interleave them, or N streams in step
	 * would send their ops N at a time. */
	return sched_set_phase(&s->sched, (double)s->index / (double)w->n_streams);
}

static int start_at(struct workload *w, uint64_t now_ns, uint64_t pos_ns, char *err,
		    size_t errlen);

int workload_start(struct workload *w, uint64_t now_ns, char *err, size_t errlen)
{
	return start_at(w, now_ns, 0, err, errlen);
}

int workload_resume(struct workload *w, uint64_t now_ns, uint64_t pos_ns, char *err,
		    size_t errlen)
{
	return start_at(w, now_ns, pos_ns, err, errlen);
}

static int start_at(struct workload *w, uint64_t now_ns, uint64_t pos_ns, char *err,
		    size_t errlen)
{
	int r;

	if (workload_is_active(w)) {
		snprintf(err, errlen, "workload \"%s\" is already %s", w->cfg->name,
			 workload_state_name(w->state));
		return -EBUSY;
	}
	if (w->released) {
		snprintf(err, errlen, "it let go of its targets when a reload could neither replace "
			 "nor restore it; a reload that defines it where it can run brings it back "
			 "(or, after a restart of soakd, soakctl start)");
		return -ESTALE;
	}
	if (w->engine->can_start) {
		r = w->engine->can_start(w, err, errlen);
		if (r < 0)
			return r;
	}
	atomic_store(&w->stop_requested, false);
	atomic_store(&w->stop_ns, 0);
	atomic_store(&w->suspend, false);
	/* After a reboot the position can exceed the clock: the origin
	 * is then before this boot, negative. */
	w->started_ns = (int64_t)now_ns - (int64_t)pos_ns;
	w->resume_ns = pos_ns;
	w->reason[0] = '\0';
	for (size_t i = 0; i < w->n_streams; i++) {
		struct workload_stream *s = &w->streams[i];
		r = stream_sched_init(w, s);
		if (r < 0) {
			snprintf(err, errlen, "invalid schedule for \"%s\"", w->cfg->name);
			return r;
		}
		/* A resumed run: engines that draw due times from the stream's
		 * schedule go on from where it was. */
		if (pos_ns)
			sched_seek(&s->sched, pos_ns);
		s->stats.slots[s->stats.seq % STATS_SLOTS]->start_ns = now_ns;
		s->reason[0] = '\0';
		atomic_store(&s->lag_ns, 0);
		atomic_store(&s->cut_ns, 0);
		atomic_store(&s->outcome, STREAM_RUNNING);
		s->left_io = false;
	}
	for (size_t i = 0; i < w->n_streams; i++) {
		struct workload_stream *s = &w->streams[i];
		r = -pthread_create(&s->thread, NULL, stream_thread, s);
		if (r < 0) {
			snprintf(err, errlen, "cannot start a thread for \"%s\": %s", s->label,
				 strerror(-r));
			workload_request_stop(w, "failed to start");
			w->state = WORKLOAD_STOPPING;
			return r;
		}
		s->thread_started = true;
	}
	w->state = WORKLOAD_RUNNING;
	return 0;
}

bool workload_audit(const struct workload *w, uint64_t *ret_done, uint64_t *ret_total)
{
	uint64_t done = 0, total = 0;
	for (size_t i = 0; i < w->n_streams; i++) {
		done += atomic_load_explicit(&w->streams[i].audit_done, memory_order_relaxed);
		total += atomic_load_explicit(&w->streams[i].audit_total, memory_order_relaxed);
	}
	if (!total)
		return false;
	*ret_done = done;
	*ret_total = total;
	return true;
}

void workload_request_stop(struct workload *w, const char *reason)
{
	if (!workload_is_active(w))
		return;
	if (reason && !w->reason[0])
		snprintf(w->reason, sizeof(w->reason), "%s", reason);
	/* Counted before the flag: a thread that sees the flag set sees
	 * the count that goes with it. */
	atomic_fetch_add(&w->stop_requests, 1);
	uint64_t none = 0;
	atomic_compare_exchange_strong(&w->stop_ns, &none, mono_ns());
	atomic_store(&w->stop_requested, true);
	w->state = WORKLOAD_STOPPING;
}

void stream_finish(struct workload_stream *s, enum stream_outcome outcome, const char *fmt, ...)
{
	/* The last slot ends now, not when the main thread gets to it. */
	stream_current(&s->stats)->end_ns = mono_ns();
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
		va_end(ap);
	}
	atomic_store_explicit(&s->outcome, outcome, memory_order_release);
}

bool workload_reap(struct workload *w, stream_consume_fn fn, void **userdata_per_stream)
{
	enum workload_state before = w->state;
	bool all_ended = true, any_failed = false, any_stopped = false;

	for (size_t i = 0; i < w->n_streams; i++) {
		struct workload_stream *s = &w->streams[i];
		int outcome = atomic_load_explicit(&s->outcome, memory_order_acquire);

		if (s->thread_started && outcome != STREAM_RUNNING) {
			if (s->left_io)
				pthread_detach(s->thread);
			else
				pthread_join(s->thread, NULL);
			s->thread_started = false;
			stream_consume_rest(&s->stats, mono_ns(), fn, userdata_per_stream[i]);
		}
		if (s->thread_started) {
			all_ended = false;
			continue;
		}
		if (outcome == STREAM_FAILED) {
			any_failed = true;
			/* One failed device fails the workload: its results
			 * would no longer be the configured load. */
			if (!w->reason[0])
				snprintf(w->reason, sizeof(w->reason), "%.100s: %.150s", s->label, s->reason);
			atomic_store(&w->stop_requested, true);
		} else if (outcome == STREAM_STOPPED) {
			any_stopped = true;
		}
	}
	if (workload_is_active(w) && all_ended) {
		if (any_failed)
			w->state = WORKLOAD_FAILED;
		else if (any_stopped || atomic_load(&w->stop_requested))
			w->state = WORKLOAD_STOPPED;
		else
			w->state = WORKLOAD_FINISHED;
	} else if (any_failed && w->state == WORKLOAD_RUNNING) {
		w->state = WORKLOAD_STOPPING;
	}
	return w->state != before;
}

static void (*wait_hook)(void *arg);
static void *wait_hook_arg;

void workload_set_wait_hook(void (*hook)(void *arg), void *arg)
{
	wait_hook = hook;
	wait_hook_arg = arg;
}

static void wait_a_little(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	if (wait_hook)
		wait_hook(wait_hook_arg);
}

void workload_wait(struct workload *w, uint64_t until_ns, stream_consume_fn fn,
		   void **userdata_per_stream)
{
	/* Reaped once even past the deadline: what has ended (its last
	 * slot, its failure) is taken, though another workload used the
	 * time. */
	workload_reap(w, fn, userdata_per_stream);
	while (workload_is_active(w) && mono_ns() < until_ns) {
		wait_a_little();
		workload_reap(w, fn, userdata_per_stream);
	}
}

void workload_join(struct workload *w, stream_consume_fn fn, void **userdata_per_stream)
{
	uint64_t since = mono_ns();
	bool told = false;

	atomic_store(&w->stop_requested, true);
	for (;;) {
		workload_reap(w, fn, userdata_per_stream);
		size_t running = 0;
		for (size_t i = 0; i < w->n_streams; i++)
			running += w->streams[i].thread_started;
		if (!running)
			return;
		if (!told && mono_ns() - since >= JOIN_WARN_NS) {
			log_warning("%s: %zu stream(s) still running %.0f s after the stop was asked "
				    "again; waiting for them so their last ops are counted",
				    w->cfg->name, running, JOIN_WARN_NS / 1e9);
			told = true;
		}
		wait_a_little();
	}
}

uint64_t workload_lag_ns(const struct workload *w)
{
	uint64_t lag = 0;
	for (size_t i = 0; i < w->n_streams; i++) {
		uint64_t l = atomic_load_explicit(&w->streams[i].lag_ns, memory_order_relaxed);
		if (l > lag)
			lag = l;
	}
	return lag;
}

void stream_cut(struct workload_stream *s, uint64_t now_ns)
{
	uint64_t none = 0;

	atomic_compare_exchange_strong(&s->cut_ns, &none, now_ns);
}

uint64_t workload_cut_at(const struct workload *w, uint64_t now_ns)
{
	uint64_t stop = atomic_load(&w->stop_ns);

	return stop && stop < now_ns ? stop : now_ns;
}

double workload_target_ops(const struct workload *w, uint64_t from_ns, uint64_t to_ns)
{
	double ops = 0;

	uint64_t from = mono_since(w->started_ns, from_ns), to = mono_since(w->started_ns, to_ns);

	if (w->cfg->rate <= 0 || to == 0 || to_ns <= from_ns)
		return 0;
	for (size_t i = 0; i < w->n_streams; i++) {
		uint64_t cut = atomic_load(&w->streams[i].cut_ns);
		uint64_t end = cut && mono_since(w->started_ns, cut) < to ?
				       mono_since(w->started_ns, cut) : to;
		ops += sched_ops_between(&w->streams[i].sched, from, end);
	}
	return ops;
}

uint64_t workload_scheduled_ns(const struct workload *w, uint64_t from_ns, uint64_t to_ns)
{
	if (w->cfg->rate <= 0 || !w->n_streams || to_ns <= from_ns)
		return 0;
	uint64_t begin = mono_at(w->started_ns, 0);
	uint64_t end = mono_at(w->started_ns, sched_duration(&w->streams[0].sched));
	/* Once every stream has cut its schedule, it ends with the last. */
	uint64_t last_cut = 0;
	for (size_t i = 0; i < w->n_streams; i++) {
		uint64_t cut = atomic_load(&w->streams[i].cut_ns);
		if (!cut) {
			last_cut = 0;
			break;
		}
		if (cut > last_cut)
			last_cut = cut;
	}
	if (last_cut && last_cut < end)
		end = last_cut;
	uint64_t lo = from_ns > begin ? from_ns : begin, hi = to_ns < end ? to_ns : end;
	return hi > lo ? hi - lo : 0;
}

void workload_free(struct workload *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_streams; i++) {
		if (w->streams[i].thread_started) {
			atomic_store(&w->stop_requested, true);
			pthread_join(w->streams[i].thread, NULL);
			w->streams[i].thread_started = false;
		}
		stream_stats_done(&w->streams[i].stats);
		free(w->streams[i].facts);
	}
	workload_release(w);
	free(w->streams);
	free(w);
}

void workload_release(struct workload *w)
{
	for (size_t i = 0; i < w->n_streams; i++)
		if (w->streams[i].thread_started) {
			atomic_store(&w->stop_requested, true);
			pthread_join(w->streams[i].thread, NULL);
			w->streams[i].thread_started = false;
		}
	if (w->engine->release && !w->released)
		w->engine->release(w);
	w->released = true;
}
