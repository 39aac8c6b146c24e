// SPDX-License-Identifier: GPL-2.0-only
/* What a workload thread measures (stats.c): op accounting, merging, and
 * the ring of interval slots handed to the main thread without a lock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/results/stats_json.h"
#include "daemon/run/certify_int.h"
#include "daemon/workload/stats.h"

#define USEC UINT64_C(1000)

static struct op_stats *new_op_stats(void)
{
	struct op_stats *o = malloc(sizeof(*o));

	assert_non_null(o);
	op_stats_init(o);
	return o;
}

static void free_op_stats(struct op_stats *o)
{
	op_stats_reset(o);
	free(o);
}

static void test_record(void **state)
{
	struct op_stats *o = new_op_stats();

	(void)state;
	op_stats_record(o, 100 * USEC, 40 * USEC, 4096, false);
	op_stats_record(o, 300 * USEC, 50 * USEC, 4096, false);
	/* A failed op is an error, not a completion: it moves no bytes
	 * and has no latency. */
	op_stats_record(o, 999 * USEC, 999 * USEC, 4096, true);
	assert_int_equal(o->count, 2);
	assert_int_equal(o->errors, 1);
	assert_int_equal(o->bytes, 8192);
	assert_int_equal(o->latency.count, 2);
	assert_int_equal(o->service.count, 2);
	assert_int_equal(hist_min(&o->latency), 100 * USEC);
	assert_int_equal(hist_max(&o->latency), 300 * USEC);
	assert_int_equal(hist_max(&o->service), 50 * USEC);
	assert_int_equal(o->ttfb.count, 0);
	free_op_stats(o);
}

static void test_record_error_and_corrupt(void **state)
{
	struct op_stats *o = new_op_stats();

	(void)state;
	op_stats_record_error(o, OP_ERR_TIMEOUT);
	op_stats_record_error(o, OP_ERR_HTTP_5XX);
	op_stats_record_error(o, OP_ERR_HTTP_5XX);
	/* Out of range: counted as an error, in no class. */
	op_stats_record_error(o, OP_ERR_CLASSES);
	op_stats_record_corrupt(o, 5000, 4000, 4096);
	/* count + errors + missed = scheduled: the corrupt op completed, and
	 * its time is among the served ops'. */
	assert_int_equal(o->count, 1);
	assert_int_equal(o->errors, 4);
	assert_int_equal(o->corrupt, 1);
	assert_int_equal(o->error_class[OP_ERR_TIMEOUT], 1);
	assert_int_equal(o->error_class[OP_ERR_HTTP_5XX], 2);
	assert_int_equal(o->error_class[OP_ERR_CONNECT], 0);
	assert_int_equal(o->latency.count, 1);
	assert_int_equal(o->bytes, 4096);
	free_op_stats(o);
}

/* Merging adds every counter and unites the histograms bucket by bucket:
 * the same as having recorded everything into one. */
static void test_merge_is_union(void **state)
{
	struct op_stats *a = new_op_stats(), *b = new_op_stats(), *all = new_op_stats();
	uint64_t x = 88172645463325252u;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t lat = 1 + x % (50 * 1000 * USEC), svc = lat / 3 + 1;
		bool error = x % 97 == 0;
		op_stats_record(i % 3 ? a : b, lat, svc, 512 + x % 4096, error);
		op_stats_record(all, lat, svc, 512 + x % 4096, error);
		if (x % 89 == 0) {
			op_stats_record_error(i % 2 ? a : b, OP_ERR_CONNECT);
			op_stats_record_error(all, OP_ERR_CONNECT);
		}
	}
	hist_record(&b->ttfb, 7 * USEC);
	hist_record(&all->ttfb, 7 * USEC);
	op_stats_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_int_equal(a->errors, all->errors);
	assert_int_equal(a->bytes, all->bytes);
	assert_int_equal(a->error_class[OP_ERR_CONNECT], all->error_class[OP_ERR_CONNECT]);
	assert_true(hist_equal(&a->latency, &all->latency));
	assert_true(hist_equal(&a->service, &all->service));
	assert_true(hist_equal(&a->ttfb, &all->ttfb));
	assert_int_equal(a->connect.count, 0);
	free_op_stats(a);
	free_op_stats(b);
	free_op_stats(all);
}

/* A missed op is neither completed nor failed; its wait is in latency_us
 * (a lower bound), not in service_us.  Merging sums missed and leaves the
 * pending gauge to the caller. */
static void test_missed_and_pending(void **state)
{
	struct op_stats *a = new_op_stats(), *b = new_op_stats();

	(void)state;
	op_stats_record(a, 100 * USEC, 40 * USEC, 4096, false);
	op_stats_record_missed(a, 2000000 * USEC);
	op_stats_record_missed(a, 3000000 * USEC);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->errors, 0);
	assert_int_equal(a->missed, 2);
	assert_int_equal(a->latency.count, 3);
	assert_int_equal(a->service.count, 1);
	/* Two of three latencies are seconds: the p99 shows them. */
	assert_true(hist_percentile(&a->latency, 99) >= 2900000 * USEC);

	a->pending = 7;
	op_stats_record_missed(b, 1 * USEC);
	b->pending = 5;
	op_stats_merge(a, b);
	assert_int_equal(a->missed, 3);
	assert_int_equal(a->pending, 7);
	op_stats_reset(a);
	assert_int_equal(a->missed, 0);
	assert_int_equal(a->pending, 0);
	free_op_stats(a);
	free_op_stats(b);
}

/* A slot holding only missed ops is not empty: when the main thread is
 * behind, it keeps filling rather than start again at the boundary. */
static void test_missed_slot_not_empty(void **state)
{
	struct stream_stats s;

	(void)state;
	assert_int_equal(stream_stats_init(&s, 1, 0), 0);
	for (uint64_t i = 1; i < STATS_SLOTS; i++)
		stream_publish(&s, i * 1000);
	/* The ring is full: nothing consumed. */
	op_stats_record_missed(&stream_current(&s)->ops[0], 5);
	uint64_t start = stream_current(&s)->start_ns;
	stream_publish(&s, 99000);
	assert_int_equal(stream_current(&s)->start_ns, start);
	assert_int_equal(stream_current(&s)->ops[0].missed, 1);
	stream_stats_done(&s);
}

/* What the consume callback saw, in order. */
struct seen {
	size_t n;
	uint64_t start[16], end[16], count[16][2];
};

static void remember(const struct interval_slot *slot, size_t n_ops, void *userdata)
{
	struct seen *s = userdata;

	assert_true(s->n < 16);
	assert_int_equal(n_ops, 2);
	s->start[s->n] = slot->start_ns;
	s->end[s->n] = slot->end_ns;
	s->count[s->n][0] = slot->ops[0].count;
	s->count[s->n][1] = slot->ops[1].count;
	s->n++;
}

static void fill(struct stream_stats *st, uint64_t reads, uint64_t writes)
{
	for (uint64_t i = 0; i < reads; i++)
		op_stats_record(&stream_current(st)->ops[0], USEC, USEC, 4096, false);
	for (uint64_t i = 0; i < writes; i++)
		op_stats_record(&stream_current(st)->ops[1], USEC, USEC, 4096, false);
}

static void test_init_limits(void **state)
{
	struct stream_stats st;

	(void)state;
	assert_int_equal(stream_stats_init(&st, 0, 0), -EINVAL);
	assert_int_equal(stream_stats_init(&st, STATS_MAX_OPS + 1, 0), -EINVAL);
	assert_int_equal(stream_stats_init(&st, STATS_MAX_OPS, 5), 0);
	assert_int_equal(stream_current(&st)->start_ns, 5);
	assert_int_equal(stream_current(&st)->end_ns, 0);
	stream_stats_done(&st);
	stream_stats_done(&st); /* twice is harmless */
}

/* Each published slot ends where the next begins; the main thread gets
 * them once each, in order, with what was recorded in them. */
static void test_publish_consume(void **state)
{
	struct stream_stats st;
	struct seen seen = { 0 };

	(void)state;
	assert_int_equal(stream_stats_init(&st, 2, 1000), 0);
	assert_int_equal(stream_consume(&st, remember, &seen), 0);
	fill(&st, 7, 3);
	stream_publish(&st, 2000);
	fill(&st, 1, 0);
	stream_publish(&st, 3000);
	fill(&st, 5, 5); /* the slot being filled: not handed over */
	assert_int_equal(stream_consume(&st, remember, &seen), 2);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.start[0], 1000);
	assert_int_equal(seen.end[0], 2000);
	assert_int_equal(seen.count[0][0], 7);
	assert_int_equal(seen.count[0][1], 3);
	assert_int_equal(seen.start[1], 2000);
	assert_int_equal(seen.end[1], 3000);
	assert_int_equal(seen.count[1][0], 1);
	assert_int_equal(seen.count[1][1], 0);
	/* Nothing twice. */
	assert_int_equal(stream_consume(&st, remember, &seen), 0);
	assert_int_equal(seen.n, 2);
	/* A consumed slot gives its buckets back at once: the stream holds
	 * those of the slot being filled only. */
	for (size_t i = 0; i < STATS_SLOTS; i++) {
		const struct interval_slot *slot = st.slots[i];
		size_t held = hist_memory(&slot->ops[0].latency) + hist_memory(&slot->ops[1].service);
		assert_true(slot == stream_current(&st) ? held > 0 : held == 0);
	}
	stream_stats_done(&st);
}

/* The main thread falls behind: the thread never overwrites a slot it has
 * not consumed; it keeps filling its slot, which then spans several
 * intervals, and nothing recorded is lost. */
static void test_main_thread_behind(void **state)
{
	struct stream_stats st;
	struct seen seen = { 0 };
	uint64_t reads = 0;

	(void)state;
	assert_int_equal(stream_stats_init(&st, 2, 0), 0);
	for (uint64_t k = 1; k <= 10; k++) {
		fill(&st, k, 0);
		reads += k;
		stream_publish(&st, k * 1000);
	}
	assert_int_equal(stream_consume(&st, remember, &seen), STATS_SLOTS - 1);
	assert_int_equal(seen.end[STATS_SLOTS - 2], (STATS_SLOTS - 1) * 1000);
	/* Room again: the slot that kept filling goes out whole, spanning
	 * every interval since the last one published. */
	stream_publish(&st, 11000);
	assert_int_equal(stream_consume(&st, remember, &seen), 1);
	assert_int_equal(seen.start[STATS_SLOTS - 1], (STATS_SLOTS - 1) * 1000);
	assert_int_equal(seen.end[STATS_SLOTS - 1], 11000);
	for (size_t i = 0; i + 1 < seen.n; i++)
		assert_int_equal(seen.end[i], seen.start[i + 1]);
	uint64_t got = 0;
	for (size_t i = 0; i < seen.n; i++)
		got += seen.count[i][0];
	assert_int_equal(got, reads);
	stream_stats_done(&st);
}

/* After the thread is joined, the slot it was filling is handed over too,
 * ending at the given time unless the thread ended it itself, and the
 * ring starts afresh so a restarted thread does not count it again. */
static void test_consume_rest(void **state)
{
	struct stream_stats st;
	struct seen seen = { 0 };

	(void)state;
	assert_int_equal(stream_stats_init(&st, 2, 0), 0);
	fill(&st, 2, 1);
	stream_publish(&st, 1000);
	fill(&st, 4, 4);
	stream_consume_rest(&st, 1500, remember, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.start[1], 1000);
	assert_int_equal(seen.end[1], 1500);
	assert_int_equal(seen.count[1][0], 4);
	assert_int_equal(stream_current(&st)->start_ns, 1500);
	assert_int_equal(stream_current(&st)->ops[0].count, 0);

	/* The thread ended its last slot (stream_finish): that end stays. */
	fill(&st, 1, 0);
	stream_current(&st)->end_ns = 1700;
	stream_consume_rest(&st, 9999, remember, &seen);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.end[2], 1700);
	assert_int_equal(seen.count[2][0], 1);
	assert_int_equal(stream_consume(&st, remember, &seen), 0);
	stream_stats_done(&st);
}

/* A missed op is in the latency histogram by its wait and counted as over
 * every threshold by a certification: once, not twice, and through a
 * merge and the interval log's JSON. */
static void test_missed_counted_once(void **state)
{
	struct op_stats *o = new_op_stats(), *sum = new_op_stats(), *back = new_op_stats();
	(void)state;

	for (int i = 0; i < 990; i++)
		op_stats_record(o, 500 * USEC, 400 * USEC, 4096, false);
	for (int i = 0; i < 10; i++)
		op_stats_record_missed(o, 20000 * USEC);
	assert_int_equal(o->latency.count, 1000);
	assert_int_equal(o->missed_wait.count, 10);
	op_stats_merge(sum, o);
	json_t *j = op_stats_to_json(sum);
	assert_non_null(j);
	assert_int_equal(op_stats_merge_json(back, j), 0);
	json_decref(j);
	const struct op_stats *each[] = { o, sum, back };
	for (size_t i = 0; i < 3; i++) {
		const struct op_stats *x = each[i];
		assert_int_equal(x->missed_wait.count, 10);
		/* Under the missed waits: 1% (the missed ops only). */
		assert_float_equal(certify_pct_over(&x->latency, &x->missed_wait, x->missed,
						    8000 * USEC), 1.0, 1e-9);
		/* Over them: still the missed ops, as over every threshold. */
		assert_float_equal(certify_pct_over(&x->latency, &x->missed_wait, x->missed,
						    64000 * USEC), 1.0, 1e-9);
		/* Under everything: all of them, never more. */
		assert_float_equal(certify_pct_over(&x->latency, &x->missed_wait, x->missed,
						    100 * USEC), 100.0, 1e-9);
	}
	/* A log from before missed_wait: its missed ops over the threshold
	 * count twice, as they did. */
	struct hist none;
	hist_init(&none);
	assert_float_equal(certify_pct_over(&o->latency, &none, o->missed, 8000 * USEC), 2.0,
			   1e-9);
	free_op_stats(o);
	free_op_stats(sum);
	free_op_stats(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_record_error_and_corrupt),
		cmocka_unit_test(test_merge_is_union),
		cmocka_unit_test(test_missed_and_pending),
		cmocka_unit_test(test_missed_slot_not_empty),
		cmocka_unit_test(test_init_limits),
		cmocka_unit_test(test_publish_consume),
		cmocka_unit_test(test_main_thread_behind),
		cmocka_unit_test(test_consume_rest),
		cmocka_unit_test(test_missed_counted_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
