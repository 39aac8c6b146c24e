// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device engine's setting up and tearing down: each target opened and
 * checked, its ring, slots and buffers; released at the end.  The I/O
 * itself is dev_engine.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "config/config.h"
#include "dev_facts.h"
#include "dev_model.h"
#include "dev_prep.h"
#include "dev_target.h"
#include "dev_verify.h"
#include "verify.h"
#include "workload/workload.h"

#include "dev_engine_int.h"

static int setup_ring(struct dev_stream *d, const char *path, uint64_t seed, char *err,
		      size_t errlen)
{
	unsigned n = d->n_slots;

	d->slots = calloc(n, sizeof(*d->slots));
	d->free_slots = calloc(n, sizeof(*d->free_slots));
	if (!d->slots || !d->free_slots ||
	    posix_memalign((void **)&d->buffers, 4096, (size_t)2 * n * d->max_len)) {
		d->buffers = NULL;
		snprintf(err, errlen, "out of memory for %u buffers of %u bytes", 2 * n, d->max_len);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		d->free_slots[i] = n - 1 - i;
	d->n_free = n;
	d->rng = seed ? seed : 0x2545f4914f6cdd1du;
	/* Real data: random, and stamped per write (see prep_op), so
	 * neither compression nor deduplication flatters the device. */
	dev_rng_fill(&d->rng, d->buffers, (size_t)2 * n * d->max_len);

	return dev_ring_open(d, path, err, errlen);
}

/*
 * The targets (bit k: targets[k]) new to the run, the only ones prepped:
 * all of them when the run begins.  A resumed run's devices were prepped when it began, and
 * prepping again would wipe the state the run has aged them into.  Those
 * a reload's replacement brings in (not named by the definition it
 * replaces) are new, unless the run verified them before (a verify state
 * for their place): wiped, every block written would read as damaged.
 */
static uint64_t targets_new_to_run(const struct workload *w)
{
	if (!w->resuming)
		return UINT64_MAX;
	uint64_t fresh = w->new_targets;
	for (size_t k = 0; k < w->cfg->n_targets && k < 64; k++)
		if ((fresh >> k & 1) && dev_verify_state_exists(w, k))
			fresh &= ~(UINT64_C(1) << k);
	return fresh;
}

int dev_prepare(struct workload *w, char *err, size_t errlen)
{
	const struct workload_config *cfg = w->cfg;
	struct dev_model model;
	int r;

	r = dev_model_build(cfg, &model, err, errlen);
	if (r < 0)
		return r;
	w->n_ops = model.n_ops;
	memcpy(w->op_names, model.op_names, sizeof(w->op_names));
	memcpy(w->op_share, model.op_share, sizeof(w->op_share));
	/* Record reads may round up to the device's unit: room for that. */
	uint32_t max_len = model.max_len + 4096;
	if ((uint64_t)2 * model.slots * max_len > CONFIG_MAX_BUFFER_BYTES_PER_TARGET) {
		snprintf(err, errlen, "%u ops in flight of up to %u bytes need more than 1GiB of "
				      "buffers per device; lower the queue depth or the sizes",
			 model.slots, model.max_len);
		return -E2BIG;
	}
	/* Nothing is prepped or opened while ops another stream gave up in
	 * flight may still land on a target. */
	r = dev_targets_free(cfg, err, errlen);
	if (r < 0)
		return r;
	/* "prep": true zeroes and salts the devices before any is opened. */
	r = dev_prep_workload(cfg, targets_new_to_run(w), err, errlen);
	if (r < 0)
		return r;

	/* Every target opened, then checked for space and laid out, before
	 * any is used: a refusal leaves nothing created or grown behind. */
	struct dev_target *targets = calloc(w->n_streams, sizeof(*targets));
	size_t opened = 0;
	if (!targets) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->n_streams; i++)
		targets[i] = (struct dev_target)DEV_TARGET_INIT;
	for (; opened < w->n_streams; opened++) {
		struct dev_target *t = &targets[opened];
		/* A fill writes even where the workload only reads. */
		bool writes = model.writes || dev_verify_fills(w, opened);
		r = dev_target_open(cfg, &cfg->targets[opened], writes, t, err, errlen);
		if (r < 0)
			goto undo;
		/* Verified ops cover whole verify blocks. */
		if (cfg->verify.on && t->align < VERIFY_BLOCK)
			t->align = VERIFY_BLOCK;
		r = dev_model_check_device(&model, cfg->targets[opened].path, t->align, t->size, err,
					   errlen);
		if (r < 0) {
			opened++;
			goto undo;
		}
	}
	/* A resumed run's block devices are the ones it began on: checked
	 * before any file is laid out (a refusal leaves nothing behind). */
	json_t *recorded = w->resuming && w->run_dir ? dev_facts_recorded(w->run_dir) : NULL;
	r = 0;
	for (size_t i = 0; i < w->n_streams && r == 0; i++) {
		if (!targets[i].is_blockdev)
			continue;
		free(w->streams[i].facts);
		w->streams[i].facts = dev_facts_new_logged(cfg->targets[i].path, targets[i].fd);
		if (recorded && w->streams[i].facts)
			r = dev_facts_same_device(recorded, cfg->name, w->streams[i].facts, err,
						  errlen);
	}
	json_decref(recorded);
	if (r < 0)
		goto undo;
	r = dev_targets_lay_out(targets, cfg->targets, opened, err, errlen);
	if (r < 0)
		goto undo;

	for (size_t i = 0; i < w->n_streams; i++) {
		struct dev_stream *d = calloc(1, sizeof(*d));
		if (!d) {
			snprintf(err, errlen, "out of memory");
			r = -ENOMEM;
			goto close;
		}
		w->streams[i].engine = d;
		pthread_mutex_init(&d->linger_lock, NULL);
		d->fd = targets[i].fd;
		targets[i].fd = -1;     /* the stream's now */
		d->span = dev_linger_span_new(d->fd);
		d->is_blockdev = targets[i].is_blockdev;
		if (targets[i].claimed) {
			d->claimed = true;
			dev_linger_claim(d, cfg->name);
		}
		d->size = targets[i].size;
		d->align = targets[i].align;
		dev_model_copy(&d->model, &model);
		d->writes = model.writes;
		d->n_slots = model.slots;
		d->max_len = max_len;
		d->verify_flushes = cfg->verify.on;
		d->verify_fua = cfg->verify.fua;
		d->verify_pre_read = cfg->verify.pre_read;
		/* A file's, once laid out. */
		if (!d->is_blockdev) {
			free(w->streams[i].facts);
			w->streams[i].facts = dev_facts_new_logged(cfg->targets[i].path, d->fd);
		}
		r = setup_ring(d, cfg->targets[i].path, cfg->seed * 31 + i + 1, err, errlen);
		if (r == 0)
			r = dev_verify_prepare(w, i, err, errlen);
		if (r < 0)
			goto close;
	}
	r = 0;
	goto close;
undo:
	for (size_t i = 0; i < opened; i++)
		dev_target_undo(&targets[i]);
close:
	for (size_t i = 0; i < w->n_streams; i++)
		dev_target_close(&targets[i]);
	free(targets);
	return r;
}

/*
 * Buffers of ops given up in flight: the kernel may still read or write
 * them whenever the device answers, so they are never freed or reused; kept
 * here, for the life of the process (a handful per stalled device).
 */
struct kept_buffers {
	struct kept_buffers *next;
	uint8_t *buffers;
};
static struct kept_buffers *kept_buffers;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_buffers(uint8_t *buffers)
{
	struct kept_buffers *k = malloc(sizeof(*k));

	if (!k)
		return;             /* no record of them: they stay allocated all the same */
	k->buffers = buffers;
	pthread_mutex_lock(&kept_lock);
	k->next = kept_buffers;
	kept_buffers = k;
	pthread_mutex_unlock(&kept_lock);
}

void dev_stream_free(struct dev_stream *d)
{
	if (d->claimed)
		dev_linger_unclaim(d);
	if (d->ring_ready)
		io_uring_queue_exit(&d->ring);
	if (d->fd >= 0)
		close(d->fd);
	free(d->slots);
	free(d->free_slots);
	dev_verify_free(d->verify);
	/* Ops given up in flight may still land in their buffers. */
	if (d->abandoned)
		keep_buffers(d->buffers);
	else
		free(d->buffers);
	pthread_mutex_destroy(&d->linger_lock);
	free(d->span);
	free(d);
}

void dev_release(struct workload *w)
{
	for (size_t i = 0; i < w->n_streams; i++) {
		struct dev_stream *d = w->streams[i].engine;
		if (!d)
			continue;
		w->streams[i].engine = NULL;
		/* A thread still waiting for ops given up in flight owns the
		 * stream from here: it frees it when it next wakes. */
		pthread_mutex_lock(&d->linger_lock);
		bool lingering = d->lingering;
		d->orphaned = lingering;
		pthread_mutex_unlock(&d->linger_lock);
		if (!lingering)
			dev_stream_free(d);
	}
}
