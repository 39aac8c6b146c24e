/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_CONFIG_H
#define SOAK_OBJ_CONFIG_H

#include <stdio.h>

#include "config.h"
#include "config_json.h"

/* The object workload's part of a workload's configuration. */
struct object_config;

/* Parses the object-specific keys of obj into w->object; problems go
 * through cfg_report. */
void obj_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w);
void obj_config_free(struct object_config *o);
/* Its part of the resolved plan: JSON members, each line indented by 5. */
void obj_config_print(const struct object_config *o, FILE *out);

#endif
