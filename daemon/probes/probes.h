/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PROBES_H
#define SOAK_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <jansson.h>

#include "config/run_config.h"
#include "kstats.h"
#include "probe_types.h"

/*
 * The kernel probes: block-layer latency per device and op for the
 * devices of running device workloads, and TCP latency toward the object
 * workloads' endpoints (bpf/blk.bpf.c, bpf/tcp.bpf.c).  The programs are
 * loaded once, at start; switching a family on or off attaches or detaches
 * its links.  At each tick the per-CPU kernel histograms are read, summed,
 * diffed against the previous read and turned into the project's
 * histograms (kstats.h).
 *
 * A family that cannot load (no privilege, no BTF, a missing tracepoint)
 * is "unavailable" with a reason; soakd runs on without it.  Every function
 * accepts a NULL struct probes, which has every family unavailable.  All
 * functions but probes_watch_endpoint belong to the main thread.
 */

struct probes;

/* Loads what cfg->trace asks for, watching the targets of cfg's device
 * workloads (which must exist: call after the workloads are prepared), and
 * switches each family to its configured start state.  Fails only for
 * lack of memory. */
int probes_new(const struct run_config *cfg, struct probes **ret);
void probes_free(struct probes *p);
/* A reload's new probes take over the old ones' run totals, and what
 * they counted since the last tick goes into the new ones' next interval,
 * for each device and endpoint both watch.  Before from is freed. */
void probes_carry(struct probes *to, struct probes *from);

const char *probe_family_name(enum probe_family f);
/* -1 when name is neither "blk" nor "tcp". */
int probe_family_from_name(const char *name);
const char *probe_state_name(enum probe_state s);
enum probe_state probes_state(const struct probes *p, enum probe_family f);
/* Why a family is unavailable; "" when it is not. */
const char *probes_reason(const struct probes *p, enum probe_family f);
enum probe_cause probes_cause(const struct probes *p, enum probe_family f);
/* "privilege", "kernel", "verifier", "error"; "" for PROBE_CAUSE_NONE. */
const char *probe_cause_name(enum probe_cause c);

/* Attaches (on) or detaches (off) a family's programs.  Returns 0, or a
 * negative errno with the reason in err (-EOPNOTSUPP: unavailable). */
int probes_set(struct probes *p, enum probe_family f, bool on, char *err, size_t errlen);
/* SIGHUP: everything off if anything available is on, else all on.
 * Returns the number of families switched. */
int probes_toggle_all(struct probes *p, bool *ret_on);

/* Workload i (in the config's order) runs or not: the block devices of
 * its targets are traced only while some workload using them runs. */
void probes_workload_active(struct probes *p, size_t workload, bool active);

/*
 * TCP: watch connections to this remote address and port, attributing them
 * to workload `owner` (SIZE_MAX: none).  Safe from any thread; watching an
 * endpoint twice adds the second owner: a shared endpoint's connections
 * are each of its workloads', as a shared device's I/O is.  Returns 0, -ENOSPC when max_endpoints are
 * watched, -EAFNOSUPPORT for other than AF_INET/AF_INET6.
 */
int probes_watch_endpoint(struct probes *p, const struct sockaddr *sa, socklen_t len,
			  size_t owner);

/* Reads the kernel maps and closes the kernel's interval. */
void probes_tick(struct probes *p, uint64_t now_ns);

/* The last interval of workload i's devices for one block op ("read",
 * "write", "flush", "discard"), merged over its devices; false when there
 * is none. */
bool probes_workload_blk(const struct probes *p, size_t workload, const char *op,
			 struct kstats_summary *ret);
/* The last interval of the endpoints attributed to workload i, merged. */
bool probes_workload_tcp(const struct probes *p, size_t workload,
			 struct kstats_tcp_summary *ret);

/* results' record_extra hook (userdata: the struct probes): adds
 * "kernel": {"blk": {OP: {...}}, "tcp": {...}} to workload w's interval
 * record, from the kernel interval just read for its devices and
 * endpoints. */
struct workload;
void probes_record_extra(void *userdata, const struct workload *w, uint64_t start_ns,
			 uint64_t end_ns, json_t *record);

/* [{"name", "state", "reason"?, ...}] for soakctl trace. */
json_t *probes_trace_json(const struct probes *p);
/* {"blk": {DEVICE: {...}}, "tcp": {ENDPOINT: {...}}}: run totals. */
json_t *probes_dump_json(const struct probes *p);
/* The same shape, for the last interval only, in short. */
json_t *probes_status_json(const struct probes *p);

#endif
