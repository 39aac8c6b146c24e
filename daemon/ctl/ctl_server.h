/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_SERVER_H
#define SOAK_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "proto.h"

/*
 * The control socket: taken from systemd (socket activation) or bound
 * here, one JSON request line per response line, non-blocking throughout
 * so no client can stall the loop.
 *
 * Access: the socket is mode 0660, group soakd (soakd.socket's SocketGroup=,
 * or chowned here when soakd binds it); each connection's peer credentials
 * decide what it may ask (ctl_peer.h).
 *
 * Limits, so that neither a flood of connections nor slow, half-open or
 * garbage-sending clients can hold up the loop (and with it the interval
 * ticks) or take all of soakd's memory:
 *   - CTL_MAX_CLIENTS connections; peers that may not change state share
 *     at most CTL_MAX_CLIENTS_UNPRIVILEGED, CTL_MAX_CLIENTS_PER_UID per uid,
 *     so operators always find a free slot; operators (the control group)
 *     at most CTL_MAX_CLIENTS_PER_OPERATOR per uid, and all but root and
 *     soakd's own user leave them CTL_CLIENTS_KEPT_FOR_ROOT (systemctl
 *     reload's soakctl among them); over a limit a connection gets one
 *     error line and is closed;
 *   - one request in progress per client: the next line is not read until
 *     the last response has been sent, and at most CTL_REQUESTS_PER_WAKEUP
 *     requests of one client are answered per turn of the loop; a client
 *     is closed after CTL_MAX_BAD_REQUESTS requests that are not valid;
 *   - a request line of at most PROTO_MAX_LINE bytes, which must arrive
 *     whole within CTL_REQUEST_TIMEOUT_NS of its first byte; a response of
 *     at most CTL_MAX_RESPONSE bytes, which must be taken within
 *     CTL_SEND_TIMEOUT_NS, and at most CTL_MAX_OUTPUT_TOTAL bytes of
 *     responses queued over all clients; a client idle for
 *     CTL_IDLE_TIMEOUT_NS is closed;
 *   - a handler may answer off the loop (ctl_server_defer): the reply is
 *     then written by another thread as it is produced, with no size
 *     limit, while the loop serves everyone else; the connection comes
 *     back to the loop once that reply is whole;
 *   - a budget of connections and requests per uid a second, with a
 *     reserve for root and soakd's own user (ctl_budget.h);
 *   - at most CTL_ACCEPTS_PER_WAKEUP connections accepted per turn; when
 *     soakd runs out of file descriptors, accepting pauses for a second
 *     rather than spinning.
 */

#define CTL_MAX_CLIENTS 64
#define CTL_MAX_CLIENTS_UNPRIVILEGED 32
#define CTL_MAX_CLIENTS_PER_UID 8
#define CTL_MAX_CLIENTS_PER_OPERATOR 16
#define CTL_CLIENTS_KEPT_FOR_ROOT 8
#define CTL_REQUESTS_PER_WAKEUP 4
#define CTL_MAX_BAD_REQUESTS 16
#define CTL_ACCEPTS_PER_WAKEUP 64
#define CTL_IDLE_TIMEOUT_NS (UINT64_C(30) * 1000000000)
#define CTL_REQUEST_TIMEOUT_NS (UINT64_C(10) * 1000000000)
#define CTL_SEND_TIMEOUT_NS (UINT64_C(60) * 1000000000)
/* A streamed reply (ctl_server_defer) is cut off once its writer has
 * waited CTL_SEND_TIMEOUT_NS in all for the peer to take the next
 * CTL_SEND_MIN_BYTES: a reader taking a few bytes now and then does not
 * hold a dumper for ever. */
#define CTL_SEND_MIN_BYTES (UINT64_C(64) << 10)
#define CTL_MAX_RESPONSE (UINT64_C(256) << 20)
#define CTL_MAX_OUTPUT_TOTAL (UINT64_C(512) << 20)

/* Returns a malloc'd response line ending in '\n', or CTL_REPLY_DEFERRED
 * after ctl_server_defer(). */
typedef char *(*ctl_handler)(void *userdata, const struct proto_request *req);

/* What a handler returns when the reply will come from a ctl_stream. */
extern char CTL_REPLY_DEFERRED[];

/* From the run's "ctl" configuration. */
struct ctl_policy {
	bool read_only_for_all;  /* status, dump, report, trace (query) for any peer */
};

struct ctl_server;

int ctl_server_open(struct loop *l, const char *path, const struct ctl_policy *policy,
		    ctl_handler handler, void *userdata, struct ctl_server **ret);
/* A reloaded configuration's policy, for the requests that follow. */
void ctl_server_set_policy(struct ctl_server *s, const struct ctl_policy *policy);
/* Closes clients that have been idle or slow too long (the server also
 * does this by itself, every second while it has clients). */
void ctl_server_expire(struct ctl_server *s, uint64_t now_ns);
/* Every stream must be done before the server is freed. */
void ctl_server_free(struct ctl_server *s);
const char *ctl_server_path(const struct ctl_server *s);

/*
 * Replies written off the loop.  Called from a handler, ctl_server_defer
 * takes the reply of the request being handled away from the loop: the
 * client is neither read nor timed out until the stream is done, and the
 * handler returns CTL_REPLY_DEFERRED.  Any one thread then writes the
 * reply with ctl_stream_write (it blocks, until the peer has kept it
 * waiting CTL_SEND_TIMEOUT_NS in all for CTL_SEND_MIN_BYTES) and hands the connection back with ctl_stream_done,
 * which may be called from any thread.
 */
struct ctl_stream;

struct ctl_stream *ctl_server_defer(struct ctl_server *s);
/* 0, or -EPIPE (the client went away), -ETIMEDOUT, -ECANCELED. */
int ctl_stream_write(struct ctl_stream *st, const void *buf, size_t len);
/* Makes ctl_stream_write return -ECANCELED from now on (any thread). */
void ctl_stream_cancel(struct ctl_stream *st);
/* The reply is whole (ok) or broken off (the connection is closed). */
void ctl_stream_done(struct ctl_stream *st, bool ok);

#endif
