// SPDX-License-Identifier: GPL-2.0-only
#include "fidelity.h"

#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "parse.h"
#include "runlog.h"

uint64_t fidelity_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fidelity_init(struct fidelity *f)
{
	/* The ring is read up to n_events only: left as it is, its 16 KiB
	 * stay untouched (not resident) until a freeze is recorded. */
	memset(f, 0, offsetof(struct fidelity, ev));
	f->cpu_mark_ns = fidelity_thread_cpu_ns();
}

static void add_freeze(struct fidelity *f, struct interval_slot *cur, uint64_t len,
		       uint64_t now_ns)
{
	f->ev[f->n_events % FIDELITY_EVENTS] =
		(struct fidelity_event){ now_ns > len ? now_ns - len : 0, now_ns };
	f->n_events++;
	if (len > cur->frozen_ns)
		cur->frozen_ns = len;
}

void fidelity_sample(struct fidelity *f, struct interval_slot *cur, uint64_t now_ns)
{
	uint64_t cpu = fidelity_thread_cpu_ns();

	if (f->busy_from_ns && now_ns > f->busy_from_ns && cpu >= f->busy_cpu_ns) {
		uint64_t wall = now_ns - f->busy_from_ns, ran = cpu - f->busy_cpu_ns;
		if (wall > ran && wall - ran >= FIDELITY_FREEZE_MIN_NS)
			add_freeze(f, cur, wall - ran, now_ns);
	}
	f->busy_from_ns = now_ns;
	f->busy_cpu_ns = cpu;
}

uint64_t fidelity_woke(struct fidelity *f, struct interval_slot *cur, uint64_t wake_ns,
		       uint64_t now_ns)
{
	uint64_t late = now_ns > wake_ns ? now_ns - wake_ns : 0;

	/* The CPU time read by the fidelity_sample just before the wait
	 * stands for now's: a sleeping thread uses none, and reading it is a
	 * system call, once an op at low queue depths. */
	f->busy_from_ns = now_ns;
	if (late < FIDELITY_FREEZE_MIN_NS)
		return 0;
	add_freeze(f, cur, late, now_ns);
	return late;
}

uint64_t fidelity_frozen_between(const struct fidelity *f, uint64_t from_ns, uint64_t to_ns)
{
	uint64_t n = f->n_events < FIDELITY_EVENTS ? f->n_events : FIDELITY_EVENTS;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < n; i++) {
		const struct fidelity_event *e = &f->ev[i];
		uint64_t a = e->start_ns > from_ns ? e->start_ns : from_ns;
		uint64_t b = e->end_ns < to_ns ? e->end_ns : to_ns;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

uint64_t fidelity_frozen_since(const struct fidelity *f, uint64_t from_ns)
{
	return fidelity_frozen_between(f, from_ns, UINT64_MAX);
}

void fidelity_close(struct fidelity *f, struct interval_slot *cur, uint64_t end_ns)
{
	uint64_t now = fidelity_thread_cpu_ns();
	uint64_t frozen = fidelity_frozen_between(f, cur->start_ns, end_ns);

	if (now > f->cpu_mark_ns)
		cur->cpu_ns += now - f->cpu_mark_ns;
	f->cpu_mark_ns = now;
	if (frozen > cur->frozen_ns)
		cur->frozen_ns = frozen;
}

enum fidelity_lag fidelity_judge_lag(struct fidelity *f, uint64_t lag_ns, uint64_t due_ns,
				     uint64_t now_ns, uint64_t max_lag_ns, uint64_t *ret_own_ns)
{
	uint64_t own = fidelity_frozen_since(f, due_ns);

	if (own > lag_ns)
		own = lag_ns;
	*ret_own_ns = own;
	if (!max_lag_ns || lag_ns <= max_lag_ns) {
		f->over_since_ns = 0;
		return FIDELITY_LAG_OK;
	}
	if (lag_ns - own > max_lag_ns)
		return FIDELITY_LAG_DEVICE;
	if (!f->over_since_ns)
		f->over_since_ns = now_ns;
	return now_ns - f->over_since_ns > max_lag_ns ? FIDELITY_LAG_SOAKD : FIDELITY_LAG_OK;
}

bool fidelity_interval_late(uint64_t frozen_ns, const struct hist *issue_delay,
			    uint64_t interval_ns, uint64_t *ret_late_ns)
{
	uint64_t p99 = issue_delay->count ? hist_percentile(issue_delay, 99.0) : 0;
	uint64_t max = issue_delay->count ? issue_delay->max : 0;

	*ret_late_ns = frozen_ns > max ? frozen_ns : max;
	return (interval_ns && frozen_ns > interval_ns / 10) || p99 > FIDELITY_LATE_P99_NS;
}

bool fidelity_check_lag(struct fidelity *f, const char *label, uint64_t lag, uint64_t due,
			uint64_t now, uint64_t max_lag_ns, char *reason, size_t reason_len)
{
	bool was_over = f->over_since_ns != 0;
	uint64_t own;
	enum fidelity_lag v = fidelity_judge_lag(f, lag, due, now, max_lag_ns, &own);
	char limit[32];

	if (v == FIDELITY_LAG_OK && (was_over || !f->over_since_ns))
		return false;
	format_duration(max_lag_ns, limit, sizeof(limit));
	switch (v) {
	case FIDELITY_LAG_DEVICE:
		snprintf(reason, reason_len, "max_lag %s exceeded: ops are %.1f s behind schedule "
			 "(%.1f s of it soakd's own), the target rate cannot be sustained", limit,
			 lag / 1e9, own / 1e9);
		return true;
	case FIDELITY_LAG_SOAKD:
		snprintf(reason, reason_len, "max_lag %s exceeded: " RUNLOG_REASON_SOAKD_LATE
			 " for %.1f s of the %.1f s its ops are behind, for longer than %s: "
			 "this host, not the device, cannot sustain the target rate", limit,
			 own / 1e9, lag / 1e9, limit);
		return true;
	case FIDELITY_LAG_OK:
		/* Over max_lag by no more than soakd's own lateness.  Both
		 * can be a few ms: to the ms, so the log never says "0.0 s"
		 * of a lag that excuses the excess. */
		log_warning("%s: ops are %.3f s behind schedule, %.3f s over max_lag %s, and soakd "
			    "itself was stopped or starved for %.3f s of it: the run goes on while "
			    "the excess is soakd's own, and the intervals are marked generator_late",
			    label, lag / 1e9, (lag - max_lag_ns) / 1e9, limit, own / 1e9);
		return false;
	}
	return false;
}
