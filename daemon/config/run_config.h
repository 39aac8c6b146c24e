/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The configuration as soakd uses it: the types every part of the parser
 * fills (config.c the run and device workloads, config_act.c ACT's models,
 * obj_config*.c object workloads, config_trace.c and config_export.c their
 * "run" sections) and the rest of soakd reads, with the names printed for
 * them.  The sub-parsers depend on this, config.c on the sub-parsers.
 */
#ifndef SOAK_RUN_CONFIG_H
#define SOAK_RUN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "workload/sched.h"

/* Hard limits on what a config may ask for. */
#define CONFIG_MAX_BYTES (1u << 20)
#define CONFIG_MAX_WORKLOADS 64
#define CONFIG_MAX_TARGETS 64
#define CONFIG_MAX_BLOCK_SIZES 16
#define CONFIG_MAX_QUEUE_DEPTH 4096
#define CONFIG_MAX_NAME 64
#define CONFIG_MAX_RATE 1e8
/* A device target's I/O buffers (dev_engine.c allocates them). */
#define CONFIG_MAX_BUFFER_BYTES_PER_TARGET (UINT64_C(1) << 30)

enum workload_type {
	WORKLOAD_DEVICE,
	WORKLOAD_OBJECT,
};

enum device_model {
	MODEL_PATTERN,
	MODEL_ACT_STORAGE,
	MODEL_ACT_INDEX,
};

enum access_pattern {
	ACCESS_RANDOM,
	ACCESS_SEQUENTIAL,
};

enum arrival {
	ARRIVAL_UNIFORM,
	ARRIVAL_POISSON,
};

struct object_config;   /* obj_config.h */

/*
 * ACT's parameters (act_storage and act_index), under ACT's names in snake
 * case, and the rates ACT derives from them.  Request rates are totals over
 * all devices, as in ACT's config files; the derived rates are per device.
 */
struct act_config {
	double load;                    /* "30x": 30; 0 when the rates are given */
	double read_reqs_per_sec;
	double write_reqs_per_sec;
	uint32_t record_bytes;
	uint32_t record_bytes_range_max; /* 0: all records are record_bytes */
	uint32_t large_block_op_kbytes;
	unsigned replication_factor;
	unsigned update_pct;
	unsigned defrag_lwm_pct;
	unsigned service_threads;
	unsigned cache_threads;

	/* Derived, per device, at scale 1. */
	uint32_t record_stored_bytes;   /* rounded up to 16 bytes */
	uint32_t record_stored_bytes_max;
	uint32_t records_per_block;     /* whole mean-sized records per large block, as ACT counts */
	double read_rate;               /* act-storage: record reads incl. update_pct's internal reads;
					 * act-index: service-thread 4 KiB reads */
	double large_block_rate;        /* act-storage: large-block reads = writes */
	double cache_rate;              /* act-index: cache-thread reads = writes */
};

/* Device data verification ("verify": true and its keys; config_verify.c). */
enum verify_resume {
	VERIFY_RESUME_TOUCHED,   /* read back the blocks written in the unflushed epochs */
	VERIFY_RESUME_FULL,      /* read back the whole working region */
	VERIFY_RESUME_NONE,      /* nothing: uncertain blocks settle at their next read */
};

struct verify_config {
	bool on;
	bool fill;                   /* write generation 0 over the region before the run */
	bool pre_read;               /* read and check a block before overwriting it */
	bool fua;                    /* every write durable when it completes (RWF_DSYNC) */
	uint64_t flush_interval_ns;  /* default 1 s */
	enum verify_resume on_resume;
};

struct target_config {
	char *path;          /* absolute */
	bool destroy_data;
	bool allow_unsafe_path; /* lift dev_path.h's refusals for this target */
};

struct block_size_weight {
	uint32_t bytes;
	uint32_t weight;
};

/* "drift": change alarms; see config_drift.h. */
enum drift_metric { DRIFT_P99, DRIFT_P999, DRIFT_THROUGHPUT, DRIFT_ERRORS, DRIFT_METRICS };
enum drift_sensitivity { DRIFT_LOW, DRIFT_NORMAL, DRIFT_HIGH };
struct drift_config {
	bool enabled;
	uint64_t window_ns;
	enum drift_sensitivity sensitivity;
	unsigned metrics;            /* 1 << enum drift_metric */
	bool stop;                   /* "on_drift": "stop" */
};

struct workload_config {
	char name[CONFIG_MAX_NAME];
	enum workload_type type;
	enum device_model model;
	bool autostart;

	/* Device, model pattern */
	struct target_config targets[CONFIG_MAX_TARGETS];
	size_t n_targets;
	uint64_t file_size;          /* regular files: created/extended to this; 0: use existing size */
	unsigned read_pct;
	struct block_size_weight block_sizes[CONFIG_MAX_BLOCK_SIZES];
	size_t n_block_sizes;
	enum access_pattern access;
	unsigned queue_depth;

	/* Device, models act-storage and act-index */
	struct act_config act;
	bool prep;                   /* zero then salt block devices before starting */
	struct verify_config verify;

	/* Object workloads */
	struct object_config *object;

	/* Scheduling */
	double rate;                 /* ops/s in total; 0 = closed loop */
	enum arrival arrival;
	struct sched_step steps[SCHED_MAX_STEPS];
	size_t n_steps;
	uint64_t start_offset_ns;    /* offset of this workload's schedule in the run */
	uint64_t max_lag_ns;         /* 0 = never stop for lag */
	uint64_t seed;
	/* Driven through "certify"'s steps: steps[] is its loads, one hold
	 * each; certify_unit is the scale of a "1x" step (1 / ACT's load). */
	bool certified;
	double certify_unit;
	bool searched;               /* its rate is "search"'s probes (config_search.h) */
	struct drift_config drift;   /* the run's unless the workload has its own */
};

/* "run": {"trace": ...}; see config_trace.h. */
struct trace_config {
	bool blk, tcp;               /* start state of each probe family */
	bool all_devices;            /* block probes: every device, not just the targets' */
	bool blk_stash_always;       /* "blk_timestamps": "map" */
	unsigned max_devices;        /* slots for all_devices */
	unsigned max_endpoints;
	char **tcp_endpoints;        /* "HOST:PORT" */
	size_t n_tcp_endpoints;
};

/* "run": {"exports": ...}; see config_export.h. */
struct export_config {
	char *prom_textfile;         /* absolute; NULL: no Prometheus textfile */
	char *statsd_address;        /* "HOST:PORT"; NULL: no StatsD */
	char *statsd_prefix;         /* NULL: "soakd" */
};

/* "run": {"ctl": {"read_only_for_all": BOOL}}: whether peers that may not
 * change state (neither root nor in group soakd) may still read status,
 * dumps and reports over the control socket (default true). */
struct ctl_config {
	bool read_only_for_all;
};

/* "run": {"certify": ...}; see config_certify.h. */
#define CERTIFY_MAX_THRESHOLDS 16
struct certify_config {
	bool enabled;
	char workload[CONFIG_MAX_NAME];  /* "": every workload of the run */
	double loads[SCHED_MAX_STEPS];   /* each step's load, the N of "Nx" */
	size_t n_steps;
	uint64_t hold_ns;                /* each step lasts this long */
	uint64_t confirm_ns;             /* the highest step passed again, this long; 0: not */
	uint64_t thresholds_ns[CERTIFY_MAX_THRESHOLDS];
	double limits_pct[CERTIFY_MAX_THRESHOLDS]; /* < 0: no limit */
	size_t n_thresholds;
};

/* "run": {"search": ...}; see config_search.h. */
#define SEARCH_MAX_WINDOWS 16
struct search_config {
	bool enabled;
	char workload[CONFIG_MAX_NAME];  /* the one searched */
	double percentile;               /* e.g. 99 */
	uint64_t below_ns;               /* the target that percentile must stay below */
	uint64_t window_ns;              /* each window judged alone */
	unsigned windows;                /* windows per probe */
	double min_rate, max_rate;       /* ops/s: where the bisection starts */
	double resolution;               /* stop when hi - lo <= resolution * hi */
	double then_fraction;            /* 0: no soak after the search */
	uint64_t then_ns;                /* the soak's length (CONFIG_FOREVER_NS: until stopped) */
};

struct run_config {
	char *path;                  /* the config file, absolute */
	char name[CONFIG_MAX_NAME];
	uint64_t duration_ns;        /* 0 = until stopped */
	uint64_t interval_ns;
	uint64_t slice_ns;            /* intervals fold into slices of this (default 1h) */
	bool exit_on_finish;         /* "on_finish": "exit" (default) | "idle" */
	char *socket_path;           /* NULL: default */
	struct trace_config trace;
	struct export_config exports;
	struct ctl_config ctl;
	int64_t start_at_ns;         /* "start_at": CLOCK_REALTIME ns since the epoch; 0: at once */
	struct certify_config certify;
	struct search_config search;
	struct drift_config drift;   /* every workload's default */
	struct workload_config *workloads;
	size_t n_workloads;
};

/* A duration that never ends: "until stopped". */
#define CONFIG_FOREVER_NS (UINT64_C(1) << 62)

const char *workload_type_name(enum workload_type t);
const char *device_model_name(enum device_model m);
/* Keys every workload takes, for the parsers of each kind. */
extern const char *const config_common_workload_keys[];
const char *access_name(enum access_pattern a);
/* A workload's targets as the plan's JSON list items. */
void config_print_targets(const struct workload_config *w, FILE *out);

#endif
