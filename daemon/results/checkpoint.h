/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CHECKPOINT_H
#define SOAK_CHECKPOINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "results.h"
#include "rundir.h"

/*
 * Checkpoints: the results as they stand (results_checkpoint), in
 * checkpoint.json beside the run's log, so that resuming a long run reads
 * the log only after it.  A checkpoint is written once the log holds every
 * record before it (rundir_sync), so it never covers records the log lost
 * in a crash; a resume takes it and removes it, and the run writes the
 * next one at once.
 */
struct checkpointer {
	pthread_t thread;
	bool running;
	atomic_bool done;
	uint64_t last_run_ns;  /* run time of the last one */
};

/* Writes the results as of run time run_ns, with host (the host records'
 * state, host_checkpoint: taken; NULL: none): on a thread (skipped while
 * the last one is still being written) or, with wait, here and now. */
void checkpointer_write(struct checkpointer *c, struct rundir *rundir, const struct results *r,
			uint64_t run_ns, bool wait, json_t *host);
/* Waits for the one being written, if any. */
void checkpointer_wait(struct checkpointer *c);

/* Takes the run directory's checkpoint into r: true, with the run time it
 * covers in *ret_covered and its host state in *ret_host (NULL: none); false when there is none that fits (r is then as
 * new, and the whole log is to be replayed). */
bool checkpoint_restore(struct rundir *rundir, struct results *r, uint64_t *ret_covered,
			json_t **ret_host);
/* The checkpoint taken, once the resume has read the log after it: gone,
 * since the run writes the next one before anything new is logged; should
 * that fail, the next resume reads the whole log rather than trust a
 * checkpoint this run has gone past.  A resume stopped before (a stop
 * while it reads) leaves it for the next. */
void checkpoint_used(struct rundir *rundir);
/* A record's run time: an interval's end, else when it was written.
 * Which records a checkpoint holds: results_in_checkpoint. */
uint64_t checkpoint_record_run_ns(json_t *record);

#endif
