// SPDX-License-Identifier: GPL-2.0-only
/* log_clean: remote text made fit for one log line (issue 12); the log's
 * queue to stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

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

struct reader {
	int fd;
	char *text;
	size_t len;
};

static void *read_all(void *arg)
{
	struct reader *r = arg;
	size_t cap = 0;
	ssize_t n;

	do {
		if (r->len + 65536 > cap) {
			cap = (r->len + 65536) * 2;
			r->text = realloc(r->text, cap + 1);
			assert_non_null(r->text);
		}
		n = read(r->fd, r->text + r->len, 65536);
		if (n > 0)
			r->len += (size_t)n;
	} while (n > 0);
	r->text[r->len] = '\0';
	return NULL;
}

/* A stderr nobody reads: logging returns at once, what does not fit in
 * the queue is dropped and said to be, and what is written keeps its
 * order.  (Had log_raw blocked, nothing would read the pipe: a hang.) */
static void test_queue_stderr_stalled(void **state)
{
	enum { LINES = 4000, WIDTH = 2400 };
	int fds[2], saved = dup(2);
	char *pad = malloc(WIDTH);
	(void)state;

	assert_non_null(pad);
	memset(pad, 'x', WIDTH - 1);
	pad[WIDTH - 1] = '\0';
	assert_int_equal(pipe(fds), 0);
	assert_true(dup2(fds[1], 2) == 2);
	close(fds[1]);
	unsetenv("JOURNAL_STREAM");
	log_init();
	assert_int_equal(log_start(), 0);
	for (int i = 0; i < LINES; i++)
		log_raw("line %05d %.*s\n", i, WIDTH - 20, pad);
	struct reader r = { .fd = fds[0] };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, read_all, &r), 0);
	log_stop();
	dup2(saved, 2);
	close(saved);
	pthread_join(t, NULL);
	close(fds[0]);

	int seen = 0, last = -1;
	unsigned long long dropped = 0;
	for (char *line = r.text, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		int k;
		unsigned long long d;
		if (sscanf(line, "line %d ", &k) == 1) {
			assert_true(k > last);
			last = k;
			seen++;
		} else if (sscanf(line, "soakd: warning: %llu lines of stderr were dropped", &d) == 1) {
			dropped += d;
		}
	}
	assert_true(dropped > 0);
	assert_int_equal((unsigned long long)seen + dropped, LINES);
	free(r.text);
	free(pad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_replaced),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_queue_stderr_stalled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
