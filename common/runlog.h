/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RUNLOG_H
#define SOAK_RUNLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * The interval log of a run directory: a version header line, then one
 * record per line, each "CRC32 JSON\n" where CRC32 is the 8-hex-digit zlib
 * CRC-32 of the JSON text.  Records are only ever appended; a record whose
 * line is cut short or whose checksum does not match is dropped on read
 * (the last one is what a crash leaves behind; one in the middle means the
 * file was damaged, and is counted separately).
 *
 * Record types ("type"):
 *   start     soakd started or resumed the run: run, wall_ns, run_ns (the
 *             run time it resumed at), pid, resumed (bool), version (the
 *             soakd that wrote the records after it).  The resolved plan
 *             is not in it: plan.json beside the log (daemon/results/
 *             rundir.h) holds the one the records are of.
 *   interval  one workload's closed interval: workload, start_ns, end_ns
 *             (run time), wall_start_ns, wall_end_ns, sched_ns (position in
 *             its schedule at end_ns), lag_max_ns, target_ops, ops: {OP:
 *             {count, errors, bytes, share, latency, service (base64
 *             histograms), ...}}, targets: [{path, ops}] with several devices,
 *             and whatever else the recorder adds (kernel series).  One
 *             record per interval, never merged: those soakd missed while
 *             frozen (SIGSTOP, a stalled loop) are written empty with
 *             "stalled": true, "intervals": 1; one whose ops could not be
 *             told apart by interval says "stalled": true, "intervals": N.
 *             Appended in the order of end_ns, which lets a reader bisect
 *             (runlog_seek_run_time).
 *   state     a workload changed state: workload, state, reason, run_ns
 *   gap       soakd was down: run_ns, down_ns (wall time missed), wall_ns
 *   reload    the run went on under a new plan (plan.json rewritten after
 *             it): run_ns, wall_ns, kept, replaced, added, removed (arrays
 *             of workload names)
 *   host      the host over one tick's interval (daemon/host): start_ns,
 *             end_ns, wall_start_ns, wall_end_ns, cpu {user, system,
 *             iowait, steal, soakd} and psi {cpu_some, mem_some, mem_full,
 *             io_some, io_full} in percent of the interval, mem
 *             {available_bytes, used_bytes}, disks {NAME: {util_pct,
 *             queue_depth, read_Bps, write_Bps}}, net {IFACE: {rx_Bps,
 *             tx_Bps}}, tcp {retrans}, nvme {NAME: {temp_c, media_errors,
 *             pct_used}}; a field the kernel does not offer is absent.
 *   event     something happened to a workload's op: event "drift" (a
 *             drift alarm, daemon/drift), workload, op, metric, start_ns
 *             and end_ns (run time: the window tested), message; written
 *             before the interval record it was raised with.
 *             Readers that do not know a type skip it.
 */

#define RUNLOG_HEADER "soakd-intervals 1\n"
/* In a workload's failure reason (a "state" record's "reason"): it failed
 * because soakd itself was stopped or starved, not for the device; the
 * reports give no verdict on the device then. */
#define RUNLOG_REASON_SOAKD_LATE "soakd itself was stopped or starved"

#define RUNLOG_MAX_LINE (64u << 20)

/* Frames a record: a malloc'd "CRC JSON\n" line, or NULL on ENOMEM. */
char *runlog_frame(const json_t *record);

struct runlog_reader;

/* Opens a log for reading; -errno, or -EPROTO if the header is wrong. */
int runlog_open(const char *path, struct runlog_reader **ret);
/* The same over len bytes in memory, which must outlive the reader. */
int runlog_open_memory(const void *buf, size_t len, struct runlog_reader **ret);
/* The next good record (a new reference) in *ret: returns 1, 0 at the
 * end, or -errno on a read error. */
int runlog_next(struct runlog_reader *r, json_t **ret);
/*
 * Moves a file reader, by bisection over the file (O(log n) reads), to a
 * record boundary before which every interval record ended before
 * run_ns: what a dump from run_ns on can skip.  Interval records are
 * appended in the order of their end (run time), which is what makes this
 * work; a damaged line is stepped over.  0 or -errno; the reader is then
 * where it was, or at the start of the records.
 */
int runlog_seek_run_time(struct runlog_reader *r, uint64_t run_ns);
/* Byte offset just past the last good record read. */
uint64_t runlog_good_offset(const struct runlog_reader *r);
/* Records dropped: damaged lines in the middle; a torn last line. */
uint64_t runlog_corrupt(const struct runlog_reader *r);
bool runlog_torn(const struct runlog_reader *r);
void runlog_close(struct runlog_reader *r);

/* A workload's or op's name read from a log, as readers keep it: control
 * characters (C0, DEL, and C1 as UTF-8) as '?', at most len - 1 bytes. */
void runlog_clean_name(char *dst, size_t len, const char *src);

/* Finds the log of a run directory or takes a log file as it is;
 * malloc'd path or NULL. */
char *runlog_path_of(const char *dir_or_file);

#endif
