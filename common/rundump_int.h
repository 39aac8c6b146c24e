/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What rundump.c (reading the log, merging intervals into slices),
 * rundump_out.c (the CSV rows, HdrHistogram log lines and final report it
 * writes) and rundump_host.c (the host records) share.  Only these files
 * include this.
 */
#ifndef SOAK_RUNDUMP_INT_H
#define SOAK_RUNDUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hist.h"
#include "rundump.h"

#define RD_MAX_OPS 16
#define RD_MAX_WORKLOADS 256
#define RD_MAX_TARGETS 64
/* CSV: the host's last interval beside each row (rundump_host.c). */
#define RD_HOST_CSV_COLUMNS ",host_cpu_user_pct,host_cpu_system_pct,host_cpu_iowait_pct," \
	"host_cpu_steal_pct,host_cpu_soakd_pct,host_psi_io_some_pct,host_disk_util_pct," \
	"host_disk_queue_depth,drift"
#define RD_HOST_CSV_N 8
#define RD_MAX_DRIFT_MARKS 64

/*
 * The "verify" object of a recorded op: object ops' checks against the
 * write ledger (checked, lost, resurrected, stale, list_missing,
 * list_extra, uncertain) and device ops' block checks (checked, stale,
 * uncertain, and misdirected, torn, foreign, unchecked, corrupt), one list
 * for both: the first seven are the object's, in the CSV's order.  An
 * object op's "corrupt" there is its op's; a device op's, its class
 * (CRC mismatches), the op's corrupt being the sum of its failures.
 */
#define RD_VERIFY_CLASSES 13
#define RD_VERIFY_CSV_COLUMNS \
	"checked,lost,resurrected,stale,list_missing,list_extra,uncertain,misdirected,torn," \
	"foreign,unchecked,verify_corrupt,flush_failed"
extern const char *const rd_verify_names[RD_VERIFY_CLASSES];
#define RD_VERIFY_FLUSH_FAILED 12   /* its index in rd_verify_names */

struct rd_op {
	char name[64];
	uint64_t count, errors, bytes, corrupt;
	uint64_t verify[RD_VERIFY_CLASSES];
	bool dev_verify;            /* its "verify" was a device op's */
	uint64_t missed, pending;   /* pending: a gauge, the latest interval's */
	double target_ops;
	struct hist *lat, *svc;
	struct hist *iss;                  /* issue_delay: soakd's own lateness */
	/* Device ops with "verify": blocks by class, in rd_verify_names' order. */
};

struct rd_ops {
	struct rd_op op[RD_MAX_OPS];
	size_t n;
};

/*
 * The kernel's figures the intervals of a workload recorded ("kernel" of
 * an interval record): the block layer's per request type, with its
 * latency histogram; TCP's counts (the records keep no histogram of it).
 */
#define RD_MAX_KBLK_OPS 8
struct rd_kernel {
	struct rd_kblk {
		char name[16];
		uint64_t count, errors, bytes, unstamped, unissued;
		struct hist *lat;
	} blk[RD_MAX_KBLK_OPS];
	size_t n_blk;
	bool tcp;                   /* some interval had kernel.tcp */
	uint64_t srtt_samples, connects, connect_failures, retransmits, resets_sent,
		resets_received;
};

struct rd_workload {
	char name[64];
	char state[16];
	char reason[256];
	uint64_t active_ns, lag_max_ns, intervals;
	uint64_t sched_ns;          /* of active_ns, intervals with ops scheduled: rate_target's time */
	uint64_t wall_first_ns, wall_last_ns;  /* merge: the time the intervals cover */
	unsigned sources;                  /* merge: logs with intervals of it */
	uint8_t *seen;                     /* ... a bit a log */
	size_t seen_len;
	struct rd_ops totals;
	struct rd_kernel kernel;           /* JSON dumps */
	char *target_path[RD_MAX_TARGETS];
	struct rd_ops *targets;            /* [RD_MAX_TARGETS], allocated on first use */
	size_t n_targets;
	/* The slice being folded (CSV/HDR with a slice length, report). */
	bool slice_open;
	uint64_t slice_index, slice_start_ns, slice_end_ns, slice_wall_start_ns, slice_lag_ns;
	uint64_t slice_late_ns;            /* generator_late: by how much; 0: not */
	uint64_t late_intervals, late_max_ns; /* intervals marked generator_late */
	struct rd_ops slice;
	json_t *report_ops;                /* report: OP -> {"slices": [...]} */
};

struct rundump {
	enum rundump_format format;
	struct rundump_filter f;
	char run[64];
	struct rd_workload *w[RD_MAX_WORKLOADS];
	size_t n;
	FILE *text;                        /* CSV or HDR being written */
	char *text_buf;
	size_t text_len;
	uint64_t hdr_base_wall_ns;
	bool hdr_header_done;
	uint64_t skipped;
	unsigned sources;                  /* logs added */
	unsigned source;                   /* the one being read (0 ...) */
	struct rd_op scratch;              /* one interval's op, for its row */
	json_t *host;                      /* the host records folded (rundump_host.c) */
	double host_csv[RD_HOST_CSV_N];    /* CSV: the last host record's columns */
	bool have_host_csv;
	/* CSV: drift alarms waiting for their op's next row ("drift" column). */
	struct rd_drift_mark {
		char workload[64], op[64], metrics[64];
	} drift_marks[RD_MAX_DRIFT_MARKS];
	size_t n_drift_marks;
};

/* rundump.c */

void rd_flush_slice(struct rundump *d, struct rd_workload *w);
/* A record's number: a positive integer, else 0. */
uint64_t rd_u64(json_t *j, const char *key);
/* Merged hosts (filter's merge_wall): the slice of the overlap an
 * interval of [wall_start, wall_end] belongs to, by its middle. */
uint64_t rd_wall_slice(const struct rundump *d, uint64_t wall_start, uint64_t wall_end);
/* a + b, at most INT64_MAX. */
uint64_t rd_sat_add(uint64_t a, uint64_t b);
/* Merges the base64 histogram at key (if any) into dst. */
int rd_merge_b64(struct hist *dst, json_t *j, const char *key);

/* rundump_kernel.c: a record's "kernel" into k; k emptied; k as a dump's
 * "kernel" object, NULL when its records carried none. */
int rd_kernel_add(struct rd_kernel *k, json_t *kernel);
void rd_kernel_free(struct rd_kernel *k);
json_t *rd_kernel_json(const struct rd_kernel *k);

/* rundump_host.c: "host" records (rundump_host() gives the result). */

int rd_host_add(struct rundump *d, json_t *rec);
/* The CSV columns RD_HOST_CSV_COLUMNS names, each with its leading comma
 * (empty before the first host record), and the "drift" column of
 * workload's op: the metrics whose alarms came since its last row. */
void rd_host_csv(struct rundump *d, const char *workload, const char *op);
/* An "event" record: drift alarms are kept for the CSV's next row. */
int rd_event_add(struct rundump *d, json_t *rec);

/* rundump_out.c */

/* A latency histogram's p50 ... max in microseconds. */
json_t *rd_latency_json(const struct hist *h);

void rd_csv_row(struct rundump *d, const char *workload, const struct rd_op *o,
		uint64_t start_ns, uint64_t end_ns, uint64_t lag_ns, uint64_t late_ns);

char *rd_base64(const uint8_t *data, size_t len);

void rd_hdr_line(struct rundump *d, const char *workload, const struct rd_op *o,
		 uint64_t wall_start_ns, uint64_t start_ns, uint64_t end_ns);

#endif
