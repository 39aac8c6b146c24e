/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_H
#define SOAK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched.h"

/* Hard limits on what a config may ask for. */
#define CONFIG_MAX_BYTES (1u << 20)
#define CONFIG_MAX_WORKLOADS 64
#define CONFIG_MAX_TARGETS 64
#define CONFIG_MAX_BLOCK_SIZES 16
#define CONFIG_MAX_QUEUE_DEPTH 4096
#define CONFIG_MAX_NAME 64
#define CONFIG_MAX_RATE 1e8

enum workload_type {
	WORKLOAD_DEVICE,
	WORKLOAD_OBJECT,
};

enum device_model {
	MODEL_PATTERN,
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

struct target_config {
	char *path;          /* absolute */
	bool destroy_data;
};

struct block_size_weight {
	uint32_t bytes;
	uint32_t weight;
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
};

struct run_config {
	char *path;                  /* the config file, absolute */
	char name[CONFIG_MAX_NAME];
	uint64_t duration_ns;        /* 0 = until stopped */
	uint64_t interval_ns;
	bool exit_on_finish;         /* "on_finish": "exit" (default) | "idle" */
	char *socket_path;           /* NULL: default */
	struct workload_config *workloads;
	size_t n_workloads;
};

/*
 * Load and validate a config.  On failure returns a negative errno and
 * writes one "FILE:LINE:COLUMN: message" line per problem to errout.
 */
int config_load(const char *path, FILE *errout, struct run_config **ret);
/* Same, from a string; `name` is what error lines call the file. */
int config_load_string(const char *text, const char *name, FILE *errout, struct run_config **ret);
void config_free(struct run_config *c);

/* The resolved plan: every workload with defaults filled in and its
 * schedule with absolute offsets; JSON-shaped text for people. */
void config_print_plan(const struct run_config *c, FILE *out);

const char *workload_type_name(enum workload_type t);
/* Keys every workload takes, for the parsers of each kind. */
extern const char *const config_common_workload_keys[];
const char *access_name(enum access_pattern a);

#endif
