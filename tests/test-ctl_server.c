/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket's limits (SECURITY.md, "Limits against misuse"),
 * checked on the real server and loop with a handler of the test's own:
 * turns of the loop are run one at a time, so what happens per turn is
 * seen exactly, and the sweep is given the time (ctl_server_expire), so
 * the 30 s and 60 s limits are checked at their edges without waiting.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctl/ctl_server.h"
#include "daemon/ctl/ctl_server_int.h"
#include "daemon/base/loop.h"
#include "daemon/workload/workload.h"

#define SEC UINT64_C(1000000000)
#define MIB (UINT64_C(1) << 20)

struct fixture {
	struct loop *loop;
	struct ctl_server *server;
	char dir[64];
	char path[108];
	unsigned calls;          /* requests the handler answered */
	size_t reply_len;        /* 0: a short {"ok":true,"n":CALL} line */
};

/* A line of reply_len bytes (JSON is not needed: the server only sends it). */
static char *handler(void *userdata, const struct proto_request *req)
{
	struct fixture *f = userdata;

	(void)req;
	f->calls++;
	if (!f->reply_len) {
		char *line;
		assert_true(asprintf(&line, "{\"ok\":true,\"n\":%u}\n", f->calls) > 0);
		return line;
	}
	char *line = malloc(f->reply_len + 1);
	assert_non_null(line);
	memset(line, 'x', f->reply_len - 1);
	line[f->reply_len - 1] = '\n';
	line[f->reply_len] = '\0';
	return line;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct ctl_policy policy = { .read_only_for_all = true };

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test-ctl_server.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/ctl.sock", f->dir);
	assert_int_equal(loop_new(&f->loop), 0);
	assert_int_equal(ctl_server_open(f->loop, f->path, &policy, handler, f, &f->server), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ctl_server_free(f->server);
	loop_free(f->loop);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* One turn of the loop, with whatever is ready now (the peers are in this
 * process: what they sent is there already). */
static void turn(struct fixture *f)
{
	assert_true(loop_run_once(f->loop, 0) >= 0);
}

static int client(struct fixture *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	strcpy(sa.sun_path, f->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* A client that soakd has taken: connected and accepted. */
static int accepted_client(struct fixture *f)
{
	int fd = client(f);
	turn(f);
	return fd;
}

static void say(int fd, const char *text)
{
	assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
}

/* True once soakd has closed its end (without reading what is queued). */
static bool closed_by_soakd(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP));
}

/* Reads until `lines` lines (or EOF when eof), turning the loop meanwhile;
 * returns what came, NUL-terminated. */
static char *read_reply(struct fixture *f, int fd, unsigned lines, bool eof, size_t *ret_len)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	unsigned seen = 0;
	bool closed = false;

	assert_non_null(buf);
	for (unsigned spins = 0; spins < 200000; spins++) {
		if ((!eof && seen >= lines) || closed)
			break;
		turn(f);
		if (cap - len < (1 << 16)) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		ssize_t n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n == 0)
			closed = true;
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			seen += buf[len + (size_t)i] == '\n';
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (eof)
		assert_true(closed);
	else
		assert_true(seen >= lines);
	if (ret_len)
		*ret_len = len;
	return buf;
}

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#define STATUS "{\"cmd\":\"status\"}\n"

/* Requests in progress per connection: 1, the next line read once the
 * last answer is sent, 4 answered per turn. */
static void test_one_request_at_a_time(void **state)
{
	struct fixture *f = *state;
	int fd = accepted_client(f);
	char batch[10 * sizeof(STATUS)] = "";

	for (int i = 0; i < 10; i++)
		strcat(batch, STATUS);
	say(fd, batch);
	turn(f);
	assert_int_equal(f->calls, 4);
	turn(f);
	assert_int_equal(f->calls, 8);
	turn(f);
	assert_int_equal(f->calls, 10);
	/* In order, one line each. */
	char *got = read_reply(f, fd, 10, false, NULL);
	char want[512] = "";
	for (unsigned n = 1; n <= 10; n++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "{\"ok\":true,\"n\":%u}\n", n);
	assert_string_equal(got, want);
	free(got);

	/* An answer larger than the socket takes, not read: the next
	 * request waits, however many turns go by. */
	f->reply_len = 4 * MIB;
	say(fd, STATUS STATUS STATUS);
	for (int i = 0; i < 50; i++)
		turn(f);
	assert_int_equal(f->calls, 11);
	/* Read, and the others follow, each whole. */
	size_t len;
	got = read_reply(f, fd, 3, false, &len);
	assert_int_equal(f->calls, 13);
	assert_int_equal(len, 3 * 4 * MIB);
	free(got);
	close(fd);
}

/* Invalid requests per connection: 16, the 16th answer says so, closed. */
static void test_invalid_requests(void **state)
{
	struct fixture *f = *state;
	int fd = accepted_client(f);

	for (int i = 0; i < 15; i++)
		say(fd, "not a request\n");
	say(fd, STATUS);
	char *got = read_reply(f, fd, 16, false, NULL);
	/* 15 errors, then still answered. */
	unsigned errors = 0;
	for (char *p = got; (p = strstr(p, "\"ok\":false")); p++)
		errors++;
	assert_int_equal(errors, 15);
	assert_non_null(strstr(got, "{\"ok\":true,\"n\":1}\n"));
	assert_null(strstr(got, "closing"));
	assert_false(closed_by_soakd(fd));
	free(got);

	say(fd, "still not a request\n");
	got = read_reply(f, fd, 0, true, NULL);
	assert_non_null(strstr(got, "\"ok\":false"));
	assert_non_null(strstr(got, "16 requests that are not valid: closing the connection"));
	assert_int_equal(strchr(got, '\n') - got + 1, (long)strlen(got));
	free(got);
	close(fd);
}

/* An idle connection: closed after 30 s, not before. */
static void test_idle_timeout(void **state)
{
	struct fixture *f = *state;
	int fd = accepted_client(f);
	uint64_t now = mono_ns();

	ctl_server_expire(f->server, now + 29 * SEC);
	assert_false(closed_by_soakd(fd));
	ctl_server_expire(f->server, now + 31 * SEC);
	assert_true(closed_by_soakd(fd));
	close(fd);

	/* The 30 s count from the last answer sent. */
	fd = accepted_client(f);
	say(fd, STATUS);
	free(read_reply(f, fd, 1, false, NULL));
	now = mono_ns();
	ctl_server_expire(f->server, now + 29 * SEC);
	assert_false(closed_by_soakd(fd));
	ctl_server_expire(f->server, now + 31 * SEC);
	assert_true(closed_by_soakd(fd));
	close(fd);
}

/* An answer not taken: closed after 60 s, not before, idle or not. */
static void test_send_timeout(void **state)
{
	struct fixture *f = *state;
	int fd = accepted_client(f);

	f->reply_len = 4 * MIB;
	say(fd, STATUS);
	turn(f);
	assert_int_equal(f->calls, 1);
	uint64_t now = mono_ns();
	ctl_server_expire(f->server, now + 59 * SEC);
	assert_false(closed_by_soakd(fd));
	ctl_server_expire(f->server, now + 61 * SEC);
	assert_true(closed_by_soakd(fd));
	close(fd);
}

/* One answer: at most 256 MiB; over it, an error saying how to ask for less. */
static void test_one_answer_limit(void **state)
{
	struct fixture *f = *state;
	int fd = accepted_client(f);
	size_t len;

	f->reply_len = CTL_MAX_RESPONSE + 1;
	assert_int_equal(CTL_MAX_RESPONSE, 256 * MIB);
	say(fd, STATUS);
	char *got = read_reply(f, fd, 1, false, &len);
	assert_non_null(strstr(got, "\"ok\":false"));
	assert_non_null(strstr(got, "the response would be 256 MiB, more than the 256 MiB a "
				    "response may be: ask for less (dump with --since"));
	free(got);

	/* 256 MiB exactly is sent, whole. */
	f->reply_len = CTL_MAX_RESPONSE;
	say(fd, STATUS);
	got = read_reply(f, fd, 1, false, &len);
	assert_int_equal(len, CTL_MAX_RESPONSE);
	assert_int_equal(got[0], 'x');
	free(got);
	close(fd);
}

/* Answers queued over all clients: at most 512 MiB. */
static void test_queued_total_limit(void **state)
{
	struct fixture *f = *state;
	int a = accepted_client(f), b = accepted_client(f);
	int c = accepted_client(f), d = accepted_client(f);

	/* a and b do not read: 500 MiB stay queued. */
	f->reply_len = 250 * MIB;
	say(a, STATUS);
	turn(f);
	say(b, STATUS);
	turn(f);
	assert_int_equal(f->calls, 2);
	/* 13 MiB more would be 513. */
	f->reply_len = 13 * MIB;
	say(c, STATUS);
	char *got = read_reply(f, c, 1, false, NULL);
	assert_non_null(strstr(got, "\"ok\":false"));
	assert_non_null(strstr(got, "soakd is still sending 500 MiB of responses to other "
				    "clients; try again shortly"));
	free(got);
	/* 11 MiB more is 511: sent. */
	f->reply_len = 11 * MIB;
	size_t len;
	say(d, STATUS);
	got = read_reply(f, d, 1, false, &len);
	assert_int_equal(len, 11 * MIB);
	free(got);
	/* Once a's answer is gone, there is room again. */
	close(a);
	turn(f);
	f->reply_len = 13 * MIB;
	say(c, STATUS);
	got = read_reply(f, c, 1, false, &len);
	assert_int_equal(len, 13 * MIB);
	free(got);
	close(b);
	close(c);
	close(d);
}

/* Connections accepted per turn: 64, the rest wait for the next; the
 * 65th connection at once is refused. */
static void test_accepts_per_turn(void **state)
{
	struct fixture *f = *state;
	int fds[CTL_ACCEPTS_PER_WAKEUP + 1];

	assert_int_equal(CTL_ACCEPTS_PER_WAKEUP, 64);
	assert_int_equal(CTL_MAX_CLIENTS, 64);
	/* The listen backlog (64) holds 65 connections not yet accepted. */
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		fds[i] = client(f);
	unsigned before = open_fds();
	turn(f);
	assert_int_equal(open_fds() - before, CTL_ACCEPTS_PER_WAKEUP);
	char buf[256];
	assert_int_equal(recv(fds[CTL_ACCEPTS_PER_WAKEUP], buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	/* The next turn takes the 65th, which finds no room. */
	turn(f);
	char *got = read_reply(f, fds[CTL_ACCEPTS_PER_WAKEUP], 0, true, NULL);
	assert_non_null(strstr(got, "too many clients connected (64)"));
	free(got);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i]);
}

/* Who may connect when many are: operators (the control group) cannot
 * take the slots kept for root, nor more than their share per uid; root
 * and soakd's own user can; peers without the right to change state have
 * theirs. */
static void test_admission(void **state)
{
	(void)state;
	const uid_t self = 999;
	struct ctl_peer operator = { .uid = 1000, .in_group = true, .privileged = true };
	struct ctl_peer root = { .uid = 0, .privileged = true };
	struct ctl_peer own = { .uid = self, .privileged = true };
	struct ctl_peer nobody = { .uid = 65534 };
	char busy[128];

	/* One operator's 56 connections: the slots kept for root are left. */
	struct ctl_clients_count n = { .all = 56, .not_root = 56, .of_uid = 15 };
	ctl_admit(&n, &operator, self, busy, sizeof(busy));
	assert_string_equal(busy, "too many clients connected (56; the last 8 are kept for root)");
	ctl_admit(&n, &root, self, busy, sizeof(busy));
	assert_string_equal(busy, "");
	ctl_admit(&n, &own, self, busy, sizeof(busy));
	assert_string_equal(busy, "");
	n = (struct ctl_clients_count){ .all = 63, .not_root = 56 };
	ctl_admit(&n, &root, self, busy, sizeof(busy));
	assert_string_equal(busy, "");
	n.all = 64;
	ctl_admit(&n, &root, self, busy, sizeof(busy));
	assert_string_equal(busy, "too many clients connected (64)");
	/* An operator's own share. */
	n = (struct ctl_clients_count){ .all = 20, .not_root = 20, .of_uid = 16 };
	ctl_admit(&n, &operator, self, busy, sizeof(busy));
	assert_string_equal(busy, "too many connections from uid 1000 (at most 16)");
	n.of_uid = 15;
	ctl_admit(&n, &operator, self, busy, sizeof(busy));
	assert_string_equal(busy, "");
	/* Peers without the right to change state, as before. */
	n = (struct ctl_clients_count){ .all = 20, .unprivileged = 10, .not_root = 20, .of_uid = 8 };
	ctl_admit(&n, &nobody, self, busy, sizeof(busy));
	assert_string_equal(busy, "too many connections from uid 65534 (at most 8)");
	n = (struct ctl_clients_count){ .all = 40, .unprivileged = 32, .not_root = 40 };
	ctl_admit(&n, &nobody, self, busy, sizeof(busy));
	assert_string_equal(busy, "too many clients connected (32 without the right to change state)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_request_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_answer_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queued_total_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accepts_per_turn, setup, teardown),
		cmocka_unit_test(test_admission),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
