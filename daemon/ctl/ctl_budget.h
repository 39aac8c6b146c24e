/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_BUDGET_H
#define SOAK_CTL_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * How much work the control socket takes on, per peer uid and in all, so
 * that a flood of connections or requests cannot take the main thread (the
 * interval ticks, the watchdog, the other clients) away from the run.
 *
 * Every accepted connection and every request line costs one token:
 *   - each uid has CTL_BUDGET_UID_RATE tokens a second, up to
 *     CTL_BUDGET_UID_BURST at once;
 *   - all uids but root and soakd's own share CTL_BUDGET_SHARED_RATE a
 *     second (burst as many), so many uids together cannot do more;
 *   - root and soakd's own uid draw on a reserve of their own,
 *     CTL_BUDGET_RESERVED_RATE a second, which no one else can use up: they
 *     are answered whatever the others do.
 * Over budget, a connection gets one fixed error line (nothing parsed,
 * nothing allocated) and is closed; the refusals are counted and logged at
 * most every CTL_BUDGET_LOG_INTERVAL_NS, with the count and the uid that
 * was refused most.
 *
 * The buckets are GCRA ("virtual scheduling"): one due time per bucket, no
 * timer.  Times are CLOCK_MONOTONIC nanoseconds, passed in.
 */

#define CTL_BUDGET_UID_RATE 32
#define CTL_BUDGET_UID_BURST 64
#define CTL_BUDGET_SHARED_RATE 1000
#define CTL_BUDGET_RESERVED_RATE 1000
/* uids tracked at once; more active uids than this share one bucket. */
#define CTL_BUDGET_UIDS 64
#define CTL_BUDGET_LOG_INTERVAL_NS (UINT64_C(10) * 1000000000)

struct ctl_bucket {
	uint64_t tat_ns;      /* when the bucket is full again */
	uint64_t interval_ns; /* one token's worth of time */
	uint64_t burst_ns;    /* interval_ns * burst */
};

struct ctl_budget_uid {
	uid_t uid;
	bool used;
	struct ctl_bucket bucket;
	uint64_t refused;     /* since the last report */
};

struct ctl_budget {
	uid_t self_uid;
	struct ctl_bucket shared, reserved, overflow;
	struct ctl_budget_uid uids[CTL_BUDGET_UIDS];
	/* Counters, for the log and for tests. */
	uint64_t admitted, refused_total;
	uint64_t refused_since_report;
	uint64_t last_report_ns;
};

enum ctl_budget_verdict {
	CTL_BUDGET_OK,
	CTL_BUDGET_OVER_UID,    /* the uid's own budget */
	CTL_BUDGET_OVER_SHARED, /* everyone else's together */
};

void ctl_budget_init(struct ctl_budget *b, uid_t self_uid);

/* Takes one token for uid at now_ns, or counts a refusal. */
enum ctl_budget_verdict ctl_budget_take(struct ctl_budget *b, uid_t uid, uint64_t now_ns);

/* When refusals are due to be logged at now_ns, writes the line (without
 * a newline) to buf and returns true; the count starts again. */
bool ctl_budget_report(struct ctl_budget *b, uint64_t now_ns, char *buf, size_t len);

/*
 * The control server's two checks.  A newly accepted connection fd: its
 * peer's uid (SO_PEERCRED) pays for the accept.  A request of a client
 * whose peer is uid: it pays for the request.  Both return true when
 * admitted; otherwise the fixed error line has been sent on fd, the
 * refusal counted (and logged when due), and the caller closes fd without
 * reading from it again.
 */
bool ctl_budget_admit_connection(struct ctl_budget *b, int fd);
bool ctl_budget_admit_request(struct ctl_budget *b, int fd, uid_t uid);

#endif
