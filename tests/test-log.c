// SPDX-License-Identifier: GPL-2.0-only
/* log_clean: remote text made fit for one log line (issue 12). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/base/log.h"

static void test_controls_replaced(void **state)
{
	(void)state;
	char out[128];
	const char *forged = "Access Denied\n soakd: control socket: stop from uid 0\r\x1b[31mred\x7f";
	log_clean(forged, strlen(forged), LOG_REMOTE_MAX, out, sizeof(out));
	assert_string_equal(out, "Access Denied  soakd: control socket: stop from uid 0  [31mred ");
	/* Bytes outside ASCII (C1 controls among them) become '?'. */
	log_clean("caf\xc3\xa9 \x9b", 7, LOG_REMOTE_MAX, out, sizeof(out));
	assert_string_equal(out, "caf?? ?");
}

static void test_bounded(void **state)
{
	(void)state;
	size_t n = 100 * 1024;
	char *big = malloc(n + 1), out[LOG_REMOTE_MAX + 1];
	assert_non_null(big);
	memset(big, 'A', n);
	big[n] = '\0';
	log_clean(big, n, LOG_REMOTE_MAX, out, sizeof(out));
	assert_int_equal(strlen(out), LOG_REMOTE_MAX);
	assert_string_equal(out + LOG_REMOTE_MAX - 3, "...");
	/* outlen bounds it too, and inlen is honoured without a NUL. */
	char small[8];
	log_clean(big, n, LOG_REMOTE_MAX, small, sizeof(small));
	assert_string_equal(small, "AAAA...");
	log_clean(big, 5, LOG_REMOTE_MAX, small, sizeof(small));
	assert_string_equal(small, "AAAAA");
	/* Up to the NUL when inlen is the buffer's size. */
	log_clean("ab\0cd", 5, LOG_REMOTE_MAX, small, sizeof(small));
	assert_string_equal(small, "ab");
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_replaced),
		cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
