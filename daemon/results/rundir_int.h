// SPDX-License-Identifier: GPL-2.0-only
/*
 * What rundir.c (the log's writer) and rundir_open.c (finding the run to
 * resume, or moving an old one aside) share.
 */
#ifndef SOAK_RUNDIR_INT_H
#define SOAK_RUNDIR_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rundir {
	char *path, *log_path, *plan;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t wake, synced;
	uint64_t plan_gen;           /* under lock: bumped with each plan */

	/* plan.json is written by one thread at a time (the writer, or a
	 * reload's rundir_set_plan); plan_saved_gen, under plan_lock, is the
	 * plan_gen on disk. */
	pthread_mutex_t plan_lock;
	uint64_t plan_saved_gen;

	/* Under lock.  Every record appended is, at any time, exactly one
	 * of: synced (on disk), dropped (lost, counted), or not yet on disk
	 * (pending, or written but not synced). */
	char *pending;
	size_t pending_len, pending_cap;
	uint64_t pending_records;
	uint64_t records_appended, records_synced, records_dropped;
	bool stop, sync_requested;
	uint64_t sync_seq, synced_seq;
	int sync_result;
	char error[256];
	uint64_t bytes_written;      /* synced */

	/* Writer thread only.  What was written since the last fdatasync()
	 * is kept: until the sync succeeds the kernel may still lose it (a
	 * filesystem that aborts drops its dirty pages), and then it is
	 * written again. */
	int fd;
	bool opened;                 /* synced_size is known */
	uint64_t synced_size;        /* the log's size at the last successful sync */
	char *unsynced;
	size_t unsynced_len;
	uint64_t unsynced_records;
	uint64_t unsynced_since_ns;  /* when its first record was written */
	bool error_logged;
};

/* Opens (creating) the log, plan.json first; a failure leaves the error
 * state the writer retries from. */
int rundir_open_log(struct rundir *d);
void *rundir_writer_thread(void *arg);

#endif
