/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device engine's per-stream state, shared by dev_engine.c (the I/O
 * thread) and dev_setup.c (opening targets and rings, releasing them).
 * Only these files of daemon/device include this.
 */
#ifndef SOAK_DEV_ENGINE_INT_H
#define SOAK_DEV_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "dev_account.h"
#include "dev_model.h"
#include "workload/fidelity.h"
#include "workload/stats.h"

struct workload;

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
	struct dev_backlog backlog[DEV_MAX_GENS]; /* ops waiting for a slot */
	unsigned op_inflight[STATS_MAX_OPS];
	bool abandoned;             /* ops left in flight: the kernel may still use the buffers */
	struct fidelity fid;        /* the thread's own lateness */
};

int dev_prepare(struct workload *w, char *err, size_t errlen);
void dev_release(struct workload *w);

#endif
