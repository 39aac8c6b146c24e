/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RUNMODEL_H
#define SOAK_RUNMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hist.h"

/*
 * A whole run read from its interval log (see runlog.h) into what the HTML
 * report and soakctl cmp show: per workload and op the latency and rate of
 * every interval, the run's and every slice's histogram, the counters
 * (errors, missed, every verify class), the kernel's series beside them,
 * host records as series, drift events, gaps and restarts.
 *
 * The reader is tolerant: a field that is absent is simply not shown, and
 * any numeric member of a verify object, a host record's groups or a kernel
 * series is taken by name, so fields added later appear without a change
 * here.  Memory grows with the number of intervals (a few dozen bytes per
 * series point), never with the ops.
 */

#define RM_MAX_WORKLOADS 64
#define RM_MAX_OPS 16
#define RM_MAX_SERIES 512
#define RM_MAX_SLICES 100000
/* Slices kept over all ops (32 bytes each): a year of hourly slices for
 * 64 workloads of 8 ops; a log whose records jump far ahead (copied from
 * elsewhere, damaged) asked for gigabytes.  Past it an interval stays in
 * its op's totals only. */
#define RM_MAX_SLICE_ENTRIES (UINT64_C(1) << 22)
#define RM_MAX_CERTIFY 1000

/* Values over [t0, t1] (run time, seconds): the lowest and the highest of
 * the intervals it stands for (one interval: the same); NAN: no value (no
 * ops). */
struct rm_point {
	double t0, t1;
	float v, vmax;
};

/* A series keeps at most RM_SERIES_POINTS points: past that, neighbours
 * are merged in pairs (their span, lowest and highest), so a week of 1 s
 * intervals costs what a few hours do and the charts, which have fewer
 * pixel columns than that, lose nothing: no maximum is dropped. */
#define RM_SERIES_POINTS 8192

struct rm_series {
	char name[96];      /* "p99", "kernel.blk.read.p99", "cpu.iowait", "disks.sda.util_pct" */
	struct rm_point *pts;
	size_t n, cap;
	size_t per_point;   /* intervals a point stands for (1, 2, 4, ...) */
	size_t last_n;      /* intervals in the last point so far */
};

struct rm_counter {
	char name[32];
	uint64_t value;
};

struct rm_slice {
	uint8_t *bytes;             /* NULL: none yet, or it is the open one */
	size_t len;
	double secs;                /* seconds of intervals in it */
	uint64_t count;             /* ops completed in it */
};

struct rm_op {
	char name[64];
	uint64_t count, errors, missed, bytes, corrupt;
	double target_ops;          /* scheduled ops over the run */
	double active_s;            /* seconds of its intervals */
	struct hist *lat;           /* whole run (latency from the intended time) */
	/* Per slice index: its histogram serialised (hist_serialize: a few
	 * hundred bytes where a struct hist holds 128 B-1 KiB per octave in
	 * use, so a year of hourly slices stays small), but for the slice
	 * being filled, which is kept whole in open; read them with
	 * runmodel_slice(). */
	struct rm_slice *slices;
	size_t n_slices;
	struct hist *open;
	size_t open_idx;
	bool has_open;
	struct rm_counter verify[24];
	size_t n_verify;
	/* per interval: p50, p99, p999, max (µs), rate, target (ops/s), errors, missed */
	struct rm_series *s_p50, *s_p99, *s_p999, *s_max, *s_rate, *s_target, *s_errors, *s_missed;
};

struct rm_late {
	double t0, t1, ms;
};

struct rm_event {
	char workload[64], op[64], metric[64];
	char event[32];     /* "drift", ... ("" when the record names none) */
	double t;           /* run time, s */
	char message[256];
};

struct rm_workload {
	char name[64];
	char state[16], reason[256];
	struct rm_op ops[RM_MAX_OPS];
	size_t n_ops;
	struct rm_series *kernel[RM_MAX_SERIES / 8];   /* "blk.read.p99" ... */
	size_t n_kernel;
	struct rm_late *late;
	size_t n_late;
	uint64_t stalled_intervals, intervals;
	double first_s, last_s;
};

struct rm_restart {
	uint64_t wall_ns;
	double run_s;
	bool resumed;
	char version[64];
};

struct rm_gap {
	double run_s, down_s;
};

struct runmodel {
	char run[64];
	uint64_t slice_ns;
	struct rm_workload *w[RM_MAX_WORKLOADS];
	size_t n;
	struct rm_series *host[RM_MAX_SERIES];     /* "cpu.user", "psi.io_some", ... */
	size_t n_host;
	struct rm_restart *restarts;
	size_t n_restarts;
	struct rm_gap *gaps;
	size_t n_gaps;
	struct rm_event *events;
	size_t n_events;
	/* Certification records as they are ("type": "certify" and "certify_*":
	 * steps, answer), at most RM_MAX_CERTIFY, for the report to show. */
	json_t *certify;
	/* Capacity search records ("type": "search": a probe each, with
	 * "probe", then the answer, with "answer_rate"), at most
	 * RM_MAX_CERTIFY. */
	json_t *search;
	double end_s;       /* last interval's end */
	uint64_t wall_start_ns;
	uint64_t skipped;   /* records not understood */
	struct hist *scratch;   /* for merging into a closed slice */
	uint64_t slice_entries; /* over all ops, RM_MAX_SLICE_ENTRIES at most */
	/* Op intervals (an interval record's op each) past those bounds: in
	 * their ops' totals, in no slice, so no verdict by slice covers them. */
	uint64_t slices_dropped;
};

/* slice_ns 0: one hour, as soakd's default slices. */
struct runmodel *runmodel_new(uint64_t slice_ns);
void runmodel_free(struct runmodel *m);
/* Adds a record; 0, or -EINVAL for one not understood (counted, skipped),
 * -ENOMEM. */
int runmodel_add(struct runmodel *m, json_t *record);
/* Reads a run directory or its log; 0 or -errno with why in err. */
int runmodel_load(struct runmodel *m, const char *dir_or_log, char *err, size_t errlen);

/* Adds a dump's totals (soakctl dump or merge --format json, with their
 * latency_hist): whole-run figures only, no intervals or slices.  0, or
 * -EINVAL for a dump without workloads or histograms, -ENOMEM. */
int runmodel_add_dump(struct runmodel *m, json_t *dump);

struct rm_workload *runmodel_workload(const struct runmodel *m, const char *name);
struct rm_op *runmodel_op(const struct rm_workload *w, const char *name);
/* A series of m (host) or w (kernel) by name, or NULL. */
struct rm_series *runmodel_find(struct rm_series *const *list, size_t n, const char *name);

/* The histogram of slice i: the open one, or decoded into *scratch; NULL
 * when the slice has none. */
const struct hist *runmodel_slice(const struct rm_op *o, size_t i, struct hist *scratch);

/* Index of the slice whose p99.9 is highest, or -1 when none has ops. */
long runmodel_worst_slice(const struct rm_op *o);
/* Per-slice values of a statistic, for the noise test of cmp: "p50",
 * "p99", "p999" (µs) or "rate" (ops completed per second of the slice).
 * Only whole slices count (at least 90% of slice_ns covered by intervals:
 * the run's first and last are often cut short).  Returns the number
 * written. */
size_t runmodel_slice_values(const struct rm_op *o, const char *stat, uint64_t slice_ns,
			     double *out, size_t max);

#endif
