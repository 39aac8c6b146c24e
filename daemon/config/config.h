/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Loading a configuration (config.c) and printing its resolved plan
 * (config_plan.c); the types are run_config.h's.
 */
#ifndef SOAK_CONFIG_H
#define SOAK_CONFIG_H

#include <stdio.h>

#include "run_config.h"

/*
 * Load and validate a config.  On failure returns a negative errno and
 * writes one "FILE:LINE:COLUMN: message" line per problem to errout.
 */
int config_load(const char *path, FILE *errout, struct run_config **ret);
/* Same, from a string; `name` is what error lines call the file. */
int config_load_string(const char *text, const char *name, FILE *errout, struct run_config **ret);
void config_free(struct run_config *c);

/* The resolved plan: every workload with defaults filled in and its
 * schedule with absolute offsets; JSON-shaped text for people. */
void config_print_plan(const struct run_config *c, FILE *out);
/* A workload's part of the plan, malloc'd (NULL: out of memory): equal
 * texts mean equal definitions. */
char *config_workload_text(const struct workload_config *w);

#endif
