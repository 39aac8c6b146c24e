// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every limit a configuration can run into, each with its FILE:LINE:COLUMN
 * error at the key to change, and the run's "ctl" access switch.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/config_limits.h"

/* A growing text to build configurations in. */
struct text {
	char *buf;
	size_t len;
	FILE *f;
};

static void text_open(struct text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	assert_non_null(t->f);
}

static char *text_close(struct text *t)
{
	assert_int_equal(fclose(t->f), 0);
	return t->buf;
}

/* Loads text; returns 0 or -errno, the error lines in *ret_errors. */
static int load(const char *text, struct run_config **ret, char **ret_errors)
{
	size_t len = 0;
	char *errors = NULL;
	FILE *f = open_memstream(&errors, &len);
	assert_non_null(f);
	int r = config_load_string(text, "t.json", f, ret);
	fclose(f);
	*ret_errors = errors;
	return r;
}

/* The configuration is refused, and the first error line starts with
 * `where` ("t.json:LINE:COLUMN: ") and holds `needle`. */
static void expect_error(const char *text, const char *where, const char *needle)
{
	struct run_config *c = NULL;
	char *errors;
	int r = load(text, &c, &errors);
	if (r == 0 || strncmp(errors, where, strlen(where)) != 0 || !strstr(errors, needle))
		fail_msg("expected '%s...%s', got r=%d: %s", where, needle, r, errors);
	assert_null(c);
	free(errors);
}

static struct run_config *expect_ok(const char *text)
{
	struct run_config *c = NULL;
	char *errors;
	if (load(text, &c, &errors) != 0)
		fail_msg("expected the configuration to load: %s", errors);
	free(errors);
	return c;
}

/* {"workloads": [ on line 1, one workload per line after it. */
static char *workloads(unsigned n, const char *extra)
{
	struct text t;
	text_open(&t);
	fprintf(t.f, "{\"workloads\": [\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(t.f, "  {\"name\": \"w%u\", \"type\": \"device\", \"targets\": [\"/t/%u\"]%s}%s\n",
			i, i, extra, i + 1 < n ? "," : "");
	fprintf(t.f, "]}\n");
	return text_close(&t);
}

static void test_workloads(void **state)
{
	(void)state;
	char *text = workloads(CONFIG_MAX_WORKLOADS, "");
	config_free(expect_ok(text));
	free(text);
	text = workloads(CONFIG_MAX_WORKLOADS + 1, "");
	expect_error(text, "t.json:1:15: ", "\"workloads\" lists 65 workloads, at most 64 are allowed");
	free(text);
}

/* One workload on line 2 whose `key` list holds n entries: each `before`,
 * its number (1, 2, ...; none if `after` is NULL), `after`. */
static char *one_list(const char *key, unsigned n, const char *before, const char *after,
		      const char *extra)
{
	struct text t;
	text_open(&t);
	fprintf(t.f, "{\"workloads\": [\n{\"name\": \"w\", \"type\": \"device\", %s\"%s\": [", extra,
		key);
	for (unsigned i = 0; i < n; i++) {
		if (after)
			fprintf(t.f, "%s%s%u%s", i ? ", " : "", before, i + 1, after);
		else
			fprintf(t.f, "%s%s", i ? ", " : "", before);
	}
	fprintf(t.f, "]}]}\n");
	return text_close(&t);
}

static void test_targets(void **state)
{
	(void)state;
	char *text = one_list("targets", CONFIG_MAX_TARGETS, "\"/t/", "\"", "");
	config_free(expect_ok(text));
	free(text);
	/* The list starts at column 44 of line 2. */
	text = one_list("targets", CONFIG_MAX_TARGETS + 1, "\"/t/", "\"", "");
	expect_error(text, "t.json:2:44: ", "\"targets\" lists 65 entries, at most 64 are allowed");
	free(text);
}

static void test_schedule_steps(void **state)
{
	(void)state;
	char *text = one_list("schedule", SCHED_MAX_STEPS, "{\"scale\": 1, \"for\": \"1s\"}", NULL,
			      "\"targets\": [\"/t\"], \"rate\": 10, ");
	config_free(expect_ok(text));
	free(text);
	text = one_list("schedule", SCHED_MAX_STEPS + 1, "{\"scale\": 1, \"for\": \"1s\"}", NULL,
			"\"targets\": [\"/t\"], \"rate\": 10, ");
	expect_error(text, "t.json:2:", "\"schedule\" must be a list of 1 to 256 steps");
	free(text);
}

static void test_block_sizes(void **state)
{
	(void)state;
	char *text = one_list("block_size", CONFIG_MAX_BLOCK_SIZES + 1,
			      "{\"size\": \"4KiB\", \"weight\": ", "}",
			      "\"targets\": [\"/t\"], ");
	expect_error(text, "t.json:2:", "\"block_size\" list must hold 1 to 16 entries");
	free(text);
}

#define W(body) "{\"workloads\": [\n{\"name\": \"w\", \"type\": \"device\", \"targets\": [\"/t\"], " body "}]}"

static void test_single_values(void **state)
{
	(void)state;
	expect_error(W("\"queue_depth\": 4097"), "t.json:2:", "between 1 and 4096");
	expect_error(W("\"rate\": 100000001"), "t.json:2:", "\"rate\" is 1e+08");
	config_free(expect_ok(W("\"rate\": 100000000, \"schedule\": [{\"scale\": 1, \"for\": \"1h\"}]")));
	expect_error("{\"workloads\": [{\"name\": \"a123456789b123456789c123456789d123456789e123456789"
		     "f123456789g1234\", \"type\": \"device\", \"targets\": [\"/t\"]}]}",
		     "t.json:1:", "1-63 letters");
}

static void test_schedule_totals(void **state)
{
	(void)state;
	/* Four steps of 50000 days: more than the 146 years (2^62 ns) a
	 * schedule may span. */
	expect_error(W("\"schedule\": [{\"scale\": 1, \"for\": \"50000d\"}, {\"scale\": 1, \"for\": "
		       "\"50000d\"}, {\"scale\": 1, \"for\": \"50000d\"}, {\"scale\": 1, \"for\": "
		       "\"50000d\"}]"),
		     "t.json:2:64: ", "add up to more than 146 years");
	/* The second step's peak is what is too fast; it is pointed at. */
	expect_error(W("\"rate\": 100000000, \"schedule\": [{\"scale\": 1, \"for\": \"1s\"}, "
		       "{\"scale\": 2, \"for\": \"1s\"}]"),
		     "t.json:2:111: ", "this step runs at 2e+08 ops/s");
	/* 2^53 ops: at 1e8 ops/s about 1042 days. */
	expect_error(W("\"rate\": 100000000, \"schedule\": [{\"scale\": 1, \"for\": \"1100d\"}]"),
		     "t.json:2:", "more than the 2^53 the scheduler counts exactly");
	expect_error("{\"run\": {\"duration\": \"1100d\"}, \"workloads\": [{\"name\": \"w\", \"type\": "
		     "\"device\", \"targets\": [\"/t\"], \"rate\": 100000000}]}",
		     "t.json:1:", "shorten it or lower the rate");
	config_free(expect_ok(W("\"rate\": 100000000, \"schedule\": [{\"scale\": 1, \"for\": \"1000d\"}]")));
}

/* Without a duration a workload runs until stopped: at a high rate, as long
 * as its ops can be counted exactly, which is years. */
static void test_forever_at_high_rate(void **state)
{
	(void)state;
	struct run_config *c = expect_ok(W("\"rate\": 100000000"));
	const struct workload_config *w = &c->workloads[0];
	assert_int_equal(w->n_steps, 1);
	double ops = w->rate * (double)w->steps[0].duration_ns / 1e9;
	assert_true(ops <= CONFIG_MAX_SCHEDULE_OPS);
	assert_true(w->steps[0].duration_ns > UINT64_C(1000) * 86400 * 1000000000);
	config_free(c);

	/* A modest rate keeps the unbounded schedule. */
	c = expect_ok(W("\"rate\": 1000"));
	assert_true(c->workloads[0].steps[0].duration_ns >= CONFIG_MAX_SCHEDULE_NS);
	config_free(c);
}

static void test_buffers_per_target(void **state)
{
	(void)state;
	/* 1024 in flight of 1 MiB, twice (read and write buffers): 2 GiB. */
	expect_error(W("\"queue_depth\": 1024, \"block_size\": \"1MiB\""), "t.json:2:67: ",
		     "need 2056MiB of buffers per target, more than 1GiB");
	/* Without a queue_depth key, the block size is pointed at. */
	expect_error(W("\"block_size\": \"64MiB\""), "t.json:2:66: ",
		     "lower \"queue_depth\" or the block sizes");
	config_free(expect_ok(W("\"queue_depth\": 256, \"block_size\": \"1MiB\"")));
}

static void test_run_totals(void **state)
{
	(void)state;
	/* 17 workloads of 64 targets: 1088 threads. */
	struct text t;
	text_open(&t);
	fprintf(t.f, "{\"workloads\": [\n");
	for (unsigned i = 0; i < 17; i++) {
		fprintf(t.f, "{\"name\": \"w%u\", \"type\": \"device\", \"targets\": [", i);
		for (unsigned j = 0; j < 64; j++)
			fprintf(t.f, "%s\"/t/%u/%u\"", j ? ", " : "", i, j);
		fprintf(t.f, "]}%s\n", i < 16 ? "," : "");
	}
	fprintf(t.f, "]}\n");
	char *text = text_close(&t);
	expect_error(text, "t.json:1:15: ", "the workloads need 1088 threads");
	free(text);

	/* 17 targets of 64 x 4 MiB in flight: 8.5 GiB of buffers. */
	text = one_list("targets", 17, "\"/t/", "\"", "\"queue_depth\": 64, \"block_size\": \"4MiB\", ");
	expect_error(text, "t.json:1:15: ", "the device workloads need 8712.5MiB of I/O buffers, more than 8GiB");
	free(text);

	/* Five object workloads of 4096 transfers each. */
	text_open(&t);
	fprintf(t.f, "{\"workloads\": [\n");
	for (unsigned i = 0; i < 5; i++)
		fprintf(t.f, "{\"name\": \"o%u\", \"type\": \"object\", \"protocol\": \"http\", "
			"\"endpoint\": \"http://127.0.0.1:8080/dav\", \"mix\": {\"get\": 1}, "
			"\"concurrency\": 4096}%s\n", i,
			i < 4 ? "," : "");
	fprintf(t.f, "]}\n");
	text = text_close(&t);
	expect_error(text, "t.json:1:15: ", "\"concurrency\" adds up to 20480, more than 16384");
	free(text);

	/* Three object workloads of 10^7 names each. */
	text_open(&t);
	fprintf(t.f, "{\"workloads\": [\n");
	for (unsigned i = 0; i < 3; i++)
		fprintf(t.f, "{\"name\": \"o%u\", \"type\": \"object\", \"protocol\": \"http\", "
			"\"endpoint\": \"http://127.0.0.1:8080/dav\", \"mix\": {\"get\": 1}, "
			"\"objects\": 10000000}%s\n", i, i < 2 ? "," : "");
	fprintf(t.f, "]}\n");
	text = text_close(&t);
	expect_error(text, "t.json:1:15: ", "\"objects\" add up to 30000000, more than 25000000");
	free(text);
}

static void test_config_size(void **state)
{
	(void)state;
	char path[] = "/tmp/soakd-test-config-limits.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	/* Valid JSON, but one byte over the limit. */
	fputs("{\"workloads\": [], \"run\": {\"name\": \"", f);
	for (long n = ftell(f); n < CONFIG_MAX_BYTES - 2; n++)
		fputc('x', f);
	fputs("\"}}", f);
	fclose(f);

	size_t len = 0;
	char *errors = NULL;
	struct run_config *c = NULL;
	FILE *errf = open_memstream(&errors, &len);
	assert_int_equal(config_load(path, errf, &c), -EFBIG);
	fclose(errf);
	unlink(path);
	char want[512];
	snprintf(want, sizeof(want), "%s:1:1: configuration is larger than %u bytes", path,
		 CONFIG_MAX_BYTES);
	if (!strstr(errors, want))
		fail_msg("expected '%s', got: %s", want, errors);
	assert_null(c);
	free(errors);
}

static void test_socket_path(void **state)
{
	(void)state;
	char text[512], path[200];
	memset(path, 'a', 108);
	path[0] = '/';
	path[108] = '\0';
	snprintf(text, sizeof(text), "{\"run\": {\"socket\": \"%s\"}, \"workloads\": [{\"name\": "
		 "\"w\", \"type\": \"device\", \"targets\": [\"/t\"]}]}", path);
	expect_error(text, "t.json:1:20: ", "\"socket\" must be a path of 1 to 107 bytes");
	path[107] = '\0';
	snprintf(text, sizeof(text), "{\"run\": {\"socket\": \"%s\"}, \"workloads\": [{\"name\": "
		 "\"w\", \"type\": \"device\", \"targets\": [\"/t\"]}]}", path);
	struct run_config *c = expect_ok(text);
	assert_string_equal(c->socket_path, path);
	config_free(c);
}

#define RUN(body) "{\"run\": " body ", \"workloads\": [{\"name\": \"w\", \"type\": \"device\", \"targets\": [\"/t\"]}]}"

static void test_ctl_switch(void **state)
{
	(void)state;
	struct run_config *c = expect_ok(RUN("{\"name\": \"x\"}"));
	assert_true(c->ctl.read_only_for_all);
	config_free(c);
	c = expect_ok(RUN("{\"ctl\": {\"read_only_for_all\": false}}"));
	assert_false(c->ctl.read_only_for_all);
	config_free(c);
	c = expect_ok(RUN("{\"ctl\": {}}"));
	assert_true(c->ctl.read_only_for_all);
	config_free(c);
	expect_error(RUN("{\"ctl\": {\"read_only_for_all\": \"no\"}}"), "t.json:1:39: ",
		     "\"read_only_for_all\" must be true or false");
	expect_error(RUN("{\"ctl\": {\"everyone\": true}}"), "t.json:1:18: ",
		     "unknown key \"everyone\" in \"ctl\"");
	expect_error(RUN("{\"ctl\": true}"), "t.json:1:17: ", "\"ctl\" must be {\"read_only_for_all\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workloads),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_schedule_steps),
		cmocka_unit_test(test_block_sizes),
		cmocka_unit_test(test_single_values),
		cmocka_unit_test(test_schedule_totals),
		cmocka_unit_test(test_forever_at_high_rate),
		cmocka_unit_test(test_buffers_per_target),
		cmocka_unit_test(test_run_totals),
		cmocka_unit_test(test_config_size),
		cmocka_unit_test(test_socket_path),
		cmocka_unit_test(test_ctl_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
