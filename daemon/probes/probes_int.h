/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PROBES_INT_H
#define SOAK_PROBES_INT_H

/* What probes.c (BPF), probes_watch.c (what is watched) and
 * probes_report.c (results) share; nothing else includes this. */

#include <pthread.h>

#include "config/run_config.h"
#include "kstats.h"
#include "probe_types.h"

#define PROBE_MAX_PROGS 5
#define PROBE_NAME_MAX 64
#define PROBE_REASON_MAX 512

struct bpf_program;
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
};

struct probe_blk_op {
	void *last;                 /* the per-CPU value at the last read */
	struct kstats_blk *total, *interval;  /* allocated with the first data */
	bool has_interval;
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
	struct probe_blk_op ops[SOAK_BLK_OPS];
};

struct probe_endpoint {
	struct soak_tcp_key key;
	char label[PROBE_NAME_MAX]; /* "127.0.0.1:9000", "[::1]:80" */
	size_t owner;               /* workload index or SIZE_MAX */
	void *last;
	struct kstats_tcp *total, *interval;
	bool has_interval;
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
int probe_endpoint_alloc(struct probe_endpoint *e);

/* probes_report.c */
void probes_journal(const struct probes *p);

#endif
