// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device engine's completion path (dev_engine.c), driven for real on a
 * small file with O_DIRECT and io_uring, without the daemon: every op the
 * schedule holds is completed and counted once, in the right op, with its
 * bytes and both latencies; a failed or short completion is an error with
 * no bytes and no latency.  The file lives in a private directory under
 * /dev/shm when tmpfs takes O_DIRECT, else under the build directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/workload/workload.h"

#define NS_PER_S UINT64_C(1000000000)

static char DIR_PATH[256];

static bool takes_o_direct(const char *dir)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/probe", dir);
	fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0600);
	if (fd >= 0)
		close(fd);
	unlink(path);
	return fd >= 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(DIR_PATH, sizeof(DIR_PATH), "/dev/shm/soakd-test-dev_engine.XXXXXX");
	if (mkdtemp(DIR_PATH) && takes_o_direct(DIR_PATH))
		return 0;
	if (DIR_PATH[0])
		rmdir(DIR_PATH);
	snprintf(DIR_PATH, sizeof(DIR_PATH), "test-dev_engine.XXXXXX");
	if (!mkdtemp(DIR_PATH) || !takes_o_direct(DIR_PATH))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/t.dat", DIR_PATH);
	unlink(path);
	rmdir(DIR_PATH);
	return 0;
}

static struct run_config *load(int read_pct, const char *duration)
{
	struct run_config *cfg = NULL;
	char text[1024], *err = NULL;
	size_t errlen = 0;
	FILE *f = open_memstream(&err, &errlen);

	snprintf(text, sizeof(text),
		 "{\"run\": {\"name\": \"r\", \"interval\": \"200ms\"},"
		 " \"workloads\": [{\"name\": \"w\", \"type\": \"device\", \"model\": \"pattern\","
		 "  \"targets\": [\"%s/t.dat\"], \"file_size\": \"4MiB\", \"read_pct\": %d,"
		 "  \"block_size\": \"4KiB\", \"queue_depth\": 8, \"rate\": 2000,"
		 "  \"schedule\": [{\"scale\": 1, \"for\": \"%s\"}]}]}",
		 DIR_PATH, read_pct, duration);
	int r = config_load_string(text, "t.json", f, &cfg);
	fclose(f);
	if (r < 0)
		fail_msg("config: %s", err);
	free(err);
	return cfg;
}

/* What the engine handed over, slot by slot. */
struct collected {
	struct op_stats ops[2];
	size_t slots;
	uint64_t origin;
	size_t off_grid; /* slots that end off the 200 ms grid */
};

static void collect(const struct interval_slot *slot, size_t n_ops, void *userdata)
{
	struct collected *c = userdata;

	assert_true(n_ops <= 2);
	assert_true(slot->end_ns > slot->start_ns);
	if ((slot->end_ns - c->origin) % (NS_PER_S / 5))
		c->off_grid++;
	c->slots++;
	for (size_t op = 0; op < n_ops; op++)
		op_stats_merge(&c->ops[op], &slot->ops[op]);
}

static void collected_free(struct collected *c)
{
	op_stats_reset(&c->ops[0]);
	op_stats_reset(&c->ops[1]);
	free(c);
}

/* Prepares the workload, calls between(), if any, then starts it. */
static struct workload *start(struct run_config *cfg, uint64_t *ret_start, void (*between)(void))
{
	struct workload *w;
	char err[512];
	uint64_t now = mono_ns();

	assert_int_equal(workload_new(&cfg->workloads[0], now, cfg->interval_ns, &w, err,
				      sizeof(err)),
			 0);
	if (workload_prepare(w, err, sizeof(err)) < 0)
		fail_msg("prepare: %s", err);
	if (between)
		between();
	/* As in the daemon, the run (and its interval grid) began before
	 * the target was laid out, the schedule begins now: a starved machine
	 * can take seconds over the layout, which would be lag no op had. */
	if (workload_start(w, mono_ns(), err, sizeof(err)) < 0)
		fail_msg("start: %s", err);
	*ret_start = now;
	return w;
}

static struct collected *run_to_end(struct workload *w, uint64_t origin)
{
	struct collected *c = calloc(1, sizeof(*c));
	void *userdata[1] = { c };

	assert_non_null(c);
	c->origin = origin;
	op_stats_init(&c->ops[0]);
	op_stats_init(&c->ops[1]);
	uint64_t deadline = mono_ns() + 30 * NS_PER_S;

	/* As the main thread's tick does: take what was published, reap. */
	while (workload_is_active(w) && mono_ns() < deadline) {
		stream_consume(&w->streams[0].stats, collect, c);
		workload_reap(w, collect, userdata);
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	assert_false(workload_is_active(w));
	return c;
}

/* 2000 ops/s for 1.5 s, 70% reads: exactly 3000 ops, 2100 of them reads. */
static void test_every_op_counted(void **state)
{
	struct run_config *cfg = load(70, "1500ms");
	uint64_t started;
	struct workload *w;
	struct collected *c;

	(void)state;
	w = start(cfg, &started, NULL);
	c = run_to_end(w, started);
	assert_string_equal(workload_state_name(w->state), "finished");
	assert_string_equal(w->op_names[0], "read");
	assert_string_equal(w->op_names[1], "write");
	/* Every op the schedule made due is counted: done, or missed when a
	 * starved machine (a loaded CI runner) left no slot for it. */
	assert_int_equal(c->ops[0].count + c->ops[0].missed + c->ops[1].count + c->ops[1].missed,
			 3000);
	assert_int_equal(c->ops[0].count + c->ops[0].missed, 2100);
	/* Intervals close on the run's 200 ms grid; only the last ends
	 * where the schedule does.  How many there are depends on when the
	 * machine let the threads run: an interval the main thread could
	 * not take in time with nothing in it becomes a hole. */
	assert_true(c->slots >= 1);
	assert_true(c->off_grid <= 1);
	for (int op = 0; op < 2; op++) {
		const struct op_stats *o = &c->ops[op];
		assert_int_equal(o->errors, 0);
		assert_int_equal(o->bytes, o->count * 4096);
		/* A missed op has a latency (its wait, a lower bound) and no
		 * service time. */
		assert_int_equal(o->latency.count, o->count + o->missed);
		assert_int_equal(o->service.count, o->count);
		/* Latency runs from the due time, service from the submit,
		 * which is never earlier. */
		assert_true(hist_max(&o->service) <= hist_max(&o->latency));
		if (!o->missed)
			assert_true(hist_min(&o->service) <= hist_min(&o->latency));
	}
	collected_free(c);
	workload_free(w);
	config_free(cfg);
}

static void cut_target(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/t.dat", DIR_PATH);
	assert_int_equal(truncate(path, 0), 0);
}

/* Reads past the end of a file cut short after prepare come back empty:
 * short completions are errors, counted, with no bytes and no latency. */
static void test_short_reads_are_errors(void **state)
{
	struct run_config *cfg = load(100, "500ms");
	uint64_t started;
	struct workload *w;
	struct collected *c;

	(void)state;
	w = start(cfg, &started, cut_target);
	c = run_to_end(w, started);
	const struct op_stats *o = &c->ops[0];
	/* count + errors + missed = scheduled: none was served. */
	assert_int_equal(o->count + o->errors + o->missed, 1000);
	assert_true(o->errors > 0);
	assert_int_equal(o->count, 0);
	assert_int_equal(o->bytes, 0);
	/* Only the missed (none on an idle machine) have a latency. */
	assert_int_equal(o->latency.count, o->missed);
	collected_free(c);
	workload_free(w);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_op_counted),
		cmocka_unit_test(test_short_reads_are_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
