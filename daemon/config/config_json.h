/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CONFIG_JSON_H
#define SOAK_CONFIG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "base/jsonpos.h"

/*
 * Reading config values with errors located in the source text.  The
 * parser keeps the path of the value it is looking at (cfg_push_key /
 * cfg_push_index / cfg_pop); cfg_report prints FILE:LINE:COLUMN for that
 * path.  Each cfg_get_* reads obj[key] when present, reports a wrong type or
 * value, and leaves *ret untouched unless the value is good.  Parsers for
 * workload kinds (device models, object protocols) build on these.
 */

#define CFG_MAX_DEPTH 8

struct cfg_ctx {
	const char *name;
	const char *text;
	size_t len;
	FILE *errout;
	unsigned errors;
	struct jsonpos_step path[CFG_MAX_DEPTH];
	size_t depth;
	size_t overflow;
};

/* Errors reported with their place; past these, only counted. */
#define CFG_MAX_REPORTED 100
/* text with control characters as '?'. */
void cfg_print_clean(FILE *out, const char *text);

void cfg_push_key(struct cfg_ctx *c, const char *key);
void cfg_push_index(struct cfg_ctx *c, size_t index);
void cfg_pop(struct cfg_ctx *c);
void cfg_report(struct cfg_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Points at the key of the current path rather than its value. */
void cfg_report_key(struct cfg_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports keys of obj not in the NULL-terminated list. */
void cfg_check_keys(struct cfg_ctx *c, json_t *obj, const char *what, const char *const *allowed);
void cfg_check_keys2(struct cfg_ctx *c, json_t *obj, const char *what, const char *const *allowed,
		     const char *const *more);
bool cfg_get_string(struct cfg_ctx *c, json_t *obj, const char *key, const char **ret);
void cfg_get_bool(struct cfg_ctx *c, json_t *obj, const char *key, bool *ret);
void cfg_get_number(struct cfg_ctx *c, json_t *obj, const char *key, double min, double max,
		    double *ret);
void cfg_get_uint(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		  uint64_t *ret);
/* Durations: "90s" or a number of seconds; sizes: "4KiB" or a number of bytes. */
bool cfg_parse_duration_value(struct cfg_ctx *c, json_t *v, const char *what, uint64_t *ret);
bool cfg_get_duration(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t *ret);
bool cfg_parse_size_value(struct cfg_ctx *c, json_t *v, const char *what, uint64_t *ret);
bool cfg_get_size(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t *ret);
/*
 * A name that becomes a file or directory name (run, workload, systemd
 * credential): 1-63 letters, digits, '-', '_' or '.', not starting with
 * '.', so "." and ".." (and hidden files) are never names.  Returns NULL
 * when s is valid, else what is wrong with it.
 */
const char *cfg_name_problem(const char *s);
bool cfg_valid_name(const char *s);
/* malloc'd absolute path, relative ones resolved against the working directory. */
char *cfg_absolute_path(const char *path);

#endif
