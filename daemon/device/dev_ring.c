// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device stream's ring: set up, its file and buffers registered, and
 * claimed by the stream's thread.  See dev_engine_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "base/log.h"
#include "workload/workload.h"

#include "dev_engine_int.h"

/* In the kernel ABI since 6.1; liburing 2.3's header has them. */
#define RING_SINGLE (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)
/* Since 5.19: completions run when the thread enters the kernel. */
#define RING_COOP (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG)

static int ring_register(struct dev_stream *d, const char *path, char *err, size_t errlen)
{
	int r = io_uring_register_files(&d->ring, &d->fd, 1);
	if (r < 0) {
		snprintf(err, errlen, "cannot register %s with io_uring: %s", path, strerror(-r));
		return r;
	}
	struct iovec *iov = calloc((size_t)2 * d->n_slots, sizeof(*iov));
	if (iov) {
		for (unsigned i = 0; i < 2 * d->n_slots; i++)
			iov[i] = (struct iovec){ d->buffers + (size_t)i * d->max_len, d->max_len };
		/* Registered buffers save a page pin per I/O; without them
		 * (memlock limits) we fall back to plain reads and writes. */
		d->fixed_buffers = io_uring_register_buffers(&d->ring, iov, 2 * d->n_slots) == 0;
		free(iov);
	}
	return 0;
}

static int ring_init(struct dev_stream *d, unsigned flags, const char *path, char *err,
		     size_t errlen)
{
	/* One more SQE for the flush of a verified target. */
	unsigned entries = d->verify_flushes ? d->n_slots + 1 : d->n_slots;
	static const unsigned fallback[] = { RING_COOP, 0 };
	int r = io_uring_queue_init(entries, &d->ring, flags);

	/* Older kernels refuse the flags they lack: the next best ring. */
	for (size_t i = 0; r == -EINVAL && i < sizeof(fallback) / sizeof(*fallback); i++) {
		flags = fallback[i];
		r = io_uring_queue_init(entries, &d->ring, flags);
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot set up io_uring for %s: %s", path, strerror(-r));
		return r;
	}
	d->ring_ready = true;
	d->ring_single = (flags & RING_SINGLE) == RING_SINGLE;
	d->ring_claimed = false; /* created disabled, or not single-issuer */
	r = ring_register(d, path, err, errlen);
	if (r < 0) {
		/* No half-made ring for a later claim to enable. */
		io_uring_queue_exit(&d->ring);
		d->ring_ready = false;
	}
	return r;
}

/* A single-issuer ring, disabled until a thread claims it. */
int dev_ring_open(struct dev_stream *d, const char *path, char *err, size_t errlen)
{
	if (d->ring_ready)
		io_uring_queue_exit(&d->ring);
	d->ring_ready = false;
	return ring_init(d, RING_SINGLE | IORING_SETUP_R_DISABLED, path, err, errlen);
}

int dev_ring_claim(struct dev_stream *d, const char *path, char *err, size_t errlen)
{
	if (!d->ring_single)
		return 0;
	/* Another thread issued on it (its rearm at the end failed, or ops
	 * were given up in it): that ring is its for good. */
	if (d->ring_claimed || !d->ring_ready) {
		int r = dev_ring_open(d, path, err, errlen);
		if (r < 0)
			return r;
	}
	/* liburing 2.3 declares io_uring_enable_rings but does not export it. */
	if (syscall(__NR_io_uring_register, d->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
		    NULL, 0) < 0) {
		int r = -errno;
		snprintf(err, errlen, "cannot enable the io_uring of %s: %s", path, strerror(-r));
		return r;
	}
	d->ring_claimed = true;
	return 0;
}

void dev_ring_rearm(struct dev_stream *d, const char *path)
{
	char err[256];

	if (!d->ring_single || !d->ring_claimed || d->abandoned)
		return;
	if (dev_ring_open(d, path, err, sizeof(err)) < 0)
		log_warning("%s (the next start tries again)", err);
}
