// SPDX-License-Identifier: GPL-2.0-only
/* The run's log writer: the 2 s sync deadline, and every record counted as
 * synced, pending or dropped while the disk fails and comes back. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
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

#include "daemon/results/rundir.h"
#include "runlog.h"

static char dir[] = "/tmp/test-rundir.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The writer thread's open() of the interval log (open64 under meson's
 * _FILE_OFFSET_BITS=64), linked with -Wl,--wrap=open64: when armed, it
 * stops there until the test lets it go, so that the test knows the
 * writer holds what it took from the pending records while more arrive
 * (test_bound_after_failed_write).
 */
int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
static sem_t gate_entered, gate_release;
static volatile int gate_armed;

int __wrap_open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	size_t n = strlen(path), tail = strlen("/intervals.log");
	if (gate_armed && n >= tail && strcmp(path + n - tail, "/intervals.log") == 0) {
		gate_armed = 0;
		sem_post(&gate_entered);
		sem_wait(&gate_release);
	}
	return __real_open64(path, flags, mode);
}

/*
 * rename(), linked with -Wl,--wrap=rename: while plan_fails is set, the
 * rename that puts plan.json in place fails with ENOSPC, as on a full
 * disk (test_plan_write_failure_retried).
 */
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);
static volatile int plan_fails, moves_fail;

int __wrap_rename(const char *from, const char *to)
{
	size_t n = strlen(to), tail = strlen("/plan.json");
	if (plan_fails && n >= tail && strcmp(to + n - tail, "/plan.json") == 0) {
		errno = ENOSPC;
		return -1;
	}
	if (moves_fail && !strstr(to, "plan.json")) {
		errno = EBUSY;   /* the run's directory is a mount point, say */
		return -1;
	}
	return __real_rename(from, to);
}

static void gate_wait_entered(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	int r;
	while ((r = sem_timedwait(&gate_entered, &until)) < 0 && errno == EINTR)
		;
	assert_int_equal(r, 0);
}

static json_int_t status_field(struct rundir *d, const char *key)
{
	json_t *st = rundir_status_json(d);
	json_int_t v = json_integer_value(json_object_get(st, key));
	json_decref(st);
	return v;
}

static void append(struct rundir *d, int i)
{
	json_t *rec = json_pack("{s:s,s:i}", "type", "test", "i", i);
	rundir_append(d, rec);
	json_decref(rec);
}

/* Records with nothing after them are synced by the deadline, not left
 * until a next write that may never come (issue 14). */
static void test_sync_deadline(void **state)
{
	struct rundir *d;
	bool resume;
	(void)state;

	assert_int_equal(rundir_open(dir, "deadline", "{}\n", true, &d, &resume), 0);
	append(d, 1);
	append(d, 2);
	double t0 = now_s();
	while (status_field(d, "records_pending") != 0 && now_s() - t0 < 5)
		usleep(20000);
	double took = now_s() - t0;
	assert_int_equal(status_field(d, "records_pending"), 0);
	assert_int_equal(status_field(d, "records_synced"), 2);
	assert_true(took <= RUNDIR_FLUSH_NS / 1e9 + 0.5);
	rundir_close(d);
}

/* A run directory NAME whose log cannot be opened (a directory where it
 * should be: open() fails with EISDIR), opened as a resumed run; the log's
 * path in log_path, to remove that directory when the disk is to come
 * back. */
static struct rundir *open_failing(const char *name, char *log_path, size_t len)
{
	char path[256];
	struct rundir *d;
	bool resume;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0750), 0);
	snprintf(path, sizeof(path), "%s/%s/plan.json", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{}\n", f);
	fclose(f);
	snprintf(log_path, len, "%s/%s/intervals.log", dir, name);
	assert_int_equal(mkdir(log_path, 0750), 0);
	assert_int_equal(rundir_open(dir, name, "{}\n", false, &d, &resume), 0);
	assert_true(resume);
	return d;
}

/* A record's padding: 1 MiB of 'p'. */
enum { PAD = 1 << 20 };
static char *make_pad(void)
{
	char *pad = malloc(PAD + 1);
	assert_non_null(pad);
	memset(pad, 'p', PAD);
	pad[PAD] = '\0';
	return pad;
}

/* A crash cut the log's last record short: a resumed run's first record
 * (the gap) starts a line of its own, and the log reads whole, the torn
 * bytes gone rather than counted as damage in the middle of the log. */
static void test_torn_tail_cut(void **state)
{
	struct rundir *d;
	bool resume;
	char path[256];
	(void)state;

	assert_int_equal(rundir_open(dir, "torn", "{}\n", true, &d, &resume), 0);
	append(d, 1);
	assert_int_equal(rundir_sync(d), 0);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/torn/intervals.log", dir);
	FILE *f = fopen(path, "a");
	assert_non_null(f);
	fputs("0badc0de {\"type\":\"test\",\"i\":", f);   /* no end: the crash */
	fclose(f);

	assert_int_equal(rundir_open(dir, "torn", "{}\n", false, &d, &resume), 0);
	assert_true(resume);
	append(d, 2);
	assert_int_equal(rundir_sync(d), 0);
	rundir_close(d);

	struct runlog_reader *rd;
	json_t *rec;
	int n = 0, r;
	assert_int_equal(runlog_open(path, &rd), 0);
	while ((r = runlog_next(rd, &rec)) > 0) {
		n++;
		assert_int_equal(json_integer_value(json_object_get(rec, "i")), n);
		json_decref(rec);
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 2);
	assert_int_equal(runlog_corrupt(rd), 0);
	assert_false(runlog_torn(rd));
	runlog_close(rd);
}

/* A log that cannot be opened: records wait, counted as pending, and are
 * all written once it can. */
static void test_failing_log_keeps_counting(void **state)
{
	char path[256];
	struct rundir *d = open_failing("failing", path, sizeof(path));
	(void)state;

	for (int i = 0; i < 3; i++)
		append(d, i);
	assert_int_equal(rundir_sync(d), -EISDIR);
	assert_int_equal(status_field(d, "records"), 3);
	assert_int_equal(status_field(d, "records_pending"), 3);
	assert_int_equal(status_field(d, "records_dropped"), 0);

	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rundir_sync(d), 0);
	assert_int_equal(status_field(d, "records_synced"), 3);
	assert_int_equal(status_field(d, "records_pending"), 0);
	rundir_close(d);

	char line[256];
	int n = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "\"type\":\"test\"") != NULL;
	fclose(f);
	assert_int_equal(n, 3);
}

/* While the disk fails, the records held back are bounded (256 MiB): past
 * that the oldest are dropped and counted, the newest kept and written
 * once the disk takes them again. */
static void test_pending_bound(void **state)
{
	enum { RECORDS = 300 };
	char path[256];
	struct rundir *d = open_failing("bounded", path, sizeof(path));
	char *pad = make_pad();
	(void)state;

	json_int_t most = 0;
	for (int i = 0; i < RECORDS; i++) {
		json_t *rec = json_pack("{s:s,s:i,s:s}", "type", "test", "i", i, "pad", pad);
		rundir_append(d, rec);
		json_decref(rec);
		json_int_t held = status_field(d, "pending_bytes");
		if (held > most)
			most = held;
	}
	free(pad);
	assert_int_equal(rundir_sync(d), -EISDIR);
	json_int_t dropped = status_field(d, "records_dropped");
	json_int_t pending = status_field(d, "records_pending");
	/* The bound holds at every look; how close to it the peak was seen
	 * depends on when the writer thread held the records for a retry. */
	assert_true(most <= (json_int_t)RUNDIR_MAX_PENDING);
	assert_true(most > (json_int_t)RUNDIR_MAX_PENDING / 2);
	assert_true(dropped > RECORDS - 256);
	assert_int_equal(dropped + pending, RECORDS);
	assert_int_equal(status_field(d, "records"), RECORDS);

	/* The disk is back: the newest records are written. */
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rundir_sync(d), 0);
	assert_int_equal(status_field(d, "records_synced"), pending);
	assert_int_equal(status_field(d, "records_dropped"), dropped);
	rundir_close(d);

	char *line = NULL;
	size_t cap = 0;
	int n = 0, last = -1;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *at = strstr(line, "\"i\":");
		if (strstr(line, "\"type\":\"test\"") && at) {
			n++;
			last = atoi(at + 4);
		}
	}
	free(line);
	fclose(f);
	assert_int_equal(n, pending);
	assert_int_equal(last, RECORDS - 1);
}

static void append_padded(struct rundir *d, int from, int n, const char *pad)
{
	for (int i = from; i < from + n; i++) {
		json_t *rec = json_pack("{s:s,s:i,s:s}", "type", "test", "i", i, "pad", pad);
		rundir_append(d, rec);
		json_decref(rec);
	}
}

/*
 * The bound holds for what a failed write puts back in front of what
 * arrived meanwhile (7874e55): the writer takes 150 MiB of records, its
 * open of the log is held until 150 MiB more have arrived, then fails;
 * together they pass RUNDIR_MAX_PENDING, and the oldest are dropped,
 * counted.  Deterministic: the gate in __wrap_open64, not timing, makes the
 * two meet.
 */
static void test_bound_after_failed_write(void **state)
{
	enum { HALF = 150 };
	char path[256];
	(void)state;

	assert_int_equal(sem_init(&gate_entered, 0, 0), 0);
	assert_int_equal(sem_init(&gate_release, 0, 0), 0);
	/* Every write fails: the log cannot be opened. */
	struct rundir *d = open_failing("requeue", path, sizeof(path));
	char *pad = make_pad();
	/* A first failure: the writer then retries once per period, and
	 * records arriving meanwhile wait. */
	append_padded(d, 0, 1, "");
	assert_int_equal(rundir_sync(d), -EISDIR);
	append_padded(d, 1, HALF, pad);
	gate_armed = 1;
	gate_wait_entered(); /* the retry took them all */
	assert_int_equal(status_field(d, "pending_bytes"), 0);
	append_padded(d, 1 + HALF, HALF, pad);
	json_int_t before = status_field(d, "pending_bytes");
	assert_true(before <= (json_int_t)RUNDIR_MAX_PENDING);
	sem_post(&gate_release);
	/* The held write fails and is put back; this sync waits for the
	 * attempt after it. */
	assert_int_equal(rundir_sync(d), -EISDIR);
	json_int_t held = status_field(d, "pending_bytes");
	json_int_t dropped = status_field(d, "records_dropped");
	json_int_t pending = status_field(d, "records_pending");
	print_message("held %lld bytes after the failed write, %lld records dropped\n",
		      (long long)held, (long long)dropped);
	assert_true(held <= (json_int_t)RUNDIR_MAX_PENDING);
	assert_true(dropped > 0);
	assert_int_equal(dropped + pending, 1 + 2 * HALF);
	rundir_close(d);
	free(pad);
	sem_destroy(&gate_entered);
	sem_destroy(&gate_release);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

static void assert_status_error(struct rundir *d, const char *part)
{
	json_t *st = rundir_status_json(d);
	const char *error = json_string_value(json_object_get(st, "error"));
	if (!error || !strstr(error, part))
		fail_msg("status error \"%s\" does not say \"%s\"", error ? error : "(none)", part);
	json_decref(st);
}

/*
 * plan.json cannot be written (a full disk): that is an error shown like
 * a failing log's, no log exists without it, and records wait; once it
 * can be written, it is, then the records; and a restart with the same
 * configuration resumes the run rather than start a new one.
 */
static void test_plan_write_failure_retried(void **state)
{
	const char *plan = "{\"plan\": 1}\n";
	char path[256];
	struct rundir *d;
	bool resume = true;
	struct stat st;
	(void)state;

	plan_fails = 1;
	assert_int_equal(rundir_open(dir, "noplan", plan, false, &d, &resume), 0);
	assert_false(resume);
	snprintf(path, sizeof(path), "%s/noplan/intervals.log", dir);
	assert_int_not_equal(stat(path, &st), 0);
	append(d, 1);
	append(d, 2);
	assert_int_equal(rundir_sync(d), -ENOSPC);
	assert_status_error(d, "cannot write plan.json in");
	assert_status_error(d, "No space left on device");
	assert_int_not_equal(stat(path, &st), 0);
	assert_int_equal(status_field(d, "records_pending"), 2);

	plan_fails = 0;
	assert_int_equal(rundir_sync(d), 0);
	assert_int_equal(status_field(d, "records_synced"), 2);
	assert_int_equal(status_field(d, "records_dropped"), 0);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/noplan/plan.json", dir);
	char *text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, plan);
	free(text);

	assert_int_equal(rundir_open(dir, "noplan", plan, false, &d, &resume), 0);
	assert_true(resume);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/noplan.1", dir);
	assert_int_not_equal(stat(path, &st), 0);
}

/* A new run (its configuration changed) whose old run cannot be moved
 * aside is refused: it would append to the old run's log, under its plan. */
static void test_unmovable_old_run(void **state)
{
	struct rundir *d;
	bool resume;
	char path[256];
	struct stat st;
	(void)state;

	assert_int_equal(rundir_open(dir, "stuck", "{\"plan\": 1}\n", false, &d, &resume), 0);
	append(d, 1);
	assert_int_equal(rundir_sync(d), 0);
	rundir_close(d);
	moves_fail = 1;
	assert_int_equal(rundir_open(dir, "stuck", "{\"plan\": 2}\n", false, &d, &resume), -EBUSY);
	assert_int_equal(rundir_open(dir, "stuck", "{\"plan\": 1}\n", true, &d, &resume), -EBUSY);
	moves_fail = 0;
	snprintf(path, sizeof(path), "%s/stuck/plan.json", dir);
	char *text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "{\"plan\": 1}\n");
	free(text);
	/* The old configuration resumes as before. */
	assert_int_equal(rundir_open(dir, "stuck", "{\"plan\": 1}\n", false, &d, &resume), 0);
	assert_true(resume);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/stuck.1", dir);
	assert_int_not_equal(stat(path, &st), 0);

	/* No log in it (an empty mount point with a plan.json): nothing to
	 * mix with, so the new run goes in, under its own plan. */
	snprintf(path, sizeof(path), "%s/stuck/intervals.log", dir);
	assert_int_equal(unlink(path), 0);
	moves_fail = 1;
	assert_int_equal(rundir_open(dir, "stuck", "{\"plan\": 3}\n", false, &d, &resume), 0);
	moves_fail = 0;
	assert_false(resume);
	append(d, 1);
	assert_int_equal(rundir_sync(d), 0);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/stuck/plan.json", dir);
	text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "{\"plan\": 3}\n");
	free(text);
}

/* A reload's plan that cannot be written is written before the records
 * that follow it, which wait meanwhile. */
static void test_reload_plan_retried(void **state)
{
	char path[256];
	struct rundir *d;
	bool resume;
	(void)state;

	assert_int_equal(rundir_open(dir, "reload", "{\"plan\": 1}\n", false, &d, &resume), 0);
	append(d, 1);
	assert_int_equal(rundir_sync(d), 0);
	plan_fails = 1;
	assert_int_equal(rundir_set_plan(d, "{\"plan\": 2}\n"), -ENOSPC);
	append(d, 2);
	assert_int_equal(rundir_sync(d), -ENOSPC);
	assert_status_error(d, "plan.json");
	assert_int_equal(status_field(d, "records_synced"), 1);
	plan_fails = 0;
	assert_int_equal(rundir_sync(d), 0);
	assert_int_equal(status_field(d, "records_synced"), 2);
	rundir_close(d);
	snprintf(path, sizeof(path), "%s/reload/plan.json", dir);
	char *text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "{\"plan\": 2}\n");
	free(text);
	assert_int_equal(rundir_open(dir, "reload", "{\"plan\": 2}\n", false, &d, &resume), 0);
	assert_true(resume);
	rundir_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_deadline),
		cmocka_unit_test(test_torn_tail_cut),
		cmocka_unit_test(test_failing_log_keeps_counting),
		cmocka_unit_test(test_pending_bound),
		cmocka_unit_test(test_bound_after_failed_write),
		cmocka_unit_test(test_plan_write_failure_retried),
		cmocka_unit_test(test_unmovable_old_run),
		cmocka_unit_test(test_reload_plan_retried),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
