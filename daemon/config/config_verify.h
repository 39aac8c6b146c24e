/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_VERIFY_H
#define SOAK_CONFIG_VERIFY_H

#include <stdio.h>

#include "config_json.h"
#include "run_config.h"

/*
 * A device workload's data verification keys, the same for every model:
 * "verify": true, "fill", "pre_read", "flush_interval", "fua" and
 * "verify_on_resume".  The other keys need "verify": true; with it, the
 * blocks soakd writes must be whole verify blocks (4 KiB).
 */
#define CONFIG_VERIFY_BLOCK 4096u
#define CONFIG_VERIFY_FLUSH_DEFAULT_NS (UINT64_C(1000000000))

/* NULL-terminated: for the key lists of each device model. */
extern const char *const config_verify_keys[];

void verify_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w);
/* ", \"verify\": {...}" for the plan, or nothing when verification is off. */
void verify_config_print(const struct verify_config *v, FILE *out);
const char *verify_resume_name(enum verify_resume r);

#endif
