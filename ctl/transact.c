// SPDX-License-Identifier: GPL-2.0-only
/*
 * soakctl's side of the socket: one request line out, one reply line in,
 * a dump's text written out as it arrives.
 */
#include "transact.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"

#define MAX_REPLY (64u << 20)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, long long deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left;
	int r;

	for (;;) {
		left = deadline_ms - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_soakd(const char *path, double timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = (time_t)timeout_s,
			      .tv_usec = (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6) };
	const char *hint = "";
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "soakctl: socket path %s is too long (at most %zu bytes)\n", path,
			sizeof(sa.sun_path) - 1);
		return -EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "soakctl: cannot create a socket: %s\n", strerror(errno));
		return -EXIT_NO_REPLY;
	}
	/* A Unix stream connect waits for room in the listen backlog for up
	 * to the send timeout. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;

	e = errno;
	close(fd);
	if (e == ENOENT || e == ECONNREFUSED)
		hint = " (is soakd running? set --socket)";
	else if (e == EACCES || e == EPERM)
		hint = " (no permission to use the socket)";
	else if (e == EAGAIN || e == EINPROGRESS)
		hint = " (soakd is not accepting connections)";
	fprintf(stderr, "soakctl: cannot connect to soakd at %s: %s%s\n", path, strerror(e), hint);
	return -EXIT_NO_REPLY;
}

/*
 * The reply as it arrives.  A CSV or HDR dump's text comes first in its
 * line, as an array of strings ({"ok":true,"format":"csv","csv_chunks":[
 * "...","..."]...: soakctl asks for chunks, proto.h), so it is decoded and
 * written out as it is read, whatever its size; the spaces soakd sends
 * between two strings while it reads are skipped.  The members after it,
 * and every other reply, are read whole (at most MAX_REPLY bytes).
 */
enum reply_mode { REPLY_UNDECIDED, REPLY_WHOLE, REPLY_TEXT, REPLY_TAIL, REPLY_DONE };

struct reply_reader {
	enum reply_mode mode;
	const char *prefix;        /* the streamed text's start; NULL: none expected */
	char *buf;                 /* the line, or (REPLY_TAIL) what follows the text */
	size_t size, used;
	FILE *out;
	uint64_t text_bytes;
	/* A JSON string escape cut by a read: "\", "\u12" ... */
	char esc[12];
	size_t esc_len;
	unsigned high_surrogate;
	bool bad;                  /* malformed text */
	bool streamed;             /* the text came (and went out) as it was read */
	bool in_string;            /* inside one of the text's strings */
};

static bool reply_append(struct reply_reader *rr, const char *p, size_t n)
{
	if (rr->used + n > rr->size) {
		size_t size = rr->size ? rr->size : 65536;
		while (size < rr->used + n)
			size *= 2;
		if (size > MAX_REPLY)
			return false;
		char *grown = realloc(rr->buf, size + 1);
		if (!grown)
			return false;
		rr->buf = grown;
		rr->size = size;
	}
	memcpy(rr->buf + rr->used, p, n);
	rr->used += n;
	return true;
}

static void put_utf8(struct reply_reader *rr, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	fwrite(u, 1, n, rr->out);
}

/* One complete escape ("\\n", "\\u00e9"). */
static void put_escape(struct reply_reader *rr, const char *e, size_t len)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;

	if (len == 2 && e[1] && (k = strchr(from, e[1])) != NULL) {
		fputc(to[k - from], rr->out);
		rr->text_bytes++;
		return;
	}
	if (len != 6 || e[1] != 'u') {
		rr->bad = true;
		return;
	}
	unsigned cp = (unsigned)strtoul(e + 2, NULL, 16);
	if (cp >= 0xd800 && cp < 0xdc00) {
		rr->high_surrogate = cp;
		return;
	}
	if (cp >= 0xdc00 && cp < 0xe000 && rr->high_surrogate)
		cp = 0x10000 + ((rr->high_surrogate - 0xd800) << 10) + (cp - 0xdc00);
	rr->high_surrogate = 0;
	put_utf8(rr, cp);
}

/* Decodes text up to its closing quote; returns how many bytes it took,
 * with *ret_closed set when the quote was among them. */
static size_t reply_text(struct reply_reader *rr, const char *p, size_t n, bool *ret_closed)
{
	size_t i = 0;

	*ret_closed = false;
	while (i < n) {
		char c = p[i];
		if (rr->esc_len) {
			rr->esc[rr->esc_len++] = c;
			i++;
			bool unicode = rr->esc[1] == 'u';
			if (!unicode || rr->esc_len == 6) {
				rr->esc[rr->esc_len] = '\0';
				if (unicode && strspn(rr->esc + 2, "0123456789abcdefABCDEF") < 4)
					rr->bad = true;
				put_escape(rr, rr->esc, rr->esc_len);
				rr->esc_len = 0;
			}
			continue;
		}
		/* A run of plain bytes is written at once. */
		size_t run = 0;
		while (i + run < n && p[i + run] != '"' && p[i + run] != '\\')
			run++;
		if (run) {
			fwrite(p + i, 1, run, rr->out);
			rr->text_bytes += run;
			i += run;
			continue;
		}
		i++;
		if (c == '"') {
			*ret_closed = true;
			return i;
		}
		rr->esc[0] = c;
		rr->esc_len = 1;
	}
	return i;
}

/* Takes n bytes of the reply; false when it is too long to keep. */
static bool reply_feed(struct reply_reader *rr, const char *p, size_t n)
{
	size_t plen = rr->prefix ? strlen(rr->prefix) : 0;

	while (n > 0 && rr->mode != REPLY_DONE) {
		if (rr->mode == REPLY_TEXT && rr->in_string) {
			bool closed;
			size_t took = reply_text(rr, p, n, &closed);
			p += took;
			n -= took;
			if (closed)
				rr->in_string = false;
			continue;
		}
		if (rr->mode == REPLY_TEXT) {
			/* Between the array's strings: a comma, soakd's
			 * keep-alive spaces, the next string or the end. */
			char c = *p++;
			n--;
			if (c == '"')
				rr->in_string = true;
			else if (c == ']') {
				rr->mode = REPLY_TAIL;
				rr->used = 0;
			} else if (c != ',' && c != ' ' && c != '\t' && c != '\r')
				rr->bad = true;
			continue;
		}
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) + 1 : n;
		/* Undecided: no more than tells whether the text is streamed. */
		if (rr->mode == REPLY_UNDECIDED && plen && take > plen - rr->used)
			take = plen - rr->used;
		if (!reply_append(rr, p, take))
			return false;
		bool line_end = rr->buf[rr->used - 1] == '\n';
		p += take;
		n -= take;
		if (line_end) {
			rr->mode = REPLY_DONE;
		} else if (rr->mode == REPLY_UNDECIDED) {
			if (!plen || memcmp(rr->buf, rr->prefix, rr->used) != 0)
				rr->mode = REPLY_WHOLE;
			else if (rr->used == plen) {
				rr->mode = REPLY_TEXT;
				rr->streamed = true;
				rr->used = 0;
			}
		}
	}
	return true;
}

/* The reply as JSON, once read: a streamed text's members are those after
 * it, with the text (already written out) left empty. */
static json_t *reply_json(struct reply_reader *rr, const char *text_key, json_error_t *jerr)
{
	size_t len = rr->used;

	if (len && rr->buf[len - 1] == '\n')
		len--;
	if (!rr->streamed)
		return json_loadb(rr->buf, len, 0, jerr);
	char *whole = malloc(len + 16);
	if (!whole)
		return NULL;
	memcpy(whole, "{\"ok\":true", 10);
	memcpy(whole + 10, rr->buf, len);
	json_t *v = json_loadb(whole, len + 10, 0, jerr);
	free(whole);
	if (v && json_is_object(v))
		json_object_set_new(v, text_key, json_string(""));
	return v;
}

/*
 * A soakd from before "chunks" (0.1.0 until 456abc1: upgraded, not yet
 * restarted) refuses the key: the same request without it, its text read
 * whole, and "csv"/"hdr" also given as one chunk, so that both ways of
 * reading a reply find it.  NULL: not that refusal (or out of memory).
 */
static char *without_chunks(const char *line, json_t *refusal)
{
	const char *msg = json_string_value(json_object_get(refusal, "error"));
	json_t *req;
	char *again = NULL;

	if (!msg || strncmp(msg, "unknown key \"chunks\"", 20) != 0)
		return NULL;
	req = json_loads(line, 0, NULL);
	if (json_is_true(json_object_get(req, "chunks")) && json_object_del(req, "chunks") == 0)
		again = proto_encode_line(req);
	json_decref(req);
	return again;
}

static void text_as_chunks(json_t *reply)
{
	static const char *const keys[] = { "csv", "hdr" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *text = json_object_get(reply, keys[i]);
		char name[16];
		snprintf(name, sizeof(name), "%s_chunks", keys[i]);
		if (json_is_string(text) && !json_object_get(reply, name))
			json_object_set_new(reply, name, json_pack("[O]", text));
	}
}

static int transact_once(const char *path, double timeout_s, const char *line,
			 const char *text_key, json_t **ret);

/* Send one line, read one line back (a dump's text, text_key, straight
 * to stdout as it comes); returns 0 or an exit code. */
int ctl_transact_stream(const char *path, double timeout_s, const char *line,
			const char *text_key, json_t **ret)
{
	json_t *reply = NULL;
	int rc = transact_once(path, timeout_s, line, text_key, &reply);
	char *again;

	if (rc == 0 && json_is_false(json_object_get(reply, "ok")) &&
	    (again = without_chunks(line, reply))) {
		json_decref(reply);
		reply = NULL;
		rc = transact_once(path, timeout_s, again, NULL, &reply);
		free(again);
		if (rc == 0)
			text_as_chunks(reply);
	}
	if (rc == 0 && json_is_false(json_object_get(reply, "ok"))) {
		const char *msg = json_string_value(json_object_get(reply, "error"));

		fprintf(stderr, "soakctl: %s\n", msg ? msg : "soakd refused the request without saying why");
		json_decref(reply);
		return EXIT_REFUSED;
	}
	*ret = reply;
	return rc;
}

/* One exchange: 0 with the reply (its "ok" a boolean, true or false), or
 * an exit code, said on stderr. */
static int transact_once(const char *path, double timeout_s, const char *line,
			 const char *text_key, json_t **ret)
{
	long long deadline = now_ms() + (long long)(timeout_s * 1000);
	size_t len = strlen(line), done = 0;
	char chunk[65536], prefix[64];
	struct reply_reader rr = { .out = stdout };
	json_error_t jerr;
	int fd, r, rc = EXIT_NO_REPLY;
	ssize_t n;
	json_t *reply;

	if (text_key) {
		snprintf(prefix, sizeof(prefix), "{\"ok\":true,\"format\":\"%s\",\"%s_chunks\":[",
			 text_key, text_key);
		rr.prefix = prefix;
	}
	fd = connect_soakd(path, timeout_s);
	if (fd < 0)
		return -fd;

	while (done < len) {
		n = send(fd, line + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EAGAIN || errno == EINTR) {
			r = wait_fd(fd, POLLOUT, deadline);
			if (r == 0)
				continue;
			errno = -r;
		}
		fprintf(stderr, "soakctl: cannot send to soakd at %s: %s\n", path, strerror(errno));
		goto out;
	}

	/* --timeout bounds the wait for each part of the reply, not the
	 * whole: a month's CSV takes longer to send than to start. */
	while (rr.mode != REPLY_DONE) {
		n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n > 0) {
			deadline = now_ms() + (long long)(timeout_s * 1000);
			if (!reply_feed(&rr, chunk, (size_t)n)) {
				fprintf(stderr, "soakctl: reply from soakd is larger than %u MiB\n",
					MAX_REPLY >> 20);
				goto out;
			}
		} else if (n == 0) {
			if (rr.mode == REPLY_TEXT || (rr.mode == REPLY_UNDECIDED && rr.used == 0)) {
				if (rr.streamed)
					fprintf(stderr, "soakctl: soakd at %s closed the connection after "
						"%llu bytes of %s: the output is incomplete\n", path,
						(unsigned long long)rr.text_bytes, text_key);
				else
					fprintf(stderr, "soakctl: soakd at %s closed the connection "
						"without a reply\n", path);
				goto out;
			}
			break;  /* accept a last line without its '\n' */
		} else if (errno == EAGAIN || errno == EINTR) {
			fflush(stdout);
			r = wait_fd(fd, POLLIN, deadline);
			if (r == -ETIMEDOUT) {
				/* A reload that lays out a file or fills a device
				 * answers when done: it goes on all the same. */
				fprintf(stderr, "soakctl: no reply from soakd at %s within %g s (set "
					"--timeout); soakd may still carry out the request (a reload "
					"preparing its workloads answers when done): see soakctl status "
					"and the journal\n", path, timeout_s);
				goto out;
			} else if (r < 0) {
				fprintf(stderr, "soakctl: cannot read from soakd: %s\n", strerror(-r));
				goto out;
			}
		} else {
			fprintf(stderr, "soakctl: cannot read from soakd: %s\n", strerror(errno));
			goto out;
		}
	}
	if (rr.bad) {
		fprintf(stderr, "soakctl: soakd sent malformed %s text (a bad escape or a stray byte between its chunks)\n", text_key);
		goto out;
	}

	reply = reply_json(&rr, text_key, &jerr);
	if (!reply || !json_is_object(reply)) {
		fprintf(stderr, "soakctl: soakd sent a malformed reply: %s\n",
			reply ? "not a JSON object" : jerr.text);
		json_decref(reply);
		goto out;
	}
	if (!json_is_boolean(json_object_get(reply, "ok"))) {
		fprintf(stderr, "soakctl: soakd's reply has no \"ok\"\n");
		json_decref(reply);
		goto out;
	}
	*ret = reply;
	rc = 0;
out:
	free(rr.buf);
	close(fd);
	return rc;
}

int ctl_transact(const char *path, double timeout_s, const char *line, json_t **ret)
{
	return ctl_transact_stream(path, timeout_s, line, NULL, ret);
}
