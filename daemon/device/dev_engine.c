// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device engine: O_DIRECT I/O through io_uring on block devices and regular
 * files, one ring and one thread per device.  The model (dev_model.c) says
 * which ops a device gets, at what rates and with how many in flight; the
 * rate schedule says when each op is due; this file only queues ops at
 * their due time and measures them.  liburing is used nowhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include <liburing.h>

#include "base/log.h"
#include "dev_facts.h"
#include "dev_model.h"
#include "dev_prep.h"
#include "dev_target.h"
#include "parse.h"
#include "workload/fidelity.h"
#include "workload/workload.h"

#define DEV_ERRORS_LOGGED 5
#define DEV_STAMP_EVERY 4096u

struct dev_slot {
	uint64_t due_ns;
	uint64_t ready_ns;          /* due with a slot free: from here, soakd is late */
	uint64_t submit_ns;
	uint64_t offset;
	uint32_t len;
	uint8_t io;                 /* enum dev_io */
	uint8_t gen;
	int8_t op;
};

struct dev_stream {
	int fd;
	bool is_blockdev;
	bool writes;
	uint64_t size;              /* working region: [0, size) */
	uint32_t align;             /* direct-I/O unit */
	struct dev_model model;
	unsigned n_slots;
	struct io_uring ring;
	bool ring_ready;
	bool fixed_buffers;
	struct dev_slot *slots;
	unsigned *free_slots;
	unsigned n_free;
	uint8_t *buffers;           /* [0, n): read buffers; [n, 2n): write buffers */
	uint32_t max_len;
	uint64_t rng;
	uint64_t writes_issued;
	uint64_t errors_logged;
	struct fidelity fid;        /* the thread's own lateness */
};

static int setup_ring(struct dev_stream *d, const char *path, uint64_t seed, char *err,
		      size_t errlen)
{
	unsigned n = d->n_slots;
	int r;

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

	r = io_uring_queue_init(n, &d->ring, 0);
	if (r < 0) {
		snprintf(err, errlen, "cannot set up io_uring for %s: %s", path, strerror(-r));
		return r;
	}
	d->ring_ready = true;
	r = io_uring_register_files(&d->ring, &d->fd, 1);
	if (r < 0) {
		snprintf(err, errlen, "cannot register %s with io_uring: %s", path, strerror(-r));
		return r;
	}
	struct iovec *iov = calloc((size_t)2 * n, sizeof(*iov));
	if (iov) {
		for (unsigned i = 0; i < 2 * n; i++)
			iov[i] = (struct iovec){ d->buffers + (size_t)i * d->max_len, d->max_len };
		/* Registered buffers save a page pin per I/O; without them
		 * (memlock limits) we fall back to plain reads and writes. */
		d->fixed_buffers = io_uring_register_buffers(&d->ring, iov, 2 * n) == 0;
		free(iov);
	}
	return 0;
}

static int dev_prepare(struct workload *w, char *err, size_t errlen)
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
	/* "prep": true zeroes and salts the devices before any is opened. */
	/* A resumed run's devices were prepped when it began; prepping again
	 * would wipe the state the run has aged them into. */
	r = w->resuming ? 0 : dev_prep_workload(cfg, err, errlen);
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
		r = dev_target_open(cfg, &cfg->targets[opened], model.writes, t, err, errlen);
		if (r < 0)
			goto undo;
		r = dev_model_check_device(&model, cfg->targets[opened].path, t->align, t->size, err,
					   errlen);
		if (r < 0) {
			opened++;
			goto undo;
		}
	}
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
		d->fd = targets[i].fd;
		targets[i].fd = -1;     /* the stream's now */
		d->is_blockdev = targets[i].is_blockdev;
		d->size = targets[i].size;
		d->align = targets[i].align;
		d->model = model;
		d->writes = model.writes;
		d->n_slots = model.slots;
		d->max_len = max_len;
		w->streams[i].facts = dev_facts_new_logged(cfg->targets[i].path, d->fd);
		r = setup_ring(d, cfg->targets[i].path, cfg->seed * 31 + i + 1, err, errlen);
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

/* Builds the SQE for what the slot describes. */
static void queue_slot(struct dev_stream *d, unsigned slot_index)
{
	struct dev_slot *slot = &d->slots[slot_index];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	bool is_read = slot->io == DEV_IO_READ;
	unsigned buf_index = is_read ? slot_index : d->n_slots + slot_index;
	uint8_t *buf = d->buffers + (size_t)buf_index * d->max_len;

	if (d->fixed_buffers) {
		if (is_read)
			io_uring_prep_read_fixed(sqe, 0, buf, slot->len, slot->offset, (int)buf_index);
		else
			io_uring_prep_write_fixed(sqe, 0, buf, slot->len, slot->offset, (int)buf_index);
	} else {
		if (is_read)
			io_uring_prep_read(sqe, 0, buf, slot->len, slot->offset);
		else
			io_uring_prep_write(sqe, 0, buf, slot->len, slot->offset);
	}
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, slot_index);
}

/* Chooses the generator's next op into a free slot and queues it.  The ring
 * has as many SQEs as there are slots, so one is always free. */
static void prep_op(struct dev_stream *d, unsigned gen_index, unsigned slot_index, uint64_t due_ns)
{
	struct dev_gen *g = &d->model.gens[gen_index];
	struct dev_slot *slot = &d->slots[slot_index];
	struct dev_op_choice op;

	dev_gen_choose(g, &d->rng, d->align, d->size, &op);
	*slot = (struct dev_slot){ .due_ns = due_ns, .offset = op.offset, .len = op.len,
				   .io = (uint8_t)op.io, .gen = (uint8_t)gen_index,
				   .op = (int8_t)op.op };
	if (op.io == DEV_IO_WRITE) {
		/* Stamp each 4 KiB with where and when it was written. */
		uint8_t *buf = d->buffers + (size_t)(d->n_slots + slot_index) * d->max_len;
		uint64_t stamp[2] = { slot->offset, ++d->writes_issued };
		for (uint32_t o = 0; o < slot->len; o += DEV_STAMP_EVERY) {
			stamp[0] = slot->offset + o;
			memcpy(buf + o, stamp, sizeof(stamp));
		}
	}
	g->inflight++;
	queue_slot(d, slot_index);
}

/* Handles one completion; returns true if the op was requeued. */
static bool complete_op(struct workload_stream *s, struct dev_stream *d, unsigned slot_index,
			int res, uint64_t now_ns)
{
	struct dev_slot *slot = &d->slots[slot_index];
	bool error = res < 0 || (uint32_t)res != slot->len;
	const char *what = s->workload->op_names[slot->op];

	if (res == -EAGAIN || res == -EINTR) {
		/* Transient: send the same op again; its due time stays, so
		 * the delay shows in latency_us. */
		queue_slot(d, slot_index);
		slot->submit_ns = now_ns;
		return true;
	}
	if (error && d->errors_logged < DEV_ERRORS_LOGGED) {
		const char *more = ++d->errors_logged == DEV_ERRORS_LOGGED
					   ? " (further errors are counted, not logged)" : "";
		if (res < 0)
			log_warning("%s: %s of %u bytes at offset %" PRIu64 " failed: %s%s", s->label,
				    what, slot->len, slot->offset, strerror(-res), more);
		else
			log_warning("%s: short %s at offset %" PRIu64 ": %d of %u bytes%s", s->label,
				    what, slot->offset, res, slot->len, more);
	}
	op_stats_record(&stream_current(&s->stats)->ops[slot->op], now_ns - slot->due_ns,
			now_ns - slot->submit_ns, slot->len, error);
	struct dev_gen *g = &d->model.gens[slot->gen];
	g->inflight--;
	if (g->waiting) {
		g->waiting = false;
		g->slot_free_ns = now_ns;
	}
	d->free_slots[d->n_free++] = slot_index;
	return false;
}

static void reap(struct workload_stream *s, struct dev_stream *d, uint64_t now_ns)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, requeued = 0;

	io_uring_for_each_cqe(&d->ring, head, cqe) {
		requeued += complete_op(s, d, (unsigned)io_uring_cqe_get_data64(cqe), cqe->res, now_ns);
		seen++;
	}
	io_uring_cq_advance(&d->ring, seen);
	if (requeued)
		io_uring_submit(&d->ring);
}

static void close_intervals(struct workload_stream *s, uint64_t now_ns, uint64_t *next_boundary)
{
	struct dev_stream *d = s->engine;

	while (now_ns >= *next_boundary) {
		fidelity_close(&d->fid, stream_current(&s->stats), *next_boundary);
		stream_publish(&s->stats, *next_boundary);
		*next_boundary += s->workload->interval_ns;
	}
}

/*
 * A regular-file target unlinked behind soakd's back: the I/O goes on to an
 * orphaned inode that nothing can look at afterwards, so for a file-system
 * soak the rest of the run would measure nothing anyone can check.  Seen
 * on the held descriptor (its link count drops to 0), once an interval.
 */
static bool target_deleted(const struct workload_stream *s, const struct dev_stream *d,
			   char *reason, size_t reason_len)
{
	struct stat st;

	if (d->is_blockdev || fstat(d->fd, &st) < 0 || st.st_nlink > 0)
		return false;
	snprintf(reason, reason_len, "target %s was deleted (its link count is 0): the I/O "
		 "would go on to an orphaned file", s->label);
	log_error("%s: %s", s->workload->cfg->name, reason);
	return true;
}

static int start_generators(struct workload_stream *s, struct dev_stream *d)
{
	const struct workload_config *cfg = s->workload->cfg;

	for (size_t i = 0; i < d->model.n_gens; i++) {
		struct dev_gen *g = &d->model.gens[i];
		g->inflight = 0;
		g->have_due = g->finished = g->waiting = false;
		g->slot_free_ns = 0;
		if (g->rate <= 0)
			continue;
		int r = sched_init(&g->sched, g->rate, cfg->steps, cfg->n_steps,
				   cfg->arrival == ARRIVAL_POISSON,
				   cfg->seed * 7919 + s->index * DEV_MAX_GENS + i + 1);
		/* Each stream runs a share of the generator's rate: the
		 * streams' ops interleave rather than arrive together. */
		if (r == 0)
			r = sched_set_phase(&g->sched,
					    (double)s->index / (double)s->workload->n_streams);
		if (r < 0)
			return r;
		/* A resumed run goes on where its schedule was. */
		if (s->workload->resume_ns)
			sched_seek(&g->sched, s->workload->resume_ns);
	}
	return 0;
}

/*
 * Issues every op that is due and has a free slot, for each generator.
 * Returns how many were queued; *ret_lag is how late the most overdue op
 * still waiting for a slot is, *ret_lag_due when it was due.
 */
static unsigned issue_due(struct workload_stream *s, struct dev_stream *d, uint64_t now,
			  uint64_t end_ns, unsigned *prepped, uint64_t *ret_lag,
			  uint64_t *ret_lag_due)
{
	struct workload *w = s->workload;
	unsigned n = 0;
	uint64_t lag = 0;

	for (size_t i = 0; i < d->model.n_gens; i++) {
		struct dev_gen *g = &d->model.gens[i];
		bool open_loop = g->rate > 0;

		while (!g->finished && g->inflight < g->max_inflight && d->n_free) {
			uint64_t due, rel;
			if (open_loop) {
				if (!g->have_due) {
					if (!sched_next(&g->sched, &rel)) {
						g->finished = true;
						break;
					}
					g->due_ns = mono_at(w->started_ns, rel);
					g->have_due = true;
				}
				if (g->due_ns > now)
					break;
				due = g->due_ns;
				g->have_due = false;
			} else {
				if (now >= end_ns) {
					g->finished = true;
					break;
				}
				due = now;
			}
			unsigned slot = d->free_slots[--d->n_free];
			prep_op(d, (unsigned)i, slot, due);
			d->slots[slot].ready_ns = due > g->slot_free_ns ? due : g->slot_free_ns;
			prepped[n++] = slot;
		}
		if (!open_loop || g->finished)
			continue;
		/* Every slot busy: look at the next op anyway, to know how
		 * late it already is. */
		if (!g->have_due) {
			uint64_t rel;
			if (sched_next(&g->sched, &rel)) {
				g->due_ns = mono_at(w->started_ns, rel);
				g->have_due = true;
			} else {
				g->finished = true;
			}
		}
		/* Due but not issued: the device is not keeping up (or soakd
		 * was frozen: fidelity_judge_lag tells). */
		if (g->have_due)
			g->waiting = true;
		if (g->have_due && g->due_ns < now && now - g->due_ns > lag) {
			lag = now - g->due_ns;
			*ret_lag_due = g->due_ns;
		}
		/* The schedule is over: ops still waiting are not issued late
		 * past its end (max_lag 0 lets a lagging workload run on),
		 * they are missed, and said so. */
		if (g->have_due && now >= end_ns + w->interval_ns) {
			uint64_t missed = 1;
			while (sched_next(&g->sched, &(uint64_t){ 0 }))
				missed++;
			log_warning("%s: the schedule ended with %" PRIu64 " %s ops not issued: the "
				    "device could not keep up", s->label, missed,
				    w->op_names[g->op_read >= 0 ? g->op_read : g->op_write]);
			g->have_due = false;
			g->finished = true;
		}
	}
	*ret_lag = lag;
	return n;
}

/* When the thread must next wake: the interval boundary, the next due op
 * that has a free slot, or the end of a closed-loop run. */
static uint64_t next_wake(const struct dev_stream *d, uint64_t next_boundary, uint64_t end_ns)
{
	uint64_t wake = next_boundary;

	for (size_t i = 0; i < d->model.n_gens; i++) {
		const struct dev_gen *g = &d->model.gens[i];
		if (g->finished || g->inflight >= g->max_inflight)
			continue;
		if (g->rate > 0 && g->have_due && g->due_ns < wake)
			wake = g->due_ns;
		if (g->rate <= 0 && end_ns < wake)
			wake = end_ns;
	}
	return wake;
}

static bool all_finished(const struct dev_stream *d)
{
	for (size_t i = 0; i < d->model.n_gens; i++)
		if (!d->model.gens[i].finished)
			return false;
	return d->n_free == d->n_slots;
}

static void *dev_thread(void *arg)
{
	struct workload_stream *s = arg;
	struct workload *w = s->workload;
	const struct workload_config *cfg = w->cfg;
	struct dev_stream *d = s->engine;
	uint64_t end_ns = mono_at(w->started_ns, sched_duration(&s->sched));
	uint64_t next_boundary = workload_next_boundary(w, mono_ns());
	uint64_t link_checked_at = next_boundary;
	unsigned *prepped = calloc(d->n_slots, sizeof(*prepped));
	enum stream_outcome outcome = STREAM_STOPPED;
	char reason[WORKLOAD_REASON_MAX] = "";

	fidelity_init(&d->fid);
	if (!prepped || start_generators(s, d) < 0) {
		free(prepped);
		stream_finish(s, STREAM_FAILED, "cannot set up the device's schedule");
		return NULL;
	}
	for (;;) {
		uint64_t now = mono_ns(), lag, lag_due = 0;

		close_intervals(s, now, &next_boundary);
		if (atomic_load_explicit(&w->stop_requested, memory_order_relaxed))
			break;
		if (next_boundary != link_checked_at) {
			link_checked_at = next_boundary;
			if (target_deleted(s, d, reason, sizeof(reason))) {
				outcome = STREAM_FAILED;
				break;
			}
		}

		unsigned n_prepped = issue_due(s, d, now, end_ns, prepped, &lag, &lag_due);
		atomic_store_explicit(&s->lag_ns, lag, memory_order_relaxed);
		struct interval_slot *cur = stream_current(&s->stats);
		if (lag > cur->lag_max_ns)
			cur->lag_max_ns = lag;
		fidelity_sample(&d->fid, cur, mono_ns());
		if (fidelity_check_lag(&d->fid, s->label, lag, lag_due, now, cfg->max_lag_ns,
				       reason, sizeof(reason))) {
			outcome = STREAM_FAILED;
			break;
		}
		if (n_prepped == 0 && all_finished(d)) {
			outcome = STREAM_FINISHED;
			break;
		}

		uint64_t wake = next_wake(d, next_boundary, end_ns);
		uint64_t submit_ns = mono_ns();
		fidelity_sample(&d->fid, cur, submit_ns);
		for (unsigned i = 0; i < n_prepped; i++) {
			struct dev_slot *slot = &d->slots[prepped[i]];
			slot->submit_ns = submit_ns;
			hist_record(&cur->ops[slot->op].issue_delay,
				    submit_ns > slot->ready_ns ? submit_ns - slot->ready_ns : 0);
		}
		struct __kernel_timespec ts = { 0 };
		if (wake > submit_ns) {
			ts.tv_sec = (long long)((wake - submit_ns) / 1000000000u);
			ts.tv_nsec = (long long)((wake - submit_ns) % 1000000000u);
		}
		struct io_uring_cqe *cqe;
		int r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			snprintf(reason, sizeof(reason), "io_uring wait failed: %s", strerror(-r));
			outcome = STREAM_FAILED;
			break;
		}
		now = mono_ns();
		fidelity_woke(&d->fid, stream_current(&s->stats),
			      wake > submit_ns ? wake : submit_ns, now);
		close_intervals(s, now, &next_boundary);
		reap(s, d, now);
	}

	/* Drain what is in flight, so every issued op is counted. */
	while (d->n_free < d->n_slots) {
		int r = io_uring_submit_and_wait(&d->ring, 1);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -ETIME)
			break;
		uint64_t now = mono_ns();
		close_intervals(s, now, &next_boundary);
		reap(s, d, now);
	}
	free(prepped);
	atomic_store(&s->lag_ns, 0);
	stream_finish(s, outcome, reason[0] ? "%s" : NULL, reason);
	return NULL;
}

static void dev_release(struct workload *w)
{
	for (size_t i = 0; i < w->n_streams; i++) {
		struct dev_stream *d = w->streams[i].engine;
		if (!d)
			continue;
		if (d->ring_ready)
			io_uring_queue_exit(&d->ring);
		if (d->fd >= 0)
			close(d->fd);
		free(d->slots);
		free(d->free_slots);
		free(d->buffers);
		free(d);
		w->streams[i].engine = NULL;
	}
}

/* One stream per device: each gets its own queue and thread, so one slow
 * device cannot hold back the others' schedules. */
static size_t dev_n_streams(const struct workload_config *cfg)
{
	return cfg->n_targets;
}

static const char *dev_stream_label(const struct workload_config *cfg, size_t index)
{
	return cfg->targets[index].path;
}

const struct workload_engine dev_engine = {
	.name = "device",
	.n_streams = dev_n_streams,
	.stream_label = dev_stream_label,
	.prepare = dev_prepare,
	.thread_main = dev_thread,
	.release = dev_release,
};
