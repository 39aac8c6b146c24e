// SPDX-License-Identifier: GPL-2.0-only
/*
 * After a run that gave up ops in flight (the device did not answer): the
 * stream's thread takes their late completions back, and no start may
 * reuse the slots, buffers or ring until it has them all.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <liburing.h>

#include "base/log.h"
#include "dev_engine_int.h"
#include "workload/workload.h"

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
	}
	return 0;
}
