/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CPU_PRIO_H
#define SOAK_CPU_PRIO_H

/*
 * Who gets the CPU first when soakd's threads compete for it: the
 * workloads, whose ops are due at fixed times, before the control plane
 * (the main loop: the control socket, ticks, dumps), whose work can wait a
 * few milliseconds without changing any result.
 *
 *   - the main thread runs SCHED_BATCH: when a connection wakes it, it does
 *     not preempt a running workload thread (the tick does that); any
 *     process may do this to itself;
 *   - each workload thread goes back to SCHED_OTHER (it would inherit
 *     SCHED_BATCH from the main thread that starts it) and, where soakd may
 *     (CAP_SYS_NICE, or an RLIMIT_NICE of at least 20 + CPU_PRIO_WORKLOAD_NICE's
 *     magnitude, systemd's LimitNICE=), nice CPU_PRIO_WORKLOAD_NICE.
 *
 * Where soakd may not (a seccomp filter without @resources, as the shipped
 * unit's, or no privilege), each step that fails is logged once as a notice
 * and soakd runs on as it would have: nothing here is needed for a correct
 * result, only for one less disturbed by the machine's other load.
 *
 * No CPU affinity is set: see soakd(8), "CPU".
 */

#define CPU_PRIO_WORKLOAD_NICE (-10)

/* Called by the main thread once, before it starts any other thread. */
void cpu_prio_control_thread(void);
/* Called by each workload thread as it starts. */
void cpu_prio_workload_thread(void);

#endif
