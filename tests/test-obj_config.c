// SPDX-License-Identifier: GPL-2.0-only
/* Object workload configuration: the issue's example, defaults, refusals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/obj_config.h"

#define SECRET "s3cr3t-value-never-printed"

static char creds_path[] = "/tmp/test-obj-config-XXXXXX";

static int setup(void **state)
{
	(void)state;
	int fd = mkstemp(creds_path);
	const char *text = "[default]\naws_access_key_id = AKID\naws_secret_access_key = " SECRET
			   "\n[other]\naws_access_key_id = B\naws_secret_access_key = C\n";
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(creds_path);
	return 0;
}

/* A config with one object workload whose members are `members`. */
static int load(const char *members, struct run_config **ret, char **ret_errors)
{
	char *text = NULL, *errors = NULL;
	size_t len = 0;
	assert_true(asprintf(&text, "{\"run\": {\"name\": \"t\"}, \"workloads\": [{\"name\": \"o\", "
				    "\"type\": \"object\", %s}]}", members) > 0);
	FILE *f = open_memstream(&errors, &len);
	int r = config_load_string(text, "t.json", f, ret);
	fclose(f);
	free(text);
	*ret_errors = errors;
	return r;
}

static void expect_error(const char *members, const char *needle)
{
	struct run_config *c = NULL;
	char *errors = NULL;
	int r = load(members, &c, &errors);
	if (r == 0 || !strstr(errors, needle))
		fail_msg("expected an error with '%s', got r=%d: %s", needle, r, errors);
	if (strstr(errors, SECRET))
		fail_msg("the secret is in the errors: %s", errors);
	free(errors);
}

/* A prefix that escapes past what a URL may take, with a long endpoint:
 * refused at the start, not every request failed as it is set up. */
static void test_url_room(void **state)
{
	char members[4096], prefix[600] = "", endpoint[1100];
	(void)state;
	for (int i = 0; i < 170; i++)
		strcat(prefix, "\u00e9");   /* é: 2 bytes, 6 escaped */
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:9/%0900d", 0);
	snprintf(members, sizeof(members), "\"protocol\": \"http\", \"endpoint\": \"%s\", "
		 "\"prefix\": \"%s/\", \"rate\": 0", endpoint, prefix);
	expect_error(members, "a request's URL would take up to");
	/* The same prefix with a short endpoint fits. */
	snprintf(members, sizeof(members), "\"protocol\": \"http\", \"endpoint\": "
		 "\"http://127.0.0.1:9/x\", \"prefix\": \"%s/\", \"rate\": 0, \"mix\": {\"put\": 100}", prefix);
	struct run_config *c = NULL;
	char *errors = NULL;
	if (load(members, &c, &errors) < 0)
		fail_msg("a prefix that fits was refused: %s", errors);
	config_free(c);
	free(errors);
}

static void test_issue_example(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL, members[2048];
	snprintf(members, sizeof(members),
		 "\"protocol\": \"s3\", \"endpoint\": \"http://127.0.0.1:9000/\", "
		 "\"region\": \"us-east-1\", \"bucket\": \"soak\", \"create_bucket\": true, "
		 "\"credentials\": {\"file\": \"%s\", \"profile\": \"default\"}, "
		 "\"concurrency\": 16, \"rate\": 500, \"objects\": 200, "
		 "\"mix\": {\"get\": 70, \"put\": 20, \"stat\": 10, \"delete\": 0, \"list\": 0}, "
		 "\"size\": {\"dist\": \"log2\", \"max\": \"1MiB\"}, \"verify\": true, "
		 "\"cleanup\": true, \"schedule\": [{\"scale\": 1, \"for\": \"1h\"}]", creds_path);
	int r = load(members, &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	const struct workload_config *w = &c->workloads[0];
	const struct object_config *o = w->object;
	assert_int_equal(w->type, WORKLOAD_OBJECT);
	assert_int_equal(o->protocol, OBJ_PROTO_S3);
	assert_string_equal(o->endpoint, "http://127.0.0.1:9000"); /* trailing '/' dropped */
	assert_string_equal(o->bucket, "soak");
	assert_true(o->create_bucket);
	assert_false(o->virtual_host);
	assert_int_equal(o->creds_source, OBJ_CREDS_FILE);
	assert_string_equal(o->creds_file, creds_path);
	assert_int_equal(o->concurrency, 16);
	assert_int_equal(o->threads, 1);
	assert_int_equal(o->objects, 200);
	assert_int_equal(o->mix[OBJ_OP_GET], 70);
	assert_int_equal(o->mix_total, 100);
	assert_int_equal(o->size.dist, OBJ_SIZE_LOG2);
	assert_int_equal(o->size.max, 1 << 20);
	assert_int_equal(o->size.min, 4096);
	assert_true(o->verify && o->cleanup);
	assert_int_equal(w->rate, 500);
	/* Lag alone does not stop an object workload unless asked. */
	assert_int_equal(w->max_lag_ns, 0);
	assert_string_equal(o->prefix, "soakd-o/");

	/* The plan says where the secret is, never what it is. */
	char *plan = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&plan, &len);
	config_print_plan(c, f);
	fclose(f);
	assert_non_null(strstr(plan, creds_path));
	assert_null(strstr(plan, SECRET));
	assert_null(strstr(plan, "AKID"));
	free(plan);
	free(errors);
	config_free(c);
}

static void test_defaults_and_http(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;
	int r = load("\"protocol\": \"http\", \"endpoint\": \"http://127.0.0.1:8080/dav\", "
		     "\"mix\": {\"put\": 1, \"get\": 1}, \"threads\": 2, \"concurrency\": 5, "
		     "\"read_range\": \"random\", \"checksum\": \"md5\", \"names\": \"sequential\", "
		     "\"prefix\": \"a/b-\", \"prefixes\": 8, \"size\": {\"dist\": \"exponential\", "
		     "\"mean\": \"64KiB\"}",
		     &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	const struct object_config *o = c->workloads[0].object;
	assert_int_equal(o->protocol, OBJ_PROTO_HTTP);
	assert_int_equal(o->threads, 2);
	assert_int_equal(o->objects, 1000);
	assert_int_equal(o->range, OBJ_RANGE_RANDOM);
	assert_int_equal(o->checksum, OBJ_CHECKSUM_MD5);
	assert_int_equal(o->naming, OBJ_NAMES_SEQUENTIAL);
	assert_string_equal(o->prefix, "a/b-");
	assert_int_equal(o->prefixes, 8);
	assert_int_equal(o->size.mean, 65536);
	assert_string_equal(o->labels[0], "http://127.0.0.1:8080/dav#0");
	assert_string_equal(o->labels[1], "http://127.0.0.1:8080/dav#1");
	assert_int_equal(o->audit, OBJ_AUDIT_ON_RESUME);
	free(errors);
	config_free(c);
}

/* "audit": when the ledger's objects are read once (issue 17). */
static void test_audit(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;
	int r = load("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": \"interval:6h\"", &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	assert_int_equal(c->workloads[0].object->audit, OBJ_AUDIT_INTERVAL);
	assert_int_equal(c->workloads[0].object->audit_interval_ns, UINT64_C(6) * 3600 * 1000000000);
	free(errors);
	config_free(c);
	r = load("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		 "\"audit\": \"off\"", &c, &errors);
	assert_int_equal(r, 0);
	assert_int_equal(c->workloads[0].object->audit, OBJ_AUDIT_OFF);
	free(errors);
	config_free(c);
	/* Where the problem is: file, line and column of the value. */
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": \"daily\"", "t.json:1:");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": \"daily\"", "\"audit\" must be \"on_resume\", \"interval:DURATION\"");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": \"interval:soon\"", "\"audit\": \"interval:soon\":");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": \"interval:100ms\"", "at least 1s");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"audit\": true", "\"audit\"");
}

/* An s3 workload's members with the test's credentials, then extra. */
static char *s3_members(const char *extra)
{
	char *m = NULL;
	assert_true(asprintf(&m, "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", "
				 "\"bucket\": \"bkt\", \"mix\": {\"get\": 1}, "
				 "\"credentials\": {\"file\": \"%s\"}, %s", creds_path, extra) > 0);
	return m;
}

static void expect_s3_error(const char *extra, const char *needle)
{
	char *m = s3_members(extra);
	expect_error(m, needle);
	free(m);
}

/* Section 2 of issue 17: buckets, SSE-S3, multipart. */
static void test_s3_extras(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;
	char *m = s3_members("\"buckets\": 8, \"sse\": \"s3\", \"multipart_threshold\": "
			     "\"64MiB\", \"multipart_part_size\": \"16MiB\"");
	int r = load(m, &c, &errors);
	free(m);
	if (r != 0)
		fail_msg("%s", errors);
	const struct object_config *o = c->workloads[0].object;
	assert_int_equal(o->buckets, 8);
	assert_true(o->sse_s3);
	assert_int_equal(o->multipart_threshold, UINT64_C(64) << 20);
	assert_int_equal(o->multipart_part_size, UINT64_C(16) << 20);
	free(errors);
	config_free(c);
	expect_s3_error("\"sse\": \"kms\"", "\"sse\" must be \"s3\"");
	expect_s3_error("\"buckets\": 0", "buckets");
	expect_s3_error("\"buckets\": 1001", "buckets");
	expect_s3_error("\"multipart_part_size\": \"1MiB\"", "at least 5MiB");
	char *m2 = NULL;
	assert_true(asprintf(&m2, "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", "
				  "\"bucket\": \"b234567890123456789012345678901234567890"
				  "12345678901234567890\", "
				  "\"mix\": {\"get\": 1}, \"credentials\": {\"file\": \"%s\"}, "
				  "\"buckets\": 2", creds_path) > 0);
	expect_error(m2, "at most 59 characters");
	free(m2);
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"sse\": \"s3\"", "\"sse\" is for \"protocol\": \"s3\"");
}

/* A verified object holds its 16-byte header: a smaller fixed size is
 * refused, a distribution's draws start at 16 bytes, and without "verify"
 * any size goes. */
static void test_verified_sizes(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;

	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"size\": \"8\"", "verified objects are at least 16 bytes");
	int r = load("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"size\": {\"dist\": \"uniform\", \"max\": \"1KiB\"}", &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	assert_int_equal(c->workloads[0].object->size.min, 16);
	free(errors);
	config_free(c);
	r = load("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		 "\"size\": \"8\", \"verify\": false", &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	assert_int_equal(c->workloads[0].object->size.max, 8);
	free(errors);
	config_free(c);
}

static void test_refusals(void **state)
{
	(void)state;
	char creds[512];
	snprintf(creds, sizeof(creds), "\"credentials\": {\"file\": \"%s\"}", creds_path);
	char base[1024];
	snprintf(base, sizeof(base), "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", "
		 "\"bucket\": \"bkt\", %s", creds);
	char m[2048];

	expect_error("\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", \"bucket\": \"bkt\", "
		     "\"mix\": {\"get\": 1}", "needs \"credentials\"");
	snprintf(m, sizeof(m), "%s, \"mix\": {\"get\": 1}, \"secret_key\": \"" SECRET "\"", base);
	expect_error(m, "secrets are never read from the configuration");
	snprintf(m, sizeof(m), "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", \"bucket\": "
		 "\"bkt\", \"mix\": {\"get\": 1}, \"credentials\": {\"file\": \"%s\", "
		 "\"aws_secret_access_key\": \"" SECRET "\"}", creds_path);
	expect_error(m, "secrets are never read");
	snprintf(m, sizeof(m), "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", \"bucket\": "
		 "\"bkt\", \"mix\": {\"get\": 1}, \"credentials\": {\"file\": \"%s\", "
		 "\"profile\": \"prod\"}", creds_path);
	expect_error(m, "no profile \"prod\" (it has: default, other)");
	expect_error("\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", \"bucket\": \"bkt\", "
		     "\"mix\": {\"get\": 1}, \"credentials\": {\"file\": \"/nonexistent/creds\"}",
		     "cannot open credentials file /nonexistent/creds");
	snprintf(m, sizeof(m), "%s, \"mix\": {\"get\": 1, \"delete\": 2, \"put\": 1}", base);
	expect_error(m, "\"delete\" (2) outweighs \"put\" (1)");
	snprintf(m, sizeof(m), "%s, \"mix\": {\"get\": 0}", base);
	expect_error(m, "at least one op");
	snprintf(m, sizeof(m), "%s, \"mix\": {\"read\": 1}", base);
	expect_error(m, "unknown key \"read\"");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h:1\", \"mix\": {\"list\": 1}",
		     "\"list\" needs \"protocol\": \"s3\"");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h:1\", \"bucket\": \"b\", "
		     "\"mix\": {\"get\": 1}", "\"bucket\" is for \"protocol\": \"s3\"");
	expect_error("\"protocol\": \"s3\", \"endpoint\": \"http://127.0.0.1:1\", \"bucket\": \"bkt\","
		     " \"mix\": {\"get\": 1}, \"addressing\": \"virtual-host\"", "needs a host name");
	expect_error("\"protocol\": \"ftp\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}",
		     "\"protocol\" must be \"s3\" or \"http\"");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"ftp://h\", \"mix\": {\"get\": 1}",
		     "http:// or https://");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://user:pw@h\", \"mix\": {\"get\": 1}",
		     "must not hold credentials");
	snprintf(m, sizeof(m), "\"protocol\": \"s3\", \"endpoint\": \"http://h:1\", \"bucket\": "
		 "\"Bad_Bucket\", \"mix\": {\"get\": 1}, %s", creds);
	expect_error(m, "bucket name \"Bad_Bucket\"");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"threads\": 4, \"concurrency\": 2", "\"threads\" (4) is more than");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"size\": {\"dist\": \"uniform\", \"min\": 10, \"max\": 5}", "larger than");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"size\": {\"dist\": \"zipf\", \"max\": 5}", "\"dist\" must be");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"read_range\": \"random\", \"read_offset\": 10", "exclude each other");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"checksum\": \"crc32c\"", "\"crc32c\" (x-amz-checksum-crc32c) needs");
	expect_error("\"protocol\": \"http\", \"endpoint\": \"http://h\", \"mix\": {\"get\": 1}, "
		     "\"ca_file\": \"/etc/hostname\"", "TLS settings need an https://");
}

/* "endpoints": a pool; the first is also "endpoint"; trailing '/' dropped. */
static void test_endpoints(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;
	int r = load("\"protocol\": \"http\", \"mix\": {\"get\": 1}, \"endpoints\": "
		     "[\"http://a:1/p/\", \"http://[::1]:2/p\", \"http://b/p\"]", &c, &errors);
	if (r != 0)
		fail_msg("%s", errors);
	const struct object_config *o = c->workloads[0].object;
	assert_int_equal(o->n_endpoints, 3);
	assert_string_equal(o->endpoint, "http://a:1/p");
	assert_string_equal(o->endpoints[0], "http://a:1/p");
	assert_string_equal(o->endpoints[1], "http://[::1]:2/p");
	assert_string_equal(o->endpoints[2], "http://b/p");
	free(errors);
	config_free(c);

	const char *http = "\"protocol\": \"http\", \"mix\": {\"get\": 1}, ";
	char m[512];
	snprintf(m, sizeof(m), "%s\"endpoint\": \"http://a\", \"endpoints\": [\"http://b\"]", http);
	expect_error(m, "\"endpoint\" and \"endpoints\" are exclusive");
	snprintf(m, sizeof(m), "%s\"connect_to\": \"c\", \"endpoints\": [\"http://b\"]", http);
	expect_error(m, "\"endpoints\" and \"connect_to\" are exclusive");
	snprintf(m, sizeof(m), "%s\"endpoints\": []", http);
	expect_error(m, "must be a list of URLs");
	snprintf(m, sizeof(m), "%s\"endpoints\": \"http://a\"", http);
	expect_error(m, "must be a list of URLs");
	snprintf(m, sizeof(m), "%s\"endpoints\": [\"http://a\", \"https://b\"]", http);
	expect_error(m, "in more than host and port");
	snprintf(m, sizeof(m), "%s\"endpoints\": [\"http://a/x\", \"http://b/y\"]", http);
	expect_error(m, "in more than host and port");
	snprintf(m, sizeof(m), "%s\"endpoints\": [\"http://a\", \"http://a/\"]", http);
	expect_error(m, "listed twice");
	snprintf(m, sizeof(m), "%s\"endpoints\": [\"http://a\", \"http://u:p@b\"]", http);
	expect_error(m, "must not hold credentials");
	snprintf(m, sizeof(m), "%s\"endpoints\": [\"http://a\", 7]", http);
	expect_error(m, "must be a URL string");
	char big[1200] = "";
	strcat(big, http);
	strcat(big, "\"endpoints\": [");
	for (int i = 0; i <= OBJ_MAX_ENDPOINTS; i++)
		sprintf(big + strlen(big), "%s\"http://h%d\"", i ? ", " : "", i);
	strcat(big, "]");
	expect_error(big, "at most 16 are allowed");
	/* Without either, the message still names the single key. */
	snprintf(m, sizeof(m), "\"protocol\": \"http\", \"mix\": {\"get\": 1}");
	expect_error(m, "needs \"endpoint\"");
}

#define SYSTEMD_MEMBERS                                                                   \
	"\"protocol\": \"s3\", \"endpoint\": \"https://h\", \"bucket\": \"bkt\", "              \
	"\"mix\": {\"get\": 1}, \"credentials\": {\"systemd\": \"%s\"}"

static void test_systemd_credential(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors = NULL;
	char text[512];

	/* Outside the service it cannot be checked: accepted. */
	unsetenv("CREDENTIALS_DIRECTORY");
	snprintf(text, sizeof(text), SYSTEMD_MEMBERS, "s3");
	assert_int_equal(load(text, &c, &errors), 0);
	assert_int_equal(c->workloads[0].object->creds_source, OBJ_CREDS_SYSTEMD);
	config_free(c);
	free(errors);
	/* Under it, it is. */
	setenv("CREDENTIALS_DIRECTORY", "/tmp", 1);
	snprintf(text, sizeof(text), SYSTEMD_MEMBERS, strrchr(creds_path, '/') + 1);
	assert_int_equal(load(text, &c, &errors), 0);
	config_free(c);
	free(errors);
	snprintf(text, sizeof(text), SYSTEMD_MEMBERS, "absent-credential");
	expect_error(text, "cannot open credentials file /tmp/absent-credential");
	snprintf(text, sizeof(text), SYSTEMD_MEMBERS, "../etc/passwd");
	expect_error(text, "systemd credential name");
	unsetenv("CREDENTIALS_DIRECTORY");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_s3_extras),
		cmocka_unit_test(test_issue_example),
		cmocka_unit_test(test_defaults_and_http),
		cmocka_unit_test(test_url_room),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_verified_sizes),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_systemd_credential),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
