// SPDX-License-Identifier: GPL-2.0-only
#include "loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#define LOOP_BATCH 64

struct handler {
	int fd;
	bool removed;
	loop_fn fn;
	void *userdata;
	struct handler *next;
};

struct loop {
	int epfd;
	struct handler *handlers;
	bool dispatching;
};

int loop_new(struct loop **ret)
{
	struct loop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int r = -errno;
		free(l);
		return r;
	}
	*ret = l;
	return 0;
}

static void sweep(struct loop *l)
{
	for (struct handler **p = &l->handlers; *p;) {
		struct handler *h = *p;
		if (h->removed) {
			*p = h->next;
			free(h);
		} else {
			p = &h->next;
		}
	}
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	for (struct handler *h = l->handlers; h; h = h->next)
		h->removed = true;
	sweep(l);
	close(l->epfd);
	free(l);
}

static struct handler *find(struct loop *l, int fd)
{
	for (struct handler *h = l->handlers; h; h = h->next)
		if (h->fd == fd && !h->removed)
			return h;
	return NULL;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *userdata)
{
	struct handler *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	*h = (struct handler){ .fd = fd, .fn = fn, .userdata = userdata, .next = l->handlers };
	struct epoll_event ev = { .events = events, .data.ptr = h };
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = -errno;
		free(h);
		return r;
	}
	l->handlers = h;
	return 0;
}

int loop_modify(struct loop *l, int fd, uint32_t events)
{
	struct handler *h = find(l, fd);
	if (!h)
		return -ENOENT;
	struct epoll_event ev = { .events = events, .data.ptr = h };
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void loop_remove(struct loop *l, int fd)
{
	struct handler *h = find(l, fd);
	if (!h)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	/* Freed after the current batch: a later event of this batch may
	 * still point at it. */
	h->removed = true;
	if (!l->dispatching)
		sweep(l);
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event events[LOOP_BATCH];
	int n = epoll_wait(l->epfd, events, LOOP_BATCH, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	l->dispatching = true;
	for (int i = 0; i < n; i++) {
		struct handler *h = events[i].data.ptr;
		if (!h->removed)
			h->fn(l, h->fd, events[i].events, h->userdata);
	}
	l->dispatching = false;
	sweep(l);
	return n;
}
