/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HOST_H
#define SOAK_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

/*
 * The host beside the numbers: at every tick the main thread samples the
 * host's CPU, memory, pressure, network and the targets' block devices
 * (and every few minutes an NVMe drive's SMART log), and the run's log
 * gets one record of what changed over the interval (runlog.h, "host").
 *
 * Every file is opened once, when the sampler starts or a device is first
 * watched, and read again with pread: one system call per file per tick.
 * What the kernel does not offer (PSI disabled, no NVMe) is left out of
 * the record, silently: it is not an error of the run.
 */

struct host;
struct workload;

#define HOST_MAX_DEVS 16
#define HOST_MAX_IFACES 32
/* How often an NVMe drive's SMART log is read: it changes slowly, and the
 * admin command goes to the controller, not the namespace's queues. */
#define HOST_NVME_EVERY_NS (UINT64_C(300) * 1000000000)
/* How long the main thread waits for it at most. */
#define HOST_NVME_TIMEOUT_MS 5000

/* proc and sysfs: "/proc" and "/sys" (tests: fake trees). */
int host_new(const char *proc, const char *sysfs, struct host **ret);
void host_free(struct host *h);
/* Watches the block devices under the workloads' targets, as the device
 * engine resolved them at prepare (dev_facts); a device watched already
 * is left as it is.  Never resolves a path again. */
void host_watch_workloads(struct host *h, struct workload *const *workloads, size_t n);
/* Watches one block device (devno, kernel name); 0 or -errno. */
int host_watch_device(struct host *h, dev_t devno, const char *name);
/*
 * Samples the host at now_ns (CLOCK_MONOTONIC) and returns the record of
 * the interval since the last sample (a new reference): {"type": "host",
 * start_ns, end_ns (run time from run_start_ns), wall_start_ns,
 * wall_end_ns, cpu, psi, mem, disks, net, tcp, nvme}; NULL at the first
 * sample, or out of memory.
 */
json_t *host_sample(struct host *h, uint64_t now_ns, int64_t run_start_ns, int64_t wall_offset_ns);
/* Sampling stops for a while (no workload runs; a new run begins): the
 * next sample is a first one again, so no record spans the pause. */
void host_pause(struct host *h);

/*
 * What the dumps and the report of a live run say of the host: the
 * records sampled (host_sample folds its own) and those a resumed run's
 * log holds (host_fold), summed as rundump does for a finished run
 * (rundump_host): into reply, under "host".  report: per slice of
 * slice_ns, else the JSON dump's means and maxima.
 */
void host_fold(struct host *h, json_t *rec);
/* A run begins (or is resumed): nothing folded yet; report slices of
 * slice_ns. */
void host_begin_run(struct host *h, uint64_t slice_ns);
void host_add_to_reply(const struct host *h, json_t *reply, bool report);
/* What a checkpoint keeps of the records folded ({"summary", "slices",
 * "through_ns": the run time the last one ended}; NULL: none), and a
 * resumed run puts back: its replay then folds only the host records
 * that end after through_ns (host_folded_through). */
json_t *host_checkpoint(const struct host *h);
int host_restore(struct host *h, json_t *state);
uint64_t host_folded_through(const struct host *h);

#endif
