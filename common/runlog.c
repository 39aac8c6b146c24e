// SPDX-License-Identifier: GPL-2.0-only
#include "runlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

char *runlog_frame(const json_t *record)
{
	char *json = json_dumps(record, JSON_COMPACT | JSON_REAL_PRECISION(17));
	char *line = NULL;

	if (!json)
		return NULL;
	uLong crc = crc32(0L, (const Bytef *)json, (uInt)strlen(json));
	if (asprintf(&line, "%08lx %s\n", crc, json) < 0)
		line = NULL;
	free(json);
	return line;
}

/* Read ahead of the lines, from the file, a chunk at a time. */
#define READ_CHUNK (256u * 1024)

struct runlog_reader {
	FILE *f;
	char *chunk;                /* READ_CHUNK bytes: [chunk_pos, chunk_len) unread */
	size_t chunk_len, chunk_pos;
	char *line;
	size_t cap;
	uint64_t offset, good_offset;
	uint64_t records_offset;    /* just past the header */
	uint64_t corrupt;
	bool torn;
	bool pending_bad;    /* a bad line is only corrupt if another follows */
};

/* Takes f over, closing it on failure. */
static int open_stream(FILE *f, struct runlog_reader **ret)
{
	struct runlog_reader *r = calloc(1, sizeof(*r));
	char header[sizeof(RUNLOG_HEADER)];

	if (!r || !(r->chunk = malloc(READ_CHUNK))) {
		free(r);
		fclose(f);
		return -ENOMEM;
	}
	r->f = f;
	size_t n = fread(header, 1, sizeof(RUNLOG_HEADER) - 1, r->f);
	if (n != sizeof(RUNLOG_HEADER) - 1 ||
	    memcmp(header, RUNLOG_HEADER, sizeof(RUNLOG_HEADER) - 1) != 0) {
		fclose(r->f);
		free(r->chunk);
		free(r);
		return -EPROTO;
	}
	r->offset = r->good_offset = r->records_offset = n;
	*ret = r;
	return 0;
}

int runlog_open(const char *path, struct runlog_reader **ret)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	return open_stream(f, ret);
}

int runlog_open_memory(const void *buf, size_t len, struct runlog_reader **ret)
{
	FILE *f;

	/* fmemopen() refuses an empty buffer; an empty log has no header. */
	if (len < sizeof(RUNLOG_HEADER) - 1)
		return -EPROTO;
	f = fmemopen((void *)buf, len, "r");
	if (!f)
		return -errno;
	return open_stream(f, ret);
}

/* Checks one line (without '\n'); returns the record or NULL. */
static json_t *parse_line(char *line, size_t len)
{
	char *end;

	if (len < 10 || line[8] != ' ')
		return NULL;
	line[8] = '\0';
	unsigned long want = strtoul(line, &end, 16);
	if (end != line + 8)
		return NULL;
	const char *json = line + 9;
	size_t json_len = len - 9;
	if (crc32(0L, (const Bytef *)json, (uInt)json_len) != want)
		return NULL;
	json_t *v = json_loadb(json, json_len, 0, NULL);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

/* Positions the reader at byte at of the file; what was read ahead goes. */
static int seek_to(struct runlog_reader *r, uint64_t at)
{
	r->chunk_len = r->chunk_pos = 0;
	return fseeko(r->f, (off_t)at, SEEK_SET) < 0 ? -errno : 0;
}

/*
 * The next line, its '\n' kept: the bytes it takes in the file (0 at the
 * end, -EIO, -ENOMEM), held in r->line (NUL after) unless the line is
 * longer than RUNLOG_MAX_LINE: then *ret_long, and it is read past, never
 * held (getline held the whole of a 4 GiB line of a damaged log).  NUL
 * bytes in a line (a filesystem's zeroes after a crash) are counted and
 * held like any other.
 */
static ssize_t read_line(struct runlog_reader *r, bool *ret_long)
{
	size_t total = 0, held = 0;
	bool too_long = false;

	for (;;) {
		if (r->chunk_pos == r->chunk_len) {
			size_t got = fread(r->chunk, 1, READ_CHUNK, r->f);
			if (got == 0) {
				if (ferror(r->f))
					return -EIO;
				break;
			}
			r->chunk_len = got;
			r->chunk_pos = 0;
		}
		const char *start = r->chunk + r->chunk_pos;
		size_t avail = r->chunk_len - r->chunk_pos;
		const char *nl = memchr(start, '\n', avail);
		size_t take = nl ? (size_t)(nl - start) + 1 : avail;
		if (!too_long && held + take > RUNLOG_MAX_LINE)
			too_long = true;
		if (!too_long) {
			if (held + take + 1 > r->cap) {
				size_t cap = r->cap ? r->cap : 4096;
				while (cap < held + take + 1)
					cap *= 2;
				if (cap > RUNLOG_MAX_LINE + 1)
					cap = RUNLOG_MAX_LINE + 1;
				char *grown = realloc(r->line, cap);
				if (!grown)
					return -ENOMEM;
				r->line = grown;
				r->cap = cap;
			}
			memcpy(r->line + held, start, take);
			held += take;
			r->line[held] = '\0';
		}
		total += take;
		r->chunk_pos += take;
		if (nl)
			break;
	}
	*ret_long = too_long;
	return (ssize_t)total;
}

int runlog_next(struct runlog_reader *r, json_t **ret)
{
	for (;;) {
		bool too_long;
		ssize_t n = read_line(r, &too_long);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			if (r->pending_bad) {
				/* The last line was bad: a torn write, not damage. */
				r->pending_bad = false;
				r->torn = true;
			}
			return 0;
		}
		r->offset += (uint64_t)n;
		if (r->pending_bad) {
			r->corrupt++;
			r->pending_bad = false;
		}
		bool complete = !too_long && r->line[n - 1] == '\n';
		json_t *v = complete ? parse_line(r->line, (size_t)n - 1) : NULL;
		if (!v) {
			r->pending_bad = true;
			continue;
		}
		r->good_offset = r->offset;
		*ret = v;
		return 1;
	}
}

/* Below this many bytes, reading on is cheaper than bisecting further. */
#define SEEK_LINEAR_BYTES (256u * 1024)

/* The end (run time) of the first good interval record in the lines that
 * start after byte from and end by byte to; *ret_after is the offset just
 * past it.  1 found, 0 none, -errno. */
static int probe(struct runlog_reader *r, uint64_t from, uint64_t to, uint64_t *ret_end_ns,
		 uint64_t *ret_after)
{
	uint64_t pos = from;
	bool too_long;
	ssize_t n;
	int r_seek = seek_to(r, from);

	if (r_seek < 0)
		return r_seek;
	/* from is inside a line (or at its start): that line is skipped. */
	n = read_line(r, &too_long);
	if (n <= 0)
		return n < 0 ? (int)n : 0;
	pos += (uint64_t)n;
	while (pos < to && (n = read_line(r, &too_long)) > 0) {
		pos += (uint64_t)n;
		if (pos > to || too_long || r->line[n - 1] != '\n')
			break;
		json_t *v = parse_line(r->line, (size_t)n - 1);
		const char *type = json_string_value(json_object_get(v, "type"));
		json_t *end = json_object_get(v, "end_ns");
		if (type && strcmp(type, "interval") == 0 && json_is_integer(end)) {
			*ret_end_ns = (uint64_t)json_integer_value(end);
			*ret_after = pos;
			json_decref(v);
			return 1;
		}
		json_decref(v);
	}
	return n < 0 ? (int)n : 0;
}

int runlog_seek_run_time(struct runlog_reader *r, uint64_t run_ns)
{
	uint64_t lo = r->records_offset, hi, end_ns = 0, after = 0;
	off_t size;

	if (fseeko(r->f, 0, SEEK_END) < 0 || (size = ftello(r->f)) < 0)
		return -errno;
	hi = (uint64_t)size;
	while (hi > lo && hi - lo > SEEK_LINEAR_BYTES) {
		uint64_t mid = lo + (hi - lo) / 2;
		int found = probe(r, mid, hi, &end_ns, &after);
		if (found < 0) {
			lo = r->records_offset;
			break;
		}
		if (found && end_ns < run_ns)
			lo = after;
		else
			hi = mid;
	}
	clearerr(r->f);
	int err = seek_to(r, lo);
	if (err < 0)
		return err;
	r->offset = r->good_offset = lo;
	r->pending_bad = false;
	return 0;
}

uint64_t runlog_good_offset(const struct runlog_reader *r)
{
	return r->good_offset;
}

uint64_t runlog_corrupt(const struct runlog_reader *r)
{
	return r->corrupt;
}

bool runlog_torn(const struct runlog_reader *r)
{
	return r->torn;
}

void runlog_close(struct runlog_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r->chunk);
	free(r->line);
	free(r);
}

char *runlog_path_of(const char *dir_or_file)
{
	struct stat st;
	char *path = NULL;

	if (stat(dir_or_file, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&path, "%s/intervals.log", dir_or_file) < 0)
			return NULL;
		return path;
	}
	return strdup(dir_or_file);
}

/*
 * soakd's own names have no control characters, but a log copied from
 * elsewhere could make a text report write escape sequences to a terminal
 * (clear it, set the clipboard, forge a verdict line).
 */
void runlog_clean_name(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)src; *s && n + 1 < len; s++) {
		if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
			dst[n++] = '?';
			s++;
		} else {
			dst[n++] = *s < 0x20 || *s == 0x7f ? '?' : (char)*s;
		}
	}
	dst[n] = '\0';
}
