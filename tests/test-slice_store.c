// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where closed slices' histograms wait: an unnamed file in the run's
 * directory, read back exactly; memory when there is no directory, when
 * the file cannot be made, and when a write fails (a full disk), so that
 * nothing is lost either way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/results/slice_store.h"

static char dir[] = "/tmp/test-slice_store.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

static size_t entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A text of n characters, different for each seed. */
static char *text_of(size_t n, unsigned seed)
{
	char *t = malloc(n + 1);

	assert_non_null(t);
	for (size_t i = 0; i < n; i++)
		t[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			[(i * 7 + seed * 13 + i / 64) % 64];
	t[n] = '\0';
	return t;
}

static void check_roundtrip(struct slice_store *s, bool in_file)
{
	struct slice_text t[40];
	char *want[40];

	for (unsigned i = 0; i < 40; i++) {
		want[i] = text_of(1 + i * 97, i);
		assert_int_equal(slice_text_put(s, &t[i], want[i]), 0);
		assert_true(in_file ? !t[i].mem : t[i].mem != NULL);
	}
	for (unsigned i = 40; i-- > 0;) {
		char *got = slice_text_get(s, &t[i]);
		assert_non_null(got);
		assert_string_equal(got, want[i]);
		free(got);
		slice_text_free(&t[i]);
		free(want[i]);
	}
}

static void test_file(void **state)
{
	struct slice_store s;

	(void)state;
	slice_store_init(&s);
	slice_store_open(&s, dir);
	assert_true(s.fd >= 0);
	check_roundtrip(&s, true);
	/* Nothing with a name in the run's directory. */
	assert_int_equal(entries(dir), 0);
	assert_true(s.end > 40 * 97 * 39 / 2);
	slice_store_close(&s);
	assert_int_equal(s.fd, -1);
}

static void test_memory(void **state)
{
	struct slice_store s;
	char missing[sizeof(dir) + 16];

	(void)state;
	slice_store_init(&s);
	slice_store_open(&s, NULL);
	assert_int_equal(s.fd, -1);
	check_roundtrip(&s, false);
	slice_store_close(&s);

	/* A directory that is not there: memory, said once. */
	snprintf(missing, sizeof(missing), "%s/none", dir);
	slice_store_open(&s, missing);
	assert_int_equal(s.fd, -1);
	check_roundtrip(&s, false);
	slice_store_close(&s);
}

/* The file stops taking writes (here: it is read-only, as a full disk
 * refuses them): texts go to memory from then on, the earlier ones stay
 * readable from the file. */
static void test_write_fails(void **state)
{
	struct slice_store s;
	struct slice_text before, after;
	char *got;

	(void)state;
	slice_store_init(&s);
	slice_store_open(&s, dir);
	assert_true(s.fd >= 0);
	assert_int_equal(slice_text_put(&s, &before, "AAAA-first"), 0);
	assert_null(before.mem);

	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s.fd);
	int ro = open(proc, O_RDONLY | O_CLOEXEC);
	assert_true(ro >= 0);
	close(s.fd);
	s.fd = ro;
	assert_int_equal(slice_text_put(&s, &after, "BBBB-second"), 0);
	assert_non_null(after.mem);
	assert_true(s.warned);

	got = slice_text_get(&s, &before);
	assert_string_equal(got, "AAAA-first");
	free(got);
	got = slice_text_get(&s, &after);
	assert_string_equal(got, "BBBB-second");
	free(got);
	slice_text_free(&before);
	slice_text_free(&after);
	slice_store_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_write_fails),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
