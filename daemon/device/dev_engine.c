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
#include "dev_account.h"
#include "dev_engine_int.h"
#include "dev_model.h"
#include "parse.h"
#include "workload/fidelity.h"
#include "workload/workload.h"

#define DEV_ERRORS_LOGGED 5
#define DEV_STAMP_EVERY 4096u
/* How long ops in flight when the schedule ends may take to complete
 * before they are counted as missed: at most an interval, and this. */
#define DEV_DRAIN_MAX_NS (UINT64_C(5) * 1000000000u)
/* The longest the thread sleeps (next_wake). */
#define DEV_WAKE_MAX_NS (UINT64_C(250) * 1000000u)
#define DEV_REAP_BATCH 64u
#define DEV_PREFETCH_MAX 16384u

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
	/* "fua": each write durable when it completes. */
	if (!is_read && d->verify && d->verify_fua)
		sqe->rw_flags |= RWF_DSYNC;
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
	if (op.io == DEV_IO_WRITE && d->verify) {
		/* Verify blocks, and with "pre_read" the old ones checked first. */
		slot->pre_read = d->verify_pre_read;
		if (slot->pre_read)
			slot->io = DEV_IO_READ;
		dev_verify_submit(d, slot_index);
	} else if (op.io == DEV_IO_READ && d->verify) {
		dev_verify_submit(d, slot_index);
	} else if (op.io == DEV_IO_WRITE) {
		/* Stamp each 4 KiB with where and when it was written. */
		uint8_t *buf = d->buffers + (size_t)(d->n_slots + slot_index) * d->max_len;
		uint64_t stamp[2] = { slot->offset, ++d->writes_issued };
		for (uint32_t o = 0; o < slot->len; o += DEV_STAMP_EVERY) {
			stamp[0] = slot->offset + o;
			memcpy(buf + o, stamp, sizeof(stamp));
		}
	}
	g->inflight++;
	d->op_inflight[op.op]++;
	queue_slot(d, slot_index);
}

/* Handles one completion: done, or requeued for the next submit. */
static void complete_op(struct workload_stream *s, struct dev_stream *d, unsigned slot_index,
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
		return;
	}
	/* Checked as it completes; a pre-read goes on as its write. */
	if (d->verify && dev_verify_complete(s, d, slot_index, error)) {
		queue_slot(d, slot_index);
		return;
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
	d->op_inflight[slot->op]--;
	d->free_slots[d->n_free++] = slot_index;
}

/*
 * The data of a verified read, asked into this CPU's cache while the read
 * before it is checked: the kernel wrote it from whichever CPU completed
 * the I/O, and fetching it line by line as the CRC reaches it stalls.
 */
static void prefetch_read(const struct dev_stream *d, uint64_t tag)
{
	if (tag == DEV_VERIFY_FLUSH_TAG || d->slots[tag].io != DEV_IO_READ)
		return;
	const uint8_t *buf = d->buffers + (size_t)tag * d->max_len;
	uint32_t len = d->slots[tag].len;
	for (uint32_t at = 0; at < len && at < DEV_PREFETCH_MAX; at += 64)
		__builtin_prefetch(buf + at);
}

static void reap(struct workload_stream *s, struct dev_stream *d, uint64_t now_ns)
{
	struct io_uring_cqe *cqes[DEV_REAP_BATCH];
	unsigned n;

	while ((n = io_uring_peek_batch_cqe(&d->ring, cqes, DEV_REAP_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t tag = io_uring_cqe_get_data64(cqes[i]);
			if (d->verify && i + 1 < n)
				prefetch_read(d, io_uring_cqe_get_data64(cqes[i + 1]));
			if (tag == DEV_VERIFY_FLUSH_TAG)
				dev_verify_flush_done(s, d, cqes[i]->res);
			else
				complete_op(s, d, (unsigned)tag, cqes[i]->res, now_ns);
		}
		io_uring_cq_advance(&d->ring, n);
		if (n < DEV_REAP_BATCH)
			break;
	}
	/* Requeued ops go out with the thread's next submit, which every
	 * path after a reap makes (the wait, or the last submit and the
	 * drain): a submit here could post a completion at once, and the
	 * wait that found it would not ask the kernel for the completions
	 * deferred behind it (liburing 2.3), timing those a loop late. */
}

/*
 * What an interval ending at boundary says besides its ops: how late the
 * oldest op waiting for a slot was at its end (while every slot is busy the
 * thread wakes only at boundaries, and the lag then seen belongs to the
 * interval that ends as much as to the next), and its pending ops.
 */
static void end_interval(struct workload_stream *s, struct dev_stream *d, uint64_t boundary)
{
	struct workload *w = s->workload;
	struct interval_slot *cur = stream_current(&s->stats);
	uint64_t pending[STATS_MAX_OPS] = { 0 };
	/* A stop cuts the schedule where it was asked for: a boundary closed
	 * before this thread saw it counts no op due after it. */
	uint64_t upto = workload_cut_at(w, boundary);

	for (size_t i = 0; i < d->model.n_gens; i++) {
		struct dev_gen *g = &d->model.gens[i];
		if (g->rate > 0 && !g->finished && g->have_due && g->due_ns < boundary &&
		    boundary - g->due_ns > cur->lag_max_ns)
			cur->lag_max_ns = boundary - g->due_ns;
		dev_gen_split(g, dev_backlog_waiting(&d->backlog[i], g, w->started_ns, upto),
			      pending, w->n_ops);
	}
	for (size_t op = 0; op < w->n_ops; op++)
		cur->ops[op].pending = pending[op] + d->op_inflight[op];
}

static void close_intervals(struct workload_stream *s, struct dev_stream *d, uint64_t now_ns,
			    uint64_t *next_boundary)
{
	while (now_ns >= *next_boundary) {
		end_interval(s, d, *next_boundary);
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
		dev_backlog_init(&d->backlog[i], &g->sched);
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
	/* Past the end only what the schedule made due before it goes out. */
	uint64_t due_by = now < end_ns ? now : end_ns - 1;

	for (size_t i = 0; i < d->model.n_gens; i++) {
		struct dev_gen *g = &d->model.gens[i];
		bool open_loop = g->rate > 0;

		while (!g->finished && g->inflight < g->max_inflight && d->n_free &&
		       !(d->verify && dev_verify_blocked(d))) {
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
				if (g->due_ns > due_by)
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
		/* Whether the loop stopped for want of a slot, not because the
		 * next op is not due yet. */
		bool no_slot = g->inflight >= g->max_inflight || !d->n_free ||
			       (d->verify && dev_verify_blocked(d));
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
		/* Waiting for a slot: the device is not keeping up (or soakd
		 * was frozen: fidelity_judge_lag tells), and the op's issue
		 * delay counts from the slot's release.  An op that is merely
		 * not due yet counts from its due time, so that a late wake-up
		 * of this thread stays soakd's own lateness, whatever
		 * completions it reaps first. */
		if (g->have_due && no_slot)
			g->waiting = true;
		if (g->have_due && g->due_ns < now && now - g->due_ns > lag) {
			lag = now - g->due_ns;
			*ret_lag_due = g->due_ns;
		}
	}
	*ret_lag = lag;
	return n;
}

/* The ops just prepared go to the kernel now: their service time and their
 * issue delay start here. */
static void stamp_submits(struct dev_stream *d, struct interval_slot *cur, const unsigned *prepped,
			  unsigned n, uint64_t submit_ns)
{
	for (unsigned i = 0; i < n; i++) {
		struct dev_slot *slot = &d->slots[prepped[i]];
		slot->submit_ns = submit_ns;
		hist_record(&cur->ops[slot->op].issue_delay,
			    submit_ns > slot->ready_ns ? submit_ns - slot->ready_ns : 0);
	}
}

/*
 * When the thread must next wake: the interval boundary, the next due op
 * that has a free slot, or the end of a closed-loop run.  While no op can
 * be issued at all (every slot busy, or the verify ring waiting for a
 * flush), a due op is no reason to wake: what unblocks it is a completion,
 * which ends the wait anyway, and an op due meanwhile is issued late then
 * (or missed at the end) like any op that waited for a slot.  But it
 * wakes every DEV_WAKE_MAX_NS at least, so that a stop (soakctl stop,
 * SIGTERM) is seen and the lag in status grows while a stalled device holds
 * every slot and the next boundary is far away (an interval may be an hour).
 */
static uint64_t next_wake(const struct dev_stream *d, uint64_t now, uint64_t next_boundary,
			  uint64_t end_ns)
{
	uint64_t wake = next_boundary < now + DEV_WAKE_MAX_NS ? next_boundary : now + DEV_WAKE_MAX_NS;
	bool can_issue = d->n_free > 0 && !(d->verify && dev_verify_blocked(d));

	for (size_t i = 0; i < d->model.n_gens; i++) {
		const struct dev_gen *g = &d->model.gens[i];
		if (!can_issue || g->finished || g->inflight >= g->max_inflight)
			continue;
		if (g->rate > 0 && g->have_due && g->due_ns < wake)
			wake = g->due_ns;
	}
	if (d->verify && dev_verify_next_flush(d->verify) < wake)
		wake = dev_verify_next_flush(d->verify);
	/* The end of the schedule, when what still waits becomes missed. */
	return end_ns < wake ? end_ns : wake;
}

static bool all_finished(const struct dev_stream *d)
{
	for (size_t i = 0; i < d->model.n_gens; i++)
		if (!d->model.gens[i].finished)
			return false;
	return d->n_free == d->n_slots;
}

/*
 * The stream ends: every op due by now and never issued is missed; those in
 * flight get a bounded drain, and any the device still holds after it are
 * missed too, with their wait so far as latency (a lower bound).  Their
 * buffers stay allocated: the kernel may still read or write them.  A
 * verify flush queued or in flight is waited for the same way (submitted
 * first if the last pass only queued it): left behind, it would hold the
 * epochs of every later run.
 */
static void finish_ops(struct workload_stream *s, struct dev_stream *d, uint64_t *next_boundary)
{
	struct workload *w = s->workload;
	uint64_t now = mono_ns(), cut = workload_cut_at(w, now), missed = 0;

	for (size_t i = 0; i < d->model.n_gens; i++)
		missed += dev_gen_miss_rest(&d->model.gens[i], w->started_ns, cut, now, &d->rng,
					    d->align, d->size, stream_current(&s->stats)->ops);
	stream_cut(s, cut);
	if (missed)
		log_warning("%s: %" PRIu64 " ops due were never issued (counted as missed): the "
			    "device could not keep up", s->label, missed);

	uint64_t drain = w->interval_ns < DEV_DRAIN_MAX_NS ? w->interval_ns : DEV_DRAIN_MAX_NS;
	uint64_t deadline = now + drain;
	while (dev_outstanding(d) && (now = mono_ns()) < deadline) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = (long long)((deadline - now) / 1000000000u),
						.tv_nsec = (long long)((deadline - now) % 1000000000u) };
		int r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -ETIME && r != -EBUSY)
			break;
		now = mono_ns();
		close_intervals(s, d, now, next_boundary);
		reap(s, d, now);
	}
	if (!dev_outstanding(d))
		return;

	bool *free_slot = calloc(d->n_slots, sizeof(*free_slot));
	uint64_t abandoned = 0;
	now = mono_ns();
	close_intervals(s, d, now, next_boundary);
	for (unsigned i = 0; free_slot && i < d->n_free; i++)
		free_slot[d->free_slots[i]] = true;
	for (unsigned i = 0; free_slot && i < d->n_slots; i++) {
		struct dev_slot *slot = &d->slots[i];
		if (free_slot[i])
			continue;
		op_stats_record_missed(&stream_current(&s->stats)->ops[slot->op],
				       now > slot->due_ns ? now - slot->due_ns : 0);
		d->model.gens[slot->gen].inflight--;
		d->op_inflight[slot->op]--;
		abandoned++;
	}
	free(free_slot);
	d->abandoned = true;
	s->left_io = true;
	if (abandoned)
		log_warning("%s: %" PRIu64 " ops still in flight %.1f s after the end were given "
			    "up (counted as missed): the device does not answer", s->label,
			    abandoned, drain / 1e9);
	if (d->verify && dev_verify_flushing(d->verify))
		log_warning("%s: a verify flush still in flight %.1f s after the end was given up "
			    "(its writes stay uncertain): the device does not answer", s->label,
			    drain / 1e9);
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
	if (dev_ring_claim(d, s->label, reason, sizeof(reason)) < 0) {
		free(prepped);
		stream_finish(s, STREAM_FAILED, "%s", reason);
		return NULL;
	}
	if (!prepped || start_generators(s, d) < 0) {
		free(prepped);
		stream_finish(s, STREAM_FAILED, "cannot set up the device's schedule");
		return NULL;
	}
	if (dev_verify_start(s, reason, sizeof(reason)) < 0) {
		free(prepped);
		stream_finish(s, STREAM_FAILED, "%s", reason);
		return NULL;
	}
	for (;;) {
		uint64_t now = mono_ns(), lag, lag_due = 0;

		close_intervals(s, d, now, &next_boundary);
		if (atomic_load_explicit(&w->stop_requested, memory_order_relaxed))
			break;
		/*
		 * The schedule is over.  Ops it made due before its end that a
		 * free slot can take still go out, late, as they would have a
		 * moment earlier: a thread woken late must not turn its own
		 * delay into ops missed.  What no slot can take is missed
		 * (finish_ops), never issued past the end.
		 */
		bool ending = now >= end_ns;
		if (next_boundary != link_checked_at) {
			link_checked_at = next_boundary;
			if (target_deleted(s, d, reason, sizeof(reason))) {
				outcome = STREAM_FAILED;
				break;
			}
		}

		unsigned n_prepped = issue_due(s, d, now, end_ns, prepped, &lag, &lag_due);
		if (d->verify)
			dev_verify_tick(s, d, now);
		atomic_store_explicit(&s->lag_ns, lag, memory_order_relaxed);
		struct interval_slot *cur = stream_current(&s->stats);
		if (lag > cur->lag_max_ns)
			cur->lag_max_ns = lag;
		fidelity_sample(&d->fid, cur, mono_ns());
		if (fidelity_check_lag(&d->fid, s->label, lag, lag_due, now, cfg->max_lag_ns,
				       reason, sizeof(reason))) {
			/* The ops just prepared go out with finish_ops' drain:
			 * timed from now, not from the clock's 0. */
			stamp_submits(d, cur, prepped, n_prepped, mono_ns());
			outcome = STREAM_FAILED;
			break;
		}
		if (ending || (n_prepped == 0 && all_finished(d))) {
			outcome = STREAM_FINISHED;
			if (n_prepped) {
				stamp_submits(d, cur, prepped, n_prepped, mono_ns());
				int r = io_uring_submit(&d->ring);
				if (r < 0)
					log_warning("%s: the last %u ops could not be submitted: %s",
						    s->label, n_prepped, strerror(-r));
			}
			break;
		}

		/* The fidelity_sample above stands for the CPU time at the wait:
		 * the few ns from there to the submit are not worth a system
		 * call of their own. */
		uint64_t wake = next_wake(d, now, next_boundary, end_ns);
		uint64_t submit_ns = mono_ns();
		stamp_submits(d, cur, prepped, n_prepped, submit_ns);
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
		close_intervals(s, d, now, &next_boundary);
		reap(s, d, now);
	}
	finish_ops(s, d, &next_boundary);
	dev_verify_finish(s, d);
	dev_ring_rearm(d, s->label);
	free(prepped);
	atomic_store(&s->lag_ns, 0);
	/* Set before the stream ends: no start may slip in between. */
	bool linger = d->abandoned;
	char *label = linger ? strdup(s->label) : NULL;
	if (linger) {
		pthread_mutex_lock(&d->linger_lock);
		d->lingering = true;
		pthread_mutex_unlock(&d->linger_lock);
		/* Other workloads kept off the target, from before anyone
		 * can release this one. */
		dev_linger_hold(d, s->label, cfg->name);
	}
	stream_finish(s, outcome, reason[0] ? "%s" : NULL, reason);
	/* s is the main thread's from here: only d, under its lock. */
	if (linger)
		dev_take_back_late(d, label);
	return NULL;
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
	.can_start = dev_can_start,
	.targets_free = dev_targets_free,
	.release = dev_release,
};
