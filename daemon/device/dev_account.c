// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device engine's accounting of ops that did not complete: how many
 * are waiting at an interval boundary (pending) and which are missed when
 * the schedule ends or the workload stops.  See dev_account.h.
 */
#include "dev_account.h"

#include "workload/workload.h"

void dev_backlog_init(struct dev_backlog *b, const struct sched *issue)
{
	sched_ahead_init(&b->ahead, issue);
}

uint64_t dev_backlog_waiting(struct dev_backlog *b, const struct dev_gen *g, int64_t origin_ns,
			     uint64_t t_ns)
{
	if (g->rate <= 0 || g->finished)
		return 0;
	return sched_ahead_waiting(&b->ahead, &g->sched, g->have_due, mono_since(origin_ns, t_ns));
}

void dev_gen_split(const struct dev_gen *g, uint64_t n, uint64_t *per_op, size_t n_ops)
{
	uint64_t reads = g->op_write < 0 ? n : g->op_read < 0 ? 0 : n * g->read_pct / 100;

	if (g->op_read >= 0 && (size_t)g->op_read < n_ops)
		per_op[g->op_read] += reads;
	if (g->op_write >= 0 && (size_t)g->op_write < n_ops)
		per_op[g->op_write] += n - reads;
}

static void miss_one(struct dev_gen *g, uint64_t due_ns, uint64_t now_ns, uint64_t *rng,
		     uint32_t align, uint64_t size, struct op_stats *ops)
{
	struct dev_op_choice op;

	dev_gen_choose(g, rng, align, size, &op);
	op_stats_record_missed(&ops[op.op], now_ns > due_ns ? now_ns - due_ns : 0);
}

uint64_t dev_gen_miss_rest(struct dev_gen *g, int64_t origin_ns, uint64_t upto_ns, uint64_t now_ns,
			   uint64_t *rng, uint32_t align, uint64_t size, struct op_stats *ops)
{
	uint64_t missed = 0;

	if (g->rate <= 0 || g->finished) {
		g->finished = true;
		return 0;
	}
	for (;;) {
		if (!g->have_due) {
			uint64_t rel;
			if (!sched_next(&g->sched, &rel))
				break;
			g->due_ns = mono_at(origin_ns, rel);
			g->have_due = true;
		}
		/* Not due before the cut: it belongs to no part of the run
		 * that happened.  One due at the cut is the first of what
		 * comes after it (as sched_ops_between and sched_seek count),
		 * so a schedule put back at the cut does not count it twice. */
		if (g->due_ns >= upto_ns)
			break;
		miss_one(g, g->due_ns, now_ns, rng, align, size, ops);
		g->have_due = false;
		missed++;
	}
	g->have_due = false;
	g->finished = true;
	return missed;
}
