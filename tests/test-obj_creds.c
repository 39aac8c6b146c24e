// SPDX-License-Identifier: GPL-2.0-only
/* The AWS shared-credentials format, and that secrets never reach messages. */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/object/obj_creds.h"

#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

/* Every free() of the daemon's code and this test's comes here
 * (-Wl,--wrap=free, tests/meson.build): while watching, a block freed
 * with the secret still in it is counted. */
void __real_free(void *p);
void __wrap_free(void *p);
static bool watching;
static unsigned secret_freed;

void __wrap_free(void *p)
{
	if (watching && p && memmem(p, malloc_usable_size(p), SECRET, strlen(SECRET)))
		secret_freed++;
	__real_free(p);
}

static int parse(const char *text, const char *profile, struct obj_creds *c, char *err)
{
	return obj_creds_parse(text, strlen(text), profile, "creds", c, err, 512);
}

static void test_profiles(void **state)
{
	(void)state;
	struct obj_creds c = { 0 };
	char err[512] = "";
	const char *text = "# a comment\n"
			   "[default]\n"
			   "aws_access_key_id = AKIDEFAULT\n"
			   "aws_secret_access_key=" SECRET "\n"
			   "region = us-east-1\n"
			   "\n"
			   "; another comment\n"
			   "[profile soak]\r\n"
			   "  aws_access_key_id\t=  AKISOAK  \r\n"
			   "aws_secret_access_key = soaksecret\r\n"
			   "aws_session_token = tok3n\r\n";

	assert_int_equal(parse(text, "default", &c, err), 0);
	assert_string_equal(c.access_key, "AKIDEFAULT");
	assert_string_equal(c.secret_key, SECRET);
	assert_null(c.session_token);
	obj_creds_clear(&c);
	assert_null(c.access_key);

	/* The AWS config file's "[profile NAME]" spelling, CRLF lines. */
	assert_int_equal(parse(text, "soak", &c, err), 0);
	assert_string_equal(c.access_key, "AKISOAK");
	assert_string_equal(c.secret_key, "soaksecret");
	assert_string_equal(c.session_token, "tok3n");
	obj_creds_clear(&c);
}

static void expect_refused(const char *text, const char *profile, const char *needle)
{
	struct obj_creds c = { 0 };
	char err[512] = "";
	if (parse(text, profile, &c, err) != -EINVAL || !strstr(err, needle))
		fail_msg("expected an error with '%s', got '%s'", needle, err);
	/* Whatever went wrong, the message never shows the secret. */
	if (strstr(err, SECRET) || strstr(err, "wJalr"))
		fail_msg("the secret is in the message: %s", err);
	assert_null(c.access_key);
	assert_null(c.secret_key);
}

static void test_refused(void **state)
{
	(void)state;
	expect_refused("[default]\naws_access_key_id = A\naws_secret_access_key = " SECRET "\n",
		       "prod", "no profile \"prod\" (it has: default)");
	expect_refused("[default]\naws_access_key_id = A\n", "default", "aws_secret_access_key");
	expect_refused("[default]\naws_secret_access_key = " SECRET "\n", "default",
		       "aws_access_key_id");
	/* A line that is neither: located, never echoed. */
	expect_refused("[default]\n" SECRET "\n", "default", "creds:2:");
	expect_refused("[default\n", "default", "creds:1:");
	/* Values go into headers: no spaces or control characters. */
	expect_refused("[default]\naws_access_key_id = A B\naws_secret_access_key = " SECRET "\n",
		       "default", "aws_access_key_id must be");
	expect_refused("[default]\naws_access_key_id = A:B\naws_secret_access_key = x\n", "default",
		       "must not contain ':'");
	expect_refused("", "default", "no profile");
}

static void test_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test-obj-creds-XXXXXX", err[512] = "";
	struct obj_creds c = { 0 };
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "[default]\naws_access_key_id=AK\naws_secret_access_key=" SECRET "\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(obj_creds_load(path, "default", &c, err, sizeof(err)), 0);
	assert_string_equal(c.secret_key, SECRET);
	obj_creds_clear(&c);
	unlink(path);

	/* Missing: the message names the file. */
	assert_int_equal(obj_creds_load(path, "default", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	/* Not a regular file. */
	assert_int_equal(obj_creds_load("/tmp", "default", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/tmp is a directory"));
	/* A FIFO with no writer: refused at once, not waited on forever. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(obj_creds_load(path, "default", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "is a FIFO"));
	unlink(path);
}

static void test_systemd(void **state)
{
	(void)state;
	char path[256], err[512];
	unsetenv("CREDENTIALS_DIRECTORY");
	assert_int_equal(obj_creds_systemd_path("s3", path, sizeof(path), err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "LoadCredential=s3:"));
	setenv("CREDENTIALS_DIRECTORY", "/run/credentials/soakd.service", 1);
	assert_int_equal(obj_creds_systemd_path("s3", path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "/run/credentials/soakd.service/s3");
	unsetenv("CREDENTIALS_DIRECTORY");
}

/* The secret is wiped from every block that held it before the block is
 * freed: the file's text, the parsed values, the structure's strings. */
static void test_wiped_when_freed(void **state)
{
	(void)state;
	char path[] = "/tmp/test-obj-creds-XXXXXX", err[512] = "";
	struct obj_creds c = { 0 };
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "[other]\naws_access_key_id=X\naws_secret_access_key=" SECRET "\n"
			   "[default]\naws_access_key_id=AK\naws_secret_access_key=" SECRET "\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);

	secret_freed = 0;
	watching = true;
	assert_int_equal(obj_creds_load(path, "default", &c, err, sizeof(err)), 0);
	assert_string_equal(c.secret_key, SECRET);
	obj_creds_clear(&c);
	assert_null(c.secret_key);
	/* A second value for a key replaces the first, which is wiped. */
	assert_int_equal(parse("[default]\naws_access_key_id=AK\naws_secret_access_key=" SECRET
			       "\naws_secret_access_key=" SECRET "\n", "default", &c, err), 0);
	obj_creds_clear(&c);
	watching = false;
	unlink(path);
	assert_int_equal(secret_freed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_systemd),
		cmocka_unit_test(test_wiped_when_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
