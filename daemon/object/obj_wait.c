// SPDX-License-Identifier: GPL-2.0-only
/*
 * How an object workload thread waits and moves its transfers: libcurl's
 * socket interface, with the transfers' sockets in one epoll set, so a
 * wake-up costs the sockets that are ready, not a system call per
 * transfer; a timerfd in the same set wakes the thread at the next op's
 * due time, to the microsecond.  See obj_engine.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/log.h"
#include "obj_engine.h"
#include "workload/workload.h"

/* Ready sockets taken per epoll_wait: the rest stay ready for the next. */
#define OBJ_EPOLL_BATCH 64

/*
 * What the epoll set holds for a descriptor (st->watch[fd]).  curl stops
 * watching a keep-alive connection's socket when the transfer on it ends
 * and watches it again for the next request on that connection: the
 * socket stays in the set meanwhile (WATCH_IDLE), so a request costs one
 * EPOLL_CTL_MOD instead of an EPOLL_CTL_DEL and an EPOLL_CTL_ADD.  A
 * descriptor curl closed has left the set with its socket, which the MOD
 * of a new socket under the same number finds (ENOENT: it is added).
 */
enum { WATCH_NONE, WATCH_CURL, WATCH_IDLE };

static int watch_grow(struct obj_stream *st, int fd)
{
	if ((unsigned)fd < st->n_watch)
		return 0;
	unsigned n = st->n_watch ? st->n_watch : 64;
	while (n <= (unsigned)fd)
		n *= 2;
	uint8_t *w = realloc(st->watch, n);
	if (!w)
		return -ENOMEM;
	memset(w + st->n_watch, WATCH_NONE, n - st->n_watch);
	st->watch = w;
	st->n_watch = n;
	return 0;
}

/* curl asks for a socket to be watched for what, or no more. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct obj_stream *st = userp;
	struct epoll_event ev = { .data.fd = fd };

	(void)easy;
	(void)socketp;
	if (fd < 0 || watch_grow(st, fd) < 0) {
		log_warning("%s: cannot watch a connection's socket: out of memory",
			    st->cl->wcfg->name);
		return 0;
	}
	if (what == CURL_POLL_REMOVE) {
		/* Left in the set, for the connection's next request. */
		if (st->watch[fd] == WATCH_CURL)
			st->watch[fd] = WATCH_IDLE;
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	int op = st->watch[fd] == WATCH_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
	if (epoll_ctl(st->epoll_fd, op, fd, &ev) < 0) {
		/* A descriptor number curl reuses, or one closed under it. */
		op = errno == EEXIST ? EPOLL_CTL_MOD : errno == ENOENT ? EPOLL_CTL_ADD : -1;
		if (op < 0 || epoll_ctl(st->epoll_fd, op, fd, &ev) < 0) {
			/* Not -1: curl would give up the whole multi handle,
			 * every transfer of the thread.  Unwatched, this one
			 * ends at its timeout, an error of its op. */
			st->watch[fd] = WATCH_NONE;
			log_warning("%s: cannot watch a connection's socket: %s", st->cl->wcfg->name,
				    strerror(errno));
			return 0;
		}
	}
	st->watch[fd] = WATCH_CURL;
	return 0;
}

/* An event on a socket curl does not watch now: an idle connection the
 * server closed, or sent to out of turn.  curl finds out when it next
 * uses the connection; until then the event would wake every wait. */
static bool unwatched(struct obj_stream *st, int fd)
{
	if ((unsigned)fd < st->n_watch && st->watch[fd] == WATCH_CURL)
		return false;
	epoll_ctl(st->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	if ((unsigned)fd < st->n_watch)
		st->watch[fd] = WATCH_NONE;
	return true;
}

/* curl wants its timeouts run in timeout_ms (-1: it has none). */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct obj_stream *st = userp;

	(void)multi;
	st->curl_due_ns = timeout_ms < 0 ? UINT64_MAX
					 : mono_ns() + (uint64_t)timeout_ms * OBJ_NS_PER_MS;
	return 0;
}

int obj_stream_events_init(struct obj_stream *st)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = st->timer_fd };

	st->curl_due_ns = UINT64_MAX;
	st->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epoll_fd < 0 || epoll_ctl(st->epoll_fd, EPOLL_CTL_ADD, st->timer_fd, &ev) < 0)
		return -errno;
	curl_multi_setopt(st->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(st->multi, CURLMOPT_SOCKETDATA, st);
	curl_multi_setopt(st->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(st->multi, CURLMOPT_TIMERDATA, st);
	return 0;
}

/* Runs curl's timeouts when due: new transfers start there. */
static void run_curl_timeouts(struct obj_stream *st)
{
	int running;

	if (st->curl_due_ns > mono_ns())
		return;
	st->curl_due_ns = UINT64_MAX;
	curl_multi_socket_action(st->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

/* Completes the transfers curl has finished; returns how many. */
static unsigned complete_done(struct obj_stream *st)
{
	int left = 0;
	unsigned done = 0;
	CURLMsg *m;
	uint64_t now = mono_ns();

	while ((m = curl_multi_info_read(st->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		/* m is freed by curl_multi_remove_handle: copy what we need. */
		CURL *easy = m->easy_handle;
		CURLcode result = m->data.result;
		struct obj_xfer *x = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
		if (x && obj_mp_is_part(st, x)) {
			curl_multi_remove_handle(st->multi, easy);
			obj_mp_part_done(st, (struct obj_part *)(void *)x, result);
			continue;
		}
		if (x) {
			obj_op_complete(st, x, result, now);
			done++;
		}
	}
	return done;
}

/* Moves transfers along and completes finished ones; returns how many. */
unsigned obj_stream_pump(struct obj_stream *st)
{
	run_curl_timeouts(st);
	return complete_done(st);
}

/* Hands curl the sockets epoll found ready, runs its timeouts and
 * completes the transfers that finished, timed as they are found. */
static void handle_events(struct obj_stream *st, const struct epoll_event *evs, int n)
{
	int running;

	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == st->timer_fd) {
			uint64_t expirations;
			if (read(st->timer_fd, &expirations, sizeof(expirations)) < 0)
				(void)0; /* EAGAIN: already read */
			st->timer_armed_ns = 0;
			continue;
		}
		if (unwatched(st, evs[i].data.fd))
			continue;
		uint32_t e = evs[i].events;
		int mask = (e & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) |
			   (e & EPOLLOUT ? CURL_CSELECT_OUT : 0) | (e & EPOLLERR ? CURL_CSELECT_ERR : 0);
		curl_multi_socket_action(st->multi, evs[i].data.fd, mask, &running);
	}
	run_curl_timeouts(st);
	complete_done(st);
}

/* Sleeps until a socket is ready, curl's own timeout, or wake_ns, which the
 * timerfd keeps to the microsecond (epoll's timeout alone is in
 * milliseconds), then handles what woke it.  With wake_ns already past it
 * only takes what is ready. */
void obj_stream_wait_until(struct obj_stream *st, uint64_t wake_ns)
{
	struct epoll_event evs[OBJ_EPOLL_BATCH];
	uint64_t now = mono_ns();
	int timeout_ms = 1000, n;

	if (wake_ns <= now) {
		n = epoll_wait(st->epoll_fd, evs, OBJ_EPOLL_BATCH, 0);
		handle_events(st, evs, n);
		return;
	}
	/* The thread's CPU time as it goes to sleep (fidelity_woke). */
	fidelity_sample(&st->fid, stream_current(&st->ws->stats), now);
	if (wake_ns != st->timer_armed_ns) {
		struct itimerspec its = { .it_value = { (time_t)(wake_ns / OBJ_NS_PER_S),
							 (long)(wake_ns % OBJ_NS_PER_S) } };
		timerfd_settime(st->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
		st->timer_armed_ns = wake_ns;
	}
	if ((wake_ns - now) / OBJ_NS_PER_MS + 1 < (uint64_t)timeout_ms)
		timeout_ms = (int)((wake_ns - now) / OBJ_NS_PER_MS + 1);
	if (st->curl_due_ns <= now)
		timeout_ms = 0;
	else if ((st->curl_due_ns - now + OBJ_NS_PER_MS - 1) / OBJ_NS_PER_MS < (uint64_t)timeout_ms)
		timeout_ms = (int)((st->curl_due_ns - now + OBJ_NS_PER_MS - 1) / OBJ_NS_PER_MS);
	n = epoll_wait(st->epoll_fd, evs, OBJ_EPOLL_BATCH, timeout_ms);
	/* Woken well past wake_ns: soakd itself was stopped or starved. */
	fidelity_woke(&st->fid, stream_current(&st->ws->stats), wake_ns, mono_ns());
	handle_events(st, evs, n);
}
