/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_SIZE_H
#define SOAK_OBJ_SIZE_H

#include <stdint.h>

/*
 * Object size distributions:
 *   fixed        every object is `max` bytes
 *   uniform      uniform over [min, max]
 *   log2         as warp's --obj.randsize: equal counts in every doubling
 *                between min (default max/256, at least 128 bytes) and max,
 *                so the mean is (max - min) / ln(max / min), about 0.18 max
 *   exponential  as Tahoe's check_load: exponential with the given mean,
 *                restricted to [min, max] by drawing again
 */

#define OBJ_SIZE_LIMIT (UINT64_C(5) << 30) /* S3's largest single PUT */

enum obj_size_dist {
	OBJ_SIZE_FIXED,
	OBJ_SIZE_UNIFORM,
	OBJ_SIZE_LOG2,
	OBJ_SIZE_EXPONENTIAL,
};

struct obj_size_spec {
	enum obj_size_dist dist;
	uint64_t min, max, mean; /* mean: exponential only */
};

/*
 * Fills in defaults (log2's min, exponential's max) and checks the spec.
 * Returns 0, or -EINVAL with *ret_why saying what is wrong.  Which keys were
 * given: bit 0 min, bit 1 max, bit 2 mean.
 */
#define OBJ_SIZE_HAS_MIN 1u
#define OBJ_SIZE_HAS_MAX 2u
#define OBJ_SIZE_HAS_MEAN 4u
int obj_size_resolve(struct obj_size_spec *s, unsigned given, const char **ret_why);
uint64_t obj_size_pick(const struct obj_size_spec *s, uint64_t *rng);
/* What the mean of many picks tends to. */
double obj_size_expected_mean(const struct obj_size_spec *s);
const char *obj_size_dist_name(enum obj_size_dist d);

#endif
