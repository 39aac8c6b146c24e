// SPDX-License-Identifier: GPL-2.0-only
/*
 * After a run that gave up ops in flight (the device did not answer): the
 * stream's thread takes their late completions back, and no start may
 * reuse the slots, buffers or ring until it has them all; nor may any
 * other workload (a reload's replacement, a new name on the same target)
 * open that target meanwhile: the late writes would land over its blocks,
 * and the lingering thread still writes its verify state.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/major.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "base/log.h"
#include "dev_engine_int.h"
#include "dev_linger.h"
#include "dev_path.h"
#include "dev_safety.h"
#include "dev_sys.h"
#include "workload/workload.h"

/*
 * Where a target's blocks are: a file by inode; a block device as the
 * whole disks under it, and for a disk or a partition straight on one, the
 * bytes of that disk it spans.  A device stacked on others (dm, md) is
 * taken to span all of each: which of their blocks it maps is the
 * kernel's to know.
 */
struct target_span {
	bool is_blockdev;
	dev_t dev;                  /* block device: its st_rdev; file: st_dev */
	ino_t ino;                  /* file: its inode */
	struct devsys_set disks;    /* block device: the whole disks under it */
	uint64_t start, end;        /* bytes of disks.devs[0] when not stacked */
	bool stacked;
	/* A loop device (or a partition of one) over a file: that file, whose
	 * blocks are its blocks (over a block device: that device is among
	 * disks). */
	bool over_file;
	dev_t file_dev;
	ino_t file_ino;
};

/*
 * The targets of streams whose threads linger, process-wide: a stream
 * released meanwhile (a reload replaced or removed its workload) is no
 * longer reachable from any workload, yet holds its target until the
 * device answers.  An entry goes before its stream is freed; readers take
 * held_lock, then the stream's linger_lock, so the stream stays valid.
 */
struct held_target {
	struct held_target *next;
	struct dev_stream *stream;
	struct target_span span;
	char *label, *workload;
};
static struct held_target *held_targets;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Block devices streams hold open for writing, process-wide: the exclusive
 * claim that keeps others from mounting them keeps soakd's other workloads
 * off too, and the kernel's EBUSY then names no one.  An entry goes before
 * its stream is freed; held_lock guards the list.
 */
struct claim {
	struct claim *next;
	const struct dev_stream *stream;
	struct target_span span;
	char *workload;
};
static struct claim *claims;

/* A loop device's backing, asked of the device (fd; whole, its disk): a file
 * is remembered, a block device's whole disks join the disks under it. */
static void add_loop_backing(int fd, dev_t whole, struct target_span *ret)
{
	struct dev_loop_backing b;

	if (fd < 0 || major(whole) != LOOP_MAJOR || dev_safety_loop_backing_fd(fd, &b) < 0)
		return;
	if (!b.is_blk) {
		ret->over_file = true;
		ret->file_dev = b.dev;
		ret->file_ino = b.ino;
		return;
	}
	/* Over a block device: the whole disks under it (a partition's disk,
	 * a dm or md device's disks), or the device itself if sysfs cannot
	 * say; its bytes of them are the loop's offset on, taken as all. */
	struct devsys_set under = { .n = 0 };
	if (devsys_lower_disks(DEVSYS_SYSFS, b.rdev, &under) < 0 || under.n == 0)
		under = (struct devsys_set){ .devs = { b.rdev }, .n = 1 };
	for (size_t i = 0; i < under.n; i++)
		if (!devsys_set_has(&ret->disks, under.devs[i]) && ret->disks.n < DEVSYS_MAX_DEVS)
			ret->disks.devs[ret->disks.n++] = under.devs[i];
	ret->stacked = true;
}

/* What sysfs says of st's device (fd: a descriptor of it, or -1); what it
 * cannot say is taken as the device on its own, all of it (the same device
 * number still matches). */
static void span_of(int fd, const struct stat *st, struct target_span *ret)
{
	*ret = (struct target_span){ .is_blockdev = S_ISBLK(st->st_mode), .end = UINT64_MAX };
	if (!ret->is_blockdev) {
		ret->dev = st->st_dev;
		ret->ino = st->st_ino;
		return;
	}
	ret->dev = st->st_rdev;
	dev_t whole;
	char dir[PATH_MAX];
	uint64_t start, sectors;
	if (devsys_lower_disks(DEVSYS_SYSFS, st->st_rdev, &ret->disks) < 0 ||
	    ret->disks.n == 0 || devsys_whole_disk(DEVSYS_SYSFS, st->st_rdev, &whole) < 0) {
		ret->disks = (struct devsys_set){ .devs = { st->st_rdev }, .n = 1 };
		add_loop_backing(fd, st->st_rdev, ret);
		return;
	}
	ret->stacked = ret->disks.n != 1 || ret->disks.devs[0] != whole;
	add_loop_backing(fd, whole, ret);
	/* A partition: its bytes of the disk, in 512-byte sectors. */
	if (!ret->stacked && whole != st->st_rdev &&
	    devsys_block_dir(DEVSYS_SYSFS, st->st_rdev, dir, sizeof(dir)) == 0 &&
	    devsys_read_u64(dir, "start", &start) == 0 &&
	    devsys_read_u64(dir, "size", &sectors) == 0 && sectors <= UINT64_MAX / 512 &&
	    start <= UINT64_MAX / 512 - sectors) {
		ret->start = start * 512;
		ret->end = (start + sectors) * 512;
	}
}

/* Whether a and b may share blocks: the same file; or a whole disk under
 * both, where their bytes of it meet (all of it for a stacked device). */
static bool spans_meet(const struct target_span *a, const struct target_span *b)
{
	/* A loop device's blocks are its backing file's. */
	if (a->over_file && b->over_file && a->file_dev == b->file_dev &&
	    a->file_ino == b->file_ino)
		return true;
	if (a->is_blockdev != b->is_blockdev) {
		const struct target_span *loop = a->is_blockdev ? a : b, *file = a->is_blockdev ? b : a;
		return loop->over_file && loop->file_dev == file->dev && loop->file_ino == file->ino;
	}
	if (!a->is_blockdev)
		return a->dev == b->dev && a->ino == b->ino;
	if (a->dev == b->dev)
		return true;
	for (size_t i = 0; i < a->disks.n; i++) {
		if (!devsys_set_has(&b->disks, a->disks.devs[i]))
			continue;
		if (a->stacked || b->stacked)
			return true;
		if (a->start < b->end && b->start < a->end)
			return true;
	}
	return false;
}

struct target_span *dev_linger_span_new(int fd)
{
	struct target_span *span = malloc(sizeof(*span));
	struct stat st;

	if (span && fstat(fd, &st) == 0) {
		span_of(fd, &st, span);
		return span;
	}
	free(span);
	return NULL;
}

void dev_linger_hold(struct dev_stream *d, const char *label, const char *workload_name)
{
	struct held_target *h = calloc(1, sizeof(*h));
	struct stat st;

	/* Without a record the stream still refuses its own restarts
	 * (dev_can_start); only other workloads go unwarned. */
	if (!h || fstat(d->fd, &st) < 0 || !(h->label = strdup(label)) ||
	    !(h->workload = strdup(workload_name))) {
		if (h) {
			free(h->label);
			free(h);
		}
		log_warning("%s: cannot record that ops given up are still in flight: other "
			    "workloads are not kept off it", label);
		return;
	}
	h->stream = d;
	/* Taken when the target was opened and answered: asked now, a loop
	 * device's backing (LOOP_GET_STATUS64 looks up the backing file) could
	 * hang with the device. */
	if (d->span)
		h->span = *d->span;
	else
		span_of(d->fd, &st, &h->span);
	pthread_mutex_lock(&held_lock);
	h->next = held_targets;
	held_targets = h;
	pthread_mutex_unlock(&held_lock);
}

static void linger_unhold(struct dev_stream *d)
{
	pthread_mutex_lock(&held_lock);
	for (struct held_target **p = &held_targets; *p; p = &(*p)->next) {
		struct held_target *h = *p;
		if (h->stream != d)
			continue;
		*p = h->next;
		free(h->label);
		free(h->workload);
		free(h);
		break;
	}
	pthread_mutex_unlock(&held_lock);
}

/* A lingering stream other than except holds what st is: -EBUSY, err
 * naming the target, its ops still in flight and the workload they were
 * given up by, and why "name" cannot have it yet. */
static int check_held(int fd, const struct stat *st, const struct dev_stream *except,
		      const char *name, char *err, size_t errlen)
{
	struct target_span want = { .end = 0 };
	int r = 0;

	/* Nothing held, nothing to ask of the device.  Else its span is worked
	 * out before the lock: sysfs and a loop device's status may take as
	 * long as the device does, and a stream's thread takes the lock to let
	 * its target go. */
	pthread_mutex_lock(&held_lock);
	bool any = held_targets != NULL;
	pthread_mutex_unlock(&held_lock);
	if (!any)
		return 0;
	span_of(fd, st, &want);
	pthread_mutex_lock(&held_lock);
	for (struct held_target *h = held_targets; h && r == 0; h = h->next) {
		if (h->stream == except || !spans_meet(&h->span, &want))
			continue;
		pthread_mutex_lock(&h->stream->linger_lock);
		bool lingering = h->stream->lingering;
		unsigned left = dev_outstanding(h->stream);
		pthread_mutex_unlock(&h->stream->linger_lock);
		if (!lingering)
			continue;
		snprintf(err, errlen, "%s still has %u op%s of workload \"%s\"'s last run in flight "
			 "(given up when it did not answer): \"%s\" cannot use %s until the device "
			 "completes %s (they would land over its writes)", h->label, left,
			 left == 1 ? "" : "s", h->workload, name,
			 h->span.dev == want.dev && h->span.is_blockdev == want.is_blockdev ? "it"
			 : want.is_blockdev ? "a device that shares its blocks"
					    : "the file under it",
			 left == 1 ? "it" : "them");
		r = -EBUSY;
	}
	pthread_mutex_unlock(&held_lock);
	return r;
}

int dev_linger_check_target(int fd, const struct stat *st, const char *name, char *err,
			    size_t errlen)
{
	return check_held(fd, st, NULL, name, err, errlen);
}

void dev_linger_claim(struct dev_stream *d, const char *workload_name)
{
	struct claim *c = calloc(1, sizeof(*c));

	/* Without an entry, another workload's refusal is only less clear. */
	if (!c || !d->span || !(c->workload = strdup(workload_name))) {
		free(c);
		return;
	}
	c->stream = d;
	c->span = *d->span;
	pthread_mutex_lock(&held_lock);
	c->next = claims;
	claims = c;
	pthread_mutex_unlock(&held_lock);
}

void dev_linger_unclaim(const struct dev_stream *d)
{
	pthread_mutex_lock(&held_lock);
	for (struct claim **p = &claims; *p; p = &(*p)->next) {
		struct claim *c = *p;
		if (c->stream != d)
			continue;
		*p = c->next;
		free(c->workload);
		free(c);
		break;
	}
	pthread_mutex_unlock(&held_lock);
}

bool dev_linger_claimed_by(int fd, const struct stat *st, char *workload, size_t len)
{
	struct target_span want = { .end = 0 };
	bool found = false;

	pthread_mutex_lock(&held_lock);
	bool any = claims != NULL;
	pthread_mutex_unlock(&held_lock);
	if (!any)
		return false;
	span_of(fd, st, &want);
	pthread_mutex_lock(&held_lock);
	for (struct claim *c = claims; c && !found; c = c->next)
		if (spans_meet(&c->span, &want)) {
			snprintf(workload, len, "%s", c->workload);
			found = true;
		}
	pthread_mutex_unlock(&held_lock);
	return found;
}

int dev_targets_free(const struct workload_config *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->n_targets; i++) {
		struct dev_path path = DEV_PATH_INIT;
		/* A path that cannot be resolved is the open's to report. */
		if (dev_path_resolve(cfg->targets[i].path, cfg->targets[i].allow_unsafe_path, &path,
				     err, errlen) < 0) {
			dev_path_close(&path);
			continue;
		}
		int r = path.fd >= 0 ? check_held(path.fd, &path.st, NULL, cfg->name, err, errlen) : 0;
		dev_path_close(&path);
		if (r < 0)
			return r;
	}
	err[0] = '\0';
	return 0;
}

/* Late completions of ops given up in flight: counted already (as missed),
 * so only their slots and verify state are taken back. */
static void reap_late(struct dev_stream *d)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&d->ring, cqe);
		if (tag == DEV_VERIFY_FLUSH_TAG) {
			if (d->verify)
				dev_verify_late_flush(d, res);
			continue;
		}
		if (tag >= d->n_slots || d->n_free >= d->n_slots)
			continue;
		if (d->verify)
			dev_verify_late(d, (unsigned)tag,
					res < 0 || (uint32_t)res != d->slots[tag].len);
		d->free_slots[d->n_free++] = (unsigned)tag;
	}
}

/*
 * The run is over but the device still holds ops it gave up on.  This
 * thread is the ring's issuer, the only one that can reap it, so it stays
 * (its workload ended, its results are final) until they are all back:
 * then the ring is made new for the next start, which dev_can_start
 * refuses until then.  Wakes each second to see whether the workload was
 * released meanwhile; then it frees the stream itself.
 */
void dev_take_back_late(struct dev_stream *d, char *label)
{
	for (;;) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 1 };
		int r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, &ts, NULL);

		pthread_mutex_lock(&d->linger_lock);
		if (d->orphaned) {
			pthread_mutex_unlock(&d->linger_lock);
			linger_unhold(d);
			dev_stream_free(d);
			break;
		}
		reap_late(d);
		bool back = !dev_outstanding(d);
		if (back) {
			d->abandoned = false;
			dev_ring_rearm(d, label ? label : "device");
			d->lingering = false;
		}
		pthread_mutex_unlock(&d->linger_lock);
		if (back) {
			linger_unhold(d);
			log_notice("%s: the ops given up in flight have completed: its workload "
				   "can start again", label ? label : "device");
			break;
		}
		/* A ring that cannot be waited on: look again a second later. */
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
	}
	free(label);
}

int dev_can_start(struct workload *w, char *err, size_t errlen)
{
	for (size_t i = 0; i < w->n_streams; i++) {
		struct dev_stream *d = w->streams[i].engine;
		if (!d)
			continue;
		pthread_mutex_lock(&d->linger_lock);
		bool lingering = d->lingering;
		unsigned left = dev_outstanding(d);
		pthread_mutex_unlock(&d->linger_lock);
		if (lingering) {
			snprintf(err, errlen, "%s still has %u op%s of the last run in flight (given "
				 "up when it did not answer): \"%s\" cannot start until the device "
				 "completes %s", w->streams[i].label, left, left == 1 ? "" : "s",
				 w->cfg->name, left == 1 ? "it" : "them");
			return -EBUSY;
		}
		/* Another workload's stream that lingers on the same target. */
		struct stat st;
		if (fstat(d->fd, &st) == 0 && check_held(d->fd, &st, d, w->cfg->name, err, errlen) < 0)
			return -EBUSY;
	}
	return 0;
}
