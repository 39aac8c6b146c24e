// SPDX-License-Identifier: GPL-2.0-only
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/config_json.h"
#include "daemon/base/jsonpos.h"

/* Loads text; returns 0 or -errno, with error lines in *ret_errors. */
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

static void expect_error(const char *text, const char *where, const char *needle)
{
	struct run_config *c = NULL;
	char *errors;
	int r = load(text, &c, &errors);
	if (r == 0 || !strstr(errors, where) || !strstr(errors, needle))
		fail_msg("expected '%s' ... '%s', got r=%d: %s", where, needle, r, errors);
	assert_null(c);
	free(errors);
}

static void test_example_from_issue(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	int r = load("{\"run\":{\"name\":\"demo\",\"duration\":\"30s\",\"interval\":\"1s\"},"
		     "\"workloads\":[{\"name\":\"rand4k\",\"type\":\"device\",\"model\":\"pattern\","
		     "\"targets\":[\"/tmp/soak.dat\"],\"file_size\":\"1GiB\",\"read_pct\":70,"
		     "\"block_size\":\"4KiB\",\"access\":\"random\",\"queue_depth\":32,\"rate\":5000,"
		     "\"schedule\":[{\"scale\":1,\"for\":\"15s\"},{\"scale\":2,\"for\":\"15s\"}]}]}",
		     &c, &errors);
	assert_int_equal(r, 0);
	assert_string_equal(errors, "");
	assert_string_equal(c->name, "demo");
	assert_int_equal(c->duration_ns, UINT64_C(30000000000));
	assert_int_equal(c->interval_ns, UINT64_C(1000000000));
	assert_int_equal(c->n_workloads, 1);
	const struct workload_config *w = &c->workloads[0];
	assert_string_equal(w->name, "rand4k");
	assert_int_equal(w->n_targets, 1);
	assert_string_equal(w->targets[0].path, "/tmp/soak.dat");
	assert_false(w->targets[0].destroy_data);
	assert_int_equal(w->file_size, UINT64_C(1) << 30);
	assert_int_equal(w->read_pct, 70);
	assert_int_equal(w->n_block_sizes, 1);
	assert_int_equal(w->block_sizes[0].bytes, 4096);
	assert_int_equal(w->access, ACCESS_RANDOM);
	assert_int_equal(w->queue_depth, 32);
	assert_true(w->rate == 5000);
	assert_int_equal(w->n_steps, 2);
	assert_true(w->steps[1].scale == 2);
	assert_int_equal(w->steps[1].duration_ns, UINT64_C(15000000000));
	free(errors);

	/* The plan names every resolved field and absolute offsets. */
	char *plan = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&plan, &len);
	config_print_plan(c, f);
	fclose(f);
	assert_non_null(strstr(plan, "\"at\": \"15s\""));
	assert_non_null(strstr(plan, "\"rate\": 10000"));
	assert_non_null(strstr(plan, "\"max_lag\": \"10s\""));
	free(plan);
	config_free(c);
}

static void test_defaults(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
			      "\"targets\":[{\"path\":\"/dev/loop7\",\"destroy_data\":true}]}]}",
			      &c, &errors), 0);
	const struct workload_config *w = &c->workloads[0];
	assert_int_equal(w->read_pct, 100);
	assert_int_equal(w->queue_depth, 32);
	assert_true(w->rate == 0);
	assert_true(w->targets[0].destroy_data);
	assert_int_equal(w->n_steps, 1);
	assert_int_equal(c->duration_ns, 0);
	assert_true(c->exit_on_finish);
	free(errors);
	config_free(c);
}

static void test_block_size_list(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
			      "\"block_size\":[{\"size\":\"4KiB\",\"weight\":3},{\"size\":65536}]}]}",
			      &c, &errors), 0);
	const struct workload_config *w = &c->workloads[0];
	assert_int_equal(w->n_block_sizes, 2);
	assert_int_equal(w->block_sizes[0].weight, 3);
	assert_int_equal(w->block_sizes[1].bytes, 65536);
	assert_int_equal(w->block_sizes[1].weight, 1);
	/* A relative target resolves against the working directory. */
	assert_true(w->targets[0].path[0] == '/');
	free(errors);
	config_free(c);
}

/* "verify" and its keys (issue 15): defaults, the plan, and errors at
 * the key that is wrong. */
static void test_verify(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
			      "\"targets\":[\"/dev/loop7\"],\"read_pct\":50,\"verify\":true,"
			      "\"prep\":true,\"verify_on_resume\":\"full\"}]}", &c, &errors), 0);
	const struct verify_config *v = &c->workloads[0].verify;
	assert_true(v->on);
	assert_true(v->fill);           /* prep writes generation 0 last */
	assert_false(v->pre_read);
	assert_int_equal(v->flush_interval_ns, 1000000000);
	assert_int_equal(v->on_resume, VERIFY_RESUME_FULL);
	char *plan = config_workload_text(&c->workloads[0]);
	assert_non_null(strstr(plan, "\"verify\": {\"fill\": true, \"pre_read\": false, "
				     "\"fua\": false, \"flush_interval\": \"1s\", "
				     "\"verify_on_resume\": \"full\"}"));
	free(plan);
	free(errors);
	config_free(c);
	/* ACT models take it too. */
	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
			      "\"model\":\"act-storage\",\"devices\":[\"/dev/loop7\"],"
			      "\"load\":\"1x\",\"verify\":true,\"fua\":true}]}", &c, &errors), 0);
	assert_true(c->workloads[0].verify.fua);
	free(errors);
	config_free(c);

	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"pre_read\":true}]}", "t.json:1:59:", "\"pre_read\" needs \"verify\": true");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"verify\":true,\"verify_on_resume\":\"some\"}]}", "t.json:1:",
		     "\"touched\", \"full\" or \"none\", not \"some\"");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"verify\":true,\"flush_interval\":\"1ms\"}]}", "t.json:1:",
		     "between 10ms and 1h");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"read_pct\":50,\"block_size\":\"512\",\"verify\":true}]}", "t.json:1:",
		     "multiple of 4096 bytes (the verify block), not 512");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"verify\":\"yes\"}]}", "t.json:1:", "verify");
}

static void test_syntax_error_position(void **state)
{
	(void)state;
	expect_error("{\n  \"run\": {\"name\": \"x\",}\n}", "t.json:2:", "");
	expect_error("", "t.json:", "");
}

static void test_unknown_key_position(void **state)
{
	(void)state;
	/* The error points at the key itself: line 4, column 5. */
	expect_error("{\"workloads\": [\n"
		     "  {\"name\": \"w\",\n"
		     "   \"type\": \"device\", \"targets\": [\"f\"],\n"
		     "    \"raet\": 5}\n"
		     "]}\n",
		     "t.json:4:5: ", "unknown key \"raet\"");
	expect_error("{\"run\": {\"nmae\": \"x\"}, \"workloads\": []}", "t.json:1:10:", "\"nmae\"");
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"read_pct\":\"70\"}]}", "t.json:1:", "\"read_pct\" must be a whole number");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":\"f\"}]}",
		     "t.json:1:", "\"targets\" must be a non-empty list");
	expect_error("{\"workloads\":[{\"name\":5,\"type\":\"device\",\"targets\":[\"f\"]}]}",
		     "t.json:1:", "\"name\" must be a string");
	expect_error("[]", "t.json:1:1:", "must be a JSON object");
}

static void test_impossible_values(void **state)
{
	(void)state;
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"read_pct\":150}]}", "t.json:1:", "between 0 and 100");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"block_size\":\"1000\"}]}", "t.json:1:", "multiple of 512");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"queue_depth\":0}]}", "t.json:1:", "\"queue_depth\"");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"rate\":-5}]}", "t.json:1:", "\"rate\"");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"rate\":100,\"schedule\":[{\"scale\":1,\"for\":\"0s\"}]}]}", "t.json:1:",
		     "longer than 0");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"schedule\":[{\"scale\":2,\"for\":\"1s\"}]}]}", "t.json:1:", "needs a \"rate\"");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
		     "\"max_lag\":\"10 parsecs\"}]}", "t.json:1:", "bad duration");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\",\"f\"]}]}",
		     "t.json:1:", "listed twice");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"]},"
		     "{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"g\"]}]}", "t.json:1:",
		     "used twice");
	/* One StatsD name for two workloads: their counters would add up. */
	expect_error("{\"run\":{\"exports\":{\"statsd\":{\"address\":\"127.0.0.1:8125\"}}},"
		     "\"workloads\":[{\"name\":\"Rand4k\",\"type\":\"device\",\"targets\":[\"f\"]},"
		     "{\"name\":\"rand4k\",\"type\":\"device\",\"targets\":[\"g\"]}]}", "t.json:1:",
		     "workload names \"Rand4k\" and \"rand4k\" are one StatsD name, \"rand4k\"");
	expect_error("{\"run\":{\"exports\":{\"statsd\":{\"address\":\"127.0.0.1:8125\"}}},"
		     "\"workloads\":[{\"name\":\"db.read\",\"type\":\"device\",\"targets\":[\"f\"]},"
		     "{\"name\":\"db_read\",\"type\":\"device\",\"targets\":[\"g\"]}]}", "t.json:1:",
		     "are one StatsD name, \"db_read\"");
	expect_error("{\"workloads\":[{\"name\":\"a b\",\"type\":\"device\",\"targets\":[\"f\"]}]}",
		     "t.json:1:", "1-63 letters");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"tape\",\"targets\":[\"f\"]}]}",
		     "t.json:1:", "unknown workload type");
	expect_error("{\"run\":{\"interval\":\"500us\"},\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
		     "\"targets\":[\"f\"]}]}", "t.json:1:", "between 1ms and 1h");
	/* Found by tests/fuzz/fuzz-config: the slice checks divided by 0. */
	expect_error("{\"run\":{\"interval\":\"0s\"},\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
		     "\"targets\":[\"f\"]}]}", "t.json:1:", "between 1ms and 1h");
	expect_error("{\"run\":{\"interval\":\"0s\",\"slice\":\"1h\"},\"workloads\":[{\"name\":\"w\","
		     "\"type\":\"device\",\"targets\":[\"f\"]}]}", "t.json:1:", "between 1ms and 1h");
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"]}],"
		     "\"workloads\":[]}", "t.json:1:", "duplicate");
}

/* Issue 12: "." and ".." named the state directory and its parent. */
static void test_run_and_workload_names(void **state)
{
	(void)state;
#define NAMED(run, wl) "{\"run\":{\"name\":\"" run "\"},\"workloads\":[{\"name\":\"" wl \
		       "\",\"type\":\"device\",\"targets\":[\"f\"]}]}"
	expect_error(NAMED("..", "w"), "t.json:1:", "run name \"..\" may not start with '.'");
	expect_error(NAMED(".", "w"), "t.json:1:", "run name \".\" may not start with '.'");
	expect_error(NAMED(".hidden", "w"), "t.json:1:", "may not start with '.'");
	expect_error(NAMED("a/b", "w"), "t.json:1:", "run name \"a/b\" may hold only letters");
	expect_error(NAMED("", "w"), "t.json:1:", "run name \"\" is empty");
	expect_error(NAMED("r", ".."), "t.json:1:", "workload name \"..\" may not start with '.'");
	expect_error(NAMED("r", ".w"), "t.json:1:", "workload name \".w\" may not start with '.'");

	struct run_config *c = NULL;
	char *errors = NULL;
	assert_int_equal(load(NAMED("soak-1.2_x", "w.1-a_b"), &c, &errors), 0);
	assert_string_equal(c->name, "soak-1.2_x");
	assert_string_equal(c->workloads[0].name, "w.1-a_b");
	free(errors);
	config_free(c);
#undef NAMED
	assert_null(cfg_name_problem("a.b"));
	assert_non_null(cfg_name_problem(".."));
	assert_non_null(cfg_name_problem("a\nb"));
}

static void test_all_errors_reported(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors;
	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\",\"targets\":[\"f\"],"
			      "\"read_pct\":150,\"queue_depth\":0,\"bogus\":1}]}", &c, &errors),
			 -22);
	int lines = 0;
	for (char *p = errors; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 3);
	free(errors);
}

/* A file of many errors: the first CFG_MAX_REPORTED with their places,
 * then how many more (finding each place rescans the text); and what the
 * file says is printed without its control characters (stderr is a
 * journal stream under systemd). */
static void test_errors_bounded_and_clean(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors;
	size_t cap = 300 * 16 + 64, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "{\"run\": {");
	for (int i = 0; i < 300; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"k%d\": 0", i ? ", " : "", i);
	snprintf(text + len, cap - len, "}}");
	assert_int_equal(load(text, &c, &errors), -22);
	int lines = 0;
	for (char *p = errors; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, CFG_MAX_REPORTED + 1);
	assert_non_null(strstr(errors, "t.json: 201 more errors not shown"));
	free(errors);
	free(text);

	assert_int_equal(load("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
			      "\"targets\":[\"f\"],\"access\":\"x\\n<0>soakd: FAKE\\u001b[2J\"}]}",
			      &c, &errors), -22);
	assert_null(strchr(errors, '\x1b'));
	assert_non_null(strstr(errors, "x?<0>soakd: FAKE?[2J"));
	assert_int_equal(strchr(errors, '\n'), errors + strlen(errors) - 1);
	free(errors);
	expect_error("{\"workloads\":[{\"name\":\"w\",\"type\":\"device\","
		     "\"targets\":[\"/srv/a\\nWATCHDOG=trigger\"]}]}", "t.json:1:",
		     "holds a control character (byte 0x0a)");
}

/* A duration past 2^62 ns is a run until stopped (the plan's "forever"),
 * not an end time that wraps negative. */
static void test_huge_duration(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors;
	assert_int_equal(load("{\"run\": {\"duration\": \"200000d\"}, \"workloads\":[{\"name\":"
			      "\"w\",\"type\":\"device\",\"targets\":[\"f\"]}]}", &c, &errors), 0);
	assert_int_equal(c->duration_ns, 0);
	config_free(c);
	free(errors);
}

static void test_jsonpos(void **state)
{
	(void)state;
	const char *text = "{\"a\": [1, {\"b\": \"x\"}],\n \"c\": true}";
	struct jsonpos_step path[] = { { .key = "a" }, { .index = 1 }, { .key = "b" } };
	int line, col;
	assert_int_equal(jsonpos_locate(text, strlen(text), path, 3, 0, &line, &col), 0);
	assert_int_equal(line, 1);
	assert_int_equal(col, 17);
	assert_int_equal(jsonpos_locate(text, strlen(text), path, 3, 1, &line, &col), 0);
	assert_int_equal(col, 12);
	struct jsonpos_step c_key[] = { { .key = "c" } };
	assert_int_equal(jsonpos_locate(text, strlen(text), c_key, 1, 1, &line, &col), 0);
	assert_int_equal(line, 2);
	assert_int_equal(col, 2);
	struct jsonpos_step missing[] = { { .key = "zz" } };
	assert_int_equal(jsonpos_locate(text, strlen(text), missing, 1, 0, &line, &col), -2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_from_issue),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_block_size_list),
		cmocka_unit_test(test_syntax_error_position),
		cmocka_unit_test(test_unknown_key_position),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_impossible_values),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_run_and_workload_names),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_errors_bounded_and_clean),
		cmocka_unit_test(test_huge_duration),
		cmocka_unit_test(test_jsonpos),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
