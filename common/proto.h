/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PROTO_H
#define SOAK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * The ctl wire protocol: one JSON object per line each way, UTF-8, '\n'
 * terminated.  A request is {"cmd": NAME, ...arguments}; every response has
 * "ok": true|false and, when false, "error": a message a person can act on.
 *
 *   {"cmd":"status"}
 *   {"cmd":"start","workloads":["a","b"]}   (empty or absent: all)
 *   {"cmd":"stop","workloads":["a"]}        (empty or absent: all)
 *   {"cmd":"start","workloads":[...],"new_run":true}  (new run: results start afresh)
 *   {"cmd":"dump","format":"json"|"csv"|"hdr"}  (csv, hdr: the response carries "csv"/"hdr": TEXT)
 *     with optional "since", "until" (run time, durations), "slice" (duration),
 *     "workload", "op" (names), "service": true (hdr of service times) and
 *     "chunks": true (csv, hdr: the text as an array, see below)
 *
 * Dumps read from the run's log (every dump but the JSON totals without
 * options) are streamed: still one JSON line, of any length, but a CSV or
 * HDR reply begins exactly with
 *     {"ok":true,"format":"csv","csv":"      (or hdr)
 * and its text follows as it is produced; the other members ("run",
 * "workloads", "notes", ...) come after the text.  A client may decode the
 * string as it reads or read the whole line.  A CSV or HDR dump asked for
 * with "chunks": true carries its text as an array of strings instead,
 * beginning exactly with
 *     {"ok":true,"format":"csv","csv_chunks":["     (or hdr, hdr_chunks)
 * (whitespace may come before the first '"') whose concatenation is the
 * text.  Between two strings soakd sends a space every second while it
 * reads a stretch of the log that produces no text (a long slice), so a
 * client's read timeout tells a soakd at work from a stuck one (soakctl
 * asks for chunks).  Any dump may
 * carry "incomplete": true and "incomplete_reason": TEXT when the log it
 * was read from may lack records (the state disk full, records dropped, a
 * read error, soakd stopping).  Replies that are not streamed are bounded
 * (CTL_MAX_RESPONSE); streamed ones are not.
 *   {"cmd":"trace","state":"on"|"off","probes":["blk","tcp"]}  (no state: query)
 *   {"cmd":"report"}
 *   {"cmd":"reload"}                        (re-read the configuration file)
 *   {"cmd":"debug","stall":"5s"}            (test builds only: block the main loop)
 */

#define PROTO_MAX_LINE (64u * 1024)      /* requests longer than this are refused */
#define PROTO_MAX_NAMES 64

enum proto_cmd {
	PROTO_STATUS,
	PROTO_START,
	PROTO_STOP,
	PROTO_DUMP,
	PROTO_TRACE,
	PROTO_REPORT,
	PROTO_RELOAD,
	PROTO_DEBUG,
};

enum proto_format {
	PROTO_FORMAT_JSON,
	PROTO_FORMAT_CSV,
	PROTO_FORMAT_HDR,
};

enum proto_trace_state {
	PROTO_TRACE_QUERY,
	PROTO_TRACE_ON,
	PROTO_TRACE_OFF,
};

struct proto_request {
	enum proto_cmd cmd;
	char *names[PROTO_MAX_NAMES];  /* workload names (start/stop) or probe names (trace) */
	size_t n_names;
	enum proto_format format;
	enum proto_trace_state trace_state;
	/* dump filters; has_filters when any was given */
	bool has_filters;
	uint64_t since_ns, until_ns, slice_ns;
	char *workload, *op;
	bool service;
	bool chunks;                   /* dump: csv/hdr text as "<format>_chunks" */
	bool new_run;                  /* start */
	uint64_t stall_ns;             /* debug */
};

/*
 * Parse one request line (without the '\n').  Returns 0, or -EINVAL with a
 * message for the client in err ("request is not valid JSON at column 7: ...",
 * "unknown command 'frob'", "\"workloads\" must be an array of strings", ...).
 */
int proto_parse_request(const char *line, size_t len, struct proto_request *ret,
			char *err, size_t errlen);
void proto_request_done(struct proto_request *r);

/* Request builder for clients. Returns a new JSON object. */
json_t *proto_request_new(enum proto_cmd cmd);

const char *proto_cmd_name(enum proto_cmd cmd);
/* Commands that change state (start, stop, trace on/off, reload, debug). */
bool proto_cmd_changes_state(const struct proto_request *r);

/*
 * Encode a JSON value as one line ("...}\n"), malloc'd; NULL on ENOMEM.
 * proto_error_line builds {"ok":false,"error":MSG}\n.
 */
char *proto_encode_line(const json_t *v);
char *proto_error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
