/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control server's state: what ctl_server.c (connections, requests,
 * replies), ctl_socket.c (the socket bound here) and ctl_stream.c (replies
 * written off the loop) share.  Only these files include this.
 */
#ifndef SOAK_CTL_SERVER_INT_H
#define SOAK_CTL_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl_budget.h"
#include "ctl_peer.h"
#include "ctl_server.h"

struct loop;

#define SWEEP_PERIOD_NS UINT64_C(1000000000)
#define ACCEPT_PAUSE_NS UINT64_C(1000000000)
/* Refusals are logged at most this often: a flood must not flood the log. */
#define REFUSAL_LOG_INTERVAL_NS (UINT64_C(10) * 1000000000)
/* Unread input drained before closing, so the peer reads our last line
 * instead of ECONNRESET. */
#define DRAIN_MAX (256u * 1024)
/* How often a blocked stream writer looks for a cancellation. */
#define STREAM_POLL_MS 20

struct ctl_stream {
	struct ctl_server *server;
	struct client *client;
	int fd;
	atomic_bool cancel;
	bool ok;
	/* Time spent waiting for the peer to take bytes since it last took
	 * CTL_SEND_MIN_BYTES, over all writes of the reply. */
	uint64_t stalled_ns;
	uint64_t taken;
	struct ctl_stream *next;   /* on the server's done list */
};

struct client {
	struct ctl_server *server;
	int fd;
	struct ctl_peer peer;
	uint32_t events;   /* what the loop watches for */
	char *in;          /* PROTO_MAX_LINE + 1 */
	size_t in_len;
	char *out;         /* the response being sent; NULL: none */
	size_t out_len, out_off;
	bool closing;      /* close once out is sent */
	bool read_eof;     /* the peer shut down its side: answer what came, then close */
	bool dead;         /* close before the event returns */
	struct ctl_stream *stream; /* the reply is written off the loop; not watched */
	unsigned bad_requests;
	uint64_t last_active_ns;
	uint64_t request_since_ns;  /* first byte of a request not yet whole; 0: none */
	uint64_t response_since_ns; /* out queued; 0: none */
	struct client *next;
};

struct refusal_log {
	uint64_t last_ns;
	uint64_t suppressed;
};

struct ctl_server {
	struct loop *loop;
	int fd;
	int timer_fd;
	bool timer_armed;
	bool bound_here;   /* unlink on exit */
	bool accept_paused;
	uint64_t accept_resume_ns;
	char *path;
	ctl_handler handler;
	void *userdata;
	struct ctl_policy policy;
	gid_t group;       /* CTL_GROUP's gid; CTL_NO_GROUP: none */
	uid_t self_uid;
	struct client *clients;
	unsigned n_clients, n_unprivileged;
	uint64_t out_total; /* bytes of responses queued over all clients */
	struct client *dispatching; /* whose request the handler is answering */
	int stream_done_fd;        /* eventfd: a stream was handed back */
	pthread_mutex_t done_lock;
	struct ctl_stream *done;   /* streams handed back, not yet taken */
	struct refusal_log denied_log, busy_log;
	struct ctl_budget budget;
};

/* ctl_server.c */

/* Connections already open, as a new one's admission counts them. */
struct ctl_clients_count {
	unsigned all, unprivileged;
	unsigned not_root;  /* neither root's nor soakd's own user's */
	unsigned of_uid;    /* the new peer's uid's */
};
/* Whether peer may connect (self_uid: soakd's own): busy[0] is 0, or the
 * refusal's words. */
void ctl_admit(const struct ctl_clients_count *n, const struct ctl_peer *peer, uid_t self_uid,
	       char *busy, size_t len);

void client_close(struct ctl_server *s, struct client *c);

/* Answers the requests that have arrived whole, one at a time: the next is
 * taken only once the last response is sent, a few per turn of the loop. */
void client_process(struct ctl_server *s, struct client *c);

/* Watches for what the client's state needs next; marks it dead once it
 * has nothing more to say or hear. */
void client_update(struct ctl_server *s, struct client *c);

void client_event(struct loop *l, int fd, uint32_t events, void *userdata);

/* ctl_socket.c */

int bind_socket(const char *path, int *ret_fd);

/* bind() made the socket 0660 (umask 0117): members of the control group
 * may connect once it is theirs.  soakd.socket does the same with
 * SocketGroup= and SocketMode=. */
void give_socket_to_group(const struct ctl_server *s, int lookup_error);

/* ctl_stream.c */

/* Takes the connections whose streamed replies are whole back. */
void stream_done_event(struct loop *l, int fd, uint32_t events, void *userdata);

#endif
