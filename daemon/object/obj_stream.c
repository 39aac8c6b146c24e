// SPDX-License-Identifier: GPL-2.0-only
/*
 * An object workload thread: wait for the endpoint if it was away at start,
 * prefill the pool, run the mix on the schedule, drain, clean up.  One
 * libcurl multi handle moves all of the thread's transfers (obj_wait.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "obj_engine.h"
#include "parse.h"
#include "workload/workload.h"

#define DRAIN_LIMIT_NS (5 * OBJ_NS_PER_S)
#define CLEANUP_LIMIT_NS (60 * OBJ_NS_PER_S)
#define CLEANUP_PASSES 3
#define PROBE_RETRY_MAX_NS (5 * OBJ_NS_PER_S)

enum phase { PHASE_AUDIT, PHASE_PREFILL, PHASE_RUN, PHASE_CLEANUP };

/* Looks at the next op of the schedule without issuing it, to know how
 * late it already is; false when the schedule has no more ops. */
static bool peek_due(struct obj_stream *st)
{
	uint64_t rel;

	if (st->have_due)
		return true;
	if (!sched_next(&st->ws->sched, &rel))
		return false;
	st->due_ns = mono_at(st->ws->workload->started_ns, rel);
	st->have_due = true;
	return true;
}

/* While the mix is held back (the endpoint awaited, the pool prefilled or
 * audited), every op its schedule makes due before t (and by a stop
 * request) is missed, in the interval it was due in, with its wait until
 * now as latency (a lower bound): not lumped into the interval the hold
 * ends in. */
static void miss_held(struct obj_stream *st, uint64_t t, uint64_t now)
{
	uint64_t last = workload_cut_at(st->ws->workload, t - 1);

	if (st->ws->workload->cfg->rate <= 0)
		return;
	while (peek_due(st) && st->due_ns <= last) {
		if (!st->held_since_ns)
			st->held_since_ns = st->due_ns;
		st->have_due = false;
		obj_op_missed(st, obj_op_draw(st), st->due_ns, now);
		st->held_missed++;
	}
}

/* How far behind its schedule a held stream is: since the first op that
 * came due during the hold, missed or not yet. */
static uint64_t held_lag(struct obj_stream *st, uint64_t now)
{
	if (st->ws->workload->cfg->rate <= 0)
		return 0;
	if (!st->held_since_ns && peek_due(st) && st->due_ns <= now)
		st->held_since_ns = st->due_ns;
	return st->held_since_ns && st->held_since_ns < now ? now - st->held_since_ns : 0;
}

static void close_intervals(struct obj_stream *st, uint64_t now)
{
	struct workload *w = st->ws->workload;
	while (now >= st->next_boundary) {
		if (st->holding)
			miss_held(st, st->next_boundary, st->next_boundary);
		/* Pending at the boundary: in flight, and due but waiting
		 * for a transfer (their ops are drawn when they are issued:
		 * split by the mix's shares). */
		struct interval_slot *cur = stream_current(&st->ws->stats);
		/* How late the op waiting for a transfer is at the boundary:
		 * while every transfer is busy the thread wakes at
		 * boundaries, and the lag it then sees belongs to the
		 * interval that ends as much as to the next. */
		uint64_t upto = workload_cut_at(w, st->next_boundary);
		if (w->cfg->rate > 0 && !st->holding && st->have_due && st->due_ns < upto &&
		    st->next_boundary - st->due_ns > cur->lag_max_ns)
			cur->lag_max_ns = st->next_boundary - st->due_ns;
		for (unsigned i = 0; i < st->n_xfers; i++) {
			int op = st->xfers[i].busy ? st->cl->op_index[st->xfers[i].kind] : -1;
			/* Prefill and cleanup sweep the pool: no op of theirs is
			 * due; but a prefill PUT in flight says the interval is
			 * the prefill's even when none ended in it (certify.c). */
			if (op >= 0 && (w->op_share[op] > 0 || st->xfers[i].kind == OBJ_KIND_PREFILL))
				cur->ops[op].pending++;
		}
		/* Once the schedule is cut (miss_rest), nothing of it waits;
		 * nor does what it would have made due after a stop that
		 * this thread has not seen yet. */
		if (w->cfg->rate > 0 && !atomic_load(&st->ws->cut_ns)) {
			uint64_t waiting = sched_ahead_waiting(&st->ahead, &st->ws->sched, st->have_due,
							       mono_since(w->started_ns, upto));
			uint64_t given = 0;
			size_t largest = 0;
			for (size_t op = 0; op < w->n_ops; op++) {
				uint64_t n = (uint64_t)((double)waiting * w->op_share[op]);
				cur->ops[op].pending += n;
				given += n;
				if (w->op_share[op] > w->op_share[largest])
					largest = op;
			}
			cur->ops[largest].pending += waiting > given ? waiting - given : 0;
		}
		fidelity_close(&st->fid, stream_current(&st->ws->stats), st->next_boundary);
		stream_publish(&st->ws->stats, st->next_boundary);
		st->next_boundary += w->interval_ns;
	}
}

static bool stop_requested(const struct obj_stream *st)
{
	return atomic_load_explicit(&st->ws->workload->stop_requested, memory_order_relaxed);
}

/* Publishes how far behind schedule the stream is (for status, the
 * interval's lag_max and the exports); true, with reason set, when that
 * is beyond max_lag. */
static bool note_lag(struct obj_stream *st, uint64_t lag, char *reason, size_t reason_len)
{
	struct workload_stream *ws = st->ws;
	const struct workload_config *cfg = ws->workload->cfg;
	uint64_t now = mono_ns();

	atomic_store_explicit(&ws->lag_ns, lag, memory_order_relaxed);
	struct interval_slot *cur = stream_current(&ws->stats);
	if (lag > cur->lag_max_ns)
		cur->lag_max_ns = lag;
	fidelity_sample(&st->fid, cur, now);
	/* The part of the lag soakd spent frozen is not the endpoint's. */
	return fidelity_check_lag(&st->fid, cfg->name, lag, now > lag ? now - lag : 0, now,
				  cfg->max_lag_ns, reason, reason_len);
}

/*
 * "audit": "interval:D": every D, a pass over the ledger's objects beside
 * the mix, one read at a time and only on a transfer the mix does not need
 * now (open loop: nothing due yet, or another transfer free), so that the
 * audit never holds the schedule back.
 */
static void issue_audit(struct obj_stream *st, uint64_t now)
{
	const struct object_config *o = st->cl->cfg;
	bool open_loop = st->ws->workload->cfg->rate > 0;

	if (o->audit != OBJ_AUDIT_INTERVAL || st->cl->op_index[OBJ_KIND_AUDIT] < 0)
		return;
	if (!st->auditing) {
		if (!st->next_audit_ns)
			st->next_audit_ns = now + o->audit_interval_ns;
		if (now < st->next_audit_ns)
			return;
		st->auditing = true;
		st->cursor = 0;
		log_info("%s: thread %u audits the %" PRIu64 " objects of its ledger",
			 st->cl->wcfg->name, st->index, obj_book_audit_begin(st));
	}
	if (st->audit_inflight || !st->n_free)
		return;
	if (open_loop && st->n_free < 2 && (!peek_due(st) || st->due_ns <= now))
		return;
	if (obj_op_start(st, OBJ_KIND_AUDIT, now))
		return;
	st->auditing = false;
	st->next_audit_ns = now + o->audit_interval_ns;
	obj_book_audit_end(st);
	log_info("%s: thread %u audited the objects of its ledger", st->cl->wcfg->name, st->index);
}

/* Issues the mix's due ops while transfers are free.  Past the schedule's
 * end only what it made due before the end goes out. */
static void issue_run(struct obj_stream *st, uint64_t now, uint64_t end_ns, bool *finished)
{
	struct workload *w = st->ws->workload;
	bool open_loop = w->cfg->rate > 0;
	uint64_t due_by = now < end_ns ? now : end_ns - 1;
	unsigned skips = 0;

	issue_audit(st, now);

	while (st->n_free && !*finished) {
		uint64_t due;
		if (open_loop) {
			if (!peek_due(st)) {
				*finished = true;
				break;
			}
			if (st->due_ns > due_by)
				break;
			st->have_due = false;
			due = st->due_ns;
		} else {
			if (now >= end_ns) {
				*finished = true;
				break;
			}
			if (now < st->hold_until_ns)
				break;
			due = now;
		}
		enum obj_kind kind = obj_op_draw(st);
		uint64_t failed = st->setup_failed;
		bool started = obj_op_start(st, kind, due);
		if (!started) {
			/* A scheduled op that cannot run is missed, not lost. */
			if (open_loop)
				obj_op_missed(st, kind, due, now);
			obj_op_skipped(st, kind);
		}
		/* Closed loop with nothing to pick, or requests that cannot be
		 * set up (they take no transfer): wait, not spin past stops. */
		if (!open_loop && (!started || st->setup_failed != failed) && ++skips > st->n_xfers) {
			st->hold_until_ns = now + OBJ_BACKOFF_MIN_NS;
			break;
		}
	}
	/* Every transfer busy: the next op is still looked at, so that
	 * its lateness shows as lag (issue 14: without this, lag was 0
	 * however late the ops were). */
	if (open_loop && !*finished && !peek_due(st))
		*finished = true;
	if (open_loop && st->have_due && !st->n_free)
		st->waiting = true;
}

/* Prefill and cleanup: sweep the pool, closed loop, pass after pass until
 * every slot is in the wanted state.  Returns true when a prefill pass
 * ended with every PUT of it refused for good (403, 507...): another pass
 * would only be refused again, for ever. */
static bool issue_sweep(struct obj_stream *st, enum obj_kind kind, uint64_t now, bool *finished)
{
	while (st->n_free && now >= st->hold_until_ns) {
		if (obj_op_start(st, kind, now))
			continue;
		if (st->n_free < st->n_xfers)
			break; /* the pass ends when its last op does */
		/* An audit reads each object once: one pass. */
		bool left = kind == OBJ_KIND_PREFILL ? st->pool.n_present < st->pool.cap
			    : kind == OBJ_KIND_CLEANUP ? st->pool.n_present + st->pool.n_doubtful > 0
						       : false;
		st->passes++;
		if (kind == OBJ_KIND_PREFILL && left && st->pass.refused && !st->pass.ok &&
		    !st->pass.other)
			return true;
		memset(&st->pass, 0, sizeof(st->pass));
		if (!left || (kind == OBJ_KIND_CLEANUP && st->passes >= CLEANUP_PASSES)) {
			*finished = true;
		} else {
			st->cursor = 0;
			if (st->hold_until_ns < now + OBJ_BACKOFF_MIN_NS)
				st->hold_until_ns = now + OBJ_BACKOFF_MIN_NS;
		}
		break;
	}
	return false;
}

/* Why the workload ends when its endpoint refused a whole prefill pass:
 * the status and the server's words (the stream's label, prefixed to the
 * workload's reason, names the endpoint; with a pool of them, the one
 * that refused is named here). */
static void describe_refusal(const struct obj_stream *st, char *reason, size_t reason_len)
{
	const struct object_config *o = st->cl->cfg;
	bool pool = o->n_endpoints > 1 && st->pass.endpoint < o->n_endpoints;

	/* The server's words last: they are what a short reason loses. */
	snprintf(reason, reason_len, "prefill: all %u PUTs of a pass refused with HTTP %ld%s%s, the "
		 "pool cannot be filled%s%.120s", st->pass.refused, st->pass.status,
		 pool ? " by " : "", pool ? o->endpoints[st->pass.endpoint] : "",
		 st->pass.message[0] ? ": " : "", st->pass.message);
}

static enum stream_outcome run_phase(struct obj_stream *st, enum phase phase, char *reason,
				     size_t reason_len)
{
	struct workload_stream *ws = st->ws;
	struct workload *w = ws->workload;
	const struct workload_config *cfg = w->cfg;
	bool open_loop = phase == PHASE_RUN && cfg->rate > 0;
	/* A prefill or an audit holds the mix back: it ends with the
	 * schedule, and the ops due meanwhile are its lag (held_lag). */
	bool holding = phase == PHASE_PREFILL || phase == PHASE_AUDIT;
	uint64_t end_ns = mono_at(w->started_ns, sched_duration(&ws->sched));
	uint64_t deadline = phase == PHASE_CLEANUP ? mono_ns() + CLEANUP_LIMIT_NS : UINT64_MAX;
	bool finished = false;

	st->cursor = 0;
	st->passes = 0;
	memset(&st->pass, 0, sizeof(st->pass));
	for (;;) {
		uint64_t now = mono_ns();
		close_intervals(st, now);
		if (phase != PHASE_CLEANUP && stop_requested(st))
			return STREAM_STOPPED;
		/* The cleanup gives way as the sweeps after it do: to soakd
		 * stopping, and to a stop of the workload requested after
		 * its run ended (obj_sweep.c), which reason then says. */
		const char *why;
		if (phase == PHASE_CLEANUP && st->ledger && obj_sweep_cut_short(st, &why)) {
			snprintf(reason, reason_len, "%s", why);
			return STREAM_STOPPED;
		}
		if (now >= deadline)
			return STREAM_STOPPED;
		if (holding && now >= end_ns) {
			log_warning("%s: thread %u: the schedule ended before the pool was %s (%u of "
				    "%u objects)", cfg->name, st->index,
				    phase == PHASE_PREFILL ? "prefilled" : "audited",
				    st->pool.n_present, st->pool.cap);
			return STREAM_FINISHED;
		}

		/* The schedule is over.  Ops it made due before its end that a
		 * free transfer can take still go out, late, as they would
		 * have a moment earlier: a thread woken late must not turn its
		 * own delay into ops missed.  The rest are missed (see
		 * miss_due), never issued past the end. */
		bool ending = open_loop && now >= end_ns;
		obj_book_flush(st, now, false);
		if (phase == PHASE_RUN) {
			issue_run(st, now, end_ns, &finished);
		} else if (issue_sweep(st, phase == PHASE_PREFILL ? OBJ_KIND_PREFILL
				       : phase == PHASE_AUDIT ? OBJ_KIND_AUDIT : OBJ_KIND_CLEANUP,
				       now, &finished)) {
			describe_refusal(st, reason, reason_len);
			return STREAM_FAILED;
		}
		if (ending) {
			obj_stream_pump(st);
			return STREAM_FINISHED;
		}

		/* Ops due but not started because every transfer is busy:
		 * the endpoint is not keeping up with the schedule. */
		uint64_t lag = open_loop && st->have_due && st->due_ns < now ? now - st->due_ns
			       : holding ? held_lag(st, now) : 0;
		if (note_lag(st, lag, reason, reason_len))
			return STREAM_FAILED;
		if (finished && st->n_free == st->n_xfers)
			return STREAM_FINISHED;

		if (obj_stream_pump(st))
			continue;
		uint64_t wake = st->next_boundary;
		if (open_loop && st->have_due && st->n_free && st->due_ns < wake)
			wake = st->due_ns;
		if (!open_loop && st->n_free && st->hold_until_ns > now && st->hold_until_ns < wake)
			wake = st->hold_until_ns;
		if (phase == PHASE_RUN && !open_loop && !finished && end_ns < wake)
			wake = end_ns;
		if (holding) {
			/* At the end, and every 100 ms so that status sees the
			 * lag grow (and max_lag applies) while the pool fills. */
			if (end_ns < wake)
				wake = end_ns;
			if (wake > now + 100 * OBJ_NS_PER_MS)
				wake = now + 100 * OBJ_NS_PER_MS;
		}
		if (deadline < wake)
			wake = deadline;
		obj_stream_wait_until(st, wake);
	}
}

/* Lets what is in flight finish, so every op issued is counted; what is
 * still running at the limit is abandoned (and its object doubtful). */
static void drain(struct obj_stream *st)
{
	uint64_t interval = st->ws->workload->interval_ns;
	uint64_t limit = interval < DRAIN_LIMIT_NS ? interval : DRAIN_LIMIT_NS;
	uint64_t deadline = mono_ns() + limit;
	unsigned abandoned = 0;

	while (st->n_free < st->n_xfers && mono_ns() < deadline) {
		close_intervals(st, mono_ns());
		if (!obj_stream_pump(st))
			obj_stream_wait_until(st, st->next_boundary < deadline ? st->next_boundary : deadline);
	}
	for (unsigned i = 0; i < st->n_xfers; i++) {
		struct obj_xfer *x = &st->xfers[i];
		if (!x->busy)
			continue;
		obj_op_abandon(st, x);
		abandoned++;
	}
	if (abandoned)
		log_warning("%s: abandoned %u transfers still running %.1f s after the end (counted "
			    "as missed)", st->cl->wcfg->name, abandoned, limit / 1e9);
}

/* Every op of the schedule due before upto and not issued is missed (the
 * schedule or the workload ended, or a prefill held the mix back), with its
 * wait until now as latency.  Returns how many. */
static uint64_t miss_due(struct obj_stream *st, uint64_t upto, uint64_t now)
{
	uint64_t missed = 0;

	if (st->ws->workload->cfg->rate <= 0)
		return 0;
	while (peek_due(st) && st->due_ns < upto) {
		st->have_due = false;
		obj_op_missed(st, obj_op_draw(st), st->due_ns, now);
		missed++;
	}
	return missed;
}

/* A probe of the unreachable endpoint failed: it stands for the op due
 * first (any op, closed loop), which is counted as an error of the
 * probe's class. */
static void count_failed_probe(struct obj_stream *st, enum op_error_class class, uint64_t now)
{
	struct workload *w = st->ws->workload;

	if (w->cfg->rate > 0) {
		if (!st->have_due || st->due_ns > now)
			return;
		st->have_due = false;
	}
	int op = st->cl->op_index[obj_op_draw(st)];
	if (op >= 0)
		op_stats_record_error(&stream_current(&st->ws->stats)->ops[op], class);
}

/*
 * The endpoint was not reachable when soakd started: try again until it
 * is, until the schedule ends or until the workload is stopped.  Meanwhile
 * the schedule runs on: each failed probe counts as an error of the op due
 * first, the others due are missed in their intervals (miss_held), and the
 * stream lags from the first of them (and max_lag applies), as when the
 * endpoint goes away mid-run.  Returns 0 once it is reachable, 1 when the
 * schedule ended first, -ECANCELED when stopped, -ETIMEDOUT past max_lag,
 * or the probe's lasting error (reason set).
 */
static int wait_for_endpoint(struct obj_stream *st, char *reason, size_t reason_len)
{
	struct obj_client *cl = st->cl;
	struct workload *w = st->ws->workload;
	uint64_t end_ns = mono_at(w->started_ns, sched_duration(&st->ws->sched));
	uint64_t retry_ns = OBJ_NS_PER_S;
	char err[1024];

	while (!atomic_load(&cl->ready)) {
		if (stop_requested(st))
			return -ECANCELED;
		if (mono_ns() >= end_ns)
			return 1;
		enum op_error_class class = OP_ERR_CONNECT;
		int r = cl->proto->probe(cl, &class, err, sizeof(err));
		if (r == 0) {
			if (!atomic_exchange(&cl->ready, true))
				log_notice("%s: %s is reachable; starting", cl->wcfg->name,
					   cl->cfg->endpoint);
			break;
		}
		if (r != -EAGAIN) {
			snprintf(reason, reason_len, "%.*s", (int)reason_len - 1, err);
			return r;
		}
		uint64_t now = mono_ns(), until = now + retry_ns;
		close_intervals(st, now);
		held_lag(st, now);
		count_failed_probe(st, class, now);
		if (until > end_ns)
			until = end_ns;
		while ((now = mono_ns()) < until && !stop_requested(st)) {
			close_intervals(st, now);
			if (note_lag(st, held_lag(st, now), reason, reason_len))
				return -ETIMEDOUT;
			uint64_t wake = st->next_boundary < until ? st->next_boundary : until;
			/* Wake at least every 100 ms, so status sees the lag grow. */
			if (wake > now + 100 * OBJ_NS_PER_MS)
				wake = now + 100 * OBJ_NS_PER_MS;
			obj_stream_wait_until(st, wake);
		}
		retry_ns = retry_ns * 2 > PROBE_RETRY_MAX_NS ? PROBE_RETRY_MAX_NS : retry_ns * 2;
	}
	return 0;
}

/* The hold is over: the ops due in the interval under way are missed now
 * (those of earlier intervals were, as they closed), and the mix starts
 * with the first op due from now on its own lag. */
static void end_hold(struct obj_stream *st, const char *during)
{
	uint64_t now = mono_ns();

	miss_held(st, now + 1, now);
	if (st->held_missed)
		log_warning("%s: %" PRIu64 " ops came due %s (counted as missed)",
			    st->cl->wcfg->name, st->held_missed, during);
	st->holding = false;
	st->held_since_ns = 0;
	st->held_missed = 0;
}

/* The stream ends: what its schedule made due and it never issued is
 * missed (see miss_due), and nothing due after now (or after the stop
 * request, when one came first) is its own. */
static void miss_rest(struct obj_stream *st)
{
	uint64_t now = mono_ns(), cut = workload_cut_at(st->ws->workload, now);
	uint64_t missed = miss_due(st, cut, now);

	stream_cut(st->ws, cut);
	if (missed)
		log_warning("%s: %" PRIu64 " ops due were never issued (counted as missed): the "
			    "endpoint could not keep up", st->cl->wcfg->name, missed);
}

void *obj_stream_main(void *arg)
{
	struct workload_stream *ws = arg;
	struct workload *w = ws->workload;
	struct obj_stream *st = ws->engine;
	struct obj_client *cl = st->cl;
	enum stream_outcome outcome = STREAM_STOPPED;
	char reason[WORKLOAD_REASON_MAX] = "";

	st->next_boundary = workload_next_boundary(w, mono_ns());
	fidelity_init(&st->fid);
	st->waiting = false;
	st->slot_free_ns = 0;
	st->have_due = false;
	st->deck_left = 0;
	st->hold_until_ns = st->backoff_ns = 0;
	st->skipped = 0;
	st->auditing = false;
	st->audit_inflight = 0;
	st->next_audit_ns = 0;
	sched_ahead_init(&st->ahead, &ws->sched);
	st->holding = true;
	st->held_since_ns = st->held_missed = 0;

	int r = wait_for_endpoint(st, reason, sizeof(reason));
	if (r != 0) {
		/* Nothing was sent: no transfer to drain, no object to clean
		 * up on an endpoint that is not there. */
		outcome = r == 1 ? STREAM_FINISHED : r == -ECANCELED ? STREAM_STOPPED : STREAM_FAILED;
		if (r == 1)
			log_warning("%s: the schedule ended before %s was reachable", cl->wcfg->name,
				    cl->cfg->endpoint);
		end_hold(st, "while the endpoint was not reachable");
		miss_rest(st);
		goto out;
	}
	/* A resumed run goes on with the objects its ledger holds: read
	 * them once (the audit), and no prefill.  Once: a workload stopped
	 * (and so cleaned up) and started again prefills like a new one. */
	bool resumed = st->resumed;
	st->resumed = false;
	if (resumed && cl->op_index[OBJ_KIND_AUDIT] >= 0) {
		obj_book_audit_begin(st);
		outcome = run_phase(st, PHASE_AUDIT, reason, sizeof(reason));
		obj_book_audit_end(st);
		if (outcome != STREAM_FINISHED)
			goto end;
		log_info("%s: thread %u audited the objects of its ledger", cl->wcfg->name,
			 st->index);
	}
	if (resumed) {
		end_hold(st, "during the audit");
	} else if (cl->op_index[OBJ_KIND_PREFILL] >= 0 && obj_pool_vacant(&st->pool)) {
		outcome = run_phase(st, PHASE_PREFILL, reason, sizeof(reason));
		/* Ops due while prefilling are not issued late: they are
		 * missed, and the mix starts with the first op due from now. */
		end_hold(st, "while the pool was prefilled");
		if (outcome != STREAM_FINISHED)
			goto end;
	} else if (st->held_since_ns) {
		end_hold(st, "while the endpoint was not reachable");
	} else {
		/* Nothing held the mix back: an op due a moment ago goes
		 * out, as in the run. */
		st->holding = false;
	}
	/* A prefill the schedule's end cut short: no mix. */
	if (mono_ns() < mono_at(w->started_ns, sched_duration(&ws->sched)))
		outcome = run_phase(st, PHASE_RUN, reason, sizeof(reason));
end:
	obj_sweep_begin(st);
	if (st->holding)
		end_hold(st, "before the mix could start");
	miss_rest(st);
	drain(st);
	/* soakd stops and the run resumes later: its objects stay, the
	 * ledger knows them, and the resumed run cleans them up. */
	bool suspended = outcome == STREAM_STOPPED && atomic_load(&w->suspend) && st->ledger;
	if (cl->cfg->cleanup && !suspended && st->pool.n_present + st->pool.n_doubtful > 0) {
		char why[WORKLOAD_REASON_MAX] = "";
		run_phase(st, PHASE_CLEANUP, why, sizeof(why));
		drain(st);
		if (st->pool.n_present + st->pool.n_doubtful > 0)
			log_warning("%s: cleanup left %u objects under %s%s%s (%s)", cl->wcfg->name,
				    st->pool.n_present + st->pool.n_doubtful,
				    cl->cfg->protocol == OBJ_PROTO_S3 ? cl->cfg->bucket : "",
				    cl->cfg->protocol == OBJ_PROTO_S3 ? "/" : "", cl->name_root,
				    why[0] ? why : "the endpoint did not delete them");
	}
	/* What the ledger may have lost in a crash: the run's names still
	 * listed once its own objects are gone. */
	if (cl->cfg->cleanup && !suspended && st->ledger &&
	    st->pool.n_present + st->pool.n_doubtful == 0)
		obj_book_sweep(st);
	/* A versioned bucket keeps what the cleanup deleted: every version
	 * and delete marker of the thread's names goes too. */
	if (cl->cfg->cleanup && cl->cfg->versioning && !suspended)
		obj_versions_sweep(st);
	if (cl->cfg->cleanup && cl->cfg->multipart_threshold && cl->cfg->protocol == OBJ_PROTO_S3 &&
	    !suspended)
		obj_uploads_sweep(st);
out:
	obj_book_flush(st, mono_ns(), true);
	atomic_store(&ws->lag_ns, 0);
	stream_finish(ws, outcome, reason[0] ? "%s" : NULL, reason);
	return NULL;
}
