/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_SERVER_H
#define SOAK_CTL_SERVER_H

#include <stdint.h>

#include "loop.h"
#include "proto.h"

/*
 * The control socket: taken from systemd (socket activation) or bound
 * here, one JSON request line per response line, non-blocking throughout
 * so no client can stall the loop.
 */

#define CTL_MAX_CLIENTS 64
#define CTL_IDLE_TIMEOUT_NS (UINT64_C(30) * 1000000000)
#define CTL_MAX_RESPONSE (UINT64_C(256) << 20)

/* Returns a malloc'd response line ending in '\n'. */
typedef char *(*ctl_handler)(void *userdata, const struct proto_request *req);

struct ctl_server;

int ctl_server_open(struct loop *l, const char *path, ctl_handler handler, void *userdata,
		    struct ctl_server **ret);
/* Closes clients that have been idle too long. */
void ctl_server_expire(struct ctl_server *s, uint64_t now_ns);
void ctl_server_free(struct ctl_server *s);
const char *ctl_server_path(const struct ctl_server *s);

#endif
