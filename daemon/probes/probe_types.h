/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PROBE_TYPES_H
#define SOAK_PROBE_TYPES_H

/* The probes' families, states and causes: what probes.h's callers and
 * probes_int.h's files both name (see probes.h). */

/* Enough for any message probes_set writes. */
#define PROBE_REASON_LEN 640

enum probe_family {
	PROBE_BLK,
	PROBE_TCP,
	PROBE_FAMILIES,
};

enum probe_state {
	PROBE_UNAVAILABLE,
	PROBE_OFF,
	PROBE_ON,
};

/* Why a family is unavailable, for people and for tests that must tell a
 * machine that cannot trace from a soakd that is broken. */
enum probe_cause {
	PROBE_CAUSE_NONE,       /* available */
	PROBE_CAUSE_PRIVILEGE,  /* no CAP_BPF/CAP_PERFMON, or a policy refused the load */
	PROBE_CAUSE_KERNEL,     /* no BTF, no bpf(), a tracepoint or program type missing */
	PROBE_CAUSE_VERIFIER,   /* the verifier rejected a program: soakd's bug */
	PROBE_CAUSE_ERROR,      /* anything else */
};

#endif
