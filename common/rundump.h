/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RUNDUMP_H
#define SOAK_RUNDUMP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "hist.h"

/*
 * Results computed from the records of one or more interval logs (see
 * runlog.h): what `soakctl dump`, `report --run-dir` and `merge` print, and
 * what the daemon answers for filtered and per-interval dumps.  The same
 * code serves a live run and a finished run directory, so the two never
 * disagree.
 */

enum rundump_format {
	RUNDUMP_JSON,   /* totals per workload, op and target */
	RUNDUMP_CSV,    /* one row per interval (or slice) and op */
	RUNDUMP_HDR,    /* HdrHistogram interval log, one tag per workload.op */
	RUNDUMP_REPORT, /* slices with histograms, for report_print() */
};

struct rundump_filter {
	uint64_t since_ns, until_ns;   /* run time; until 0: no end */
	uint64_t slice_ns;             /* CSV/HDR: fold intervals into slices; report: slice length */
	const char *workload, *op;     /* NULL: all */
	bool service;                  /* HDR: service times instead of latencies */
	/* merge: only intervals within [wall_from, wall_to] */
	uint64_t wall_from_ns, wall_to_ns;
	/* merge, CSV/HDR: slices of slice_ns by wall-clock time from
	 * wall_from, each the hosts' intervals whose middle falls in it
	 * (rundump_merge_logs feeds them in that order) */
	bool merge_wall;
};

struct rundump;

struct rundump *rundump_new(enum rundump_format format, const struct rundump_filter *filter);
/* Adds one record; returns 0 or -EINVAL for a malformed one (skipped). */
int rundump_add(struct rundump *d, json_t *record);
/* Adds every good record of a log file; -errno if it cannot be read.
 * ret_notes, if given, receives a malloc'd note of dropped records. */
int rundump_add_log(struct rundump *d, const char *path, char **ret_notes);
/* CSV/HDR text produced so far goes to sink (which returns 0 or -errno)
 * and is forgotten, so a long dump streams in bounded memory; what
 * rundump_finish embeds is only what came after.  0 or sink's error. */
int rundump_drain_text(struct rundump *d, int (*sink)(void *userdata, const char *text, size_t len),
		       void *userdata);
/* Bytes of text waiting to be drained. */
size_t rundump_text_pending(struct rundump *d);
/* A workload's state as its run knows it now (the log's state records
 * before a --since window are not read); only for workloads dumped. */
void rundump_set_state(struct rundump *d, const char *workload, const char *state,
		       const char *reason);
/* The result: a JSON object ({"ok":true,...} shaped as the daemon's
 * replies), with "csv" or "hdr" text for those formats. */
json_t *rundump_finish(struct rundump *d);
void rundump_free(struct rundump *d);

/* The wall-clock span [first interval start, last interval end] of a log:
 * what merge intersects; and, if ret_interval_ns, the length most of its
 * intervals have (to the ms).  0 or -errno. */
int rundump_log_span(const char *path, uint64_t *ret_from_ns, uint64_t *ret_to_ns,
		     uint64_t *ret_interval_ns);
/* Adds the logs of hosts that ran side by side, read together in
 * wall-clock order (the interval records of each slice of the overlap
 * from every log before any of the next slice), with the filter's
 * merge_wall: one row a slice for the fleet.  -errno if one cannot be
 * read; ret_notes as rundump_add_log's, for all. */
int rundump_merge_logs(struct rundump *d, const char *const *paths, size_t n, char **ret_notes);

/* The host records added so far (runlog.h, "host"), as rundump_finish
 * gives them: JSON, {"intervals", SECTION: {NAME: {"mean", "max"}}};
 * report, {"slices": [{"index", "steal_max", "iowait_max", "util_max"}]}
 * (index: the slice of slice_ns the host interval began in).  A new
 * reference; NULL when there were none. */
json_t *rundump_host(const struct rundump *d);
/* The host records' accumulators as they stand (a copy; NULL: none yet),
 * and put back: what a checkpoint keeps of them. */
json_t *rundump_host_state(const struct rundump *d);
int rundump_host_restore(struct rundump *d, json_t *state);

/* HdrHistogram's compressed V2 encoding of a histogram, base64. */
char *rundump_hdr_encode(const struct hist *h);

#endif
