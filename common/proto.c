/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include "parse.h"
#include "proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Everything here parses what a client sent, so every limit is checked
 * before anything is allocated for it and every piece of client text that
 * is echoed back in an error message is shortened and defanged first.
 */

#define PROTO_MAX_NAME 64        /* bytes in one workload or probe name */
#define PROTO_MAX_ERROR 4096     /* bytes of message in an error line */
#define PROTO_ECHO_MAX 40        /* bytes of client text quoted in an error */

#define CMD_LIST "status, start, stop, dump, trace, report, reload"

static const char *const cmd_names[] = {
	[PROTO_STATUS] = "status",
	[PROTO_START] = "start",
	[PROTO_STOP] = "stop",
	[PROTO_DUMP] = "dump",
	[PROTO_TRACE] = "trace",
	[PROTO_REPORT] = "report",
	[PROTO_RELOAD] = "reload",
	[PROTO_DEBUG] = "debug",
};
#define N_CMDS (sizeof(cmd_names) / sizeof(cmd_names[0]))

/* The keys each command takes besides "cmd"; NULL-terminated. */
static const char *const cmd_keys[N_CMDS][9] = {
	[PROTO_STATUS] = { NULL },
	[PROTO_START] = { "workloads", "new_run", NULL },
	[PROTO_STOP] = { "workloads", NULL },
	[PROTO_DUMP] = { "format", "since", "until", "slice", "workload", "op", "service",
			 "chunks", NULL },
	[PROTO_TRACE] = { "state", "probes", NULL },
	[PROTO_REPORT] = { NULL },
	[PROTO_RELOAD] = { NULL },
	[PROTO_DEBUG] = { "stall", NULL },
};

static const char *const probe_names[] = { "blk", "tcp" };

const char *proto_cmd_name(enum proto_cmd cmd)
{
	if ((unsigned)cmd >= N_CMDS)
		return "unknown";
	return cmd_names[cmd];
}

bool proto_cmd_changes_state(const struct proto_request *r)
{
	switch (r->cmd) {
	case PROTO_START:
	case PROTO_STOP:
	case PROTO_RELOAD:
	case PROTO_DEBUG:
		return true;
	case PROTO_TRACE:
		return r->trace_state != PROTO_TRACE_QUERY;
	default:
		return false;
	}
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* Overlong forms, surrogates and code points above U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static bool is_control(const unsigned char *s, size_t seq_len)
{
	if (seq_len == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return seq_len == 2 && s[0] == 0xc2 && s[1] < 0xa0; /* C1: U+0080..U+009F */
}

/*
 * Copy client text into buf for quoting in a message: at most
 * PROTO_ECHO_MAX bytes cut at a character boundary, control characters and
 * invalid bytes shown as '?', and "..." when shortened.
 */
static const char *echo(char *buf, size_t buflen, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), i = 0, o = 0, len;

	while (i < n) {
		len = utf8_seq_len(s + i, n - i);
		if (o + (len ? len : 1) > PROTO_ECHO_MAX || o + 4 + len >= buflen) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (len == 0 || is_control(s + i, len)) {
			buf[o++] = '?';
			i += len ? len : 1;
			continue;
		}
		memcpy(buf + o, s + i, len);
		o += len;
		i += len;
	}
	buf[o] = '\0';
	return buf;
}

#define ECHO_BUF (PROTO_ECHO_MAX + 8)

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static bool key_allowed(enum proto_cmd cmd, const char *key)
{
	const char *const *k;

	if (strcmp(key, "cmd") == 0)
		return true;
	for (k = cmd_keys[cmd]; *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

static int check_keys(json_t *obj, enum proto_cmd cmd, char *err, size_t errlen)
{
	char ebuf[ECHO_BUF], allowed[256] = "";
	const char *key;
	const char *const *k;
	json_t *v;

	json_object_foreach(obj, key, v) {
		if (key_allowed(cmd, key))
			continue;
		if (!cmd_keys[cmd][0])
			return fail(err, errlen, "unknown key \"%s\" for command '%s' (it takes no arguments)",
				    echo(ebuf, sizeof(ebuf), key), cmd_names[cmd]);
		/* Bounded, whatever keys a command comes to take. */
		size_t n = 0;
		for (k = cmd_keys[cmd]; *k && n < sizeof(allowed); k++) {
			int w = snprintf(allowed + n, sizeof(allowed) - n, "%s%s",
					 k != cmd_keys[cmd] ? ", " : "", *k);
			n += w > 0 ? (size_t)w : sizeof(allowed);
		}
		return fail(err, errlen, "unknown key \"%s\" for command '%s' (expected %s)",
			    echo(ebuf, sizeof(ebuf), key), cmd_names[cmd], allowed);
	}
	return 0;
}

static int check_name(const char *what, size_t index, const char *name, size_t len,
		      char *err, size_t errlen)
{
	const unsigned char *s = (const unsigned char *)name;
	char ebuf[ECHO_BUF];
	size_t i, seq;

	if (len == 0)
		return fail(err, errlen, "%s name %zu is empty", what, index + 1);
	if (len > PROTO_MAX_NAME)
		return fail(err, errlen, "%s name '%s' is longer than %d bytes", what,
			    echo(ebuf, sizeof(ebuf), name), PROTO_MAX_NAME);
	for (i = 0; i < len; i += seq) {
		seq = utf8_seq_len(s + i, len - i);
		if (seq == 0 || is_control(s + i, seq))
			return fail(err, errlen, "%s name '%s' contains a control character",
				    what, echo(ebuf, sizeof(ebuf), name));
	}
	return 0;
}

static int parse_names(json_t *array, const char *key, const char *what, bool probes,
		       struct proto_request *req, char *err, size_t errlen)
{
	char ebuf[ECHO_BUF];
	size_t i, j;
	json_t *v;

	if (!json_is_array(array))
		return fail(err, errlen, "\"%s\" must be an array of strings, not %s", key,
			    json_kind(array));
	if (json_array_size(array) > PROTO_MAX_NAMES)
		return fail(err, errlen, "too many %s names (%zu; at most %d)", what,
			    json_array_size(array), PROTO_MAX_NAMES);

	json_array_foreach(array, i, v) {
		const char *name;
		bool known = !probes;
		int r;

		if (!json_is_string(v))
			return fail(err, errlen, "\"%s\" must be an array of strings (element %zu is %s)",
				    key, i + 1, json_kind(v));
		name = json_string_value(v);
		r = check_name(what, i, name, json_string_length(v), err, errlen);
		if (r < 0)
			return r;
		for (j = 0; !known && j < sizeof(probe_names) / sizeof(probe_names[0]); j++)
			known = strcmp(name, probe_names[j]) == 0;
		if (!known)
			return fail(err, errlen, "unknown probe '%s' (expected blk, tcp)",
				    echo(ebuf, sizeof(ebuf), name));
		req->names[req->n_names] = strdup(name);
		if (!req->names[req->n_names])
			return fail(err, errlen, "out of memory");
		req->n_names++;
	}
	return 0;
}

static int parse_enum(json_t *obj, const char *key, const char *a, const char *b, int *ret,
		      char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	char ebuf[ECHO_BUF];

	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(err, errlen, "\"%s\" must be \"%s\" or \"%s\", not %s", key, a, b,
			    json_kind(v));
	if (strcmp(json_string_value(v), a) == 0)
		*ret = 1;
	else if (strcmp(json_string_value(v), b) == 0)
		*ret = 2;
	else
		return fail(err, errlen, "\"%s\" must be \"%s\" or \"%s\", not '%s'", key, a, b,
			    echo(ebuf, sizeof(ebuf), json_string_value(v)));
	return 0;
}

static int parse_bool(json_t *obj, const char *key, bool *ret, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail(err, errlen, "\"%s\" must be true or false, not %s", key, json_kind(v));
	*ret = json_is_true(v);
	return 0;
}

static int parse_duration_key(json_t *obj, const char *key, uint64_t *ret, char *err,
			      size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	char ebuf[ECHO_BUF];
	const char *why = "";
	if (!v)
		return 0;
	if (!json_is_string(v) || parse_duration(json_string_value(v), ret, &why) < 0)
		return fail(err, errlen, "\"%s\" must be a duration such as \"10m\" or \"1h30m\"%s%s%s",
			    key, json_is_string(v) ? ", not '" : "",
			    json_is_string(v) ? echo(ebuf, sizeof(ebuf), json_string_value(v)) : "",
			    json_is_string(v) ? "'" : "");
	return 0;
}

static int parse_name_key(json_t *obj, const char *key, char **ret, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(err, errlen, "\"%s\" must be a name, not %s", key, json_kind(v));
	int r = check_name(key, 0, json_string_value(v), json_string_length(v), err, errlen);
	if (r < 0)
		return r;
	*ret = strdup(json_string_value(v));
	return *ret ? 0 : fail(err, errlen, "out of memory");
}

static int parse_dump(json_t *obj, struct proto_request *req, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, "format");
	char ebuf[ECHO_BUF];
	int r;

	if (v) {
		const char *f = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(f, "json") == 0)
			req->format = PROTO_FORMAT_JSON;
		else if (strcmp(f, "csv") == 0)
			req->format = PROTO_FORMAT_CSV;
		else if (strcmp(f, "hdr") == 0)
			req->format = PROTO_FORMAT_HDR;
		else if (json_is_string(v))
			return fail(err, errlen, "\"format\" must be \"json\", \"csv\" or \"hdr\", not '%s'",
				    echo(ebuf, sizeof(ebuf), f));
		else
			return fail(err, errlen, "\"format\" must be \"json\", \"csv\" or \"hdr\", not %s",
				    json_kind(v));
	}
	if ((r = parse_duration_key(obj, "since", &req->since_ns, err, errlen)) < 0 ||
	    (r = parse_duration_key(obj, "until", &req->until_ns, err, errlen)) < 0 ||
	    (r = parse_duration_key(obj, "slice", &req->slice_ns, err, errlen)) < 0 ||
	    (r = parse_name_key(obj, "workload", &req->workload, err, errlen)) < 0 ||
	    (r = parse_name_key(obj, "op", &req->op, err, errlen)) < 0 ||
	    (r = parse_bool(obj, "service", &req->service, err, errlen)) < 0 ||
	    (r = parse_bool(obj, "chunks", &req->chunks, err, errlen)) < 0)
		return r;
	if (json_object_get(obj, "slice") && req->slice_ns == 0)
		return fail(err, errlen, "\"slice\" must be longer than 0");
	if (req->until_ns && req->until_ns <= req->since_ns)
		return fail(err, errlen, "\"until\" must be after \"since\"");
	req->has_filters = json_object_get(obj, "since") || json_object_get(obj, "until") ||
			   json_object_get(obj, "slice") || req->workload || req->op;
	return 0;
}

static int parse_object(json_t *obj, struct proto_request *req, char *err, size_t errlen)
{
	json_t *cmd = json_object_get(obj, "cmd"), *names;
	char ebuf[ECHO_BUF];
	int choice = 0, r;
	size_t i;

	if (!cmd)
		return fail(err, errlen, "request has no \"cmd\" (expected one of " CMD_LIST ")");
	if (!json_is_string(cmd))
		return fail(err, errlen, "\"cmd\" must be a string, not %s", json_kind(cmd));
	for (i = 0; i < N_CMDS; i++)
		if (strcmp(json_string_value(cmd), cmd_names[i]) == 0)
			break;
	if (i == N_CMDS)
		return fail(err, errlen, "unknown command '%s' (expected " CMD_LIST ")",
			    echo(ebuf, sizeof(ebuf), json_string_value(cmd)));
	req->cmd = (enum proto_cmd)i;

	r = check_keys(obj, req->cmd, err, errlen);
	if (r < 0)
		return r;

	switch (req->cmd) {
	case PROTO_START:
	case PROTO_STOP:
		r = parse_bool(obj, "new_run", &req->new_run, err, errlen);
		if (r < 0)
			return r;
		names = json_object_get(obj, "workloads");
		return names ? parse_names(names, "workloads", "workload", false, req, err, errlen) : 0;
	case PROTO_DUMP:
		return parse_dump(obj, req, err, errlen);
	case PROTO_TRACE:
		r = parse_enum(obj, "state", "on", "off", &choice, err, errlen);
		if (r < 0)
			return r;
		req->trace_state = choice == 1 ? PROTO_TRACE_ON :
				   choice == 2 ? PROTO_TRACE_OFF : PROTO_TRACE_QUERY;
		names = json_object_get(obj, "probes");
		return names ? parse_names(names, "probes", "probe", true, req, err, errlen) : 0;
	case PROTO_DEBUG:
		r = parse_duration_key(obj, "stall", &req->stall_ns, err, errlen);
		if (r == 0 && req->stall_ns == 0)
			r = fail(err, errlen, "debug takes \"stall\": a duration longer than 0");
		return r;
	default:
		return 0;
	}
}

int proto_parse_request(const char *line, size_t len, struct proto_request *ret,
			char *err, size_t errlen)
{
	struct proto_request req = { .cmd = PROTO_STATUS };
	json_error_t jerr;
	const char *nul;
	json_t *obj;
	int r;

	if (!line || len == 0)
		return fail(err, errlen, "empty request (expected a JSON object such as {\"cmd\":\"status\"})");
	if (len > PROTO_MAX_LINE)
		return fail(err, errlen, "request is longer than %u bytes", PROTO_MAX_LINE);
	nul = memchr(line, '\0', len);
	if (nul)
		return fail(err, errlen, "request contains a NUL byte at offset %zu",
			    (size_t)(nul - line));

	obj = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!obj) {
		/* jerr.text may quote raw client bytes; proto_error_line copes. */
		if (jerr.column > 0)
			return fail(err, errlen, "request is not valid JSON at column %d: %s",
				    jerr.column, jerr.text);
		return fail(err, errlen, "request is not valid JSON: %s", jerr.text);
	}
	if (!json_is_object(obj)) {
		r = fail(err, errlen, "request must be a JSON object, not %s", json_kind(obj));
		json_decref(obj);
		return r;
	}

	r = parse_object(obj, &req, err, errlen);
	json_decref(obj);
	if (r < 0) {
		proto_request_done(&req);
		return r;
	}
	*ret = req;
	return 0;
}

void proto_request_done(struct proto_request *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_names && i < PROTO_MAX_NAMES; i++) {
		free(r->names[i]);
		r->names[i] = NULL;
	}
	r->n_names = 0;
	free(r->workload);
	free(r->op);
	r->workload = r->op = NULL;
}

json_t *proto_request_new(enum proto_cmd cmd)
{
	json_t *v;

	if ((unsigned)cmd >= N_CMDS)
		return NULL;
	v = json_object();
	if (v && json_object_set_new(v, "cmd", json_string(cmd_names[cmd])) < 0) {
		json_decref(v);
		return NULL;
	}
	return v;
}

char *proto_encode_line(const json_t *v)
{
	char *text, *line;
	size_t n;

	/* The encoder escapes control characters in strings, so the only
	 * newline in the result is the terminator appended here. */
	text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	if (!text)
		return NULL;
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

/* Make msg valid UTF-8 in place, cutting it to at most max bytes. */
static void sanitize_utf8(char *msg, size_t max)
{
	unsigned char *s = (unsigned char *)msg;
	size_t n = strlen(msg), i = 0, len;

	if (n > max)
		n = max;
	while (i < n) {
		len = utf8_seq_len(s + i, n - i);
		if (len == 0) {
			/* An invalid byte, or a sequence cut by the limit. */
			s[i++] = '?';
			continue;
		}
		i += len;
	}
	s[n] = '\0';
}

char *proto_error_line(const char *fmt, ...)
{
	json_t *reply, *error;
	char *msg, *line = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return NULL;
	/* Messages may quote client bytes that are not UTF-8, which jansson
	 * refuses; a mangled message is better than no error line. */
	sanitize_utf8(msg, PROTO_MAX_ERROR);

	error = json_string(msg);
	free(msg);
	reply = json_object();
	if (error && reply && json_object_set_new(reply, "ok", json_false()) == 0 &&
	    json_object_set(reply, "error", error) == 0)
		line = proto_encode_line(reply);
	json_decref(error);
	json_decref(reply);
	return line;
}
