// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ctl request parser, which reads whatever a client sends, and the
 * error line that answers a bad request: it quotes client bytes, yet must
 * be one line of valid JSON ({"ok":false,"error":"..."}) whatever they are.
 */
#include "fuzz.h"

#include <jansson.h>

#include "common/proto.h"

static void check_error_line(char *line)
{
	json_error_t jerr;
	size_t n;
	json_t *reply;

	FUZZ_CHECK(line);
	n = strlen(line);
	FUZZ_CHECK(n > 1 && line[n - 1] == '\n');
	FUZZ_CHECK(!memchr(line, '\n', n - 1));
	reply = json_loadb(line, n - 1, 0, &jerr);
	FUZZ_CHECK(reply);
	FUZZ_CHECK(json_is_false(json_object_get(reply, "ok")));
	FUZZ_CHECK(json_is_string(json_object_get(reply, "error")));
	json_decref(reply);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_request req;
	char err[512], small[24];
	char *text;
	int r;

	r = proto_parse_request((const char *)data, size, &req, err, sizeof(err));
	if (r == 0) {
		FUZZ_CHECK(req.n_names <= PROTO_MAX_NAMES);
		for (size_t i = 0; i < req.n_names; i++)
			FUZZ_CHECK(req.names[i] && *req.names[i]);
		FUZZ_CHECK(!req.until_ns || req.until_ns > req.since_ns);
		FUZZ_CHECK(strcmp(proto_cmd_name(req.cmd), "unknown") != 0);
		(void)proto_cmd_changes_state(&req);
		proto_request_done(&req);
		/* Done twice is harmless: the daemon's error paths may. */
		proto_request_done(&req);
	} else {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(err[0]);
		check_error_line(proto_error_line("%s", err));
	}

	/* A message cut short mid-character must still give a valid line. */
	if (proto_parse_request((const char *)data, size, &req, small, sizeof(small)) == 0)
		proto_request_done(&req);
	else
		check_error_line(proto_error_line("%s", small));

	/* Raw client bytes in a message: not UTF-8, control characters, long. */
	text = fuzz_text(data, size);
	check_error_line(proto_error_line("bad request '%s'", text));
	free(text);
	return 0;
}
