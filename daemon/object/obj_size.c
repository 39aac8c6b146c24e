// SPDX-License-Identifier: GPL-2.0-only
/* Object size distributions (see obj_size.h). */
#include "obj_size.h"

#include <errno.h>
#include <math.h>

#include "obj_rng.h"

#define LOG2_MIN_FLOOR 128u
#define LOG2_DOUBLINGS 8u
/* Rejection draws before exponential gives up and clamps. */
#define EXP_TRIES 64

const char *obj_size_dist_name(enum obj_size_dist d)
{
	switch (d) {
	case OBJ_SIZE_FIXED: return "fixed";
	case OBJ_SIZE_UNIFORM: return "uniform";
	case OBJ_SIZE_LOG2: return "log2";
	case OBJ_SIZE_EXPONENTIAL: return "exponential";
	}
	return "unknown";
}

static int invalid(const char **ret_why, const char *why)
{
	if (ret_why)
		*ret_why = why;
	return -EINVAL;
}

int obj_size_resolve(struct obj_size_spec *s, unsigned given, const char **ret_why)
{
	switch (s->dist) {
	case OBJ_SIZE_FIXED:
		s->min = s->mean = s->max;
		break;
	case OBJ_SIZE_UNIFORM:
		if (!(given & OBJ_SIZE_HAS_MAX))
			return invalid(ret_why, "\"uniform\" needs \"max\" (and takes \"min\")");
		if (given & OBJ_SIZE_HAS_MEAN)
			return invalid(ret_why, "\"uniform\" takes \"min\" and \"max\", not \"mean\"");
		if (s->min > s->max)
			return invalid(ret_why, "\"min\" is larger than \"max\"");
		break;
	case OBJ_SIZE_LOG2:
		if (!(given & OBJ_SIZE_HAS_MAX))
			return invalid(ret_why, "\"log2\" needs \"max\" (and takes \"min\")");
		if (given & OBJ_SIZE_HAS_MEAN)
			return invalid(ret_why, "\"log2\" takes \"min\" and \"max\", not \"mean\"");
		if (!(given & OBJ_SIZE_HAS_MIN)) {
			/* warp: 8 doublings below max, never under 128 bytes. */
			s->min = s->max >> LOG2_DOUBLINGS;
			if (s->min < LOG2_MIN_FLOOR)
				s->min = s->max < LOG2_MIN_FLOOR ? 1 : LOG2_MIN_FLOOR;
		}
		if (s->min == 0)
			return invalid(ret_why, "\"log2\" needs \"min\" of at least 1 byte");
		if (s->min > s->max)
			return invalid(ret_why, "\"min\" is larger than \"max\"");
		break;
	case OBJ_SIZE_EXPONENTIAL:
		if (!(given & OBJ_SIZE_HAS_MEAN) || s->mean == 0)
			return invalid(ret_why, "\"exponential\" needs a \"mean\" above 0");
		if (!(given & OBJ_SIZE_HAS_MAX)) {
			/* P(X > 20 mean) = e^-20: never in practice. */
			s->max = s->mean > OBJ_SIZE_LIMIT / 20 ? OBJ_SIZE_LIMIT : s->mean * 20;
		}
		if (s->min > s->mean || s->mean > s->max)
			return invalid(ret_why, "\"mean\" must lie between \"min\" and \"max\"");
		break;
	default:
		return invalid(ret_why, "unknown distribution");
	}
	if (s->max > OBJ_SIZE_LIMIT)
		return invalid(ret_why, "object sizes are limited to 5GiB (S3's largest single PUT)");
	return 0;
}

uint64_t obj_size_pick(const struct obj_size_spec *s, uint64_t *rng)
{
	switch (s->dist) {
	case OBJ_SIZE_FIXED:
		return s->max;
	case OBJ_SIZE_UNIFORM:
		return s->min + obj_rng_below(rng, s->max - s->min + 1);
	case OBJ_SIZE_LOG2: {
		double span = log2((double)s->max / (double)s->min);
		double v = (double)s->min * exp2(obj_rng_unit(rng) * span);
		uint64_t size = (uint64_t)llround(v);
		return size < s->min ? s->min : size > s->max ? s->max : size;
	}
	case OBJ_SIZE_EXPONENTIAL:
		for (int i = 0; i < EXP_TRIES; i++) {
			double v = -(double)s->mean * log1p(-obj_rng_unit(rng));
			if (v >= (double)s->min - 0.5 && v < (double)s->max + 0.5)
				return (uint64_t)llround(v);
		}
		return s->mean;
	}
	return s->max;
}

double obj_size_expected_mean(const struct obj_size_spec *s)
{
	double lo = (double)s->min, hi = (double)s->max;

	switch (s->dist) {
	case OBJ_SIZE_FIXED:
		return hi;
	case OBJ_SIZE_UNIFORM:
		return (lo + hi) / 2;
	case OBJ_SIZE_LOG2:
		return hi > lo ? (hi - lo) / log(hi / lo) : hi;
	case OBJ_SIZE_EXPONENTIAL: {
		/* E[X | a <= X <= b] for X ~ Exp(mean). */
		double m = (double)s->mean, ea = exp(-lo / m), eb = exp(-hi / m);
		if (ea - eb <= 0)
			return m;
		return m + (lo * ea - hi * eb) / (ea - eb);
	}
	}
	return hi;
}
