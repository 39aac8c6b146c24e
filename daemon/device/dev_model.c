// SPDX-License-Identifier: GPL-2.0-only
#include "dev_model.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define ACT_RBLOCK 16u

uint64_t dev_rng_next(uint64_t *state)
{
	/* xorshift64*: fast, and plenty for offsets and mixes. */
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

void dev_rng_fill(uint64_t *state, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = dev_rng_next(state);
		memcpy(buf + i, &v, 8);
	}
}

uint64_t dev_rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)dev_rng_next(state) * n) >> 64);
}

static int add_op(struct dev_model *m, const char *name, double share)
{
	m->op_names[m->n_ops] = name;
	m->op_share[m->n_ops] = share;
	return (int)m->n_ops++;
}

static struct dev_gen *add_gen(struct dev_model *m, double rate, unsigned max_inflight)
{
	struct dev_gen *g = &m->gens[m->n_gens++];
	*g = (struct dev_gen){ .op_read = -1, .op_write = -1, .rate = rate,
			       .max_inflight = max_inflight ? max_inflight : 1 };
	m->slots += g->max_inflight;
	return g;
}

static unsigned per_device(unsigned threads, size_t n_devices, unsigned parts)
{
	size_t n = n_devices * parts;
	return (unsigned)((threads + n - 1) / n);
}

static void build_pattern(const struct workload_config *cfg, struct dev_model *m)
{
	double rate = cfg->rate / (double)cfg->n_targets;
	struct dev_gen *g = add_gen(m, rate, cfg->queue_depth);

	if (cfg->read_pct > 0)
		g->op_read = add_op(m, "read", cfg->read_pct / 100.0);
	if (cfg->read_pct < 100) {
		g->op_write = add_op(m, "write", (100 - cfg->read_pct) / 100.0);
		m->writes = true;
	}
	g->read_pct = cfg->read_pct;
	g->access = cfg->access;
	g->size_kind = SIZE_WEIGHTED;
	g->sizes = cfg->block_sizes;
	g->n_sizes = cfg->n_block_sizes;
	for (size_t b = 0; b < cfg->n_block_sizes; b++) {
		g->total_weight += cfg->block_sizes[b].weight;
		if (cfg->block_sizes[b].bytes > m->max_len)
			m->max_len = cfg->block_sizes[b].bytes;
	}
}

static void build_act_storage(const struct workload_config *cfg, struct dev_model *m)
{
	const struct act_config *a = &cfg->act;
	double total = a->read_rate + 2 * a->large_block_rate;
	uint32_t lb = a->large_block_op_kbytes * 1024;

	if (a->read_rate > 0) {
		/* Record reads run on ACT's service threads, shared by all
		 * devices. */
		struct dev_gen *g = add_gen(m, a->read_rate,
					    per_device(a->service_threads, cfg->n_targets, 1));
		g->op_read = add_op(m, "read", a->read_rate / total);
		g->read_pct = 100;
		g->access = ACCESS_RANDOM;
		g->size_kind = SIZE_RECORD_RANGE;
		g->size_min = a->record_stored_bytes;
		g->size_max = a->record_stored_bytes_max;
	}
	if (a->large_block_rate > 0) {
		/* One large-block read thread and one write thread per
		 * device, each moving sequentially through it; reads start
		 * half way so they do not trail the writes block for block. */
		struct dev_gen *r = add_gen(m, a->large_block_rate, 1);
		r->op_read = add_op(m, "large_block_read", a->large_block_rate / total);
		r->read_pct = 100;
		r->access = ACCESS_SEQUENTIAL;
		r->size_kind = SIZE_FIXED;
		r->size_min = r->size_max = lb;
		r->cursor = UINT64_MAX; /* set to the middle on first use */
		struct dev_gen *w = add_gen(m, a->large_block_rate, 1);
		w->op_write = add_op(m, "large_block_write", a->large_block_rate / total);
		w->read_pct = 0;
		w->access = ACCESS_SEQUENTIAL;
		w->size_kind = SIZE_FIXED;
		w->size_min = w->size_max = lb;
		m->writes = true;
		m->max_len = lb;
	}
	if (a->record_stored_bytes_max > m->max_len)
		m->max_len = a->record_stored_bytes_max;
}

static void build_act_index(const struct workload_config *cfg, struct dev_model *m)
{
	const struct act_config *a = &cfg->act;
	double total = a->read_rate + 2 * a->cache_rate;
	struct dev_gen *g;

	if (a->read_rate > 0) {
		g = add_gen(m, a->read_rate, per_device(a->service_threads, cfg->n_targets, 1));
		g->op_read = add_op(m, "read", a->read_rate / total);
		g->read_pct = 100;
	}
	if (a->cache_rate > 0) {
		/* ACT's cache threads do both the defrag reads and all the
		 * writes; half of them for each. */
		unsigned cache = per_device(a->cache_threads, cfg->n_targets, 2);
		g = add_gen(m, a->cache_rate, cache);
		g->op_read = add_op(m, "cache_read", a->cache_rate / total);
		g->read_pct = 100;
		g = add_gen(m, a->cache_rate, cache);
		g->op_write = add_op(m, "cache_write", a->cache_rate / total);
		g->read_pct = 0;
		m->writes = true;
	}
	for (size_t i = 0; i < m->n_gens; i++) {
		m->gens[i].access = ACCESS_RANDOM;
		m->gens[i].size_kind = SIZE_FIXED;
		m->gens[i].size_min = m->gens[i].size_max = 4096;
	}
	m->max_len = 4096;
}

void dev_model_copy(struct dev_model *dst, const struct dev_model *src)
{
	memcpy(dst, src, offsetof(struct dev_model, gens));
	for (size_t i = 0; i < src->n_gens; i++) {
		memcpy(&dst->gens[i], &src->gens[i], offsetof(struct dev_gen, sched));
		sched_copy(&dst->gens[i].sched, &src->gens[i].sched);
	}
}

int dev_model_build(const struct workload_config *cfg, struct dev_model *ret, char *err,
		    size_t errlen)
{
	memset(ret, 0, sizeof(*ret));
	switch (cfg->model) {
	case MODEL_PATTERN:
		build_pattern(cfg, ret);
		break;
	case MODEL_ACT_STORAGE:
		build_act_storage(cfg, ret);
		break;
	case MODEL_ACT_INDEX:
		build_act_index(cfg, ret);
		break;
	}
	if (ret->n_ops == 0) {
		snprintf(err, errlen, "the workload issues no I/O (all rates are zero)");
		return -EINVAL;
	}
	return 0;
}

int dev_model_check_device(const struct dev_model *m, const char *path, uint32_t align,
			   uint64_t size, char *err, size_t errlen)
{
	for (size_t i = 0; i < m->n_gens; i++) {
		const struct dev_gen *g = &m->gens[i];
		for (size_t b = 0; g->size_kind == SIZE_WEIGHTED && b < g->n_sizes; b++)
			if (g->sizes[b].bytes % align) {
				snprintf(err, errlen, "block size %u is not a multiple of %s's "
						      "direct-I/O unit of %u bytes",
					 g->sizes[b].bytes, path, align);
				return -EINVAL;
			}
		if (g->size_kind == SIZE_FIXED && g->size_max % align) {
			snprintf(err, errlen, "%u-byte ops are not a multiple of %s's direct-I/O "
					      "unit of %u bytes", g->size_max, path, align);
			return -EINVAL;
		}
	}
	uint32_t largest = m->max_len + align; /* record reads round up */
	if (size < (uint64_t)largest * 2) {
		snprintf(err, errlen, "%s (%" PRIu64 " bytes) is too small for %u-byte ops", path,
			 size, m->max_len);
		return -EINVAL;
	}
	return 0;
}

/* Every block of 100 ops holds exactly read_pct reads, in random order: the
 * mix is random, yet each op's achieved rate matches its share of the
 * target within an interval, not just on average. */
static bool choose_read(struct dev_gen *g, uint64_t *rng)
{
	if (g->op_write < 0)
		return true;
	if (g->op_read < 0)
		return false;
	if (!g->mix_left) {
		g->mix_left = 100;
		g->mix_reads_left = g->read_pct;
	}
	bool is_read = dev_rng_below(rng, g->mix_left) < g->mix_reads_left;
	g->mix_left--;
	g->mix_reads_left -= is_read;
	return is_read;
}

static uint32_t choose_len(struct dev_gen *g, uint64_t *rng, uint32_t align)
{
	switch (g->size_kind) {
	case SIZE_WEIGHTED: {
		uint64_t x = g->n_sizes > 1 ? dev_rng_below(rng, g->total_weight) : 0;
		for (size_t b = 0; b < g->n_sizes; b++) {
			if (x < g->sizes[b].weight)
				return g->sizes[b].bytes;
			x -= g->sizes[b].weight;
		}
		return g->sizes[0].bytes;
	}
	case SIZE_RECORD_RANGE: {
		/* ACT: a record size uniform over the range in 16-byte units,
		 * read with the smallest direct I/O that holds it. */
		uint32_t units = (g->size_max - g->size_min) / ACT_RBLOCK + 1;
		uint32_t bytes = g->size_min + (uint32_t)dev_rng_below(rng, units) * ACT_RBLOCK;
		return (bytes + align - 1) / align * align;
	}
	case SIZE_FIXED:
		break;
	}
	return g->size_max;
}

void dev_gen_choose(struct dev_gen *g, uint64_t *rng, uint32_t align, uint64_t size,
		    struct dev_op_choice *ret)
{
	bool is_read = choose_read(g, rng);
	uint32_t len = choose_len(g, rng, align);
	uint64_t offset;

	if (g->access == ACCESS_SEQUENTIAL) {
		if (g->cursor == UINT64_MAX)
			g->cursor = size / 2 / len * len;
		if (g->cursor + len > size)
			g->cursor = 0;
		offset = g->cursor;
		g->cursor += len;
	} else {
		/* Random offsets aligned to the op's size where the op is a
		 * block (as fio's blockalign), to the device's unit for
		 * records of varying size. */
		uint64_t unit = g->size_kind == SIZE_RECORD_RANGE ? align : len;
		offset = dev_rng_below(rng, (size - len) / unit + 1) * unit;
	}
	*ret = (struct dev_op_choice){
		.io = is_read ? DEV_IO_READ : DEV_IO_WRITE,
		.op = is_read ? g->op_read : g->op_write,
		.len = len,
		.offset = offset,
	};
}
