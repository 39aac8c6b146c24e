/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_LOOP_H
#define SOAK_LOOP_H

#include <stdint.h>

/* The daemon's one epoll loop: a callback per file descriptor. */
struct loop;
typedef void (*loop_fn)(struct loop *l, int fd, uint32_t events, void *userdata);

int loop_new(struct loop **ret);
void loop_free(struct loop *l);
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *userdata);
int loop_modify(struct loop *l, int fd, uint32_t events);
/* Safe to call from a callback, also for the fd being dispatched. */
void loop_remove(struct loop *l, int fd);
/* Waits up to timeout_ms (-1: forever) and dispatches. */
int loop_run_once(struct loop *l, int timeout_ms);

#endif
