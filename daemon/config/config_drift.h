/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_DRIFT_H
#define SOAK_CONFIG_DRIFT_H

#include <stdio.h>

#include "config_json.h"
#include "run_config.h"

/*
 * "drift": change alarms (daemon/drift), on "run" (every workload's
 * default) or on a workload (its own, overriding the run's):
 *
 *   "drift": false                  none (the default)
 *   "drift": true                   on, with the defaults below
 *   "drift": {
 *     "window": "5m",               the windows compared: the first after
 *                                   the workload starts (or its rate
 *                                   changes) with the latest; a whole
 *                                   number of intervals, 2 or more
 *     "sensitivity": "normal",      "low", "normal" or "high"
 *     "metrics": ["p99", "p999", "throughput", "errors"],
 *     "on_drift": "alarm"           "alarm", or "stop": the workload stops
 *   }
 */

#define DRIFT_MAX_WINDOW_NS (UINT64_C(24) * 3600 * 1000000000)

void drift_config_parse(struct cfg_ctx *c, json_t *v, const struct run_config *run,
			struct drift_config *d);
/* Its part of the plan: `"drift": {...}`; nothing when off. */
void drift_config_print(const struct drift_config *d, FILE *out);
const char *drift_metric_name(enum drift_metric m);
const char *drift_sensitivity_name(enum drift_sensitivity s);

#endif
