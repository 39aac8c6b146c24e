/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_STATS_JSON_H
#define SOAK_STATS_JSON_H

#include <stdbool.h>

#include <jansson.h>

#include "workload/stats.h"

/*
 * An op's statistics as a run's interval log records them: counters and
 * every histogram in its compact base64 form (empty ones left out), so a
 * record read back merges exactly as if it had never left memory.
 */
/* {"checked": N, "corrupt": N, ...} of a device op with "verify"; NULL
 * when every count is 0, unless keep_zero (ops without verify leave the
 * key out of records). */
json_t *op_verify_to_json(const uint64_t verify[OP_VERIFY_CLASSES], bool keep_zero);
json_t *op_stats_to_json(const struct op_stats *o);
/* Sets op's "verify": the object verification counters, with corrupt. */
void obj_verify_set_json(json_t *op, const struct obj_verify *v, uint64_t corrupt);
/* Adds a recorded "verify" object's counters to v. */
void obj_verify_merge_json(struct obj_verify *v, json_t *verify);
/* Merges a recorded op into dst; -EINVAL for malformed input. */
int op_stats_merge_json(struct op_stats *dst, json_t *recorded);

#endif
