/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_MODEL_H
#define SOAK_DEV_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/run_config.h"
#include "workload/sched.h"
#include "workload/stats.h"

/*
 * Device models as op generators.  A device runs one generator per kind of
 * op it issues (a pattern workload has one, mixing reads and writes; ACT's
 * models have one per op: record reads, large-block reads, large-block
 * writes, ...), each with its own rate, its own in-flight limit (ACT's
 * service threads, its one large-block thread per device) and its own
 * schedule, so one op falling behind shows up as that op's lag.
 */

#define DEV_MAX_GENS 4

enum dev_io { DEV_IO_READ, DEV_IO_WRITE };

enum dev_size_kind {
	SIZE_WEIGHTED,      /* pattern's block_size list */
	SIZE_RECORD_RANGE,  /* ACT records: uniform over a range, 16-byte units, rounded up to the device's unit */
	SIZE_FIXED,
};

struct dev_gen {
	int op_read, op_write;      /* stats op index, -1 if the generator never does it */
	unsigned read_pct;          /* with both: each block of 100 ops has exactly this many reads */
	unsigned mix_left, mix_reads_left;
	enum access_pattern access;
	uint64_t cursor;            /* sequential access */
	enum dev_size_kind size_kind;
	const struct block_size_weight *sizes;
	size_t n_sizes;
	uint64_t total_weight;
	uint32_t size_min, size_max; /* SIZE_RECORD_RANGE / SIZE_FIXED */
	double rate;                /* ops/s on this device at scale 1; 0: closed loop */
	unsigned max_inflight;

	/* Run state, owned by the device's thread. */
	unsigned inflight;
	bool have_due, finished;
	uint64_t due_ns;
	/* An op was due with every slot busy (waiting); when a slot was
	 * last freed: the op's wait for it is the device's, not soakd's. */
	bool waiting;
	uint64_t slot_free_ns;
	struct sched sched;         /* last: see dev_model_copy */
};

struct dev_op_choice {
	enum dev_io io;
	int op;
	uint32_t len;
	uint64_t offset;
};

struct dev_model {
	const char *op_names[STATS_MAX_OPS];
	double op_share[STATS_MAX_OPS];
	size_t n_ops;
	size_t n_gens;
	uint32_t max_len;           /* largest op, for buffers */
	unsigned slots;             /* sum of in-flight limits */
	bool writes;
	struct dev_gen gens[DEV_MAX_GENS]; /* last: see dev_model_copy */
};

/*
 * dst becomes a copy of src, of its generators in use and their schedules'
 * steps only (sched_copy): the whole is 40 KiB, nearly all of it steps no
 * schedule has, which a plain copy would make resident in every stream.
 */
void dev_model_copy(struct dev_model *dst, const struct dev_model *src);

/* Builds the generators of a workload's model for one of its devices. */
int dev_model_build(const struct workload_config *cfg, struct dev_model *ret, char *err,
		    size_t errlen);
/* Checks the model fits a device: sizes are multiples of its direct-I/O
 * unit and no larger than it. */
int dev_model_check_device(const struct dev_model *m, const char *path, uint32_t align,
			   uint64_t size, char *err, size_t errlen);

/* The next op of a generator on a device of `size` bytes whose direct-I/O
 * unit is `align`. */
void dev_gen_choose(struct dev_gen *g, uint64_t *rng, uint32_t align, uint64_t size,
		    struct dev_op_choice *ret);

uint64_t dev_rng_next(uint64_t *state);
uint64_t dev_rng_below(uint64_t *state, uint64_t n);
/* Fills buf (a multiple of 8 bytes) with the generator's output. */
void dev_rng_fill(uint64_t *state, uint8_t *buf, size_t len);

#endif
