/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_EXPORT_H
#define SOAK_CONFIG_EXPORT_H

#include <stdio.h>

#include "config_json.h"
#include "run_config.h"

/*
 * "run": {"exports": ...}: where soakd publishes its metrics besides the
 * socket and journald (see export.h).
 *
 *   "exports": {
 *     "prometheus": {"textfile": "/var/lib/prometheus/node-exporter/soakd.prom"},
 *                      node_exporter's textfile collector reads *.prom files
 *     "statsd": {"address": "127.0.0.1:8125",   HOST:PORT or [IPV6]:PORT, UDP
 *                "prefix": "soakd.{host}"}      default "soakd"; {host} is this
 *                                               host's name up to its first dot
 *   }
 */

#define EXPORT_MAX_PREFIX 128

void export_config_parse(struct cfg_ctx *c, json_t *v, struct export_config *e);
void export_config_free(struct export_config *e);
/* Its part of the resolved plan: one JSON member, `"exports": {...}`, with
 * the StatsD prefix as this host expands it. */
void export_config_print(const struct export_config *e, FILE *out);
/* The name part for a host, workload or op: lower case, [a-z0-9_-] only. */
void export_statsd_name(const char *in, char *out, size_t len);
/* The prefix with "{host}" replaced by this host's name up to its first
 * dot, as a StatsD name part; malloc'ed, NULL when out of memory. */
char *export_prefix_expand(const char *prefix);

#endif
