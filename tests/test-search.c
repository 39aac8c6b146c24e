// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search's bisection, from the probes' records: a damaged
 * one is read as not below the target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/run/search_int.h"

#define MS UINT64_C(1000000)
#define S (1000 * MS)

static const struct search_config cfg = {
	.enabled = true, .percentile = 99, .below_ns = 20 * MS, .window_ns = S, .windows = 3,
	.min_rate = 100, .max_rate = 1600, .resolution = 0.1,
};

static struct search *new_search(void)
{
	struct search *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->cfg = &cfg;
	s->interval_ns = S;
	s->n_ops = 1;
	s->op_names[0] = "read";
	s->op_share[0] = 1;
	s->prefill_op = -1;
	s->rate = 1000;
	s->curve = json_array();
	search_reset_windows(s);
	return s;
}

/* A probe record read back without a verdict (a damaged line) is no
 * probe below the target, and no crash. */
static void test_probe_without_verdict(void **state)
{
	(void)state;
	struct search *s = new_search();
	json_t *probe = json_pack("{s:s,s:i,s:f}", "type", "search", "probe", 1, "rate", 400.0);

	search_apply_probe(s, probe);
	assert_true(s->lo == 0);
	assert_true(s->hi == 400);
	json_decref(probe);
	search_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_without_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
