// SPDX-License-Identifier: GPL-2.0-only
#include "cpu_prio.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"

static _Atomic bool workload_policy_noted, workload_nice_noted;

/* A notice, not an error: soakd runs on, only less shielded. */
static void note_once(_Atomic bool *noted, int error, const char *what)
{
	if (atomic_exchange(noted, true))
		return;
	log_errno(LOG_NOTICE, error, "cannot %s, so the control socket's work competes with the "
		  "workloads' for the CPU as any process's does%s", what,
		  error == -EPERM || error == -EACCES
			  ? " (a seccomp filter without @resources, or no CAP_SYS_NICE nor "
			    "RLIMIT_NICE, forbids it)"
			  : "");
}

void cpu_prio_control_thread(void)
{
	static _Atomic bool noted;
	struct sched_param param = { .sched_priority = 0 };

	/* pid 0: this thread only (sched_setscheduler acts on a thread). */
	if (sched_setscheduler(0, SCHED_BATCH, &param) < 0)
		note_once(&noted, -errno, "run the main thread as SCHED_BATCH");
	else
		log_info("main thread: SCHED_BATCH; workload threads: SCHED_OTHER, nice %d where "
			 "allowed", CPU_PRIO_WORKLOAD_NICE);
}

void cpu_prio_workload_thread(void)
{
	struct sched_param param = { .sched_priority = 0 };
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (sched_getscheduler(0) != SCHED_OTHER && sched_setscheduler(0, SCHED_OTHER, &param) < 0)
		note_once(&workload_policy_noted, -errno,
			  "give the workload threads SCHED_OTHER back");
	/* PRIO_PROCESS with a thread id: that thread only, on Linux. */
	if (setpriority(PRIO_PROCESS, (id_t)tid, CPU_PRIO_WORKLOAD_NICE) < 0)
		note_once(&workload_nice_noted, -errno, "raise the workload threads' priority");
}
