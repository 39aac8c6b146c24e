/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_CERTIFY_H
#define SOAK_CONFIG_CERTIFY_H

#include <stdio.h>

#include <jansson.h>

#include "config_json.h"
#include "run_config.h"

/*
 * "run": {"certify": {...}}: a certification drives a workload (or every
 * workload of the run) through steps of load, each held for "hold" and
 * judged against ACT's thresholds and limits (report.h's defaults unless
 * given); run/certify.c judges them.  The steps become the certified
 * workloads' schedules here, so the scheduler changes the rate at each
 * step boundary exactly, as it does for any schedule:
 *
 *   "steps": ["1x", "3x", "6x"]             the loads, increasing; or
 *   "start": "1x", "factor": 2, "max": "8x"  1x, 2x, 4x, 8x
 *
 * A load "Nx" is N times the workload's "rate"; for ACT's models N times
 * ACT's 1x load, whatever "load" the workload itself names.
 *
 * Parsed after the workloads (the steps replace their schedules);
 * workloads is the configuration's "workloads" list, for the keys each
 * workload gave.
 */
void certify_config_parse(struct cfg_ctx *c, json_t *v, json_t *workloads,
			  struct run_config *run);

/* The plan's "certify" line, after the run's other keys (", " first). */
void certify_config_print(const struct certify_config *cc, FILE *out);

/* A step's load as text: "3x", "1.5x". */
void certify_load_name(double load, char *buf, size_t len);

#endif
