// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's accounting (results.c): intervals closed at the tick from what
 * the streams published, totals and histograms merged over streams and
 * intervals, rate_target and rate_achieved, and a resumed run's replay of
 * its log.  Workloads are built without an engine: the test plays the
 * stream threads, filling and publishing their slots itself.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/config/config.h"
#include "daemon/drift/drift.h"
#include "daemon/results/results.h"
#include "daemon/results/rundir.h"
#include "daemon/results/stats_json.h"
#include "daemon/workload/workload.h"
#include "runlog.h"

#define NS_PER_S UINT64_C(1000000000)
#define USEC UINT64_C(1000)
/* CLOCK_MONOTONIC at the run's start: any time will do. */
#define RUN_START (UINT64_C(5000) * NS_PER_S)

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

struct fixture {
	struct run_config *cfg;
	struct workload *w;
	struct results *r;
};

static struct run_config *load(const char *text)
{
	struct run_config *cfg = NULL;
	char *err = NULL;
	size_t errlen = 0;
	FILE *f = open_memstream(&err, &errlen);
	int r = config_load_string(text, "t.json", f, &cfg);

	fclose(f);
	if (r < 0)
		fail_msg("config: %s", err);
	free(err);
	return cfg;
}

/* calloc, wrapped (tests/meson.build): fails the Nth call from now when
 * calloc_fail_in is N, then works again. */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int calloc_fail_in = -1;
void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_in >= 0 && calloc_fail_in-- == 0)
		return NULL;
	return __real_calloc(n, size);
}

/* How long the workloads' schedule runs. */
static const char *schedule_for = "60s";
/* More of the workload's definition (",\"key\": value..."), or "". */
static const char *workload_extra = "";

/* 1000 ops/s, 70% reads, over n_targets files (a stream each), started at
 * the run's start as the engine would have it; no thread runs. */
static void setup_workload(struct fixture *fx, size_t n_targets)
{
	char text[1024];
	char err[256];

	snprintf(text, sizeof(text),
		 "{\"run\": {\"name\": \"r\", \"duration\": \"60s\", \"interval\": \"1s\"},"
		 " \"workloads\": [{\"name\": \"w\", \"type\": \"device\", \"model\": \"pattern\","
		 "  \"targets\": [\"/nonexistent/a.dat\"%s], \"file_size\": \"1MiB\","
		 "  \"read_pct\": 70, \"block_size\": \"4KiB\", \"rate\": 1000,"
		 "  \"schedule\": [{\"scale\": 1, \"for\": \"%s\"}]%s}]}",
		 n_targets > 1 ? ", \"/nonexistent/b.dat\"" : "", schedule_for, workload_extra);
	fx->cfg = load(text);
	assert_int_equal(workload_new(&fx->cfg->workloads[0], RUN_START, NS_PER_S, &fx->w, err,
				      sizeof(err)),
			 0);
	struct workload *w = fx->w;
	assert_int_equal(w->n_streams, n_targets);
	w->n_ops = 2;
	w->op_names[0] = "read";
	w->op_names[1] = "write";
	w->op_share[0] = 0.7;
	w->op_share[1] = 0.3;
	w->started_ns = RUN_START;
	w->state = WORKLOAD_RUNNING;
	for (size_t i = 0; i < w->n_streams; i++) {
		assert_int_equal(stream_stats_init(&w->streams[i].stats, 2, RUN_START), 0);
		assert_int_equal(sched_init(&w->streams[i].sched, 1000.0 / (double)w->n_streams,
					    w->cfg->steps, w->cfg->n_steps, false, 1),
				 0);
	}
	fx->r = results_new(fx->cfg, &fx->w, 1, RUN_START, false);
	assert_non_null(fx->r);
}

static void teardown_workload(struct fixture *fx)
{
	results_free(fx->r);
	workload_free(fx->w);
	config_free(fx->cfg);
}

/* Stream s completes reads and writes, each with the given latency. */
static void complete(struct fixture *fx, size_t s, uint64_t reads, uint64_t writes,
		     uint64_t latency_ns)
{
	struct interval_slot *slot = stream_current(&fx->w->streams[s].stats);

	for (uint64_t i = 0; i < reads; i++)
		op_stats_record(&slot->ops[0], latency_ns, latency_ns / 2, 4096, false);
	for (uint64_t i = 0; i < writes; i++)
		op_stats_record(&slot->ops[1], latency_ns, latency_ns / 2, 4096, false);
}

static json_t *dump_op(struct fixture *fx, json_t **dump, const char *op)
{
	json_decref(*dump);
	*dump = results_dump_json(fx->r);
	assert_non_null(*dump);
	json_t *w = json_array_get(json_object_get(*dump, "workloads"), 0);
	json_t *o = json_object_get(json_object_get(w, "ops"), op);
	assert_non_null(o);
	return o;
}

static double num(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static double workload_num(json_t *dump, const char *key)
{
	return num(json_array_get(json_object_get(dump, "workloads"), 0), key);
}

/* A workload's results set up anew (a reload replaced it) run out of
 * memory at each of their allocations in turn: the slot keeps what it had,
 * and goes on recording (it was freed first, and left without its
 * workload). */
static void test_set_workload_out_of_memory(void **state)
{
	size_t failures = 0;

	(void)state;
	for (int k = 0; k < 64; k++) {
		struct fixture fx;
		json_t *dump = NULL;
		setup_workload(&fx, 2);
		/* What it held before stays: an interval recorded already. */
		complete(&fx, 0, 35, 15, 100 * USEC);
		complete(&fx, 1, 35, 15, 100 * USEC);
		stream_publish(&fx.w->streams[0].stats, RUN_START + NS_PER_S);
		stream_publish(&fx.w->streams[1].stats, RUN_START + NS_PER_S);
		results_tick(fx.r, RUN_START + NS_PER_S);
		calloc_fail_in = k;
		int r = results_set_workload(fx.r, 0, fx.w);
		bool failed = calloc_fail_in < 0;
		calloc_fail_in = -1;
		if (failed) {
			assert_int_equal(r, -ENOMEM);
			failures++;
			complete(&fx, 0, 350, 150, 100 * USEC);
			complete(&fx, 1, 350, 150, 100 * USEC);
			stream_publish(&fx.w->streams[0].stats, RUN_START + 2 * NS_PER_S);
			stream_publish(&fx.w->streams[1].stats, RUN_START + 2 * NS_PER_S);
			results_tick(fx.r, RUN_START + 2 * NS_PER_S);
			assert_int_equal(num(dump_op(&fx, &dump, "read"), "count"), 770);
			json_decref(dump);
		}
		teardown_workload(&fx);
		if (!failed) {
			assert_int_equal(r, 0);
			break;
		}
	}
	assert_true(failures >= 3);
}

/* rate_target is the schedule's ops over the time measured, times the
 * op's share; rate_achieved the completions over the same time. */
static void test_interval_rates(void **state)
{
	struct fixture fx;
	json_t *dump = NULL, *read, *write;

	(void)state;
	setup_workload(&fx, 1);
	struct stream_stats *st = &fx.w->streams[0].stats;

	/* Nothing published: no interval. */
	results_tick(fx.r, RUN_START + NS_PER_S / 2);
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 0);
	assert_int_equal(num(read, "count"), 0);
	assert_near(num(read, "rate_target"), 0, 0);

	/* [0 s, 1 s): all 1000 ops. */
	complete(&fx, 0, 700, 300, 100 * USEC);
	stream_publish(st, RUN_START + NS_PER_S);
	results_tick(fx.r, RUN_START + NS_PER_S);
	read = dump_op(&fx, &dump, "read");
	write = json_object_get(json_object_get(json_array_get(json_object_get(dump, "workloads"),
							       0), "ops"), "write");
	assert_int_equal(workload_num(dump, "intervals"), 1);
	assert_near(workload_num(dump, "active_s"), 1.0, 1e-9);
	assert_int_equal(num(read, "count"), 700);
	assert_int_equal(num(read, "bytes"), 700 * 4096);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 700, 1e-6);
	assert_int_equal(num(write, "count"), 300);
	assert_near(num(write, "rate_target"), 300, 1e-6);
	assert_near(num(write, "rate_achieved"), 300, 1e-6);
	assert_int_equal(fx.r->w[0].last.ops[0].count, 700);
	assert_near(fx.r->w[0].last.ops[0].rate_target, 700, 1e-6);

	/* [1 s, 3 s) in one slot (the tick was late): 2000 ops due. */
	complete(&fx, 0, 1400, 600, 100 * USEC);
	stream_publish(st, RUN_START + 3 * NS_PER_S);
	results_tick(fx.r, RUN_START + 3 * NS_PER_S);
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 2);
	assert_near(workload_num(dump, "active_s"), 3.0, 1e-9);
	assert_int_equal(num(read, "count"), 2100);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 700, 1e-6);
	/* The interval itself: 2 s long, 1400 reads due and done. */
	assert_int_equal(fx.r->w[0].last.start_ns, NS_PER_S);
	assert_int_equal(fx.r->w[0].last.end_ns, 3 * NS_PER_S);
	assert_near(fx.r->w[0].last.ops[0].rate_target, 700, 1e-6);

	/* [3 s, 4 s): the device kept up with half. */
	complete(&fx, 0, 350, 150, 100 * USEC);
	stream_publish(st, RUN_START + 4 * NS_PER_S);
	results_tick(fx.r, RUN_START + 4 * NS_PER_S);
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(num(read, "count"), 2450);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 2450 / 4.0, 1e-6);
	assert_near(fx.r->w[0].last.ops[0].rate_achieved, 350, 1e-6);
	assert_near(fx.r->w[0].last.ops[1].rate_target, 300, 1e-6);

	/* [4 s, 4.5 s): stopped at 4.4 s, the thread drained until 4.5 s.
	 * The interval's target rate is over the 0.4 s scheduled, as the
	 * status and the exports show it, not diluted to 560/s. */
	stream_cut(&fx.w->streams[0], RUN_START + 44 * NS_PER_S / 10);
	complete(&fx, 0, 280, 120, 100 * USEC);
	stream_publish(st, RUN_START + 45 * NS_PER_S / 10);
	results_tick(fx.r, RUN_START + 45 * NS_PER_S / 10);
	assert_near(fx.r->w[0].last.ops[0].rate_target, 700, 1e-6);
	assert_near(fx.r->w[0].last.ops[1].rate_target, 300, 1e-6);
	assert_near(fx.r->w[0].last.ops[0].rate_achieved, 560, 1e-6);
	read = dump_op(&fx, &dump, "read");
	assert_near(num(read, "rate_target"), 700, 1e-6);

	json_decref(dump);
	teardown_workload(&fx);
}

/* Ends the stream's interval at `at` s with `pending` reads due and not
 * completed, and lets the results take it. */
static void end_interval(struct fixture *fx, unsigned at, uint64_t pending)
{
	stream_current(&fx->w->streams[0].stats)->ops[0].pending = pending;
	stream_publish(&fx->w->streams[0].stats, RUN_START + at * NS_PER_S);
	results_tick(fx->r, RUN_START + at * NS_PER_S);
}

/* count + errors + missed = scheduled - (pending at the end - pending at
 * the start), per interval; over the workload, exactly the schedule, and
 * rate_target is not diluted by the drain after the schedule's end. */
static void test_missed_and_pending(void **state)
{
	struct fixture fx;
	json_t *dump = NULL, *read;

	(void)state;
	schedule_for = "2s";
	setup_workload(&fx, 1);
	schedule_for = "60s";
	struct op_summary *last = &fx.r->w[0].last.ops[0];

	/* [0, 1 s): 700 reads due, 600 completed, 100 still pending. */
	complete(&fx, 0, 600, 300, 100 * USEC);
	end_interval(&fx, 1, 100);
	assert_int_equal(last->count, 600);
	assert_int_equal(last->pending, 100);
	/* [1 s, 2 s): 700 due, 650 completed: 150 pending. */
	complete(&fx, 0, 650, 300, 100 * USEC);
	end_interval(&fx, 2, 150);
	assert_int_equal(last->count + last->missed + last->pending - 100, 700);
	/* [2 s, 3 s): the schedule is over; the 150 are declared missed. */
	for (int i = 0; i < 150; i++)
		op_stats_record_missed(&stream_current(&fx.w->streams[0].stats)->ops[0],
				       2000000 * USEC);
	end_interval(&fx, 3, 0);
	assert_int_equal(last->missed, 150);
	assert_int_equal(last->count + last->missed + last->pending, 150);
	assert_near(last->rate_target, 0, 1e-9);

	read = dump_op(&fx, &dump, "read");
	assert_int_equal(num(read, "count") + num(read, "errors") + num(read, "missed"), 1400);
	assert_int_equal(num(read, "missed"), 150);
	assert_int_equal(num(read, "pending"), 0);
	assert_near(workload_num(dump, "active_s"), 3.0, 1e-9);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	/* The missed ops' waits are in latency_us: p99 shows seconds. */
	assert_true(num(json_object_get(read, "latency_us"), "p99") >= 1e6);
	/* A slice's count is its completed ops, as a dump of the run's
	 * directory sums the records' counts; its latency holds the missed
	 * ops' waits too. */
	json_t *report = results_report_json(fx.r);
	json_t *slice = json_array_get(json_object_get(json_object_get(json_object_get(
		json_array_get(json_object_get(report, "workloads"), 0), "ops"), "read"),
		"slices"), 0);
	assert_int_equal(num(slice, "count"), 1250);
	struct hist *lat = hist_new();
	assert_non_null(lat);
	assert_int_equal(hist_from_base64(lat, json_string_value(json_object_get(slice,
										  "latency"))), 0);
	assert_int_equal(lat->count, 1400);
	hist_delete(lat);
	json_decref(report);
	json_decref(dump);
	teardown_workload(&fx);
}

/* A workload's totals are its streams' merged, histograms bucket for
 * bucket; each target keeps its own, with its share of the target rate. */
static void test_streams_merge(void **state)
{
	struct fixture fx;
	json_t *dump = NULL, *read;
	struct hist *want = hist_new(), *got = hist_new();

	(void)state;
	assert_non_null(want);
	assert_non_null(got);
	setup_workload(&fx, 2);
	for (int k = 0; k < 3; k++) {
		for (uint64_t i = 0; i < 350; i++) {
			uint64_t fast = (100 + i % 100) * USEC, slow = (5000 + i * 7) * USEC;
			op_stats_record(&stream_current(&fx.w->streams[0].stats)->ops[0], fast, fast,
					4096, false);
			op_stats_record(&stream_current(&fx.w->streams[1].stats)->ops[0], slow, slow,
					4096, false);
			hist_record(want, fast);
			hist_record(want, slow);
		}
		complete(&fx, 0, 0, 150, 10 * USEC);
		complete(&fx, 1, 0, 150, 10 * USEC);
		for (size_t s = 0; s < 2; s++)
			stream_publish(&fx.w->streams[s].stats, RUN_START + (uint64_t)(k + 1) * NS_PER_S);
		results_tick(fx.r, RUN_START + (uint64_t)(k + 1) * NS_PER_S);
	}
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(num(read, "count"), 2100);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 700, 1e-6);
	const char *text = json_string_value(json_object_get(read, "latency_hist"));
	assert_non_null(text);
	assert_int_equal(hist_from_base64(got, text), 0);
	assert_true(hist_equal(got, want));
	assert_near(num(json_object_get(read, "latency_us"), "max"), 5000 + 349 * 7, 1e-9);

	json_t *targets = json_object_get(json_array_get(json_object_get(dump, "workloads"), 0),
					  "targets");
	assert_int_equal(json_array_size(targets), 2);
	for (size_t s = 0; s < 2; s++) {
		json_t *tread = json_object_get(json_object_get(json_array_get(targets, s), "ops"),
						"read");
		assert_int_equal(num(tread, "count"), 1050);
		assert_near(num(tread, "rate_target"), 350, 1e-6);
		assert_near(num(tread, "rate_achieved"), 350, 1e-6);
	}
	json_decref(dump);
	hist_delete(want);
	hist_delete(got);
	teardown_workload(&fx);
}

/* A stream late to publish an interval (its thread held up by a sync, a
 * probe, the CPU) is waited for, a second at most: the interval stays one
 * record, its target counted once.  It was two records of the same
 * interval, each with the whole target; so was a part later than that
 * second, which now joins the next record. */
static void test_late_stream(void **state)
{
	struct fixture fx;
	json_t *dump = NULL, *read;
	const uint64_t ms = NS_PER_S / 1000;

	(void)state;
	setup_workload(&fx, 2);
	for (size_t s = 0; s < 2; s++) {
		fx.w->streams[s].thread_started = true;
		atomic_store(&fx.w->streams[s].outcome, STREAM_RUNNING);
	}
	complete(&fx, 0, 350, 150, 10 * USEC);
	complete(&fx, 1, 350, 150, 10 * USEC);
	stream_publish(&fx.w->streams[1].stats, RUN_START + NS_PER_S);
	assert_true(results_tick(fx.r, RUN_START + NS_PER_S + 30 * ms));
	dump = results_dump_json(fx.r);
	assert_int_equal(workload_num(dump, "intervals"), 0);
	stream_publish(&fx.w->streams[0].stats, RUN_START + NS_PER_S);
	assert_false(results_tick(fx.r, RUN_START + NS_PER_S + 300 * ms));
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 1);
	assert_int_equal(num(read, "count"), 700);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 700, 1e-6);

	/* Later than the grace: the interval is recorded without it. */
	complete(&fx, 0, 350, 150, 10 * USEC);
	stream_publish(&fx.w->streams[0].stats, RUN_START + 2 * NS_PER_S);
	assert_true(results_tick(fx.r, RUN_START + 2 * NS_PER_S + 30 * ms));
	assert_false(results_tick(fx.r, RUN_START + 2 * NS_PER_S + 1100 * ms));
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 2);
	assert_int_equal(num(read, "count"), 1050);

	/* Its part comes after all: counted with the next record, which
	 * starts where the last one ended (not a second record of [1 s, 2 s)
	 * with the whole interval's target again). */
	complete(&fx, 1, 350, 150, 10 * USEC);
	stream_publish(&fx.w->streams[1].stats, RUN_START + 2 * NS_PER_S);
	for (size_t s = 0; s < 2; s++) {
		complete(&fx, s, 350, 150, 10 * USEC);
		stream_publish(&fx.w->streams[s].stats, RUN_START + 3 * NS_PER_S);
	}
	assert_false(results_tick(fx.r, RUN_START + 3 * NS_PER_S + 30 * ms));
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 3);
	assert_int_equal(num(read, "count"), 2100);
	assert_near(workload_num(dump, "active_s"), 3.0, 1e-9);
	assert_near(num(read, "rate_target"), 700, 1e-6);
	assert_near(num(read, "rate_achieved"), 700, 1e-6);
	assert_int_equal(fx.r->w[0].iv_prev_end_ns, RUN_START + 3 * NS_PER_S);

	/* A stream whose thread ended has nothing more to publish. */
	atomic_store(&fx.w->streams[1].outcome, STREAM_FINISHED);
	complete(&fx, 0, 350, 150, 10 * USEC);
	stream_publish(&fx.w->streams[0].stats, RUN_START + 4 * NS_PER_S);
	assert_false(results_tick(fx.r, RUN_START + 4 * NS_PER_S + 30 * ms));
	dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 4);
	json_decref(dump);
	for (size_t s = 0; s < 2; s++)
		fx.w->streams[s].thread_started = false;   /* no thread to join */
	teardown_workload(&fx);
}

/* A stream that ends after the stop's deadline: it completes its last
 * reads, 200 ms late, then ends as a stream thread does. */
static void *late_thread(void *arg)
{
	struct fixture *fx = arg;
	struct workload_stream *s = &fx->w->streams[0];

	nanosleep(&(struct timespec){ .tv_nsec = 200000000 }, NULL);
	complete(fx, 0, 350, 150, 10 * USEC);
	stream_current(&s->stats)->end_ns = RUN_START + 1500 * (NS_PER_S / 1000);
	atomic_store_explicit(&s->outcome, STREAM_STOPPED, memory_order_release);
	return NULL;
}

/* A reload replacing or removing a workload waits for its streams until a
 * deadline, then lets its targets go: a stream still running then is
 * joined with its last slot counted, not dropped. */
static void test_release_late_stream(void **state)
{
	struct fixture fx;
	json_t *dump = NULL, *read;
	struct workload_stream *s;

	(void)state;
	setup_workload(&fx, 1);
	s = &fx.w->streams[0];
	complete(&fx, 0, 700, 300, 10 * USEC);
	stream_publish(&s->stats, RUN_START + NS_PER_S);
	assert_false(results_tick(fx.r, RUN_START + NS_PER_S + 30 * (NS_PER_S / 1000)));
	atomic_store(&s->outcome, STREAM_RUNNING);
	assert_int_equal(pthread_create(&s->thread, NULL, late_thread, &fx), 0);
	s->thread_started = true;
	workload_request_stop(fx.w, "replaced by a reload");
	results_wait(fx.r, 0, mono_ns() + 20 * (NS_PER_S / 1000));
	assert_true(workload_is_active(fx.w));
	results_release(fx.r, 0);
	assert_false(s->thread_started);
	assert_int_equal(fx.w->state, WORKLOAD_STOPPED);
	assert_true(fx.w->released);
	read = dump_op(&fx, &dump, "read");
	assert_int_equal(workload_num(dump, "intervals"), 2);
	assert_int_equal(num(read, "count"), 1050);
	assert_near(workload_num(dump, "active_s"), 1.5, 1e-9);
	json_decref(dump);
	teardown_workload(&fx);
}

/* A stop cuts the schedule when it is asked; the last interval ends where
 * the drain did, later.  A resume goes on from the cut: from the drain's
 * end, the ops due between would be in neither run's target. */
static void test_resume_from_cut(void **state)
{
	struct fixture fx;
	const uint64_t ms = NS_PER_S / 1000;

	(void)state;
	setup_workload(&fx, 1);
	complete(&fx, 0, 700, 300, 10 * USEC);
	stream_publish(&fx.w->streams[0].stats, RUN_START + NS_PER_S);
	results_tick(fx.r, RUN_START + NS_PER_S);
	assert_int_equal(fx.r->w[0].recorded_sched_ns, NS_PER_S);
	/* Stopped at 1.5 s; the drain ends at 2.3 s. */
	atomic_store(&fx.w->stop_ns, RUN_START + 1500 * ms);
	complete(&fx, 0, 350, 150, 10 * USEC);
	stream_publish(&fx.w->streams[0].stats, RUN_START + 2300 * ms);
	results_tick(fx.r, RUN_START + 2300 * ms);
	assert_int_equal(fx.r->w[0].intervals, 2);
	assert_int_equal(fx.r->w[0].recorded_sched_ns, 1500 * ms);
	teardown_workload(&fx);
}

/* An interval record as results.c writes it to the run's log. */
static json_t *record(const char *workload, uint64_t start_ns, uint64_t end_ns, double target_ops,
		      const struct op_stats *read, const struct op_stats *write)
{
	return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:{s:o,s:o}}", "type", "interval",
			 "workload", workload, "start_ns", (json_int_t)start_ns, "end_ns",
			 (json_int_t)end_ns, "wall_start_ns", (json_int_t)(start_ns + 77),
			 "wall_end_ns", (json_int_t)(end_ns + 77), "sched_ns", (json_int_t)end_ns,
			 "lag_max_ns", (json_int_t)0, "target_ops", target_ops, "ops", "read",
			 op_stats_to_json(read), "write", op_stats_to_json(write));
}

/* A resumed run replays its log into the same totals, rates and
 * histograms that measuring it live gave, and goes on from there. */
static void test_replay_matches_live(void **state)
{
	struct fixture live, resumed;
	struct op_stats *ops = malloc(4 * sizeof(*ops));
	const uint64_t spans[2][2] = { { 0, NS_PER_S }, { NS_PER_S, 3 * NS_PER_S } };
	json_t *dump_live = NULL, *dump_resumed = NULL;

	(void)state;
	assert_non_null(ops);
	setup_workload(&live, 1);
	setup_workload(&resumed, 1);
	for (int k = 0; k < 2; k++) {
		struct op_stats *read = &ops[2 * k], *write = &ops[2 * k + 1];
		op_stats_init(read);
		op_stats_init(write);
		for (uint64_t i = 0; i < 700 * (uint64_t)(k + 1); i++)
			op_stats_record(read, (50 + i % 500) * USEC, (20 + i % 300) * USEC, 4096,
					i % 101 == 0);
		for (uint64_t i = 0; i < 300 * (uint64_t)(k + 1); i++)
			op_stats_record(write, (80 + i % 900) * USEC, 60 * USEC, 8192, false);

		struct interval_slot *slot = stream_current(&live.w->streams[0].stats);
		op_stats_merge(&slot->ops[0], read);
		op_stats_merge(&slot->ops[1], write);
		stream_publish(&live.w->streams[0].stats, RUN_START + spans[k][1]);
		results_tick(live.r, RUN_START + spans[k][1]);

		json_t *rec = record("w", spans[k][0], spans[k][1], 1000.0 * (k + 1), read, write);
		assert_int_equal(results_replay(resumed.r, rec), 0);
		json_decref(rec);
	}
	for (int k = 0; k < 2; k++) {
		const char *op = k ? "write" : "read";
		json_t *a = dump_op(&live, &dump_live, op), *b = dump_op(&resumed, &dump_resumed, op);
		if (!json_equal(a, b)) {
			char *ta = json_dumps(a, JSON_SORT_KEYS), *tb = json_dumps(b, JSON_SORT_KEYS);
			fail_msg("%s live %s\nreplayed %s", op, ta, tb);
		}
	}
	assert_int_equal(workload_num(dump_resumed, "intervals"), 2);
	assert_near(workload_num(dump_resumed, "active_s"), 3.0, 1e-9);
	assert_true(resumed.r->w[0].recorded);
	assert_int_equal(resumed.r->w[0].recorded_sched_ns, 3 * NS_PER_S);
	assert_int_equal(resumed.r->recorded_end_ns, 3 * NS_PER_S);
	assert_int_equal(resumed.r->recorded_wall_ns, 3 * NS_PER_S + 77);

	/* Live intervals after the replay add to it. */
	resumed.w->streams[0].stats.slots[0]->start_ns = RUN_START + 3 * NS_PER_S;
	complete(&resumed, 0, 700, 300, 100 * USEC);
	stream_publish(&resumed.w->streams[0].stats, RUN_START + 4 * NS_PER_S);
	results_tick(resumed.r, RUN_START + 4 * NS_PER_S);
	json_t *read = dump_op(&resumed, &dump_resumed, "read");
	/* Every 101st replayed read failed: an error, not a completion. */
	assert_int_equal(num(read, "count"), (700 - 7) + (1400 - 14) + 700);
	assert_int_equal(num(read, "errors"), 7 + 14);
	assert_near(num(read, "rate_target"), 700, 1e-6);

	json_decref(dump_live);
	json_decref(dump_resumed);
	for (size_t i = 0; i < 4; i++)
		op_stats_reset(&ops[i]);
	free(ops);
	teardown_workload(&live);
	teardown_workload(&resumed);
}

/* Drift's reference across a clean stop and resume: the stop cut the last
 * interval's schedule at 5.3 s, and its record runs on to 5.5 s through
 * the drain.  Its rate is the same load (ops over the scheduled time, not
 * over the record), so the resumed run is compared with the reference of
 * before, and a device slower since is caught.  The rate over the record's
 * length looked like a new load and started the reference again, from the
 * slower device. */
static void test_drift_reference_over_a_stop(void **state)
{
	struct fixture fx;
	struct drift *d;
	struct op_stats *ops = malloc(2 * sizeof(*ops));
	char status[256];

	(void)state;
	assert_non_null(ops);
	workload_extra = ", \"drift\": {\"window\": \"5s\", \"sensitivity\": \"low\","
			 " \"metrics\": [\"p99\"]}";
	setup_workload(&fx, 1);
	workload_extra = "";
	assert_int_equal(drift_new(&d), 0);
	drift_attach(d, fx.r);
	for (int k = 0; k < 12; k++) {
		bool cut = k == 5, slow = k > 5;
		uint64_t start = (uint64_t)k * NS_PER_S, end = start + NS_PER_S;
		op_stats_init(&ops[0]);
		op_stats_init(&ops[1]);
		for (uint64_t i = 0; i < (cut ? 210u : 700u); i++)
			op_stats_record(&ops[0], (slow ? 5000 : 500) * USEC + i % 50 * USEC,
					100 * USEC, 4096, false);
		for (uint64_t i = 0; i < (cut ? 90u : 300u); i++)
			op_stats_record(&ops[1], 500 * USEC, 100 * USEC, 4096, false);
		json_t *rec = record("w", start, cut ? start + NS_PER_S / 2 : end, cut ? 300 : 1000,
				     &ops[0], &ops[1]);
		json_object_set_new(rec, "scheduled_ns",
				    json_integer(cut ? 3 * NS_PER_S / 10 : NS_PER_S));
		drift_replay(d, fx.r, rec);
		json_decref(rec);
		op_stats_reset(&ops[0]);
		op_stats_reset(&ops[1]);
	}
	drift_status(d, status, sizeof(status));
	if (!strstr(status, "w/read p99"))
		fail_msg("no p99 drift of the slower device after the stop: \"%s\"", status);

	/* A reload turns drift off: no alarm of its tests stays on. */
	struct run_config *off = load("{\"run\": {\"name\": \"r\", \"interval\": \"1s\"},"
				      " \"workloads\": [{\"name\": \"w\", \"type\": \"device\","
				      " \"model\": \"pattern\", \"targets\": [\"/nonexistent/a.dat\"],"
				      " \"file_size\": \"1MiB\", \"rate\": 1000}]}");
	const struct workload_config *was = fx.w->cfg;
	fx.w->cfg = &off->workloads[0];
	op_stats_init(&ops[0]);
	op_stats_init(&ops[1]);
	json_t *rec = record("w", 12 * NS_PER_S, 13 * NS_PER_S, 1000, &ops[0], &ops[1]);
	drift_replay(d, fx.r, rec);
	json_decref(rec);
	drift_status(d, status, sizeof(status));
	assert_string_equal(status, "");
	assert_null(json_object_get(drift_state(d), "w"));
	fx.w->cfg = was;
	config_free(off);
	op_stats_reset(&ops[0]);
	op_stats_reset(&ops[1]);
	drift_free(d);
	free(ops);
	teardown_workload(&fx);
}

/* generator_late: an interval where soakd itself was late (a thread frozen
 * for over a tenth of it, or issue delays with a p99 over 10 ms) is
 * marked, counted, reported and replayed; the streams' CPU time adds up. */
static void test_generator_late(void **state)
{
	struct fixture fx, resumed;
	json_t *report;

	(void)state;
	setup_workload(&fx, 2);
	setup_workload(&resumed, 1);
	for (int k = 0; k < 3; k++) {
		for (size_t s = 0; s < 2; s++) {
			struct interval_slot *slot = stream_current(&fx.w->streams[s].stats);
			complete(&fx, s, 350, 150, 100 * USEC);
			for (int i = 0; i < 500; i++)
				hist_record(&slot->ops[i % 2].issue_delay,
					    k == 2 ? 50000 * USEC : 20 * USEC);
			slot->cpu_ns = 3000 * USEC;
			if (k == 1 && s == 1)
				slot->frozen_ns = 300000 * USEC;
			stream_publish(&fx.w->streams[s].stats,
				       RUN_START + (uint64_t)(k + 1) * NS_PER_S);
		}
		results_tick(fx.r, RUN_START + (uint64_t)(k + 1) * NS_PER_S);
		const struct interval_row *row = &fx.r->w[0].last;
		assert_int_equal(row->generator_late, k > 0);
		assert_int_equal(row->cpu_ns, 6000 * USEC);
		if (k == 0)
			assert_true(row->ops[0].issue_p99 < 21 * USEC);
		if (k == 1)
			assert_int_equal(row->late_ns, 300000 * USEC);
		if (k == 2)
			assert_true(row->late_ns >= 50000 * USEC);
	}
	assert_int_equal(fx.r->w[0].late_intervals, 2);
	report = results_report_json(fx.r);
	json_t *late = json_object_get(json_array_get(json_object_get(report, "workloads"), 0),
				       "generator_late");
	assert_int_equal(json_integer_value(json_object_get(late, "intervals")), 2);
	assert_near(json_number_value(json_object_get(late, "max_ms")), 300, 1e-6);
	json_decref(report);

	/* A resumed run counts the marked records of its log. */
	struct op_stats *o = malloc(sizeof(*o));
	assert_non_null(o);
	op_stats_init(o);
	json_t *rec = record("w", 0, NS_PER_S, 1000, o, o);
	json_object_set_new(rec, "generator_late", json_true());
	json_object_set_new(rec, "generator_late_ms", json_real(1234.5));
	assert_int_equal(results_replay(resumed.r, rec), 0);
	json_decref(rec);
	assert_int_equal(resumed.r->w[0].late_intervals, 1);
	assert_int_equal(resumed.r->w[0].late_max_ns, 1234500000);
	op_stats_reset(o);
	free(o);
	teardown_workload(&fx);
	teardown_workload(&resumed);
}

/* A workload of several targets resumed from a log whose last record had
 * ops pending: those were the old process's.  The new one's first record
 * says what its own streams have pending (it wrapped below zero, to
 * 1.8e19, in the record and the exports). */
static void test_resume_pending(void **state)
{
	struct fixture fx;
	struct op_stats *o = malloc(sizeof(*o));

	(void)state;
	assert_non_null(o);
	setup_workload(&fx, 2);
	op_stats_init(o);
	o->pending = 150000;
	json_t *rec = record("w", 0, NS_PER_S, 1000, o, o);
	json_t *targets = json_array();
	for (size_t s = 0; s < 2; s++)
		json_array_append_new(targets,
				      json_pack("{s:{s:o,s:o}}", "ops", "read", op_stats_to_json(o),
						"write", op_stats_to_json(o)));
	json_object_set_new(rec, "targets", targets);
	assert_int_equal(results_replay(fx.r, rec), 0);
	json_decref(rec);
	for (size_t s = 0; s < 2; s++) {
		complete(&fx, s, 350, 150, 10 * USEC);
		stream_current(&fx.w->streams[s].stats)->ops[0].pending = 5;
		stream_publish(&fx.w->streams[s].stats, RUN_START + 2 * NS_PER_S);
	}
	results_tick(fx.r, RUN_START + 2 * NS_PER_S);
	assert_int_equal(fx.r->w[0].last.ops[0].pending, 10);
	assert_int_equal(fx.r->w[0].last.ops[1].pending, 0);
	op_stats_reset(o);
	free(o);
	teardown_workload(&fx);
}

static void test_replay_refuses(void **state)
{
	struct fixture fx;
	struct op_stats *o = malloc(sizeof(*o));
	json_t *rec;

	(void)state;
	assert_non_null(o);
	op_stats_init(o);
	setup_workload(&fx, 1);
	rec = record("gone", 0, NS_PER_S, 1000, o, o);
	assert_int_equal(results_replay(fx.r, rec), -ENOENT);
	json_decref(rec);
	rec = record("w", 2 * NS_PER_S, NS_PER_S, 1000, o, o);
	assert_int_equal(results_replay(fx.r, rec), -EINVAL);
	json_decref(rec);
	rec = json_pack("{s:s}", "workload", "w");
	assert_int_equal(results_replay(fx.r, rec), -EINVAL);
	json_decref(rec);
	rec = record("w", 0, NS_PER_S, 1000, o, o);
	json_object_set_new(json_object_get(json_object_get(rec, "ops"), "read"), "latency",
			    json_string("not base64 at all!"));
	assert_int_equal(results_replay(fx.r, rec), -EINVAL);
	json_decref(rec);
	op_stats_reset(o);
	free(o);
	teardown_workload(&fx);
}

/* Two workloads, a and b, as setup_workload builds one, one target each,
 * their records written to a run directory under dir. */
struct pair {
	struct run_config *cfg;
	struct workload *w[2];
	struct results *r;
	struct rundir *d;
};

static void setup_pair(struct pair *p, const char *dir)
{
	char err[256];
	bool resume;

	p->cfg = load("{\"run\": {\"name\": \"r\", \"duration\": \"60s\", \"interval\": \"1s\"},"
		      " \"workloads\": ["
		      "  {\"name\": \"a\", \"type\": \"device\", \"model\": \"pattern\","
		      "   \"targets\": [\"/nonexistent/a.dat\"], \"file_size\": \"1MiB\","
		      "   \"read_pct\": 70, \"block_size\": \"4KiB\", \"rate\": 1000},"
		      "  {\"name\": \"b\", \"type\": \"device\", \"model\": \"pattern\","
		      "   \"targets\": [\"/nonexistent/b.dat\"], \"file_size\": \"1MiB\","
		      "   \"read_pct\": 70, \"block_size\": \"4KiB\", \"rate\": 1000}]}");
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(workload_new(&p->cfg->workloads[k], RUN_START, NS_PER_S, &p->w[k],
					      err, sizeof(err)),
				 0);
		struct workload *w = p->w[k];
		w->n_ops = 2;
		w->op_names[0] = "read";
		w->op_names[1] = "write";
		w->op_share[0] = 0.7;
		w->op_share[1] = 0.3;
		w->started_ns = RUN_START;
		w->state = WORKLOAD_RUNNING;
		assert_int_equal(stream_stats_init(&w->streams[0].stats, 2, RUN_START), 0);
		assert_int_equal(sched_init(&w->streams[0].sched, 1000.0, w->cfg->steps,
					    w->cfg->n_steps, false, 1),
				 0);
	}
	p->r = results_new(p->cfg, p->w, 2, RUN_START, false);
	assert_non_null(p->r);
	p->d = NULL;
	if (dir) {
		assert_int_equal(rundir_open(dir, "r", "{}\n", true, &p->d, &resume), 0);
		p->r->rundir = p->d;
	}
}

static void teardown_pair(struct pair *p)
{
	rundir_close(p->d);
	results_free(p->r);
	workload_free(p->w[0]);
	workload_free(p->w[1]);
	config_free(p->cfg);
}

/* Workload k's thread closes its interval at second end: 100 reads. */
static void publish(struct pair *p, size_t k, uint64_t end)
{
	struct interval_slot *slot = stream_current(&p->w[k]->streams[0].stats);
	for (int i = 0; i < 100; i++)
		op_stats_record(&slot->ops[0], 100 * USEC, 50 * USEC, 4096, false);
	stream_publish(&p->w[k]->streams[0].stats, RUN_START + end * NS_PER_S);
}

static uint64_t reads_of(struct results *r, size_t k)
{
	return r->w[k].totals[0].count;
}

/*
 * A resume from a checkpoint taken at a tick where one workload's thread
 * was late: a's interval ending at 2 s is published after the tick at
 * 2.02 s that took b's and wrote the checkpoint, so it is recorded after
 * the checkpoint though it ends before its run time (and at the same
 * instant as b's interval in it).  Replaying the log as a resume does
 * (begin_run.c: restore, seek, skip what the checkpoint holds), every
 * interval is counted once.
 */
static char dir[] = "/tmp/test-results.XXXXXX";

static int make_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

/* Also after a failed assertion. */
static int remove_dir(void **state)
{
	char cmd[64];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_resume_late_interval(void **state)
{
	struct pair live, resumed;
	const uint64_t grace = 20 * 1000 * USEC;
	char path[256];

	(void)state;
	setup_pair(&live, dir);
	publish(&live, 0, 1);
	publish(&live, 1, 1);
	results_tick(live.r, RUN_START + 1 * NS_PER_S + grace);
	publish(&live, 1, 2);                                     /* a is late */
	results_tick(live.r, RUN_START + 2 * NS_PER_S + grace);
	/* An object pool's endpoints as the last record left them (set
	 * here: these workloads have no engine to add them). */
	live.r->endpoints_last = json_pack("{s:{s:{s:I}}}", live.cfg->workloads[0].name,
					   "http://a/", "total_ops", (json_int_t)5);
	json_t *ck = results_checkpoint(live.r, 2 * NS_PER_S + grace);
	assert_non_null(ck);
	publish(&live, 0, 2);                                     /* a, at last */
	publish(&live, 0, 3);
	publish(&live, 1, 3);
	results_tick(live.r, RUN_START + 3 * NS_PER_S + grace);
	assert_int_equal(rundir_sync(live.d), 0);
	assert_int_equal(reads_of(live.r, 0), 300);
	assert_int_equal(reads_of(live.r, 1), 300);

	setup_pair(&resumed, NULL);
	uint64_t covered = 0;
	assert_int_equal(results_restore(resumed.r, ck, &covered), 0);
	assert_int_equal(covered, 2 * NS_PER_S + grace);
	/* The base its totals go on from, though the records holding it
	 * are skipped. */
	json_t *base = json_object_get(json_object_get(resumed.r->endpoints_base,
						       live.cfg->workloads[0].name), "http://a/");
	assert_int_equal(json_integer_value(json_object_get(base, "total_ops")), 5);
	struct runlog_reader *rd;
	snprintf(path, sizeof(path), "%s/r/intervals.log", dir);
	assert_int_equal(runlog_open(path, &rd), 0);
	assert_int_equal(runlog_seek_run_time(rd, results_checkpoint_seek_ns(resumed.r) + 1), 0);
	json_t *rec;
	int n;
	while ((n = runlog_next(rd, &rec)) > 0) {
		if (!results_in_checkpoint(resumed.r, rec))
			assert_int_equal(results_replay(resumed.r, rec), 0);
		json_decref(rec);
	}
	assert_int_equal(n, 0);
	runlog_close(rd);
	for (size_t k = 0; k < 2; k++) {
		if (reads_of(resumed.r, k) != reads_of(live.r, k))
			fail_msg("workload %s: %llu reads after the resume, %llu measured",
				 live.cfg->workloads[k].name,
				 (unsigned long long)reads_of(resumed.r, k),
				 (unsigned long long)reads_of(live.r, k));
		assert_int_equal(resumed.r->w[k].intervals, 3);
	}
	/* The slices too, the one the checkpoint held open with its count. */
	json_t *ra = results_report_json(live.r), *rb = results_report_json(resumed.r);
	for (size_t k = 0; k < 2; k++) {
		json_t *sa = json_object_get(json_object_get(json_object_get(json_array_get(
			json_object_get(ra, "workloads"), k), "ops"), "read"), "slices");
		json_t *sb = json_object_get(json_object_get(json_object_get(json_array_get(
			json_object_get(rb, "workloads"), k), "ops"), "read"), "slices");
		assert_true(json_array_size(sa) > 0);
		if (!json_equal(sa, sb)) {
			char *ta = json_dumps(sa, 0), *tb = json_dumps(sb, 0);
			fail_msg("slices measured %s\nafter the resume %s", ta, tb);
		}
	}
	json_decref(ra);
	json_decref(rb);

	json_decref(ck);
	teardown_pair(&resumed);
	teardown_pair(&live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval_rates),
		cmocka_unit_test(test_missed_and_pending),
		cmocka_unit_test(test_resume_pending),
		cmocka_unit_test(test_streams_merge),
		cmocka_unit_test(test_late_stream),
		cmocka_unit_test(test_release_late_stream),
		cmocka_unit_test(test_resume_from_cut),
		cmocka_unit_test(test_replay_matches_live),
		cmocka_unit_test(test_replay_refuses),
		cmocka_unit_test(test_generator_late),
		cmocka_unit_test(test_set_workload_out_of_memory),
		cmocka_unit_test(test_drift_reference_over_a_stop),
		cmocka_unit_test_setup_teardown(test_resume_late_interval, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
