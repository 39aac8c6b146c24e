/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_ACCOUNT_H
#define SOAK_DEV_ACCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "dev_model.h"
#include "workload/sched.h"
#include "workload/stats.h"

/*
 * Where every op of a device generator's schedule is: completed (counted
 * when it completes), in flight, waiting for a slot, or missed.  An op
 * waiting for a slot has not been taken from the schedule yet, so a second
 * cursor over a copy of the schedule (the "due" cursor) runs ahead to each
 * interval boundary: the ops it has passed that the issuing cursor has not
 * are the ones waiting.  That keeps no list of waiting ops, however far
 * behind the device falls.
 */
struct dev_backlog {
	struct sched_ahead ahead;   /* over a copy of the generator's schedule */
};

/* Starts the due cursor where the generator's schedule stands now. */
void dev_backlog_init(struct dev_backlog *b, const struct sched *issue);

/* Ops of the generator due before t (CLOCK_MONOTONIC) and not yet issued;
 * origin_ns is the schedule's origin (mono_at).  t must not go back. */
uint64_t dev_backlog_waiting(struct dev_backlog *b, const struct dev_gen *g, int64_t origin_ns,
			     uint64_t t_ns);

/* Splits n ops of a generator over its ops: all to its only op, or by its
 * read share (reads rounded down) when it mixes reads and writes. */
void dev_gen_split(const struct dev_gen *g, uint64_t n, uint64_t *per_op, size_t n_ops);

/*
 * The generator's ops due before upto (the schedule's cut, at most now)
 * and never issued, missed: each is given its op as if issued (so a
 * mixed generator keeps its read share) and counted in ops[] with its
 * wait, now - due, as latency.  The generator is finished afterwards.
 * Returns how many.
 */
uint64_t dev_gen_miss_rest(struct dev_gen *g, int64_t origin_ns, uint64_t upto_ns, uint64_t now_ns,
			   uint64_t *rng, uint32_t align, uint64_t size, struct op_stats *ops);

#endif
