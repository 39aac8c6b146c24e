/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_RNG_H
#define SOAK_OBJ_RNG_H

#include <stdint.h>

/* xorshift64*: fast, and plenty for choosing ops, objects and sizes.  The
 * state must not be 0. */
static inline uint64_t obj_rng_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

/* Uniform in [0, n), by multiply-shift. */
static inline uint64_t obj_rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)obj_rng_next(state) * n) >> 64);
}

/* Uniform in [0, 1), 53 bits. */
static inline double obj_rng_unit(uint64_t *state)
{
	return (double)(obj_rng_next(state) >> 11) * 0x1.0p-53;
}

static inline uint64_t obj_rng_seed(uint64_t seed)
{
	uint64_t z = seed + UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return z ? z : UINT64_C(0x2545f4914f6cdd1d);
}

#endif
