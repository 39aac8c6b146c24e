/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_SEARCH_H
#define SOAK_CONFIG_SEARCH_H

#include <stdio.h>

#include <jansson.h>

#include "config_json.h"
#include "run_config.h"

/*
 * "run": {"search": {...}}: the highest open-loop rate whose latency
 * percentile stays below a target, found by bisection over the rate
 * (run/search.c):
 *
 *   "percentile": 99, "below": "2ms"   the target (p99 under 2 ms)
 *   "window": "30s", "windows": 3      each probe is held for 3 windows of
 *                                      30 s, each judged alone; a probe
 *                                      passes when most of its windows do
 *   "min": 1000, "max": 50000          ops/s: the bisection's bounds
 *   "resolution": 0.05                 it stops when the bounds are within
 *                                      5% of each other
 *   "then": "80%", "then_for": "24h"   then soaks at 80% of the rate found
 *
 * The workload (the run's only one, or "workload") keeps its own shape
 * (ops, mix, sizes); its "rate" is only the unit its probes scale.  The
 * load stays open loop: latency is measured from each op's intended time.
 */
void search_config_parse(struct cfg_ctx *c, json_t *v, json_t *workloads,
			 struct run_config *run);

/* The plan's "search" line, after the run's other keys (", " first). */
void search_config_print(const struct search_config *sc, FILE *out);

#endif
