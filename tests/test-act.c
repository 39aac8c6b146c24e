// SPDX-License-Identifier: GPL-2.0-only
/* ACT's derived rates and the device models' op choices, without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/config_act.h"
#include "daemon/device/dev_model.h"

#define assert_near(a, b, tol)                                                          \
	do {                                                                            \
		double a_ = (a), b_ = (b);                                              \
		if (!(a_ >= b_ - (tol) && a_ <= b_ + (tol)))                            \
			fail_msg("%s = %.6f, expected %.6f +- %g", #a, a_, b_, (double)(tol)); \
	} while (0)

static struct act_config storage(double reads, double writes, uint32_t record_bytes)
{
	struct act_config a;
	act_defaults(&a);
	a.read_reqs_per_sec = reads;
	a.write_reqs_per_sec = writes;
	a.record_bytes = record_bytes;
	return a;
}

/*
 * The README's worked example: 1500-byte records (stored as 1504), 1000
 * writes/s, 128 KiB blocks, doubled by defrag at 50%.  The README divides
 * exactly (11.4746 blocks/s, 22.949 with defrag); ACT's code counts whole
 * records per block, 131072 / 1504 = 87, so ACT runs 1000 / 87 x 2 =
 * 22.989 blocks/s, 0.17% more, and so does soakd.
 */
static void test_readme_example(void **state)
{
	(void)state;
	struct act_config a = storage(2000, 1000, 1500);
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.record_stored_bytes, 1504);
	assert_int_equal(a.records_per_block, 87);
	assert_near(a.large_block_rate, 1000.0 / 87 * 2, 1e-9);
	assert_near(a.large_block_rate, 22.949, 22.949 * 0.002);
	assert_near(a.read_rate, 2000, 1e-9);
}

/* ACT's defaults, 1536-byte records: 85 per 128 KiB block (85.33 exactly),
 * 23.529 blocks/s at 1x where exact division gives 23.4375. */
static void test_whole_records(void **state)
{
	(void)state;
	struct act_config a = storage(2000, 1000, 1536);
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.records_per_block, 85);
	assert_near(a.large_block_rate, 1000.0 / 85 * 2, 1e-9);

	/* A record over half a block fills a block alone: 70,000 bytes
	 * (70,000 stored), 1 per block, 2000 blocks/s, not 3745. */
	a = storage(2000, 1000, 70000);
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.records_per_block, 1);
	assert_near(a.large_block_rate, 2000, 1e-9);

	/* A whole block per record: 131072 bytes, 1 per block. */
	a = storage(2000, 1000, 131072);
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.records_per_block, 1);
	assert_near(a.large_block_rate, 2000, 1e-9);

	/* A range's mean is taken in integers as ACT does: 1000..2001 is
	 * stored as 1008..2016, mean 1512, 86 per block. */
	a = storage(2000, 1000, 1000);
	a.record_bytes_range_max = 2001;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.records_per_block, 86);
	assert_near(a.large_block_rate, 1000.0 / 86 * 2, 1e-9);
}

static void test_parameters(void **state)
{
	(void)state;
	struct act_config a;

	/* Replication factor 2 doubles the large-block rates, not the reads. */
	a = storage(2000, 1000, 1500);
	a.replication_factor = 2;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_near(a.large_block_rate, 2 * 1000.0 / 87 * 2, 1e-9);
	assert_near(a.read_rate, 2000, 1e-9);

	/* update_pct 100: every write reads its record first. */
	a = storage(2000, 1000, 1536);
	a.update_pct = 100;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_near(a.read_rate, 3000, 1e-9);
	a.update_pct = 50;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_near(a.read_rate, 2500, 1e-9);

	/* defrag-lwm-pct 60: amplification 100/40 = 2.5. */
	a = storage(2000, 1000, 1536);
	a.defrag_lwm_pct = 60;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_near(a.large_block_rate, 1000.0 / 85 * 2.5, 1e-9);

	/* A record size range counts at its mean: 1000..2000 stored as
	 * 1008..2000, mean 1504, so the same rate as 1504-byte records. */
	a = storage(2000, 1000, 1000);
	a.record_bytes_range_max = 2000;
	act_derive(&a, MODEL_ACT_STORAGE, 1);
	assert_int_equal(a.record_stored_bytes, 1008);
	assert_int_equal(a.record_stored_bytes_max, 2000);
	assert_near(a.large_block_rate, 1000.0 / 87 * 2, 1e-9);

	/* 1 MiB blocks, 4 devices: the rates are split per device. */
	a = storage(8000, 4000, 1536);
	a.large_block_op_kbytes = 1024;
	act_derive(&a, MODEL_ACT_STORAGE, 4);
	assert_near(a.read_rate, 2000, 1e-9);
	/* 1048576 / 1536 = 682 records per block. */
	assert_int_equal(a.records_per_block, 682);
	assert_near(a.large_block_rate, 4000.0 / 682 * 2 / 4, 1e-9);
}

/* "30x" on 4 devices: 30 x 4 x 2000 reads and 30 x 4 x 1000 writes. */
static void test_load_multiple(void **state)
{
	(void)state;
	struct act_config a;
	act_defaults(&a);
	a.load = 30;
	act_derive(&a, MODEL_ACT_STORAGE, 4);
	assert_near(a.read_reqs_per_sec, 240000, 1e-9);
	assert_near(a.write_reqs_per_sec, 120000, 1e-9);
	assert_near(a.read_rate, 60000, 1e-9);
	assert_near(a.large_block_rate, 30 * 1000.0 / 85 * 2, 1e-9);
}

/* act_index: a service read per client read and per (replica) write;
 * cache-thread reads and writes of writes x 100/(100 - lwm). */
static void test_index(void **state)
{
	(void)state;
	struct act_config a;
	act_defaults(&a);
	a.read_reqs_per_sec = 2000;
	a.write_reqs_per_sec = 1000;
	act_derive(&a, MODEL_ACT_INDEX, 1);
	assert_near(a.read_rate, 3000, 1e-9);
	assert_near(a.cache_rate, 2000, 1e-9);
	a.replication_factor = 2;
	a.defrag_lwm_pct = 60;
	act_derive(&a, MODEL_ACT_INDEX, 2);
	assert_near(a.read_rate, (2000 + 2000) / 2.0, 1e-9);
	assert_near(a.cache_rate, 2000 * 2.5 / 2, 1e-9);
}

static struct workload_config act_workload(enum device_model model, size_t devices)
{
	struct workload_config w = { .type = WORKLOAD_DEVICE, .model = model,
				     .n_targets = devices };
	act_defaults(&w.act);
	w.act.load = 1;
	act_derive(&w.act, model, devices);
	return w;
}

static void test_storage_model(void **state)
{
	(void)state;
	struct workload_config w = act_workload(MODEL_ACT_STORAGE, 2);
	w.act.service_threads = 10;
	struct dev_model m;
	char err[256];
	assert_int_equal(dev_model_build(&w, &m, err, sizeof(err)), 0);
	assert_int_equal(m.n_ops, 3);
	assert_string_equal(m.op_names[0], "read");
	assert_string_equal(m.op_names[1], "large_block_read");
	assert_string_equal(m.op_names[2], "large_block_write");
	/* 10 service threads over 2 devices; one large-block thread each. */
	assert_int_equal(m.gens[0].max_inflight, 5);
	assert_int_equal(m.gens[1].max_inflight, 1);
	assert_int_equal(m.slots, 7);
	assert_true(m.writes);

	/* Record reads: 1536 bytes rounded up to a 4 KiB device unit, at
	 * 4 KiB-aligned offsets; large blocks move sequentially. */
	uint64_t rng = 42;
	struct dev_op_choice op;
	for (int i = 0; i < 1000; i++) {
		dev_gen_choose(&m.gens[0], &rng, 4096, 1 << 30, &op);
		assert_int_equal(op.len, 4096);
		assert_int_equal(op.offset % 4096, 0);
		assert_true(op.offset + op.len <= (1u << 30));
	}
	dev_gen_choose(&m.gens[0], &rng, 512, 1 << 30, &op);
	assert_int_equal(op.len, 1536);
	uint64_t prev;
	dev_gen_choose(&m.gens[2], &rng, 512, 1 << 30, &op);
	prev = op.offset;
	dev_gen_choose(&m.gens[2], &rng, 512, 1 << 30, &op);
	assert_int_equal(op.offset, prev + 131072);
	assert_int_equal(op.io, DEV_IO_WRITE);
	assert_int_equal(op.op, 2);
}

static void test_record_range_sizes(void **state)
{
	(void)state;
	struct workload_config w = act_workload(MODEL_ACT_STORAGE, 1);
	w.act.record_bytes = 1000;
	w.act.record_bytes_range_max = 9000;
	act_derive(&w.act, MODEL_ACT_STORAGE, 1);
	struct dev_model m;
	char err[256];
	assert_int_equal(dev_model_build(&w, &m, err, sizeof(err)), 0);
	uint64_t rng = 7, sum = 0;
	uint32_t lo = UINT32_MAX, hi = 0;
	for (int i = 0; i < 100000; i++) {
		struct dev_op_choice op;
		dev_gen_choose(&m.gens[0], &rng, 512, 1 << 30, &op);
		assert_int_equal(op.len % 512, 0);
		lo = op.len < lo ? op.len : lo;
		hi = op.len > hi ? op.len : hi;
		sum += op.len;
	}
	assert_int_equal(lo, 1024);  /* 1008 rounded up to 512 */
	assert_int_equal(hi, 9216);  /* 9008 rounded up to 512 */
	assert_near(sum / 100000.0, 5000 + 256, 60);
}

/* act-index: reads and writes in the ratio ACT derives (1x: 3000 service
 * reads, 2000 cache reads, 2000 cache writes). */
static void test_index_model(void **state)
{
	(void)state;
	struct workload_config w = act_workload(MODEL_ACT_INDEX, 1);
	struct dev_model m;
	char err[256];
	assert_int_equal(dev_model_build(&w, &m, err, sizeof(err)), 0);
	assert_int_equal(m.n_ops, 3);
	assert_string_equal(m.op_names[1], "cache_read");
	assert_string_equal(m.op_names[2], "cache_write");
	assert_near(m.gens[0].rate, 3000, 1e-9);
	assert_near(m.gens[1].rate, 2000, 1e-9);
	assert_near(m.gens[2].rate, 2000, 1e-9);
	assert_near(m.op_share[0], 3.0 / 7, 1e-12);
	assert_int_equal(m.gens[1].max_inflight, 4); /* 8 cache threads, half each */
	uint64_t rng = 1;
	struct dev_op_choice op;
	dev_gen_choose(&m.gens[2], &rng, 512, 1 << 30, &op);
	assert_int_equal(op.len, 4096);
	assert_int_equal(op.io, DEV_IO_WRITE);
}

/* A pattern's read_pct holds exactly in every block of 100 ops. */
static void test_pattern_mix(void **state)
{
	(void)state;
	struct workload_config w = { .type = WORKLOAD_DEVICE, .model = MODEL_PATTERN,
				     .n_targets = 1, .read_pct = 70, .queue_depth = 8,
				     .rate = 1000, .n_block_sizes = 1,
				     .block_sizes = { { 4096, 1 } } };
	struct dev_model m;
	char err[256];
	assert_int_equal(dev_model_build(&w, &m, err, sizeof(err)), 0);
	uint64_t rng = 3;
	for (int block = 0; block < 50; block++) {
		int reads = 0;
		for (int i = 0; i < 100; i++) {
			struct dev_op_choice op;
			dev_gen_choose(&m.gens[0], &rng, 512, 1 << 30, &op);
			reads += op.io == DEV_IO_READ;
		}
		assert_int_equal(reads, 70);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readme_example),
		cmocka_unit_test(test_whole_records),
		cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_load_multiple),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_storage_model),
		cmocka_unit_test(test_record_range_sizes),
		cmocka_unit_test(test_index_model),
		cmocka_unit_test(test_pattern_mix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
