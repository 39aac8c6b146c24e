// SPDX-License-Identifier: GPL-2.0-only
/*
 * Replies written off the loop: a handler defers its reply to a thread
 * (a dump from the log), which streams it to the peer; the connection comes
 * back to the loop when the stream is done.
 */
#include "ctl_server.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "workload/workload.h"

#include "ctl_server_int.h"

/* --- replies written off the loop ------------------------------------ */

struct ctl_stream *ctl_server_defer(struct ctl_server *s)
{
	struct client *c = s->dispatching;
	struct ctl_stream *st;

	if (!c || c->stream || s->stream_done_fd < 0)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->server = s;
	st->client = c;
	st->fd = c->fd;
	atomic_init(&st->cancel, false);
	c->stream = st;
	c->response_since_ns = 0;
	return st;
}

int ctl_stream_write(struct ctl_stream *st, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		if (atomic_load(&st->cancel))
			return -ECANCELED;
		ssize_t n = send(st->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			/* Progress is a real share of the reply, not a byte
			 * now and then: only then does the wait start over. */
			st->taken += (uint64_t)n;
			if (st->taken >= CTL_SEND_MIN_BYTES)
				st->taken = st->stalled_ns = 0;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return errno == EPIPE || errno == ECONNRESET ? -EPIPE : -errno;
		if (st->stalled_ns > CTL_SEND_TIMEOUT_NS)
			return -ETIMEDOUT;
		/* Only the time spent waiting for the peer counts: a dumper
		 * reading the log between writes is not the peer's delay. */
		uint64_t t0 = mono_ns();
		struct pollfd pfd = { .fd = st->fd, .events = POLLOUT };
		int r = poll(&pfd, 1, STREAM_POLL_MS);
		st->stalled_ns += mono_ns() - t0;
		if (r > 0 && (pfd.revents & (POLLERR | POLLHUP)))
			return -EPIPE;
	}
	return 0;
}

void ctl_stream_cancel(struct ctl_stream *st)
{
	atomic_store(&st->cancel, true);
}

void ctl_stream_done(struct ctl_stream *st, bool ok)
{
	struct ctl_server *s = st->server;
	uint64_t one = 1;

	pthread_mutex_lock(&s->done_lock);
	st->ok = ok;
	st->next = s->done;
	s->done = st;
	pthread_mutex_unlock(&s->done_lock);
	(void)!write(s->stream_done_fd, &one, sizeof(one));
}

/* Takes the connections whose streamed replies are whole back. */
void stream_done_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct ctl_server *s = userdata;
	uint64_t n;

	(void)l;
	(void)events;
	(void)!read(fd, &n, sizeof(n));
	pthread_mutex_lock(&s->done_lock);
	struct ctl_stream *list = s->done;
	s->done = NULL;
	pthread_mutex_unlock(&s->done_lock);
	while (list) {
		struct ctl_stream *st = list;
		struct client *c = st->client;
		list = st->next;
		c->stream = NULL;
		c->last_active_ns = mono_ns();
		if (!st->ok)
			c->dead = true;
		else if (loop_add(s->loop, c->fd, EPOLLIN, client_event, c) == 0)
			c->events = EPOLLIN;
		else
			c->dead = true;
		free(st);
		client_process(s, c);
		client_update(s, c);
		if (c->dead)
			client_close(s, c);
	}
}

