// SPDX-License-Identifier: GPL-2.0-only
/* Object names: a listed key is decoded back to the (thread, number) that
 * made it, for every naming and sub-prefix layout, and nothing else is. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/object/obj_engine.h"

static void check_round_trip(enum obj_naming naming, unsigned prefixes)
{
	char prefix[] = "soakd-w/";
	struct object_config o = { .naming = naming, .prefixes = prefixes, .threads = 8,
				   .buckets = 1, .prefix = prefix };
	struct obj_client cl = { .cfg = &o };
	assert_int_equal(obj_client_set_tag(&cl, "0123456789abcdef"), 0);
	for (unsigned stream = 0; stream < 8; stream++)
		for (uint64_t id = 1; id < 2000; id += 37) {
			struct obj_entry e = { .id = id };
			char key[OBJ_KEY_MAX];
			unsigned got_stream = 99;
			uint64_t got_id = 0;
			obj_key(&cl, stream, &e, key, sizeof(key));
			assert_int_equal(obj_key_parse(&cl, key, &got_stream, &got_id), 0);
			assert_int_equal(got_stream, stream);
			assert_int_equal(got_id, id);
			if (prefixes > 1) {
				char sub[16];
				snprintf(sub, sizeof(sub), "p%u/", obj_key_sub(&cl, stream, id));
				assert_non_null(strstr(key, sub));
			}
		}
	unsigned s;
	uint64_t id;
	/* Another run's names, and names under the run's root soakd never makes. */
	assert_int_equal(obj_key_parse(&cl, "soakd-w/fedcba9876543210/0000000000000001", &s, &id),
			 -ENOENT);
	assert_int_equal(obj_key_parse(&cl, "elsewhere", &s, &id), -ENOENT);
	assert_int_equal(obj_key_parse(&cl, "soakd-w/0123456789abcdef/foreign", &s, &id), -EINVAL);
}

static void test_random_names(void **state)
{
	(void)state;
	check_round_trip(OBJ_NAMES_RANDOM, 1);
	check_round_trip(OBJ_NAMES_RANDOM, 16);
}

static void test_sequential_names(void **state)
{
	(void)state;
	check_round_trip(OBJ_NAMES_SEQUENTIAL, 1);
	check_round_trip(OBJ_NAMES_SEQUENTIAL, 5);
}

/* A random name of a thread beyond the workload's threads is not ours. */
static void test_thread_out_of_range(void **state)
{
	(void)state;
	char prefix[] = "p/";
	struct object_config o = { .naming = OBJ_NAMES_SEQUENTIAL, .prefixes = 1, .threads = 2,
				   .buckets = 1, .prefix = prefix };
	struct obj_client cl = { .cfg = &o };
	unsigned s;
	uint64_t id;
	assert_int_equal(obj_client_set_tag(&cl, "0123456789abcdef"), 0);
	assert_int_equal(obj_key_parse(&cl, "p/0123456789abcdef/t1-000000000007", &s, &id), 0);
	assert_int_equal(id, 7);
	assert_int_equal(obj_key_parse(&cl, "p/0123456789abcdef/t2-000000000007", &s, &id), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_names),
		cmocka_unit_test(test_sequential_names),
		cmocka_unit_test(test_thread_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
