/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctl/ctl_budget.h"

#define SEC UINT64_C(1000000000)
#define T0 (UINT64_C(1000) * SEC)
#define SELF 990
#define ALICE 1000
#define MALLORY 61001

static unsigned take_many(struct ctl_budget *b, uid_t uid, uint64_t now_ns, unsigned n)
{
	unsigned ok = 0;
	for (unsigned i = 0; i < n; i++)
		ok += ctl_budget_take(b, uid, now_ns) == CTL_BUDGET_OK;
	return ok;
}

/* A uid gets its burst at once, then its rate, and no more. */
static void test_uid_burst_and_rate(void **state)
{
	struct ctl_budget b;
	(void)state;

	ctl_budget_init(&b, SELF);
	assert_int_equal(take_many(&b, MALLORY, T0, 1000), CTL_BUDGET_UID_BURST);
	assert_int_equal(ctl_budget_take(&b, MALLORY, T0), CTL_BUDGET_OVER_UID);
	/* Ten seconds of a flood at 10000 a second: the rate, not the flood. */
	unsigned ok = 0;
	for (uint64_t t = T0; t < T0 + 10 * SEC; t += SEC / 10000)
		ok += ctl_budget_take(&b, MALLORY, t) == CTL_BUDGET_OK;
	assert_in_range(ok, 10 * CTL_BUDGET_UID_RATE - 1, 10 * CTL_BUDGET_UID_RATE + 1);
	assert_int_equal(b.admitted, CTL_BUDGET_UID_BURST + ok);
	assert_int_equal(b.refused_total, 1000 - CTL_BUDGET_UID_BURST + 1 + 100000 - ok);
	/* Others are untouched by it. */
	assert_int_equal(take_many(&b, ALICE, T0 + 10 * SEC, 10), 10);
	/* Quiet for two seconds, the burst is back. */
	assert_int_equal(take_many(&b, MALLORY, T0 + 13 * SEC, 1000), CTL_BUDGET_UID_BURST);
}

/* Root and soakd's own uid draw on their own reserve, which no flood of
 * others can use up; their own flood is bounded too. */
static void test_reserved(void **state)
{
	struct ctl_budget b;
	(void)state;

	ctl_budget_init(&b, SELF);
	/* Many uids together use up the shared budget... */
	unsigned ok = 0;
	for (uid_t u = 62000; u < 62000 + 40; u++)
		ok += take_many(&b, u, T0, CTL_BUDGET_UID_BURST);
	assert_int_equal(ok, CTL_BUDGET_SHARED_RATE);
	assert_int_equal(ctl_budget_take(&b, ALICE, T0), CTL_BUDGET_OVER_SHARED);
	/* ...and a uid refused by it keeps its own tokens. */
	assert_int_equal(take_many(&b, ALICE, T0 + SEC, CTL_BUDGET_UID_BURST), CTL_BUDGET_UID_BURST);
	/* Root and soakd's user are answered all the same. */
	assert_int_equal(ctl_budget_take(&b, 0, T0), CTL_BUDGET_OK);
	assert_int_equal(ctl_budget_take(&b, SELF, T0), CTL_BUDGET_OK);
	assert_int_equal(take_many(&b, 0, T0, 5000), CTL_BUDGET_RESERVED_RATE - 2);
	assert_int_equal(ctl_budget_take(&b, SELF, T0), CTL_BUDGET_OVER_UID);
}

/* More active uids than the table holds share one bucket; uids whose
 * buckets are full again give their place up. */
static void test_many_uids(void **state)
{
	struct ctl_budget b;
	(void)state;

	ctl_budget_init(&b, SELF);
	for (uid_t u = 70000; u < 70000 + CTL_BUDGET_UIDS; u++)
		assert_int_equal(ctl_budget_take(&b, u, T0), CTL_BUDGET_OK);
	/* Two more uids now share the overflow bucket's burst. */
	unsigned ok = take_many(&b, 80001, T0, 40) + take_many(&b, 80002, T0, 40);
	assert_int_equal(ok, CTL_BUDGET_UID_BURST);
	/* Later, the first uids' buckets are full: a new uid gets its own. */
	assert_int_equal(take_many(&b, 80003, T0 + 5 * SEC, 100), CTL_BUDGET_UID_BURST);
}

/* Refusals are logged at once, then at most every ten seconds, with the
 * count and the uid refused most. */
static void test_report(void **state)
{
	struct ctl_budget b;
	char line[320];
	(void)state;

	ctl_budget_init(&b, SELF);
	assert_false(ctl_budget_report(&b, T0, line, sizeof(line)));
	take_many(&b, MALLORY, T0, CTL_BUDGET_UID_BURST + 100);
	take_many(&b, ALICE, T0, CTL_BUDGET_UID_BURST + 3);
	assert_true(ctl_budget_report(&b, T0, line, sizeof(line)));
	assert_non_null(strstr(line, "refused 103 connection(s) and request(s) over budget, "
				     "most from uid 61001 (100); at most 32 a second per uid"));
	take_many(&b, MALLORY, T0 + SEC, 500);
	assert_false(ctl_budget_report(&b, T0 + 5 * SEC, line, sizeof(line)));
	assert_true(ctl_budget_report(&b, T0 + 10 * SEC, line, sizeof(line)));
	assert_non_null(strstr(line, "refused 468 connection(s) and request(s) over budget in "
				     "the last 10 s, most from uid 61001 (468)"));
	/* Nothing refused since: nothing to say. */
	assert_false(ctl_budget_report(&b, T0 + 30 * SEC, line, sizeof(line)));
}

/* The server's checks on a real socket: the peer is this process (its own
 * uid, which is soakd's here, so the reserve applies). */
static void test_admit_on_socket(void **state)
{
	struct ctl_budget b;
	int sv[2];
	char reply[512];
	(void)state;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ctl_budget_init(&b, 4242);
	unsigned burst = geteuid() == 0 || geteuid() == 4242 ? CTL_BUDGET_RESERVED_RATE
							       : CTL_BUDGET_UID_BURST;
	/* Tokens come back while the loop runs: admitted until refused. */
	unsigned admitted = 0;
	while (admitted < 100 * burst && ctl_budget_admit_connection(&b, sv[0]))
		admitted++;
	assert_in_range(admitted, burst, 2 * burst);
	/* Refused now; a token or two may have come back if this process was
	 * descheduled since (a loaded machine), but no more than the rate
	 * gives back in that time, so a refusal comes soon. */
	unsigned more = 0;
	while (ctl_budget_admit_request(&b, sv[0], geteuid()))
		assert_true(++more < burst);
	/* Over budget: the fixed line, nothing else (one per refusal). */
	ssize_t n = recv(sv[1], reply, sizeof(reply) - 1, 0);
	assert_true(n > 0);
	reply[n] = '\0';
	char *end = strchr(reply, '\n');
	assert_non_null(end);
	/* The request's refusal: the same line again. */
	assert_int_equal(strlen(end + 1), (size_t)(end + 1 - reply));
	assert_memory_equal(end + 1, reply, (size_t)(end + 1 - reply));
	end[1] = '\0';
	assert_string_equal(reply, "{\"ok\":false,\"error\":\"over the control socket's budget: "
				   "at most 32 connections and requests a second per uid (64 at "
				   "once); try again shortly\"}\n");
	/* The first refusal was logged at once, the second waits. */
	assert_int_equal(b.refused_since_report, 1);
	assert_int_equal(b.refused_total, 2);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uid_burst_and_rate),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_many_uids),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_admit_on_socket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
