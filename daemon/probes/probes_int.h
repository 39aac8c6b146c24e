/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PROBES_INT_H
#define SOAK_PROBES_INT_H

/* What probes.c (BPF), probes_why.c (why a family is unavailable),
 * probes_watch.c (what is watched) and probes_report.c (results) share;
 * nothing else includes this. */

#include <pthread.h>
#include <stdarg.h>

#include <bpf/libbpf.h>

#include "config/run_config.h"
#include "kstats.h"
#include "probe_types.h"

#define PROBE_MAX_PROGS 5
#define PROBE_NAME_MAX 64
#define PROBE_REASON_MAX 512

struct bpf_program;
struct btf;
struct bpf_link;
struct blk_bpf;
struct tcp_bpf;

struct probe_prog {
	const char *tracepoint;
	struct bpf_program *prog;
	struct bpf_link **link;     /* in the skeleton */
	bool fallback;              /* attached only while some device needs the stash */
	bool missing;               /* this kernel lacks the tracepoint */
};

struct probe_family_state {
	enum probe_state state;
	enum probe_cause cause;         /* when unavailable */
	char reason[PROBE_REASON_MAX];  /* when unavailable */
	char note[PROBE_REASON_MAX];    /* when available but partial */
	struct probe_prog progs[PROBE_MAX_PROGS];
	size_t n_progs;
	/* Events the kernel did not run the programs for (a program entered
	 * again on a CPU where it was running: its recursion misses), since
	 * the first probes of the run; carried is the part earlier probes
	 * (before a reload) counted.  Past logged, it was said. */
	uint64_t missed, carried, logged;
};

struct probe_blk_op {
	void *last;                 /* the per-CPU value at the last read */
	struct kstats_blk *total, *interval;  /* allocated with the first data */
	bool has_interval;
	bool carried;               /* interval holds what a reload carried over */
};

/* A block device as the block layer names it, by slot. */
struct probe_device {
	bool used;
	__u32 kdev;                 /* MAJOR << 20 | MINOR, as the kernel's dev_t */
	__u32 slot;
	char name[PROBE_NAME_MAX];  /* "loop0", "nvme0n1p2" */
	unsigned active_users;      /* running workloads whose targets are on it */
	bool fixed;                 /* a target's, as opposed to all_devices' */
	bool in_map;
	bool stash;                 /* timed by the fallback map */
	bool no_start;              /* its queue keeps no I/O statistics (SOAK_DEV_NO_START) */
	/* A partition's whole disk, whose flushes are the partition's (0:
	 * none: not a partition, the disk watched itself, or another
	 * partition of it took its flushes first). */
	__u32 flush_kdev;
	struct probe_blk_op ops[SOAK_BLK_OPS];
};

struct probe_endpoint {
	struct soak_tcp_key key;
	char label[PROBE_NAME_MAX]; /* "127.0.0.1:9000", "[::1]:80" */
	uint64_t owners;            /* bit i: workload i's (a shared endpoint is each one's) */
	void *last;
	struct kstats_tcp *total, *interval;
	bool has_interval;
	bool carried;               /* as probe_blk_op's */
};

/* One workload's devices, by slot. */
struct probe_workload {
	__u32 *slots;
	size_t n_slots;
	bool active;
};

struct probes {
	const struct run_config *cfg;
	struct probe_family_state fam[PROBE_FAMILIES];
	struct blk_bpf *blk;
	struct tcp_bpf *tcp;
	int ncpus;
	void *percpu;               /* lookup buffer: ncpus values */
	struct kstats_blk_delta *blk_delta;
	struct kstats_tcp_delta *tcp_delta;

	struct probe_device *devs;  /* [max_slots] */
	size_t n_devs;              /* slots in use are below this */
	size_t n_fixed_devs, max_slots;
	struct probe_workload *workloads;
	size_t n_workloads;
	char unwatched[PROBE_REASON_MAX]; /* targets without a block device */
	bool exhausted_logged;      /* all_devices met more devices than max_devices */

	pthread_mutex_t *eps_lock;  /* eps, n_eps: probes_watch_endpoint may come from any thread */
	struct probe_endpoint *eps; /* [max_eps] */
	size_t n_eps, max_eps;
};

/* probes.c */
int probes_load(struct probes *p);
void probes_unload(struct probes *p);
void probe_device_map(struct probes *p, struct probe_device *d, bool present);
int probe_endpoint_map(struct probes *p, const struct probe_endpoint *e);

/* probes_watch.c */
void probe_device_init(struct probe_device *d, __u32 kdev, __u32 slot);
int probe_blk_op_alloc(struct probe_blk_op *o);
/* Whether the device's queue keeps I/O statistics (queue/iostats). */
bool probe_device_iostats(const struct probe_device *d);
/* probes.c: a device's value in the kernel's devices map (soak_bpf.h);
 * setting (value) or removing (NULL) a device there; reading the maps
 * into totals and intervals, as a tick does. */
__u32 probe_device_value(const struct probe_device *d);
int probe_devices_write(struct probes *p, __u32 kdev, const __u32 *value, __u64 flags);
void probe_read_blk(struct probes *p);
/* all_devices: the next slot the program would give a device it meets
 * (UINT32_MAX without the block program). */
__u32 probe_take_auto_slot(struct probes *p);
void probe_read_tcp(struct probes *p);
/* The family's events the kernel skipped, read into fam[f].missed (and
 * logged when they grew). */
void probe_read_missed(struct probes *p, enum probe_family f);
int probe_endpoint_alloc(struct probe_endpoint *e);

/* probes_report.c */
void probes_journal(const struct probes *p);

/*
 * The verifier's log of each program, kept only when a load fails.  With
 * log_level 0 libbpf loads without a log and, on failure, loads again
 * with level 1 into these buffers, so a successful load costs nothing.
 * Since Linux 6.4 the kernel keeps the end of a log that does not fit
 * (where the verdict is) and fails with ENOSPC instead of the verdict's
 * errno: a non-empty log, not the errno, says that the verifier ran.
 */
#define VERIFIER_LOG_SIZE (256u * 1024)

struct verifier_logs {
	char *text[PROBE_MAX_PROGS];
};

/* probes_why.c */

int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* Why this process may not be allowed to load tracing programs; NULL when
 * its capabilities suffice. */
const char *missing_privilege(void);

void set_reason(struct probe_family_state *fs, enum probe_cause cause, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

int verifier_logs_give(struct verifier_logs *logs, struct probe_family_state *fs);

void verifier_logs_free(struct verifier_logs *logs, struct probe_family_state *fs);

void load_failed(struct probe_family_state *fs, int r, const struct verifier_logs *logs);

/* Marks the family's programs whose tracepoint this kernel lacks: they are
 * not loaded.  Returns how many are missing. */
size_t check_tracepoints(struct probe_family_state *fs, const struct btf *vmlinux);

const char *missing_list(const struct probe_family_state *fs, char *buf, size_t len);

void add_prog(struct probe_family_state *fs, const char *tracepoint,
	      struct bpf_program *prog, struct bpf_link **link, bool fallback);

#endif
