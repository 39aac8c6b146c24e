/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_TARGETS_H
#define SOAK_CONFIG_TARGETS_H

#include "config_json.h"
#include "run_config.h"

/*
 * obj[key] ("targets" of a pattern workload, "devices" of an ACT model):
 * a non-empty list of paths or {"path", "destroy_data",
 * "allow_unsafe_path"}, each made absolute, none listed twice and none
 * holding a control character (it goes into log lines and sd_notify's
 * STATUS=).
 */
void config_parse_targets(struct cfg_ctx *c, json_t *obj, const char *key,
			  struct workload_config *w);

#endif
