// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel histograms' arithmetic and their conversion into the
 * project's histograms, with the stated error bound; the "trace" config
 * key.  No BPF, no device: the kernel side's bucket function is the same
 * inline code as here (bpf/soak_bpf.h).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/config_trace.h"
#include "daemon/probes/kstats.h"
#include "daemon/probes/probes.h"

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * UINT64_C(2685821657736338717);
}

static void test_slots_cover_values(void **state)
{
	(void)state;
	__u32 prev = 0;

	/* Exact below 2 * 2^sub_bits. */
	for (uint64_t v = 0; v < 32; v++)
		assert_int_equal(soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2), v);
	/* Every value lands in a bucket whose range holds it, buckets grow
	 * with the value, and each is at most 1/16 of its lower bound wide. */
	for (uint64_t v = 1; v < (UINT64_C(1) << (SOAK_LAT_MAX_LOG2 + 1)); v += v / 97 + 1) {
		__u32 slot = soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2);
		__u64 lo, width;
		assert_true(slot < SOAK_LAT_SLOTS);
		assert_true(slot >= prev);
		prev = slot;
		soak_hist_range(slot, SOAK_LAT_SUB_BITS, &lo, &width);
		if (v < lo || v >= lo + width)
			fail_msg("%llu in slot %u [%llu, +%llu)", (unsigned long long)v, slot,
				 (unsigned long long)lo, (unsigned long long)width);
		assert_true(width == 1 || width * 16 <= lo);
	}
	/* Everything past the top clamps into the last bucket. */
	assert_int_equal(soak_hist_slot(UINT64_MAX, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2),
			 SOAK_LAT_SLOTS - 1);
	assert_int_equal(soak_hist_slot(UINT64_C(1) << 40, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2),
			 SOAK_LAT_SLOTS - 1);
	/* Sizes: 4 KiB and 128 KiB are bucket boundaries. */
	__u64 lo, width;
	soak_hist_range(soak_hist_slot(4096, SOAK_SIZE_SUB_BITS, SOAK_SIZE_MAX_LOG2),
			SOAK_SIZE_SUB_BITS, &lo, &width);
	assert_int_equal(lo, 4096);
	assert_int_equal(soak_hist_slot(UINT64_C(1) << 40, SOAK_SIZE_SUB_BITS, SOAK_SIZE_MAX_LOG2),
			 SOAK_SIZE_SLOTS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n - 1e-9);
	return sorted[rank ? rank - 1 : 0];
}

/* Values spread log-uniformly over 100 ns .. 100 ms, and a tight cluster
 * as a RAM-backed device gives: every percentile of the converted
 * histogram is within KSTATS_ERROR_BOUND of the exact one. */
static void check_bound(uint64_t lo_ns, double decades, size_t n)
{
	uint64_t *values = malloc(n * sizeof(*values));
	struct kstats_blk_delta *d = calloc(1, sizeof(*d));
	struct kstats_blk *s = malloc(sizeof(*s));
	const double ps[] = { 1, 10, 25, 50, 75, 90, 99, 99.9, 100 };

	assert_non_null(values);
	assert_non_null(d);
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		double u = (double)(rng() >> 11) / (double)(UINT64_C(1) << 53);
		values[i] = (uint64_t)((double)lo_ns * pow(10, u * decades));
		d->latency[soak_hist_slot(values[i], SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2)]++;
	}
	d->count = n;
	qsort(values, n, sizeof(*values), cmp_u64);
	kstats_blk_init(s);
	kstats_blk_add(s, d);
	assert_int_equal(s->count, n);
	assert_int_equal(s->latency.count, n);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact_percentile(values, n, ps[i]);
		uint64_t got = hist_percentile(&s->latency, ps[i]);
		double err = fabs((double)got - (double)want) / (double)want;
		if (err > KSTATS_ERROR_BOUND)
			fail_msg("p%g: %llu, exact %llu: error %.4f above the bound %.4f", ps[i],
				 (unsigned long long)got, (unsigned long long)want, err,
				 KSTATS_ERROR_BOUND);
	}
	free(values);
	free(d);
	kstats_blk_free(s);
	free(s);
}

static void test_conversion_error_bound(void **state)
{
	(void)state;
	check_bound(100, 6, 200000);       /* 100 ns .. 100 ms */
	check_bound(8000, 0.3, 100000);    /* 8 .. 16 us */
	check_bound(1, 1.5, 10000);        /* the exact range and just above */
}

/* Two intervals converted and merged hold what one read of both would. */
static void test_intervals_merge(void **state)
{
	(void)state;
	struct kstats_blk_delta *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct kstats_blk *ia = malloc(sizeof(*ia)), *ib = malloc(sizeof(*ib));
	struct kstats_blk *whole = malloc(sizeof(*whole));
	struct kstats_blk_delta *both = calloc(1, sizeof(*both));
	struct kstats_summary sum;

	for (int i = 0; i < 5000; i++) {
		uint64_t v = 1000 + rng() % 100000;
		struct kstats_blk_delta *d = i % 3 ? a : b;
		d->latency[soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2)]++;
		both->latency[soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2)]++;
		d->size[soak_hist_slot(4096, SOAK_SIZE_SUB_BITS, SOAK_SIZE_MAX_LOG2)]++;
		d->count++;
		d->bytes += 4096;
		both->count++;
		both->bytes += 4096;
	}
	kstats_blk_init(ia);
	kstats_blk_init(ib);
	kstats_blk_init(whole);
	kstats_blk_add(ia, a);
	kstats_blk_add(ib, b);
	kstats_blk_merge(ia, ib);
	kstats_blk_add(whole, both);
	assert_int_equal(ia->count, 5000);
	assert_int_equal(ia->bytes, 5000 * 4096);
	assert_int_equal(hist_percentile(&ia->latency, 50), hist_percentile(&whole->latency, 50));
	assert_int_equal(hist_percentile(&ia->latency, 99), hist_percentile(&whole->latency, 99));
	assert_int_equal(kstats_buckets_percentile(ia->size, SOAK_SIZE_SLOTS, SOAK_SIZE_SUB_BITS,
						   50), 4096);
	kstats_blk_summary(ia, &sum);
	assert_int_equal(sum.count, 5000);
	assert_true(sum.p50 <= sum.p99 && sum.p99 <= sum.max);

	json_t *j = kstats_blk_json(ia);
	assert_non_null(json_object_get(json_object_get(j, "latency_us"), "p99"));
	assert_int_equal(json_integer_value(json_object_get(j, "count")), 5000);
	json_decref(j);
	free(a);
	free(b);
	kstats_blk_free(ia);
	kstats_blk_free(ib);
	kstats_blk_free(whole);
	free(ia);
	free(ib);
	free(whole);
	free(both);
}

static void test_tcp_summary(void **state)
{
	(void)state;
	struct kstats_tcp_delta *d = calloc(1, sizeof(*d));
	struct kstats_tcp *s = malloc(sizeof(*s));
	struct kstats_tcp_summary sum;

	kstats_tcp_init(s);
	assert_true(kstats_tcp_empty(s));
	d->srtt[soak_hist_slot(20000, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2)] = 10;
	d->connect[soak_hist_slot(50000, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2)] = 2;
	d->connects = 2;
	d->retransmits = 1;
	kstats_tcp_add(s, d);
	assert_false(kstats_tcp_empty(s));
	kstats_tcp_summary(s, &sum);
	assert_int_equal(sum.srtt_samples, 10);
	assert_int_equal(sum.connects, 2);
	assert_int_equal(sum.retransmits, 1);
	assert_true(fabs((double)sum.srtt_p99 - 20000) <= 20000 * KSTATS_ERROR_BOUND);
	assert_true(fabs((double)sum.connect_p50 - 50000) <= 50000 * KSTATS_ERROR_BOUND);
	free(d);
	kstats_tcp_free(s);
	free(s);
}

static int load(const char *run_extra, struct run_config **ret, char **ret_errors)
{
	char text[2048];
	size_t len = 0;
	char *errors = NULL;
	FILE *f = open_memstream(&errors, &len);
	int r;

	snprintf(text, sizeof(text),
		 "{\"run\": {\"name\": \"t\",\n"
		 "  %s},\n"
		 " \"workloads\": [{\"name\": \"w\", \"type\": \"device\",\n"
		 "                \"targets\": [\"/tmp/x\"]}]}",
		 run_extra);
	assert_non_null(f);
	r = config_load_string(text, "t.json", f, ret);
	fclose(f);
	*ret_errors = errors;
	return r;
}

static void expect_error(const char *run_extra, const char *where, const char *needle)
{
	struct run_config *c = NULL;
	char *errors;
	int r = load(run_extra, &c, &errors);

	if (r == 0 || !strstr(errors, where) || !strstr(errors, needle))
		fail_msg("expected '%s' ... '%s', got r=%d: %s", where, needle, r, errors);
	free(errors);
}

static void test_trace_config(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;

	/* Defaults: both on, only the targets' devices. */
	assert_int_equal(load("\"duration\": \"1s\"", &c, &errors), 0);
	assert_true(c->trace.blk && c->trace.tcp);
	assert_false(c->trace.all_devices);
	assert_false(c->trace.blk_stash_always);
	config_free(c);
	free(errors);

	assert_int_equal(load("\"trace\": false", &c, &errors), 0);
	assert_false(c->trace.blk || c->trace.tcp);
	config_free(c);
	free(errors);

	assert_int_equal(load("\"trace\": {\"blk\": true, \"tcp\": false, \"all_devices\": true, "
			      "\"max_devices\": 8, \"blk_timestamps\": \"map\", "
			      "\"tcp_endpoints\": [\"127.0.0.1:9000\", \"[::1]:80\", "
			      "\"s3.local:443\"], "
			      "\"max_endpoints\": 4}", &c, &errors), 0);
	assert_string_equal(errors, "");
	assert_true(c->trace.blk);
	assert_false(c->trace.tcp);
	assert_true(c->trace.all_devices);
	assert_int_equal(c->trace.max_devices, 8);
	assert_true(c->trace.blk_stash_always);
	assert_int_equal(c->trace.n_tcp_endpoints, 3);
	assert_string_equal(c->trace.tcp_endpoints[1], "[::1]:80");
	assert_int_equal(c->trace.max_endpoints, 4);
	char *plan = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&plan, &len);
	config_print_plan(c, f);
	fclose(f);
	assert_non_null(strstr(plan, "\"trace\": {\"blk\": true, \"tcp\": false"));
	assert_non_null(strstr(plan, "\"blk_timestamps\": \"map\""));
	free(plan);
	config_free(c);
	free(errors);

	/* Errors point at the value, line 2 being the "run" members. */
	expect_error("\"trace\": \"on\"", "t.json:2:", "\"trace\" must be true, false or");
	expect_error("\"trace\": {\"blk\": \"yes\"}", "t.json:2:20:", "\"blk\" must be");
	expect_error("\"trace\": {\"disk\": true}", "t.json:2:13:", "unknown key \"disk\"");
	expect_error("\"trace\": {\"blk_timestamps\": \"kernel\"}", "t.json:2:",
		     "must be \"auto\" or \"map\"");
	expect_error("\"trace\": {\"tcp_endpoints\": [\"localhost\"]}", "t.json:2:31:",
		     "must read HOST:PORT");
	expect_error("\"trace\": {\"tcp_endpoints\": [\"h:70000\"]}", "t.json:2:",
		     "a port from 1 to 65535");
	expect_error("\"trace\": {\"tcp_endpoints\": \"h:80\"}", "t.json:2:",
		     "must be a list");
	expect_error("\"trace\": {\"max_devices\": 0}", "t.json:2:", "max_devices");
}

static void test_split_endpoint(void **state)
{
	(void)state;
	char host[64], err[256];
	unsigned port;

	assert_int_equal(trace_split_endpoint("127.0.0.1:9000", host, sizeof(host), &port, err,
					      sizeof(err)), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9000);
	assert_int_equal(trace_split_endpoint("[::1]:80", host, sizeof(host), &port, err,
					      sizeof(err)), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 80);
	assert_int_equal(trace_split_endpoint("::1:80", host, sizeof(host), &port, err,
					      sizeof(err)), -EINVAL);
	assert_int_equal(trace_split_endpoint(":80", host, sizeof(host), &port, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(trace_split_endpoint("h:0", host, sizeof(host), &port, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(trace_split_endpoint("h:-1", host, sizeof(host), &port, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(trace_split_endpoint("[::1]80", host, sizeof(host), &port, err,
					      sizeof(err)), -EINVAL);
}

/* Without a struct probes (out of memory at start) everything still
 * answers: unavailable, with a reason. */
static void test_null_probes(void **state)
{
	(void)state;
	char err[PROBE_REASON_LEN];
	struct kstats_summary sum;
	bool on;

	assert_int_equal(probes_state(NULL, PROBE_BLK), PROBE_UNAVAILABLE);
	assert_true(probes_reason(NULL, PROBE_TCP)[0]);
	assert_int_equal(probes_set(NULL, PROBE_BLK, true, err, sizeof(err)), -EOPNOTSUPP);
	assert_int_equal(probes_toggle_all(NULL, &on), 0);
	assert_false(probes_workload_blk(NULL, 0, "read", &sum));
	probes_tick(NULL, 0);
	probes_workload_active(NULL, 0, true);
	json_t *j = probes_trace_json(NULL);
	assert_int_equal(json_array_size(j), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "state")),
			    "unavailable");
	json_decref(j);
	assert_int_equal(probe_family_from_name("tcp"), PROBE_TCP);
	assert_int_equal(probe_family_from_name("disk"), -1);
	probes_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_cover_values),
		cmocka_unit_test(test_conversion_error_bound),
		cmocka_unit_test(test_intervals_merge),
		cmocka_unit_test(test_tcp_summary),
		cmocka_unit_test(test_trace_config),
		cmocka_unit_test(test_split_endpoint),
		cmocka_unit_test(test_null_probes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
