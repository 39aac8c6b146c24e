/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_ACT_H
#define SOAK_CONFIG_ACT_H

#include <stddef.h>
#include <stdio.h>

#include "config_json.h"
#include "run_config.h"

/* ACT's defaults: 1536-byte records, 128 KiB large blocks, replication
 * factor 1, no updates, defrag at 50%, 5 service threads per CPU, 8 cache
 * threads. */
void act_defaults(struct act_config *a);

/*
 * ACT's arithmetic, per device:
 *   act-storage: read = (read_reqs + write_reqs * update_pct/100) / devices;
 *     large-block reads = writes = replication_factor * write_reqs
 *       * mean stored record bytes / large block bytes * 100/(100 - lwm) / devices
 *     (the README's arithmetic; ACT's code rounds records per block down,
 *     which differs by under 1% for ACT's sizes);
 *   act-index: read = (read_reqs + replication_factor * write_reqs) / devices;
 *     cache reads = cache writes = replication_factor * write_reqs
 *       * 100/(100 - lwm) / devices.
 * A load multiple N sets read_reqs = 2000 N devices, write_reqs = 1000 N devices.
 */
void act_derive(struct act_config *a, enum device_model model, size_t n_devices);

void act_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w);
void act_config_print(const struct workload_config *w, FILE *out);

#endif
