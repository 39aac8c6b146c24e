// SPDX-License-Identifier: GPL-2.0-only
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const op_verify_names[OP_VERIFY_CLASSES] = {
	[OP_VERIFY_CHECKED] = "checked", [OP_VERIFY_CORRUPT] = "corrupt",
	[OP_VERIFY_STALE] = "stale", [OP_VERIFY_MISDIRECTED] = "misdirected",
	[OP_VERIFY_TORN] = "torn", [OP_VERIFY_FOREIGN] = "foreign",
	[OP_VERIFY_UNCERTAIN] = "uncertain", [OP_VERIFY_UNCHECKED] = "unchecked",
	[OP_VERIFY_FLUSH_FAILED] = "flush_failed",
};

static void op_counters_clear(struct op_stats *o)
{
	memset(o->verify, 0, sizeof(o->verify));
	o->count = o->errors = o->bytes = o->corrupt = o->missed = o->pending = 0;
	for (size_t c = 0; c < OP_ERR_CLASSES; c++)
		o->error_class[c] = 0;
	o->obj_verify = (struct obj_verify){ 0 };
}

void op_stats_init_zeroed(struct op_stats *o)
{
	hist_init_zeroed(&o->latency);
	hist_init_zeroed(&o->service);
	hist_init_zeroed(&o->ttfb);
	hist_init_zeroed(&o->connect);
	hist_init_zeroed(&o->issue_delay);
	hist_init_zeroed(&o->missed_wait);
}

void op_stats_init(struct op_stats *o)
{
	memset(o, 0, sizeof(*o));
	op_stats_init_zeroed(o);
}

static void op_hists_release(struct op_stats *o)
{
	hist_reset(&o->latency);
	hist_reset(&o->service);
	hist_reset(&o->ttfb);
	hist_reset(&o->connect);
	hist_reset(&o->issue_delay);
	hist_reset(&o->missed_wait);
}

void op_stats_reset(struct op_stats *o)
{
	op_counters_clear(o);
	op_hists_release(o);
}

struct op_stats *op_stats_array(size_t n)
{
	struct op_stats *a = calloc(n, sizeof(*a));

	for (size_t i = 0; a && i < n; i++)
		op_stats_init_zeroed(&a[i]);
	return a;
}

void op_stats_array_free(struct op_stats *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		op_stats_reset(&a[i]);
	free(a);
}

void op_stats_merge(struct op_stats *dst, const struct op_stats *src)
{
	dst->count += src->count;
	dst->errors += src->errors;
	dst->bytes += src->bytes;
	dst->corrupt += src->corrupt;
	dst->missed += src->missed;
	for (size_t c = 0; c < OP_ERR_CLASSES; c++)
		dst->error_class[c] += src->error_class[c];
	for (size_t c = 0; c < OP_VERIFY_CLASSES; c++)
		dst->verify[c] += src->verify[c];
	obj_verify_add(&dst->obj_verify, &src->obj_verify);
	hist_merge(&dst->latency, &src->latency);
	hist_merge(&dst->service, &src->service);
	/* Empty for device ops: hist_merge returns at once. */
	hist_merge(&dst->ttfb, &src->ttfb);
	hist_merge(&dst->connect, &src->connect);
	hist_merge(&dst->issue_delay, &src->issue_delay);
	hist_merge(&dst->missed_wait, &src->missed_wait);
}

void op_stats_record(struct op_stats *o, uint64_t latency_ns, uint64_t service_ns,
		     uint64_t bytes, bool error)
{
	if (error) {
		/* A failed op is an error, not a completion (count + errors +
		 * missed = scheduled), and has no meaningful latency: the
		 * histograms keep to what the device actually served. */
		o->errors++;
		return;
	}
	o->count++;
	o->bytes += bytes;
	hist_record(&o->latency, latency_ns);
	hist_record(&o->service, service_ns);
}

void op_stats_record_error(struct op_stats *o, enum op_error_class c)
{
	o->errors++;
	if (c < OP_ERR_CLASSES)
		o->error_class[c]++;
}

uint64_t op_stats_wrong_data(const struct op_stats *o)
{
	const struct obj_verify *v = &o->obj_verify;
	const uint64_t part[] = { o->corrupt, v->lost, v->resurrected, v->stale, v->list_missing,
				  v->list_extra };
	uint64_t n = 0;
	/* Saturating: counts read back from a log can be anything. */
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		n = part[i] > UINT64_MAX - n ? UINT64_MAX : n + part[i];
	return n;
}

void op_stats_record_corrupt(struct op_stats *o, uint64_t latency_ns, uint64_t service_ns,
			     uint64_t bytes)
{
	op_stats_record(o, latency_ns, service_ns, bytes, false);
	o->corrupt++;
}

bool obj_verify_add(struct obj_verify *dst, const struct obj_verify *src)
{
	dst->checked += src->checked;
	dst->lost += src->lost;
	dst->resurrected += src->resurrected;
	dst->stale += src->stale;
	dst->list_missing += src->list_missing;
	dst->list_extra += src->list_extra;
	dst->uncertain += src->uncertain;
	return src->checked || src->lost || src->resurrected || src->stale || src->list_missing ||
	       src->list_extra || src->uncertain;
}

void op_stats_record_missed(struct op_stats *o, uint64_t wait_ns)
{
	o->missed++;
	hist_record(&o->latency, wait_ns);
	hist_record(&o->missed_wait, wait_ns);
}

static void slot_reset(struct interval_slot *slot, size_t n_ops, uint64_t start_ns)
{
	slot->start_ns = start_ns;
	slot->end_ns = 0;
	slot->lag_max_ns = 0;
	slot->cpu_ns = 0;
	slot->frozen_ns = 0;
	for (size_t i = 0; i < n_ops; i++)
		op_stats_reset(&slot->ops[i]);
}

int stream_stats_init(struct stream_stats *s, size_t n_ops, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	if (n_ops == 0 || n_ops > STATS_MAX_OPS)
		return -EINVAL;
	s->n_ops = n_ops;
	s->slot_size = sizeof(struct interval_slot) + n_ops * sizeof(struct op_stats);
	for (size_t i = 0; i < STATS_SLOTS; i++) {
		s->slots[i] = calloc(1, s->slot_size);
		if (!s->slots[i]) {
			stream_stats_done(s);
			return -ENOMEM;
		}
		for (size_t op = 0; op < n_ops; op++)
			op_stats_init_zeroed(&s->slots[i]->ops[op]);
	}
	slot_reset(s->slots[0], n_ops, start_ns);
	return 0;
}

void stream_stats_done(struct stream_stats *s)
{
	for (size_t i = 0; i < STATS_SLOTS; i++) {
		for (size_t op = 0; s->slots[i] && op < s->n_ops; op++)
			op_stats_reset(&s->slots[i]->ops[op]);
		free(s->slots[i]);
		s->slots[i] = NULL;
	}
}

void stream_publish(struct stream_stats *s, uint64_t end_ns)
{
	uint64_t consumed = atomic_load_explicit(&s->consumed, memory_order_acquire);

	if (s->seq + 1 - consumed >= STATS_SLOTS) {
		/* Main thread behind.  Nothing measured yet: the slot starts
		 * again at this boundary, and the main thread writes the
		 * intervals it skipped as a hole; else it keeps filling. */
		struct interval_slot *cur = stream_current(s);
		bool empty = true;
		for (size_t i = 0; i < s->n_ops && empty; i++)
			empty = !cur->ops[i].count && !cur->ops[i].errors &&
				!cur->ops[i].missed && !cur->ops[i].latency.count;
		if (empty)
			cur->start_ns = end_ns;
		return;
	}
	stream_current(s)->end_ns = end_ns;
	s->seq++;
	slot_reset(stream_current(s), s->n_ops, end_ns);
	atomic_store_explicit(&s->published, s->seq, memory_order_release);
}

const struct interval_slot *stream_peek(struct stream_stats *s)
{
	uint64_t published = atomic_load_explicit(&s->published, memory_order_acquire);
	uint64_t consumed = atomic_load_explicit(&s->consumed, memory_order_relaxed);

	return consumed < published ? s->slots[consumed % STATS_SLOTS] : NULL;
}

/*
 * A consumed slot's buckets go back at once, from the main thread, before
 * the slot is handed back: a stream holds the buckets of the interval it
 * fills (and of any the main thread has not read yet), not of all
 * STATS_SLOTS.  The thread's slot_reset finds them gone.
 */
static void slot_release(struct interval_slot *slot, size_t n_ops)
{
	for (size_t i = 0; i < n_ops; i++)
		op_hists_release(&slot->ops[i]);
}

void stream_consume_one(struct stream_stats *s, stream_consume_fn fn, void *userdata)
{
	uint64_t published = atomic_load_explicit(&s->published, memory_order_acquire);
	uint64_t consumed = atomic_load_explicit(&s->consumed, memory_order_relaxed);

	if (consumed >= published)
		return;
	fn(s->slots[consumed % STATS_SLOTS], s->n_ops, userdata);
	slot_release(s->slots[consumed % STATS_SLOTS], s->n_ops);
	atomic_store_explicit(&s->consumed, consumed + 1, memory_order_release);
}

size_t stream_consume(struct stream_stats *s, stream_consume_fn fn, void *userdata)
{
	uint64_t published = atomic_load_explicit(&s->published, memory_order_acquire);
	uint64_t consumed = atomic_load_explicit(&s->consumed, memory_order_relaxed);
	size_t n = 0;

	for (; consumed < published; consumed++, n++) {
		fn(s->slots[consumed % STATS_SLOTS], s->n_ops, userdata);
		slot_release(s->slots[consumed % STATS_SLOTS], s->n_ops);
	}
	atomic_store_explicit(&s->consumed, consumed, memory_order_release);
	return n;
}

void stream_consume_rest(struct stream_stats *s, uint64_t end_ns, stream_consume_fn fn,
			 void *userdata)
{
	struct interval_slot *slot;

	stream_consume(s, fn, userdata);
	slot = stream_current(s);
	if (!slot->end_ns)
		slot->end_ns = end_ns;
	fn(slot, s->n_ops, userdata);
	/* Start afresh, so a restarted thread does not count this again. */
	s->seq = 0;
	atomic_store(&s->published, 0);
	atomic_store(&s->consumed, 0);
	slot_reset(s->slots[0], s->n_ops, end_ns);
}
