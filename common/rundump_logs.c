// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading interval logs into a dump (rundump.h): one log after another, a
 * log's wall-clock span for a merge, and the logs of hosts that ran side
 * by side read together in wall-clock order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rundump.h"
#include "rundump_int.h"
#include "runlog.h"

int rundump_add_log(struct rundump *d, const char *path, char **ret_notes)
{
	struct runlog_reader *rd;
	json_t *rec;
	int r = runlog_open(path, &rd);

	if (r < 0)
		return r;
	d->source = d->sources++;
	while ((r = runlog_next(rd, &rec)) > 0) {
		rundump_add(d, rec);
		json_decref(rec);
	}
	if (ret_notes && (runlog_corrupt(rd) || runlog_torn(rd))) {
		if (asprintf(ret_notes, "%s: %" PRIu64 " damaged record(s) skipped%s", path,
			     runlog_corrupt(rd),
			     runlog_torn(rd) ? ", a torn last record dropped" : "") < 0)
			*ret_notes = NULL;
	}
	runlog_close(rd);
	return r;
}

int rundump_log_span(const char *path, uint64_t *ret_from_ns, uint64_t *ret_to_ns,
		     uint64_t *ret_interval_ns)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t from = UINT64_MAX, to = 0;
	/* The lengths seen, to the ms, and how often: the first 8 kinds
	 * (a full interval, a cut one, a stalled record of several). */
	uint64_t len[8] = { 0 }, seen[8] = { 0 };
	int r = runlog_open(path, &rd);

	if (r < 0)
		return r;
	while ((r = runlog_next(rd, &rec)) > 0) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		if (type && strcmp(type, "interval") == 0) {
			uint64_t a = rd_u64(rec, "wall_start_ns"), b = rd_u64(rec, "wall_end_ns");
			from = a < from ? a : from;
			to = b > to ? b : to;
			uint64_t ms = (rd_u64(rec, "end_ns") - rd_u64(rec, "start_ns") + 500000) / 1000000;
			for (size_t k = 0; ms && k < 8; k++)
				if (!seen[k] || len[k] == ms) {
					len[k] = ms;
					seen[k]++;
					break;
				}
		}
		json_decref(rec);
	}
	runlog_close(rd);
	if (r < 0)
		return r;
	if (to == 0)
		return -ENODATA;
	*ret_from_ns = from;
	*ret_to_ns = to;
	if (ret_interval_ns) {
		size_t best = 0;
		for (size_t k = 1; k < 8; k++)
			if (seen[k] > seen[best])
				best = k;
		*ret_interval_ns = len[best] * 1000000;
	}
	return 0;
}

struct merge_src {
	struct runlog_reader *rd;
	json_t *rec;                /* its next interval record; NULL: done */
	uint64_t index;             /* its slice */
};

/* Reads on to the source's next interval record, adding the other kinds
 * on the way (a state, a host record: in the log's own order). */
static int merge_advance(struct rundump *d, struct merge_src *m, unsigned source)
{
	json_t *rec;
	int r;

	m->rec = NULL;
	d->source = source;
	while ((r = runlog_next(m->rd, &rec)) > 0) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		if (!type || strcmp(type, "interval") != 0) {
			rundump_add(d, rec);
			json_decref(rec);
			continue;
		}
		m->index = rd_wall_slice(d, rd_u64(rec, "wall_start_ns"), rd_u64(rec, "wall_end_ns"));
		m->rec = rec;
		return 0;
	}
	return r;
}

int rundump_merge_logs(struct rundump *d, const char *const *paths, size_t n, char **ret_notes)
{
	struct merge_src *m = calloc(n ? n : 1, sizeof(*m));
	char *notes = NULL;
	size_t notes_len = 0;
	FILE *nf = ret_notes ? open_memstream(&notes, &notes_len) : NULL;
	int r = m ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && r == 0; i++) {
		r = runlog_open(paths[i], &m[i].rd);
		if (r == 0)
			r = merge_advance(d, &m[i], (unsigned)i);
	}
	d->sources = (unsigned)n;
	while (r == 0) {
		size_t next = n;
		for (size_t i = 0; i < n; i++)
			if (m[i].rec && (next == n || m[i].index < m[next].index))
				next = i;
		if (next == n)
			break;
		d->source = (unsigned)next;
		rundump_add(d, m[next].rec);
		json_decref(m[next].rec);
		r = merge_advance(d, &m[next], (unsigned)next);
	}
	bool noted = false;
	for (size_t i = 0; m && i < n; i++) {
		if (nf && m[i].rd && (runlog_corrupt(m[i].rd) || runlog_torn(m[i].rd))) {
			fprintf(nf, "%s%s: %" PRIu64 " damaged record(s) skipped%s", noted ? "; " : "",
				paths[i], runlog_corrupt(m[i].rd),
				runlog_torn(m[i].rd) ? ", a torn last record dropped" : "");
			noted = true;
		}
		json_decref(m[i].rec);
		if (m[i].rd)
			runlog_close(m[i].rd);
	}
	free(m);
	if (nf) {
		fclose(nf);
		*ret_notes = notes && *notes ? notes : NULL;
		if (!*ret_notes)
			free(notes);
	}
	return r;
}
