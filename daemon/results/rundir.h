/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RUNDIR_H
#define SOAK_RUNDIR_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/*
 * A run's directory under the state directory: plan.json (the resolved
 * configuration), devices.json (facts about the targets) and intervals.log
 * (see common/runlog.h).  Records are appended by a writer thread that
 * writes them at once and fsyncs them at most RUNDIR_FLUSH_NS later (on a
 * deadline, whether more records follow or not), so a crash of soakd loses
 * nothing written, a power cut at most the last RUNDIR_FLUSH_NS, and the
 * main loop never waits for the disk.  Records stay in memory until their
 * sync succeeds: if it fails they are written again.
 *
 * plan.json is written (and its directory synced) before the log is
 * created, and after a reload before any record that follows it, so a
 * log is never without its plan; a failed write of it is a failing disk
 * like any other (below) and retried the same way.
 *
 * When the disk fails (full, read-only, gone), the error is logged once
 * and shown in status; records wait in memory (up to RUNDIR_MAX_PENDING
 * bytes, then the oldest are dropped and counted) and writing resumes by
 * itself when the disk takes them again.  Records still not on disk when
 * the run's log is closed are counted as dropped and logged.
 */

#define RUNDIR_FLUSH_NS (UINT64_C(2) * 1000000000)
#define RUNDIR_MAX_PENDING (UINT64_C(256) << 20)

struct rundir;

/*
 * Opens <state_dir>/<run_name>.  If it holds a run with the same plan and
 * a log and new_run is false, *ret_resume is set and the existing log is
 * kept for replay; otherwise (a log without plan.json included: its
 * configuration cannot be told) an existing directory is renamed
 * <run_name>.<N> and a new one started.  If the directory cannot be created, a rundir is still
 * returned in the failed state (writing is retried); only out-of-memory is
 * an error.
 */
int rundir_open(const char *state_dir, const char *run_name, const char *plan, bool new_run,
		struct rundir **ret, bool *ret_resume);
const char *rundir_path(const struct rundir *d);
const char *rundir_log_path(const struct rundir *d);

/* Queues a record (the reference is not taken). */
void rundir_append(struct rundir *d, const json_t *record);
/* Writes and syncs everything queued now; returns 0 or -errno. */
int rundir_sync(struct rundir *d);
/* Writes a whole file in the run directory atomically (tmp + rename). */
int rundir_write_file(struct rundir *d, const char *name, const char *text);
/* The same for a JSON document, written out as it is dumped: no copy of
 * its text is made in memory (a checkpoint's is megabytes). */
int rundir_write_json(struct rundir *d, const char *name, const json_t *json);
/* The run goes on under a new plan (a reload): plan.json says so, and a
 * restart with the same configuration resumes it.  On failure (returned)
 * the writer writes it again before the records that follow. */
int rundir_set_plan(struct rundir *d, const char *plan);

/* {"path", "bytes_written" (synced), "pending_bytes", "records" (appended),
 *  "records_synced", "records_pending" (not yet synced), "records_dropped"
 *  (lost, each counted once), "error"?} */
json_t *rundir_status_json(struct rundir *d);
/* Flushes, syncs and stops the writer. */
void rundir_close(struct rundir *d);

#endif
