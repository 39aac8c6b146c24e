/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_TRACE_H
#define SOAK_CONFIG_TRACE_H

#include <stdio.h>

#include "config_json.h"
#include "run_config.h"

/*
 * "run": {"trace": ...}: the kernel probes' start state and what they watch.
 *
 *   "trace": true | false          both families on / off at start
 *   "trace": {
 *     "blk": true, "tcp": true,    start state of each family (default on)
 *     "all_devices": false,        block: every device, not just the targets'
 *     "max_devices": 64,           block: slots for all_devices
 *     "blk_timestamps": "auto",    "auto": the block layer's own stamps where
 *                                  it keeps them, else a per-request map;
 *                                  "map": always the map (for comparison)
 *     "tcp_endpoints": ["127.0.0.1:9000", "[::1]:80", "s3.local:443"],
 *                                  TCP: remote endpoints to watch besides the
 *                                  object workloads' own
 *     "max_endpoints": 16          TCP: endpoints soakd can watch at once
 *   }
 */

#define TRACE_MAX_DEVICES 1024
#define TRACE_MAX_ENDPOINTS 256
#define TRACE_MAX_ENDPOINT_LEN 300

void trace_config_defaults(struct trace_config *t);
void trace_config_parse(struct cfg_ctx *c, json_t *v, struct trace_config *t);
void trace_config_free(struct trace_config *t);
/* Its part of the resolved plan: one JSON member, `"trace": {...}`. */
void trace_config_print(const struct trace_config *t, FILE *out);

/* Splits "host:port", "[v6addr]:port" into host (brackets removed) and
 * port.  Returns 0 or -EINVAL with a message in err. */
int trace_split_endpoint(const char *text, char *host, size_t hostlen, unsigned *port,
			 char *err, size_t errlen);

#endif
