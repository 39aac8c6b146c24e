// SPDX-License-Identifier: GPL-2.0-only
/* The drift detector alone (drift_detect.h): synthetic intervals of known
 * latency distributions, no daemon, no clock.  A steady load with noise
 * and short stalls raises nothing; a slower device, a lower throughput and
 * failing ops each raise their alarm once; a new scheduled rate starts a
 * new reference; the config's "drift" block is validated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/drift/drift_detect.h"

#define MS UINT64_C(1000000)

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ull << 53);
}

/* n latencies: most near base_ns, a 2% tail up to 4x, as a device shows. */
static void interval_hist(struct hist *h, uint64_t n, uint64_t base_ns)
{
	hist_reset(h);
	for (uint64_t i = 0; i < n; i++) {
		double u = uniform();
		double v = u < 0.98 ? base_ns * (0.8 + 0.4 * uniform())
				    : base_ns * (1.2 + 2.8 * uniform());
		hist_record(h, (uint64_t)v);
	}
}

static struct drift_params params(unsigned window, enum drift_sensitivity s)
{
	struct drift_config cfg = { .enabled = true, .window_ns = window * 1000 * MS,
				    .sensitivity = s, .metrics = (1u << DRIFT_METRICS) - 1 };
	struct drift_params p;
	drift_params_from_config(&cfg, 1000 * MS, &p);
	return p;
}

/* Feeds n intervals of ops at base_ns; returns the alarms raised. */
static size_t feed(struct drift_op *o, unsigned n, uint64_t ops, uint64_t base_ns, uint64_t errors,
		   double rate, unsigned *ret_metrics)
{
	struct hist *h = hist_new();
	struct drift_finding f[DRIFT_METRICS];
	size_t alarms = 0;

	assert_non_null(h);
	for (unsigned i = 0; i < n; i++) {
		interval_hist(h, ops, base_ns);
		size_t k = drift_op_feed(o, h, ops, errors, 1.0, rate, f);
		for (size_t j = 0; j < k; j++) {
			*ret_metrics |= 1u << f[j].metric;
			if (getenv("DRIFT_DEBUG"))
				fprintf(stderr, "alarm %d at %u: observed %g expected %g n %llu\n",
					f[j].metric, i, f[j].observed, f[j].expected,
					(unsigned long long)f[j].n);
		}
		alarms += k;
	}
	hist_delete(h);
	return alarms;
}

static void test_steady_raises_nothing(void **state)
{
	struct drift_op *o = malloc(sizeof(*o));
	struct drift_params p = params(10, DRIFT_HIGH);
	unsigned metrics = 0;

	(void)state;
	assert_int_equal(drift_op_init(o, &p), 0);
	/* An hour of 1 s intervals at 3000 ops/s, and a 2 s stall (every op
	 * 10x slower) now and then: under half of any window. */
	for (int minute = 0; minute < 60; minute++) {
		assert_int_equal(feed(o, 56, 3000, 100000, 0, 3000, &metrics), 0);
		assert_int_equal(feed(o, 2, 3000, 1000000, 0, 3000, &metrics), 0);
		assert_int_equal(feed(o, 2, 3000, 100000, 0, 3000, &metrics), 0);
	}
	assert_int_equal(metrics, 0);
	drift_op_free(o);
	free(o);
}

static void test_slower_device_alarms_once(void **state)
{
	struct drift_op *o = malloc(sizeof(*o));
	struct drift_params p = params(10, DRIFT_NORMAL);
	unsigned metrics = 0;

	(void)state;
	assert_int_equal(drift_op_init(o, &p), 0);
	assert_int_equal(feed(o, 30, 5000, 100000, 0, 5000, &metrics), 0);
	/* 5x slower from here on: an alarm on p99 and p99.9 once more than
	 * half the window is slower, and only then. */
	assert_int_equal(feed(o, 5, 5000, 500000, 0, 5000, &metrics), 0);
	assert_int_equal(feed(o, 1, 5000, 500000, 0, 5000, &metrics), 2);
	assert_int_equal(metrics, (1u << DRIFT_P99) | (1u << DRIFT_P999));
	assert_true(o->active[DRIFT_P99]);
	/* It stays on, without alarming again. */
	assert_int_equal(feed(o, 60, 5000, 500000, 0, 5000, &metrics), 0);
	/* Back to normal: off again, and re-armed. */
	assert_int_equal(feed(o, 10, 5000, 100000, 0, 5000, &metrics), 0);
	assert_false(o->active[DRIFT_P99]);
	metrics = 0;
	assert_int_equal(feed(o, 10, 5000, 400000, 0, 5000, &metrics), 2);
	drift_op_free(o);
	free(o);
}

static void test_throughput_and_errors(void **state)
{
	struct drift_op *o = malloc(sizeof(*o));
	struct drift_params p = params(4, DRIFT_NORMAL);
	unsigned metrics = 0;

	(void)state;
	assert_int_equal(drift_op_init(o, &p), 0);
	assert_int_equal(feed(o, 8, 2000, 100000, 0, 2000, &metrics), 0);
	/* A device that keeps up with 60% of the schedule. */
	assert_int_equal(feed(o, 4, 1200, 100000, 0, 2000, &metrics), 1);
	assert_int_equal(metrics, 1u << DRIFT_THROUGHPUT);
	drift_op_reset(o);
	metrics = 0;
	/* An error now and then in the reference, then 1% failing. */
	assert_int_equal(feed(o, 4, 2000, 100000, 0, 2000, &metrics), 0);
	assert_int_equal(feed(o, 8, 2000, 100000, 1, 2000, &metrics), 0);
	assert_int_equal(feed(o, 4, 2000, 100000, 20, 2000, &metrics), 1);
	assert_int_equal(metrics, 1u << DRIFT_ERRORS);
	drift_op_free(o);
	free(o);
}

static void test_new_rate_new_reference(void **state)
{
	struct drift_op *o = malloc(sizeof(*o));
	struct drift_params p = params(5, DRIFT_HIGH);
	unsigned metrics = 0;

	(void)state;
	assert_int_equal(drift_op_init(o, &p), 0);
	assert_int_equal(feed(o, 10, 3000, 100000, 0, 3000, &metrics), 0);
	/* The schedule doubles the rate, and latency and throughput with it:
	 * a new load, not drift. */
	assert_int_equal(feed(o, 30, 6000, 300000, 0, 6000, &metrics), 0);
	assert_int_equal(metrics, 0);
	assert_true(o->ref_done);
	assert_float_equal(o->ref_rate, 6000, 1e-9);
	drift_op_free(o);
	free(o);
}

static void test_p999_needs_enough_tail(void **state)
{
	struct drift_op *o = malloc(sizeof(*o));
	struct drift_params p = params(5, DRIFT_HIGH);
	unsigned metrics = 0;

	(void)state;
	assert_int_equal(drift_op_init(o, &p), 0);
	/* 5 x 1000 ops: 5 in the p99.9 tail, too few to test; p99 has 50. */
	assert_int_equal(feed(o, 5, 1000, 100000, 0, 1000, &metrics), 0);
	assert_int_equal(feed(o, 5, 1000, 500000, 0, 1000, &metrics), 1);
	assert_int_equal(metrics, 1u << DRIFT_P99);
	drift_op_free(o);
	free(o);
}

static int check(const char *text, char **ret_errors)
{
	char *err = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&err, &len);
	struct run_config *cfg = NULL;
	int r = config_load_string(text, "drift.json", out, &cfg);
	fclose(out);
	*ret_errors = err;
	config_free(cfg);
	return r;
}

static void test_config(void **state)
{
	char *err;

	(void)state;
	assert_int_equal(check("{\"run\": {\"interval\": \"1s\", \"drift\": {\"window\": \"1m\", "
			       "\"sensitivity\": \"high\", \"on_drift\": \"stop\"}}, \"workloads\": "
			       "[{\"name\": \"w\", \"type\": \"device\", \"targets\": [\"/tmp/x\"], "
			       "\"drift\": {\"metrics\": [\"p99\"]}}]}", &err), 0);
	free(err);
	assert_int_not_equal(check("{\"run\": {\"interval\": \"1s\"}, \"workloads\": [{\"name\": \"w\", "
				   "\"type\": \"device\", \"targets\": [\"/tmp/x\"],\n"
				   " \"drift\": {\"window\": \"1500ms\", \"sensitivity\": \"max\", "
				   "\"metrics\": [\"p50\"], \"on_drift\": \"panic\", \"x\": 1}}]}",
				   &err), 0);
	assert_non_null(strstr(err, "drift.json:2:"));
	assert_non_null(strstr(err, "\"window\" must be a whole number of intervals"));
	assert_non_null(strstr(err, "\"sensitivity\" must be \"low\", \"normal\" or \"high\""));
	assert_non_null(strstr(err, "unknown drift metric"));
	assert_non_null(strstr(err, "\"on_drift\" must be \"alarm\" or \"stop\""));
	assert_non_null(strstr(err, "\"x\""));
	free(err);
	assert_int_not_equal(check("{\"run\": {\"drift\": 5}, \"workloads\": []}", &err), 0);
	assert_non_null(strstr(err, "\"drift\" must be true, false or"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_raises_nothing),
		cmocka_unit_test(test_slower_device_alarms_once),
		cmocka_unit_test(test_throughput_and_errors),
		cmocka_unit_test(test_new_rate_new_reference),
		cmocka_unit_test(test_p999_needs_enough_tail),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
