// SPDX-License-Identifier: GPL-2.0-only
/*
 * A workload's life without an engine (workload.c): interval boundaries,
 * the target ops its schedule holds over a span, and how the states follow
 * from what its stream threads report when they are reaped.  The threads
 * here are real, but only say how they ended.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/workload/workload.h"

#define NS_PER_S UINT64_C(1000000000)
#define RUN_START (UINT64_C(7000) * NS_PER_S)

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static struct run_config *CFG;

/* 1000 ops/s for 10 s, then 3000 ops/s for 10 s, over two files. */
static int setup(void **state)
{
	static const char text[] =
		"{\"run\": {\"name\": \"r\", \"duration\": \"20s\", \"interval\": \"1s\"},"
		" \"workloads\": [{\"name\": \"w\", \"type\": \"device\", \"model\": \"pattern\","
		"  \"targets\": [\"/nonexistent/a.dat\", \"/nonexistent/b.dat\"],"
		"  \"file_size\": \"1MiB\", \"read_pct\": 70, \"block_size\": \"4KiB\", \"rate\": 1000,"
		"  \"schedule\": [{\"scale\": 1, \"for\": \"10s\"}, {\"scale\": 3, \"for\": \"10s\"}]}]}";
	char *err = NULL;
	size_t errlen = 0;
	FILE *f = open_memstream(&err, &errlen);
	int r = config_load_string(text, "t.json", f, &CFG);

	(void)state;
	fclose(f);
	if (r < 0)
		fail_msg("config: %s", err);
	free(err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	config_free(CFG);
	return 0;
}

static struct workload *make(uint64_t started_ns)
{
	struct workload *w;
	char err[256];

	assert_int_equal(workload_new(&CFG->workloads[0], RUN_START, NS_PER_S, &w, err,
				      sizeof(err)),
			 0);
	assert_int_equal(w->n_streams, 2);
	w->n_ops = 2;
	w->started_ns = started_ns;
	for (size_t i = 0; i < w->n_streams; i++) {
		assert_int_equal(stream_stats_init(&w->streams[i].stats, 2, started_ns), 0);
		assert_int_equal(sched_init(&w->streams[i].sched, 500, w->cfg->steps,
					    w->cfg->n_steps, false, 1),
				 0);
	}
	return w;
}

static void test_boundaries(void **state)
{
	struct workload *w = make(RUN_START);

	(void)state;
	assert_int_equal(workload_next_boundary(w, 0), RUN_START + NS_PER_S);
	assert_int_equal(workload_next_boundary(w, RUN_START), RUN_START + NS_PER_S);
	assert_int_equal(workload_next_boundary(w, RUN_START + 1), RUN_START + NS_PER_S);
	/* A time on a boundary belongs to the interval it starts. */
	assert_int_equal(workload_next_boundary(w, RUN_START + NS_PER_S), RUN_START + 2 * NS_PER_S);
	assert_int_equal(workload_next_boundary(w, RUN_START + 5 * NS_PER_S - 1),
			 RUN_START + 5 * NS_PER_S);
	workload_free(w);
}

/* Target ops over a span: what the schedule holds, summed over streams,
 * counted from the workload's start; nothing before it. */
static void test_target_ops(void **state)
{
	const uint64_t start = RUN_START + 2 * NS_PER_S;
	struct workload *w = make(start);

	(void)state;
	assert_near(workload_target_ops(w, start, start + NS_PER_S), 1000, 1e-6);
	assert_near(workload_target_ops(w, start, start + 10 * NS_PER_S), 10000, 1e-6);
	/* Across the step: 2 s at 1000/s, 3 s at 3000/s. */
	assert_near(workload_target_ops(w, start + 8 * NS_PER_S, start + 13 * NS_PER_S), 11000,
		    1e-6);
	assert_near(workload_target_ops(w, start, start + 20 * NS_PER_S), 40000, 1e-6);
	/* Before the start nothing is due; a span reaching into it counts
	 * from the start only. */
	assert_near(workload_target_ops(w, RUN_START, start), 0, 0);
	assert_near(workload_target_ops(w, RUN_START, RUN_START + NS_PER_S), 0, 0);
	assert_near(workload_target_ops(w, RUN_START, start + NS_PER_S / 2), 500, 1e-6);
	assert_near(workload_target_ops(w, start + NS_PER_S, start + NS_PER_S), 0, 0);
	assert_near(workload_target_ops(w, start + 2 * NS_PER_S, start + NS_PER_S), 0, 0);
	workload_free(w);
}

/* A stream that cut its schedule (stopped, failed) counts no op after the
 * cut, and the scheduled time ends with the last stream's cut. */
static void test_cut(void **state)
{
	const uint64_t start = RUN_START + 2 * NS_PER_S;
	struct workload *w = make(start);

	(void)state;
	assert_int_equal(workload_scheduled_ns(w, start, start + 6 * NS_PER_S), 6 * NS_PER_S);
	stream_cut(&w->streams[0], start + 4 * NS_PER_S);
	/* The first cut counts. */
	stream_cut(&w->streams[0], start + 3 * NS_PER_S);
	assert_near(workload_target_ops(w, start, start + 6 * NS_PER_S), 6000 - 1000, 1e-6);
	assert_near(workload_target_ops(w, start + 4 * NS_PER_S, start + 6 * NS_PER_S), 1000,
		    1e-6);
	assert_near(workload_target_ops(w, start, start + 4 * NS_PER_S), 4000, 1e-6);
	/* One stream still runs: the schedule does too. */
	assert_int_equal(workload_scheduled_ns(w, start, start + 6 * NS_PER_S), 6 * NS_PER_S);
	stream_cut(&w->streams[1], start + 5 * NS_PER_S);
	assert_near(workload_target_ops(w, start, start + 6 * NS_PER_S), 4500, 1e-6);
	assert_near(workload_target_ops(w, start + 5 * NS_PER_S, start + 9 * NS_PER_S), 0, 0);
	assert_int_equal(workload_scheduled_ns(w, start, start + 6 * NS_PER_S), 5 * NS_PER_S);
	assert_int_equal(workload_scheduled_ns(w, start + 5 * NS_PER_S, start + 6 * NS_PER_S), 0);
	workload_free(w);
}

/* A stop cuts the schedule where it was asked for, not where a thread
 * saw it; before any stop, the cut is where the thread ends. */
static void test_cut_at(void **state)
{
	struct workload *w = make(RUN_START);

	(void)state;
	w->state = WORKLOAD_RUNNING;
	assert_int_equal(workload_cut_at(w, 12345), 12345);
	uint64_t before = mono_ns();
	workload_request_stop(w, "asked");
	uint64_t after = mono_ns();
	uint64_t stop = workload_cut_at(w, after + 10 * NS_PER_S);
	assert_in_range(stop, before, after);
	/* A thread ending before the request (failed, finished) cuts there. */
	assert_int_equal(workload_cut_at(w, before - 1), before - 1);
	/* The first request counts. */
	w->state = WORKLOAD_RUNNING;
	workload_request_stop(w, "again");
	assert_int_equal(workload_cut_at(w, after + 10 * NS_PER_S), stop);
	w->state = WORKLOAD_STOPPED;
	workload_free(w);
}

static void test_lag_and_names(void **state)
{
	struct workload *w = make(RUN_START);

	(void)state;
	assert_int_equal(workload_lag_ns(w), 0);
	atomic_store(&w->streams[0].lag_ns, 5);
	atomic_store(&w->streams[1].lag_ns, 9);
	assert_int_equal(workload_lag_ns(w), 9);
	assert_string_equal(workload_state_name(WORKLOAD_IDLE), "idle");
	assert_string_equal(workload_state_name(WORKLOAD_RUNNING), "running");
	assert_string_equal(workload_state_name(WORKLOAD_STOPPING), "stopping");
	assert_string_equal(workload_state_name(WORKLOAD_STOPPED), "stopped");
	assert_string_equal(workload_state_name(WORKLOAD_FINISHED), "finished");
	assert_string_equal(workload_state_name(WORKLOAD_FAILED), "failed");
	assert_false(workload_is_active(w));
	w->state = WORKLOAD_STOPPING;
	assert_true(workload_is_active(w));
	workload_free(w);
}

/* How each stream thread of the next workload ends. */
struct ending {
	enum stream_outcome outcome;
	const char *reason;
	uint64_t reads;
};

static void *ending_thread(void *arg)
{
	struct workload_stream *s = arg;
	const struct ending *e = s->engine;

	for (uint64_t i = 0; i < e->reads; i++)
		op_stats_record(&stream_current(&s->stats)->ops[0], 1000, 500, 4096, false);
	stream_finish(s, e->outcome, e->reason ? "%s" : NULL, e->reason);
	return NULL;
}

static uint64_t reaped_reads;

static void count_reads(const struct interval_slot *slot, size_t n_ops, void *userdata)
{
	(void)n_ops;
	(void)userdata;
	reaped_reads += slot->ops[0].count;
}

/* Runs a workload whose two streams end as told, reaps it, and returns
 * its state.  With past_deadline, once both have ended, with a deadline
 * another workload's wait has already used up. */
static enum workload_state run_until(struct ending a, struct ending b, bool stop_requested,
				     bool past_deadline, char *ret_reason)
{
	struct workload *w = make(RUN_START);
	struct ending endings[2] = { a, b };
	void *userdata[2] = { NULL, NULL };

	reaped_reads = 0;
	w->state = WORKLOAD_RUNNING;
	atomic_store(&w->stop_requested, stop_requested);
	for (size_t i = 0; i < 2; i++) {
		struct workload_stream *s = &w->streams[i];
		s->engine = &endings[i];
		atomic_store(&s->outcome, STREAM_RUNNING);
		assert_int_equal(pthread_create(&s->thread, NULL, ending_thread, s), 0);
		s->thread_started = true;
	}
	if (past_deadline) {
		for (size_t i = 0; i < 2; i++)
			while (atomic_load(&w->streams[i].outcome) == STREAM_RUNNING)
				nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		workload_wait(w, mono_ns() - 1, count_reads, userdata);
	} else {
		workload_wait(w, mono_ns() + 10 * NS_PER_S, count_reads, userdata);
	}
	enum workload_state state = w->state;
	assert_false(w->streams[0].thread_started || w->streams[1].thread_started);
	assert_int_equal(reaped_reads, a.reads + b.reads);
	strcpy(ret_reason, w->reason);
	for (size_t i = 0; i < 2; i++)
		w->streams[i].engine = NULL;
	workload_free(w);
	return state;
}

static enum workload_state run(struct ending a, struct ending b, bool stop_requested,
			       char *ret_reason)
{
	return run_until(a, b, stop_requested, false, ret_reason);
}

/* Workloads stopped together share one deadline: one that ended is still
 * reaped (its last slots, its failure) when an earlier one used it up. */
static void test_reap_past_deadline(void **state)
{
	char reason[WORKLOAD_REASON_MAX];

	(void)state;
	assert_int_equal(run_until((struct ending){ STREAM_FINISHED, NULL, 3 },
				   (struct ending){ STREAM_FAILED, "write: No space left on device", 4 },
				   true, true, reason),
			 WORKLOAD_FAILED);
	assert_non_null(strstr(reason, "No space left on device"));
}

static void test_reap_states(void **state)
{
	char reason[WORKLOAD_REASON_MAX];

	(void)state;
	assert_int_equal(run((struct ending){ STREAM_FINISHED, NULL, 10 },
			     (struct ending){ STREAM_FINISHED, NULL, 20 }, false, reason),
			 WORKLOAD_FINISHED);
	assert_string_equal(reason, "");
	/* One device failing fails the workload, naming it. */
	assert_int_equal(run((struct ending){ STREAM_FINISHED, NULL, 5 },
			     (struct ending){ STREAM_FAILED, "read: Input/output error", 7 }, false,
			     reason),
			 WORKLOAD_FAILED);
	assert_string_equal(reason, "/nonexistent/b.dat: read: Input/output error");
	assert_int_equal(run((struct ending){ STREAM_STOPPED, NULL, 1 },
			     (struct ending){ STREAM_FINISHED, NULL, 1 }, false, reason),
			 WORKLOAD_STOPPED);
	/* Finished streams after a stop request: stopped, not finished. */
	assert_int_equal(run((struct ending){ STREAM_FINISHED, NULL, 0 },
			     (struct ending){ STREAM_FINISHED, NULL, 0 }, true, reason),
			 WORKLOAD_STOPPED);
}

/* Run time across a reboot: origins on CLOCK_MONOTONIC that lie before
 * this boot's 0, and interval boundaries counted from them. */
#define S UINT64_C(1000000000)

static void test_mono_since(void **state)
{
	(void)state;
	/* A run begun before boot: 5 s of run time at 1 s of uptime. */
	assert_int_equal(mono_since(-4 * (int64_t)S, 1 * S), 5 * S);
	assert_int_equal(mono_since(-4 * (int64_t)S, 0), 4 * S);
	/* An origin ahead (start_at): no time has passed yet. */
	assert_int_equal(mono_since(10 * (int64_t)S, 3 * S), 0);
	assert_int_equal(mono_since(10 * (int64_t)S, 10 * S), 0);
	assert_int_equal(mono_since(10 * (int64_t)S, 12 * S), 2 * S);
	assert_int_equal(mono_since(0, 7), 7);
}

static void test_mono_at(void **state)
{
	(void)state;
	assert_int_equal(mono_at(-4 * (int64_t)S, 6 * S), 2 * S);
	/* Before this boot: no such instant, clamped to 0. */
	assert_int_equal(mono_at(-4 * (int64_t)S, 3 * S), 0);
	assert_int_equal(mono_at(-4 * (int64_t)S, 4 * S), 0);
	assert_int_equal(mono_at(2 * (int64_t)S, 3 * S), 5 * S);
	/* A schedule without end does not wrap. */
	assert_true(mono_at(2 * (int64_t)S, UINT64_MAX - 1) == UINT64_MAX);
	assert_true(mono_at(INT64_MAX, UINT64_MAX) == UINT64_MAX);
}

static void test_boundaries_before_boot(void **state)
{
	(void)state;
	/* Run time 0 was 4.5 s before boot; intervals of 1 s end at run
	 * times 1, 2, ...: at 1.2 s of uptime (5.7 s of run time) the next
	 * ends at 6 s of run time, 1.5 s of uptime. */
	struct workload w = { .run_start_ns = -4 * (int64_t)S - (int64_t)S / 2, .interval_ns = S };
	assert_int_equal(workload_next_boundary(&w, S + S / 5), S + S / 2);
	assert_int_equal(workload_next_boundary(&w, S + S / 2), 2 * S + S / 2);
	/* Waiting for start_at: the first boundary is one interval in. */
	w.run_start_ns = 10 * (int64_t)S;
	assert_int_equal(workload_next_boundary(&w, 3 * S), 11 * S);
}

/* The progress hook runs on the thread that set it (soakd's main loop),
 * never on another one (a stream's sweep), which gets the answer of a
 * process without a hook. */
static int hook_calls;

static bool count_hook(void *userdata, const struct workload_progress *p)
{
	(void)p;
	hook_calls++;
	return userdata != NULL;
}

static void *progress_elsewhere(void *arg)
{
	static const struct workload_progress p = { .what = "elsewhere" };
	bool *answers = arg;

	answers[0] = workload_progress_here();
	answers[1] = workload_progress(&p);
	return NULL;
}

static void test_progress_hook_thread(void **state)
{
	static const struct workload_progress p = { .what = "here" };
	bool answers[2] = { true, false };
	pthread_t t;

	(void)state;
	hook_calls = 0;
	assert_false(workload_progress_here());
	workload_set_progress_hook(count_hook, NULL);
	assert_true(workload_progress_here());
	/* The hook's own answer (NULL userdata: stop). */
	assert_false(workload_progress(&p));
	assert_int_equal(hook_calls, 1);
	assert_int_equal(pthread_create(&t, NULL, progress_elsewhere, answers), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(answers[0]);
	/* No SIGTERM pending: go on, and the hook was not called. */
	assert_true(answers[1]);
	assert_int_equal(hook_calls, 1);
	workload_set_progress_hook(NULL, NULL);
	assert_false(workload_progress_here());
	assert_true(workload_progress(&p));
	assert_int_equal(hook_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono_since),
		cmocka_unit_test(test_mono_at),
		cmocka_unit_test(test_boundaries_before_boot),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_target_ops),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_cut_at),
		cmocka_unit_test(test_lag_and_names),
		cmocka_unit_test(test_reap_states),
		cmocka_unit_test(test_reap_past_deadline),
		cmocka_unit_test(test_progress_hook_thread),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
