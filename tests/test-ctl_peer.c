/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctl/ctl_peer.h"

static void test_status_groups(void **state)
{
	(void)state;
	const char *status = "Name:\tsoakctl\nUid:\t1000\t1000\t1000\t1000\n"
			     "Gid:\t100\t100\t100\t100\nGroups:\t4 24 27 998 \nNSpid:\t1\n";

	assert_int_equal(ctl_peer_status_has_group(status, 998), 1);
	assert_int_equal(ctl_peer_status_has_group(status, 4), 1);
	/* Not the Gid: line, nor a prefix of a listed group. */
	assert_int_equal(ctl_peer_status_has_group(status, 100), 0);
	assert_int_equal(ctl_peer_status_has_group(status, 99), 0);
	assert_int_equal(ctl_peer_status_has_group(status, 2), 0);
	/* No supplementary groups at all. */
	assert_int_equal(ctl_peer_status_has_group("Groups:\t\nUid:\t0\n", 0), 0);
	assert_int_equal(ctl_peer_status_has_group("Groups:\n", 5), 0);
	/* The line first, and the line last without a newline. */
	assert_int_equal(ctl_peer_status_has_group("Groups:\t7\n", 7), 1);
	assert_int_equal(ctl_peer_status_has_group("Uid:\t0\nGroups:\t7 8", 8), 1);
	/* No Groups: line, or garbage in it. */
	assert_int_equal(ctl_peer_status_has_group("Name:\tx\nXGroups:\t7\n", 7), -EINVAL);
	assert_int_equal(ctl_peer_status_has_group("", 7), -EINVAL);
	assert_int_equal(ctl_peer_status_has_group("Groups:\tabc\n", 7), -EINVAL);
}

static void test_may(void **state)
{
	(void)state;
	struct ctl_peer operator = { .uid = 1000, .in_group = true, .privileged = true };
	struct ctl_peer stranger = { .uid = 65534 };

	assert_true(ctl_peer_may(&operator, true, false));
	assert_true(ctl_peer_may(&operator, false, false));
	assert_true(ctl_peer_may(&stranger, false, true));
	assert_false(ctl_peer_may(&stranger, true, true));
	assert_false(ctl_peer_may(&stranger, false, false));
	assert_false(ctl_peer_may(&stranger, true, false));
}

static void test_group_lookup(void **state)
{
	(void)state;
	gid_t gid = 12345;

	assert_int_equal(ctl_group_lookup("root", &gid), 0);
	assert_int_equal(gid, 0);
	gid = 12345;
	assert_int_equal(ctl_group_lookup("soakd-no-such-group-for-tests", &gid), -ENOENT);
	assert_int_equal(gid, 12345);
}

/* A socketpair's peer is this process, as it was at socketpair(). */
static void test_peer_self(void **state)
{
	(void)state;
	int sv[2];
	struct ctl_peer p;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(ctl_peer_get(sv[0], CTL_NO_GROUP, 4242424, &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.uid, geteuid());
	assert_int_equal(p.gid, getegid());
	assert_false(p.in_group);
	assert_int_equal(p.privileged, geteuid() == 0);

	/* soakd's own user may do what soakd does. */
	assert_int_equal(ctl_peer_get(sv[0], CTL_NO_GROUP, geteuid(), &p), 0);
	assert_true(p.privileged);

	/* The primary group counts as membership. */
	assert_int_equal(ctl_peer_get(sv[0], getegid(), 4242424, &p), 0);
	assert_true(p.in_group);
	assert_true(p.privileged);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A peer that is not root and only a supplementary member of the group: a
 * child drops to nobody with supplementary groups {GROUP} and connects.
 * Needs root to set the child's credentials.
 */
#define TEST_GROUP ((gid_t)54321)
#define TEST_OTHER_GROUP ((gid_t)54322)

static pid_t connect_as(const struct sockaddr_un *sa, uid_t uid, gid_t gid, const gid_t *groups,
			size_t n_groups)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || setgroups(n_groups, groups) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0 ||
	    connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		_exit(1);
	char byte;
	/* Until the parent has looked at us. */
	(void)!read(fd, &byte, 1);
	_exit(0);
}

static void peer_of_child(const gid_t *groups, size_t n_groups, gid_t group, struct ctl_peer *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), cfd, status;

	/* Abstract address: nothing on disk, no permissions to arrange. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "soakd-test-ctl-peer-%d", (int)getpid());
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid_t pid = connect_as(&sa, 65534, 65534, groups, n_groups);
	assert_true(pid > 0);
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(cfd >= 0);
	assert_int_equal(ctl_peer_get(cfd, group, 0, ret), 0);
	assert_int_equal(ret->pid, pid);
	close(cfd);
	close(lfd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_peer_supplementary_group(void **state)
{
	(void)state;
	const gid_t member[] = { TEST_OTHER_GROUP, TEST_GROUP };
	const gid_t other[] = { TEST_OTHER_GROUP };
	struct ctl_peer p;

	if (geteuid() != 0)
		skip();
	peer_of_child(member, 2, TEST_GROUP, &p);
	assert_int_equal(p.uid, 65534);
	assert_true(p.in_group);
	assert_true(p.privileged);

	peer_of_child(other, 1, TEST_GROUP, &p);
	assert_int_equal(p.uid, 65534);
	assert_false(p.in_group);
	assert_false(p.privileged);

	peer_of_child(NULL, 0, TEST_GROUP, &p);
	assert_false(p.in_group);
	assert_false(p.privileged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_groups),
		cmocka_unit_test(test_may),
		cmocka_unit_test(test_group_lookup),
		cmocka_unit_test(test_peer_self),
		cmocka_unit_test(test_peer_supplementary_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
