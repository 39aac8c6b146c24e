/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto.h"

static char err[256];

static int parse(const char *line, struct proto_request *req)
{
	memset(req, 0, sizeof(*req));
	err[0] = '\0';
	return proto_parse_request(line, strlen(line), req, err, sizeof(err));
}

/* Rejected, with an error message containing want; ret left untouched. */
static void assert_rejected_len(const char *line, size_t len, const char *want)
{
	struct proto_request req;

	memset(&req, 0x5a, sizeof(req));
	err[0] = '\0';
	assert_int_equal(proto_parse_request(line, len, &req, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_int_equal(((unsigned char *)&req)[0], 0x5a);
	assert_int_equal(((unsigned char *)&req)[sizeof(req) - 1], 0x5a);
}

static void assert_rejected(const char *line, const char *want)
{
	assert_rejected_len(line, strlen(line), want);
}

static void test_commands(void **state __attribute__((unused)))
{
	struct proto_request req;

	assert_int_equal(parse("{\"cmd\":\"status\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_STATUS);
	assert_int_equal(req.n_names, 0);
	assert_false(proto_cmd_changes_state(&req));

	assert_int_equal(parse("{\"cmd\":\"report\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_REPORT);

	/* reload re-reads the file soakd was started with: no arguments,
	 * and only for peers that may change state. */
	assert_int_equal(parse("{\"cmd\":\"reload\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_RELOAD);
	assert_true(proto_cmd_changes_state(&req));
	assert_rejected("{\"cmd\":\"reload\",\"file\":\"/etc/passwd\"}",
			"unknown key \"file\" for command 'reload' (it takes no arguments)");

	assert_int_equal(parse("{\"cmd\":\"debug\",\"stall\":\"1m30s\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_DEBUG);
	assert_true(req.stall_ns == UINT64_C(90) * 1000000000);
	assert_true(proto_cmd_changes_state(&req));
	assert_rejected("{\"cmd\":\"debug\"}", "debug takes \"stall\"");
	assert_rejected("{\"cmd\":\"debug\",\"stall\":5}", "\"stall\" must be a duration");

	assert_int_equal(parse(" { \"cmd\" : \"start\" } \r", &req), 0);
	assert_int_equal(req.cmd, PROTO_START);
	assert_int_equal(req.n_names, 0);
	assert_true(proto_cmd_changes_state(&req));

	assert_int_equal(parse("{\"cmd\":\"stop\",\"workloads\":[]}", &req), 0);
	assert_int_equal(req.cmd, PROTO_STOP);
	assert_int_equal(req.n_names, 0);

	assert_int_equal(parse("{\"workloads\":[\"a\",\"rand-4k.x\"],\"cmd\":\"start\"}", &req), 0);
	assert_int_equal(req.n_names, 2);
	assert_string_equal(req.names[0], "a");
	assert_string_equal(req.names[1], "rand-4k.x");
	proto_request_done(&req);
	assert_int_equal(req.n_names, 0);
	proto_request_done(&req);
	proto_request_done(NULL);

	assert_int_equal(parse("{\"cmd\":\"dump\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_DUMP);
	assert_int_equal(req.format, PROTO_FORMAT_JSON);
	assert_int_equal(parse("{\"cmd\":\"dump\",\"format\":\"csv\"}", &req), 0);
	assert_int_equal(req.format, PROTO_FORMAT_CSV);
	assert_false(req.chunks);
	assert_int_equal(parse("{\"cmd\":\"dump\",\"format\":\"hdr\",\"chunks\":true}", &req), 0);
	assert_int_equal(req.format, PROTO_FORMAT_HDR);
	assert_true(req.chunks);
	assert_rejected("{\"cmd\":\"dump\",\"format\":\"csv\",\"chunks\":1}",
			"\"chunks\" must be true or false, not a number");
	assert_int_equal(parse("{\"cmd\":\"dump\",\"format\":\"json\"}", &req), 0);
	assert_int_equal(req.format, PROTO_FORMAT_JSON);

	assert_int_equal(parse("{\"cmd\":\"trace\"}", &req), 0);
	assert_int_equal(req.cmd, PROTO_TRACE);
	assert_int_equal(req.trace_state, PROTO_TRACE_QUERY);
	assert_false(proto_cmd_changes_state(&req));
	assert_int_equal(parse("{\"cmd\":\"trace\",\"state\":\"on\",\"probes\":[\"tcp\",\"blk\"]}", &req), 0);
	assert_int_equal(req.trace_state, PROTO_TRACE_ON);
	assert_true(proto_cmd_changes_state(&req));
	assert_int_equal(req.n_names, 2);
	assert_string_equal(req.names[0], "tcp");
	assert_string_equal(req.names[1], "blk");
	proto_request_done(&req);
	assert_int_equal(parse("{\"cmd\":\"trace\",\"state\":\"off\"}", &req), 0);
	assert_int_equal(req.trace_state, PROTO_TRACE_OFF);
	assert_int_equal(parse("{\"cmd\":\"trace\",\"probes\":[\"blk\"]}", &req), 0);
	assert_int_equal(req.trace_state, PROTO_TRACE_QUERY);
	proto_request_done(&req);
}

static void test_cmd_names(void **state __attribute__((unused)))
{
	assert_string_equal(proto_cmd_name(PROTO_STATUS), "status");
	assert_string_equal(proto_cmd_name(PROTO_REPORT), "report");
	assert_string_equal(proto_cmd_name((enum proto_cmd)99), "unknown");
	assert_null(proto_request_new((enum proto_cmd)99));
}

static void test_reject_shape(void **state __attribute__((unused)))
{
	assert_rejected("", "empty request");
	assert_rejected_len(NULL, 0, "empty request");
	assert_rejected("[]", "must be a JSON object, not an array");
	assert_rejected("\"status\"", "must be a JSON object, not a string");
	assert_rejected("42", "must be a JSON object, not a number");
	assert_rejected("null", "must be a JSON object, not null");
	assert_rejected("{\"cmd\":\"status\"", "not valid JSON at column");
	assert_rejected("{\"cmd\":\"status\"} {}", "not valid JSON at column");
	assert_rejected("{\"cmd\":\"status\",}", "not valid JSON");
	assert_rejected("{cmd:\"status\"}", "not valid JSON at column 4: string or '}' expected near 'cmd'");
	assert_rejected("{\"cmd\":\"stop\",\"cmd\":\"start\"}", "duplicate");
	assert_rejected("\xff", "not valid JSON");
}

static void test_reject_cmd(void **state __attribute__((unused)))
{
	assert_rejected("{}", "request has no \"cmd\"");
	assert_rejected("{\"workloads\":[]}", "request has no \"cmd\"");
	assert_rejected("{\"cmd\":1}", "\"cmd\" must be a string, not a number");
	assert_rejected("{\"cmd\":null}", "\"cmd\" must be a string, not null");
	assert_rejected("{\"cmd\":[\"status\"]}", "\"cmd\" must be a string, not an array");
	assert_rejected("{\"cmd\":\"frob\"}",
			"unknown command 'frob' (expected status, start, stop, dump, trace, report, reload)");
	assert_rejected("{\"cmd\":\"STATUS\"}", "unknown command 'STATUS'");
	assert_rejected("{\"cmd\":\"\"}", "unknown command ''");
	/* Client text is echoed shortened and without control characters. */
	assert_rejected("{\"cmd\":\"a\\u001b[2Jb\"}", "unknown command 'a?[2Jb'");
	assert_rejected("{\"cmd\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
			"unknown command 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
}

static void test_reject_keys(void **state __attribute__((unused)))
{
	assert_rejected("{\"cmd\":\"status\",\"verbose\":true}",
			"unknown key \"verbose\" for command 'status' (it takes no arguments)");
	assert_rejected("{\"cmd\":\"report\",\"format\":\"csv\"}",
			"unknown key \"format\" for command 'report'");
	assert_rejected("{\"cmd\":\"start\",\"workload\":[\"a\"]}",
			"unknown key \"workload\" for command 'start' (expected workloads, new_run)");
	assert_rejected("{\"cmd\":\"dump\",\"workloads\":[]}",
			"unknown key \"workloads\" for command 'dump' (expected format, since, until, slice, workload, op, service, chunks)");
	assert_rejected("{\"cmd\":\"trace\",\"probe\":[\"blk\"]}",
			"unknown key \"probe\" for command 'trace' (expected state, probes)");
}

static void test_reject_types(void **state __attribute__((unused)))
{
	assert_rejected("{\"cmd\":\"start\",\"workloads\":\"a\"}",
			"\"workloads\" must be an array of strings, not a string");
	assert_rejected("{\"cmd\":\"stop\",\"workloads\":null}",
			"\"workloads\" must be an array of strings, not null");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\",2]}",
			"\"workloads\" must be an array of strings (element 2 is a number)");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[[\"a\"]]}", "element 1 is an array");
	assert_rejected("{\"cmd\":\"dump\",\"format\":\"xml\"}",
			"\"format\" must be \"json\", \"csv\" or \"hdr\", not 'xml'");
	assert_rejected("{\"cmd\":\"dump\",\"format\":true}",
			"\"format\" must be \"json\", \"csv\" or \"hdr\", not a boolean");
	assert_rejected("{\"cmd\":\"trace\",\"state\":\"maybe\"}",
			"\"state\" must be \"on\" or \"off\", not 'maybe'");
	assert_rejected("{\"cmd\":\"trace\",\"state\":1}", "\"state\" must be \"on\" or \"off\"");
	assert_rejected("{\"cmd\":\"trace\",\"probes\":{}}", "\"probes\" must be an array of strings");
	assert_rejected("{\"cmd\":\"trace\",\"state\":\"on\",\"probes\":[\"blk\",\"nfs\"]}",
			"unknown probe 'nfs' (expected blk, tcp)");
}

static void test_reject_names(void **state __attribute__((unused)))
{
	char line[4096], *p;
	struct proto_request req;
	int i;

	/* PROTO_MAX_NAMES names pass, one more does not. */
	p = line + sprintf(line, "{\"cmd\":\"start\",\"workloads\":[");
	for (i = 0; i < PROTO_MAX_NAMES; i++)
		p += sprintf(p, "%s\"w%d\"", i ? "," : "", i);
	strcpy(p, "]}");
	assert_int_equal(parse(line, &req), 0);
	assert_int_equal(req.n_names, PROTO_MAX_NAMES);
	assert_string_equal(req.names[PROTO_MAX_NAMES - 1], "w63");
	proto_request_done(&req);
	strcpy(p, ",\"one-more\"]}");
	assert_rejected(line, "too many workload names (65; at most 64)");

	/* 64 bytes pass, 65 do not. */
	sprintf(line, "{\"cmd\":\"stop\",\"workloads\":[\"%064d\"]}", 0);
	assert_int_equal(parse(line, &req), 0);
	assert_int_equal(strlen(req.names[0]), 64);
	proto_request_done(&req);
	sprintf(line, "{\"cmd\":\"stop\",\"workloads\":[\"%065d\"]}", 0);
	assert_rejected(line, "is longer than 64 bytes");

	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\",\"\"]}", "workload name 2 is empty");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\\nb\"]}",
			"workload name 'a?b' contains a control character");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\\u007f\"]}", "contains a control character");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\\u0085\"]}", "contains a control character");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"\\t\"]}", "contains a control character");
	/* Non-ASCII letters are fine. */
	assert_int_equal(parse("{\"cmd\":\"start\",\"workloads\":[\"d\xc3\xa9j\xc3\xa0\"]}", &req), 0);
	proto_request_done(&req);
}

static void test_reject_nul_and_size(void **state __attribute__((unused)))
{
	static const char with_nul[] = "{\"cmd\":\"status\"}\0{}";
	char *big;

	assert_rejected_len(with_nul, sizeof(with_nul) - 1, "NUL byte at offset 16");
	assert_rejected_len("{\"cmd\":\"st\0atus\"}", 17, "NUL byte at offset 10");
	assert_rejected("{\"cmd\":\"status\\u0000\"}", "not valid JSON");
	assert_rejected("{\"cmd\":\"start\",\"workloads\":[\"a\\u0000b\"]}", "not valid JSON");

	big = malloc(PROTO_MAX_LINE + 2);
	assert_non_null(big);
	memset(big, ' ', PROTO_MAX_LINE + 1);
	memcpy(big, "{\"cmd\":\"status\"}", 16);
	big[PROTO_MAX_LINE + 1] = '\0';
	assert_rejected_len(big, PROTO_MAX_LINE + 1, "longer than 65536 bytes");
	{
		/* Exactly at the limit is still read. */
		struct proto_request req;

		assert_int_equal(proto_parse_request(big, PROTO_MAX_LINE, &req, err, sizeof(err)), 0);
		assert_int_equal(req.cmd, PROTO_STATUS);
	}
	/* Deep nesting fails cleanly. */
	memset(big, '[', PROTO_MAX_LINE);
	assert_rejected_len(big, PROTO_MAX_LINE, "not valid JSON");
	free(big);
}

static void test_small_error_buffer(void **state __attribute__((unused)))
{
	struct proto_request req;
	char small[8];

	memset(small, 'x', sizeof(small));
	assert_int_equal(proto_parse_request("{\"cmd\":\"frob\"}", 14, &req, small, sizeof(small)),
			 -EINVAL);
	assert_string_equal(small, "unknown");
	assert_int_equal(proto_parse_request("{\"cmd\":\"frob\"}", 14, &req, NULL, 0), -EINVAL);
}

static void test_round_trip(void **state __attribute__((unused)))
{
	struct proto_request req;
	json_t *v, *names;
	char *line;

	v = proto_request_new(PROTO_TRACE);
	assert_non_null(v);
	names = json_array();
	json_array_append_new(names, json_string("blk"));
	json_object_set_new(v, "state", json_string("off"));
	json_object_set_new(v, "probes", names);
	line = proto_encode_line(v);
	json_decref(v);
	assert_non_null(line);
	assert_string_equal(line, "{\"cmd\":\"trace\",\"state\":\"off\",\"probes\":[\"blk\"]}\n");
	assert_int_equal(proto_parse_request(line, strlen(line) - 1, &req, err, sizeof(err)), 0);
	assert_int_equal(req.cmd, PROTO_TRACE);
	assert_int_equal(req.trace_state, PROTO_TRACE_OFF);
	assert_int_equal(req.n_names, 1);
	assert_string_equal(req.names[0], "blk");
	proto_request_done(&req);
	free(line);

	for (int c = PROTO_STATUS; c <= PROTO_REPORT; c++) {
		v = proto_request_new((enum proto_cmd)c);
		line = proto_encode_line(v);
		json_decref(v);
		assert_int_equal(proto_parse_request(line, strlen(line) - 1, &req, err, sizeof(err)), 0);
		assert_int_equal(req.cmd, c);
		free(line);
	}

	v = proto_request_new(PROTO_START);
	names = json_array();
	json_array_append_new(names, json_string("rand4k"));
	json_array_append_new(names, json_string("seq\xc3\xa9"));
	json_object_set_new(v, "workloads", names);
	line = proto_encode_line(v);
	json_decref(v);
	/* The line may also be parsed with its newline. */
	assert_int_equal(proto_parse_request(line, strlen(line), &req, err, sizeof(err)), 0);
	assert_int_equal(req.n_names, 2);
	assert_string_equal(req.names[1], "seq\xc3\xa9");
	proto_request_done(&req);
	free(line);
}

/* The line holds exactly one '\n', at its end, and decodes to want. */
static void assert_error_line(char *line, const char *want)
{
	json_error_t jerr;
	json_t *v;
	char *nl;

	assert_non_null(line);
	nl = strchr(line, '\n');
	assert_non_null(nl);
	assert_int_equal(nl[1], '\0');
	v = json_loadb(line, (size_t)(nl - line), 0, &jerr);
	if (!v)
		fail_msg("error line is not JSON: %s: %s", jerr.text, line);
	assert_true(json_is_false(json_object_get(v, "ok")));
	assert_true(json_is_string(json_object_get(v, "error")));
	if (want)
		assert_string_equal(json_string_value(json_object_get(v, "error")), want);
	assert_int_equal(json_object_size(v), 2);
	json_decref(v);
	free(line);
}

static void test_error_line(void **state __attribute__((unused)))
{
	struct proto_request req;
	char *line;

	line = proto_error_line("no workload named '%s'", "x");
	assert_string_equal(line, "{\"ok\":false,\"error\":\"no workload named 'x'\"}\n");
	free(line);

	assert_error_line(proto_error_line("say \"%s\"\nthen\r\n%s\\", "hi", "\t\x01"),
			  "say \"hi\"\nthen\r\n\t\x01\\");
	assert_error_line(proto_error_line("%s", ""), "");
	/* Bytes that are not UTF-8 still give a well-formed line. */
	assert_error_line(proto_error_line("bad \xff\xfe byte, cut \xe2\x82"), "bad ?? byte, cut ??");
	assert_error_line(proto_error_line("ok \xe2\x82\xac"), "ok \xe2\x82\xac");

	/* Parser messages quoting hostile input survive the trip. */
	memset(&req, 0, sizeof(req));
	assert_int_equal(proto_parse_request("{\"cmd\":\xff}", 9, &req, err, sizeof(err)), -EINVAL);
	assert_error_line(proto_error_line("%s", err), NULL);
	assert_int_equal(proto_parse_request("{\"\x01\":1}", 7, &req, err, sizeof(err)), -EINVAL);
	assert_error_line(proto_error_line("%s", err), NULL);

	/* Long messages are bounded. */
	{
		char *huge = malloc(100000);

		memset(huge, 'a', 99999);
		huge[99999] = '\0';
		line = proto_error_line("%s", huge);
		assert_true(strlen(line) < 5000);
		assert_error_line(line, NULL);
		free(huge);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_cmd_names),
		cmocka_unit_test(test_reject_shape),
		cmocka_unit_test(test_reject_cmd),
		cmocka_unit_test(test_reject_keys),
		cmocka_unit_test(test_reject_types),
		cmocka_unit_test(test_reject_names),
		cmocka_unit_test(test_reject_nul_and_size),
		cmocka_unit_test(test_small_error_buffer),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_error_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
