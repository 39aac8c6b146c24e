// SPDX-License-Identifier: GPL-2.0-only
#include "ctl_budget.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "workload/workload.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* Fixed, so that refusing costs no formatting and no allocation. */
static const char over_budget_line[] =
	"{\"ok\":false,\"error\":\"over the control socket's budget: at most "
	STR(CTL_BUDGET_UID_RATE) " connections and requests a second per uid ("
	STR(CTL_BUDGET_UID_BURST) " at once); try again shortly\"}\n";

static void bucket_init(struct ctl_bucket *k, unsigned rate, unsigned burst)
{
	k->tat_ns = 0;
	k->interval_ns = UINT64_C(1000000000) / rate;
	k->burst_ns = k->interval_ns * burst;
}

/* The bucket's due time after one more token, or 0 when over budget. */
static uint64_t bucket_next(const struct ctl_bucket *k, uint64_t now_ns)
{
	uint64_t tat = k->tat_ns > now_ns ? k->tat_ns : now_ns;

	tat += k->interval_ns;
	return tat - now_ns > k->burst_ns ? 0 : tat;
}

void ctl_budget_init(struct ctl_budget *b, uid_t self_uid)
{
	memset(b, 0, sizeof(*b));
	b->self_uid = self_uid;
	bucket_init(&b->shared, CTL_BUDGET_SHARED_RATE, CTL_BUDGET_SHARED_RATE);
	bucket_init(&b->reserved, CTL_BUDGET_RESERVED_RATE, CTL_BUDGET_RESERVED_RATE);
	bucket_init(&b->overflow, CTL_BUDGET_UID_RATE, CTL_BUDGET_UID_BURST);
}

/* uid's entry: its own, else a free one or one whose bucket is full again
 * (nothing to remember), else NULL. */
static struct ctl_budget_uid *uid_entry(struct ctl_budget *b, uid_t uid, uint64_t now_ns)
{
	struct ctl_budget_uid *spare = NULL;

	for (size_t i = 0; i < CTL_BUDGET_UIDS; i++) {
		struct ctl_budget_uid *e = &b->uids[i];
		if (e->used && e->uid == uid)
			return e;
		if (!spare && (!e->used || (e->bucket.tat_ns <= now_ns && !e->refused)))
			spare = e;
	}
	if (spare) {
		spare->uid = uid;
		spare->used = true;
		spare->refused = 0;
		bucket_init(&spare->bucket, CTL_BUDGET_UID_RATE, CTL_BUDGET_UID_BURST);
	}
	return spare;
}

enum ctl_budget_verdict ctl_budget_take(struct ctl_budget *b, uid_t uid, uint64_t now_ns)
{
	if (uid == 0 || uid == b->self_uid) {
		uint64_t tat = bucket_next(&b->reserved, now_ns);
		if (!tat) {
			b->refused_total++;
			b->refused_since_report++;
			return CTL_BUDGET_OVER_UID;
		}
		b->reserved.tat_ns = tat;
		b->admitted++;
		return CTL_BUDGET_OK;
	}

	struct ctl_budget_uid *e = uid_entry(b, uid, now_ns);
	struct ctl_bucket *own = e ? &e->bucket : &b->overflow;
	uint64_t own_tat = bucket_next(own, now_ns);
	uint64_t shared_tat = own_tat ? bucket_next(&b->shared, now_ns) : 0;

	if (!own_tat || !shared_tat) {
		b->refused_total++;
		b->refused_since_report++;
		if (e)
			e->refused++;
		return own_tat ? CTL_BUDGET_OVER_SHARED : CTL_BUDGET_OVER_UID;
	}
	/* Both, or neither: a refusal by the shared bucket costs the uid nothing. */
	own->tat_ns = own_tat;
	b->shared.tat_ns = shared_tat;
	b->admitted++;
	return CTL_BUDGET_OK;
}

bool ctl_budget_report(struct ctl_budget *b, uint64_t now_ns, char *buf, size_t len)
{
	struct ctl_budget_uid *worst = NULL;
	char period[48] = "";

	if (!b->refused_since_report ||
	    (b->last_report_ns && now_ns - b->last_report_ns < CTL_BUDGET_LOG_INTERVAL_NS))
		return false;
	for (size_t i = 0; i < CTL_BUDGET_UIDS; i++) {
		struct ctl_budget_uid *e = &b->uids[i];
		if (e->used && e->refused && (!worst || e->refused > worst->refused))
			worst = e;
	}
	if (b->last_report_ns)
		snprintf(period, sizeof(period), " in the last %" PRIu64 " s",
			 (now_ns - b->last_report_ns + 500000000) / 1000000000);
	if (worst)
		snprintf(buf, len, "control socket: refused %" PRIu64 " connection(s) and request(s) "
			 "over budget%s, most from uid %u (%" PRIu64 "); at most %d a second per "
			 "uid (%d at once) and %d a second for all but root and soakd's own user",
			 b->refused_since_report, period, (unsigned)worst->uid, worst->refused,
			 CTL_BUDGET_UID_RATE, CTL_BUDGET_UID_BURST, CTL_BUDGET_SHARED_RATE);
	else
		snprintf(buf, len, "control socket: refused %" PRIu64 " connection(s) and request(s) "
			 "over budget%s; at most %d a second per uid (%d at once), %d a second "
			 "for root and soakd's own user", b->refused_since_report, period,
			 CTL_BUDGET_UID_RATE, CTL_BUDGET_UID_BURST, CTL_BUDGET_RESERVED_RATE);
	for (size_t i = 0; i < CTL_BUDGET_UIDS; i++)
		b->uids[i].refused = 0;
	b->refused_since_report = 0;
	b->last_report_ns = now_ns;
	return true;
}

static bool admit(struct ctl_budget *b, int fd, uid_t uid)
{
	uint64_t now_ns = mono_ns();
	char line[320];

	if (ctl_budget_take(b, uid, now_ns) == CTL_BUDGET_OK)
		return true;
	(void)!send(fd, over_budget_line, sizeof(over_budget_line) - 1,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
	if (ctl_budget_report(b, now_ns, line, sizeof(line)))
		log_notice("%s", line);
	return false;
}

bool ctl_budget_admit_connection(struct ctl_budget *b, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* No credentials: the server's own peer check refuses it. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return true;
	return admit(b, fd, cred.uid);
}

bool ctl_budget_admit_request(struct ctl_budget *b, int fd, uid_t uid)
{
	return admit(b, fd, uid);
}
