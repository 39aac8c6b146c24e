// SPDX-License-Identifier: GPL-2.0-only
/* Safe resolution of target paths, over a scratch tree: the walk, symlinks
 * relative and absolute, "..", loops, and the unsafe-path rules. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/device/dev_path.h"

#define NOBODY 65534

static char root[PATH_MAX];

static const char *at(const char *rel)
{
	static char paths[4][PATH_MAX * 2];
	static unsigned next;
	char *p = paths[next++ % 4];
	snprintf(p, PATH_MAX * 2, "%s/%s", root, rel);
	return p;
}

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/test-dev_path.XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(root, sizeof(root), "%s", tmpl);
	if (mkdir(at("d"), 0755) < 0 || mkdir(at("d/sub"), 0755) < 0 ||
	    mkdir(at("open"), 0777) < 0 || chmod(at("open"), 0777) < 0 ||
	    mkdir(at("sticky"), 01777) < 0 || chmod(at("sticky"), 01777) < 0 ||
	    mkdir(at("sticky/mine"), 0700) < 0)
		return -1;
	int fd = open(at("d/file"), O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	if (symlink("file", at("d/rel")) < 0 || symlink(at("d/file"), at("d/abs")) < 0 ||
	    symlink("sub/../file", at("d/dotdot")) < 0 || symlink("loop2", at("d/loop1")) < 0 ||
	    symlink("loop1", at("d/loop2")) < 0 || symlink("../d/file", at("open/link")) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Resolves rel under root; the return value, with p closed unless kept. */
static int resolve(const char *rel, bool allow, struct dev_path *p, char *err)
{
	return dev_path_resolve(at(rel), allow, p, err, 1024);
}

static void assert_same_file(const struct dev_path *p, const char *rel)
{
	struct stat st;
	assert_int_equal(stat(at(rel), &st), 0);
	assert_true(p->fd >= 0);
	assert_int_equal(p->st.st_ino, st.st_ino);
	assert_int_equal(p->st.st_dev, st.st_dev);
}

static void test_plain_and_symlinks(void **state)
{
	(void)state;
	const char *names[] = { "d/file", "d/rel", "d/abs", "d/dotdot", "d/sub/../file",
				"d/./file", "d//file" };
	char err[1024];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct dev_path p;
		assert_int_equal(resolve(names[i], false, &p, err), 0);
		assert_same_file(&p, "d/file");
		assert_string_equal(p.name, "file");
		dev_path_close(&p);
	}
}

static void test_missing(void **state)
{
	(void)state;
	struct dev_path p;
	char err[1024];

	/* The last component: where it would be created. */
	assert_int_equal(resolve("d/new", false, &p, err), 0);
	assert_int_equal(p.fd, -1);
	assert_true(p.dir_fd >= 0);
	assert_string_equal(p.name, "new");
	int fd = dev_path_create(&p, O_RDWR);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(stat(at("d/new"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* O_EXCL: a second creation at the same name fails. */
	assert_int_equal(dev_path_create(&p, O_RDWR), -EEXIST);
	dev_path_remove_created(&p, fd);
	assert_int_equal(access(at("d/new"), F_OK), -1);
	close(fd);
	dev_path_close(&p);

	/* A missing directory on the way is an error. */
	assert_int_equal(resolve("nowhere/x", false, &p, err), -ENOENT);
	assert_non_null(strstr(err, "cannot access"));
	/* A file on the way is not a directory. */
	assert_int_equal(resolve("d/file/x", false, &p, err), -ENOTDIR);
	assert_int_equal(resolve("d/sub", false, &p, err), 0);
	assert_true(S_ISDIR(p.st.st_mode));
	dev_path_close(&p);
	assert_int_equal(dev_path_resolve("relative", false, &p, err, sizeof(err)), -EINVAL);
}

static void test_loop(void **state)
{
	(void)state;
	struct dev_path p;
	char err[1024];

	assert_int_equal(resolve("d/loop1", false, &p, err), -ELOOP);
	assert_non_null(strstr(err, "too many symlinks"));
}

static void test_unsafe_directories(void **state)
{
	(void)state;
	struct dev_path p;
	char err[1024];

	/* A world-writable directory on the way: anyone may swap the entry. */
	assert_int_equal(resolve("open/link", false, &p, err), -EPERM);
	assert_non_null(strstr(err, "a directory other users may write to"));
	assert_non_null(strstr(err, "allow_unsafe_path"));
	assert_int_equal(resolve("open/link", true, &p, err), 0);
	assert_same_file(&p, "d/file");
	dev_path_close(&p);

	/* Creating in a sticky, world-writable directory: refused. */
	assert_int_equal(resolve("sticky/new", false, &p, err), -EPERM);
	assert_non_null(strstr(err, "it would be created in"));
	/* A private directory inside it is ours: nobody can swap it. */
	assert_int_equal(resolve("sticky/mine/new", false, &p, err), 0);
	assert_int_equal(p.fd, -1);
	dev_path_close(&p);
}

static void test_other_users(void **state)
{
	(void)state;
	struct dev_path p;
	char err[1024];

	if (geteuid() != 0)
		skip();
	/* Another user's symlink in our own directory. */
	assert_int_equal(symlink("file", at("d/theirs")), 0);
	assert_int_equal(lchown(at("d/theirs"), NOBODY, NOBODY), 0);
	assert_int_equal(resolve("d/theirs", false, &p, err), -EPERM);
	assert_non_null(strstr(err, "is a symlink owned by uid 65534"));
	assert_int_equal(resolve("d/theirs", true, &p, err), 0);
	dev_path_close(&p);

	/* Another user's directory on the way. */
	assert_int_equal(mkdir(at("d/home"), 0755), 0);
	assert_int_equal(chown(at("d/home"), NOBODY, NOBODY), 0);
	assert_int_equal(resolve("d/home/x", false, &p, err), -EPERM);
	assert_non_null(strstr(err, "a directory owned by another user"));

	/* A sticky directory's entry owned by another user. */
	assert_int_equal(mkdir(at("sticky/theirs"), 0755), 0);
	assert_int_equal(chown(at("sticky/theirs"), NOBODY, NOBODY), 0);
	assert_int_equal(resolve("sticky/theirs/x", false, &p, err), -EPERM);

	/* Another user's file. */
	int fd = open(at("d/theirs.dat"), O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chown(at("d/theirs.dat"), NOBODY, NOBODY), 0);
	assert_int_equal(resolve("d/theirs.dat", false, &p, err), -EPERM);
	assert_non_null(strstr(err, "is a file owned by uid 65534"));
}

static void test_reopen(void **state)
{
	(void)state;
	struct dev_path p;
	char err[1024];

	assert_int_equal(resolve("d/rel", false, &p, err), 0);
	int fd = dev_path_reopen(&p, O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, p.st.st_ino);
	close(fd);
	dev_path_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_symlinks),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_unsafe_directories),
		cmocka_unit_test(test_other_users),
		cmocka_unit_test(test_reopen),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
