/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_LIMITS_H
#define SOAK_CONFIG_LIMITS_H

#include <jansson.h>

#include "config_json.h"
#include "run_config.h"

/*
 * Limits that span several keys of a workload, or several workloads, so
 * that no single key's range can hold them: a schedule's length and op
 * count, its peak rate, a device workload's I/O buffers, and the run's
 * totals of threads, connections and buffers.  Each is reported as
 * FILE:LINE:COLUMN at the key a user would change, at load time rather
 * than when the workload starts.
 */

/* Whole-schedule limits: the scheduler counts ops exactly up to 2^53
 * (sched.c) and times in ns up to 2^62 (about 146 years). */
#define CONFIG_MAX_SCHEDULE_OPS SCHED_MAX_OPS
#define CONFIG_MAX_SCHEDULE_NS (UINT64_C(1) << 62)
/* I/O buffers over the run (per target: CONFIG_MAX_BUFFER_BYTES_PER_TARGET). */
#define CONFIG_MAX_BUFFER_BYTES_TOTAL (UINT64_C(8) << 30)
/* Threads: one per device target, one per object workload thread. */
#define CONFIG_MAX_STREAMS 1024
/* Object transfers in flight over the run: each may hold a connection,
 * and soakd.service allows 65536 open files. */
#define CONFIG_MAX_CONNECTIONS 16384
/* Object names in the pools over the run: each takes 24 bytes (obj_pool.h),
 * so this is at most 600 MB. */
#define CONFIG_MAX_OBJECTS_TOTAL 25000000u

/* A parsed workload (obj) without errors so far.  A workload that runs
 * "forever" at a rate too high to count ops exactly that long is given the
 * longest schedule that can (years at any allowed rate). */
void config_check_workload_limits(struct cfg_ctx *c, json_t *obj, struct workload_config *w,
				  const struct run_config *run);
/* The run's totals, once every workload parsed without errors. */
void config_check_run_limits(struct cfg_ctx *c, const struct run_config *run);

#endif
