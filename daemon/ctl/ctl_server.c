// SPDX-License-Identifier: GPL-2.0-only
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

#include "base/log.h"
#include "ctl_budget.h"
#include "ctl_peer.h"
#include "workload/workload.h"

#include "ctl_server_int.h"

char CTL_REPLY_DEFERRED[] = "(deferred)";

static void set_timer(struct ctl_server *s, bool on)
{
	struct itimerspec its = { 0 };

	if (s->timer_armed == on)
		return;
	if (on)
		its.it_value = its.it_interval =
			(struct timespec){ .tv_sec = SWEEP_PERIOD_NS / 1000000000 };
	if (timerfd_settime(s->timer_fd, 0, &its, NULL) == 0)
		s->timer_armed = on;
}

/* True when a refusal may be logged now, with in `since` how many were
 * not; counts those that may not. */
static bool refusal_log_now(struct refusal_log *rl, uint64_t now_ns, char *since, size_t len)
{
	if (rl->last_ns && now_ns - rl->last_ns < REFUSAL_LOG_INTERVAL_NS) {
		rl->suppressed++;
		return false;
	}
	since[0] = '\0';
	if (rl->suppressed)
		snprintf(since, len, " (and %" PRIu64 " more since the last report)",
			 rl->suppressed);
	rl->suppressed = 0;
	rl->last_ns = now_ns;
	return true;
}

void client_close(struct ctl_server *s, struct client *c)
{
	loop_remove(s->loop, c->fd);
	close(c->fd);
	for (struct client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	s->n_clients--;
	if (!c->peer.privileged)
		s->n_unprivileged--;
	if (c->out)
		s->out_total -= c->out_len;
	free(c->in);
	free(c->out);
	free(c);
}

/* Takes the response line (NULL: out of memory) as the one to send next;
 * nothing else is being sent.  Over a limit, an error says so instead. */
static void client_queue(struct ctl_server *s, struct client *c, char *line)
{
	size_t len = line ? strlen(line) : 0;

	if (line && len > CTL_MAX_RESPONSE) {
		free(line);
		line = proto_error_line("the response would be %zu MiB, more than the %" PRIu64
					" MiB a response may be: ask for less (dump with --since, "
					"--until, --workload, --op or --slice)",
					len >> 20, CTL_MAX_RESPONSE >> 20);
	} else if (line && s->out_total + len > CTL_MAX_OUTPUT_TOTAL) {
		free(line);
		line = proto_error_line("soakd is still sending %" PRIu64 " MiB of responses to "
					"other clients; try again shortly", s->out_total >> 20);
	}
	if (!line) {
		c->closing = true;
		return;
	}
	c->out = line;
	c->out_len = strlen(line);
	c->out_off = 0;
	s->out_total += c->out_len;
	c->response_since_ns = mono_ns();
}

static void client_send(struct ctl_server *s, struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				c->dead = true;
			return;
		}
		c->out_off += (size_t)n;
		c->last_active_ns = mono_ns();
	}
	s->out_total -= c->out_len;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->response_since_ns = 0;
}

static void client_read(struct client *c)
{
	if (c->in_len > PROTO_MAX_LINE)
		return; /* full: client_process refuses the line */
	ssize_t n = recv(c->fd, c->in + c->in_len, PROTO_MAX_LINE + 1 - c->in_len, MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			c->dead = true;
		return;
	}
	if (n == 0) {
		/* A client that half-closes after its request still gets
		 * its response. */
		c->read_eof = true;
		return;
	}
	c->last_active_ns = mono_ns();
	if (c->in_len == 0)
		c->request_since_ns = c->last_active_ns;
	c->in_len += (size_t)n;
}

/* The request as a person would type it, for messages. */
static const char *request_what(const struct proto_request *req)
{
	if (req->cmd == PROTO_TRACE)
		return req->trace_state == PROTO_TRACE_ON ? "trace on"
		       : req->trace_state == PROTO_TRACE_OFF ? "trace off" : "trace";
	if (req->cmd == PROTO_START && req->new_run)
		return "start --new-run";
	return proto_cmd_name(req->cmd);
}

static char *permission_error(const struct ctl_server *s, const struct proto_request *req,
			      bool changes_state)
{
	const char *what = request_what(req);

	return proto_error_line("permission denied: %s needs root or membership of group %s%s%s",
				what, CTL_GROUP,
				changes_state ? "" : " (this run's \"ctl\" has "
						     "\"read_only_for_all\": false)",
				s->group == CTL_NO_GROUP ? ", which does not exist on this host" : "");
}

static void client_dispatch(struct ctl_server *s, struct client *c, const char *line, size_t len)
{
	struct proto_request req;
	char err[256], since[64];

	if (proto_parse_request(line, len, &req, err, sizeof(err)) < 0) {
		/* Whoever sends garbage after garbage is not a soakctl. */
		if (++c->bad_requests >= CTL_MAX_BAD_REQUESTS) {
			c->closing = true;
			client_queue(s, c, proto_error_line("%s; %d requests that are not valid: "
							    "closing the connection", err,
							    CTL_MAX_BAD_REQUESTS));
			return;
		}
		client_queue(s, c, proto_error_line("%s", err));
		return;
	}
	bool changes_state = proto_cmd_changes_state(&req);
	if (!ctl_peer_may(&c->peer, changes_state, s->policy.read_only_for_all)) {
		if (refusal_log_now(&s->denied_log, mono_ns(), since, sizeof(since)))
			log_notice("control socket: refused %s from uid %u (pid %d): neither root "
				   "nor in group %s%s", request_what(&req), (unsigned)c->peer.uid,
				   (int)c->peer.pid, CTL_GROUP, since);
		client_queue(s, c, permission_error(s, &req, changes_state));
	} else {
		/* Who changed what, for the record. */
		if (changes_state)
			log_info("control socket: %s from uid %u (pid %d)", request_what(&req),
				 (unsigned)c->peer.uid, (int)c->peer.pid);
		s->dispatching = c;
		char *reply = s->handler(s->userdata, &req);
		s->dispatching = NULL;
		if (reply != CTL_REPLY_DEFERRED)
			client_queue(s, c, reply);
	}
	proto_request_done(&req);
}

/* Answers the requests that have arrived whole, one at a time: the next is
 * taken only once the last response is sent, a few per turn of the loop. */
void client_process(struct ctl_server *s, struct client *c)
{
	for (unsigned n = 0; n < CTL_REQUESTS_PER_WAKEUP; n++) {
		if (c->dead || c->out || c->closing || c->stream)
			return;
		char *nl = memchr(c->in, '\n', c->in_len);
		if (!nl)
			break;
		size_t len = (size_t)(nl - c->in);
		if (!ctl_budget_admit_request(&s->budget, c->fd, c->peer.uid)) {
			c->dead = true;
			return;
		}
		client_dispatch(s, c, c->in, len);
		memmove(c->in, nl + 1, c->in_len - len - 1);
		c->in_len -= len + 1;
		c->request_since_ns = c->in_len ? mono_ns() : 0;
		if (c->out)
			client_send(s, c);
	}
	if (!c->dead && !c->out && !c->closing && c->in_len > PROTO_MAX_LINE &&
	    !memchr(c->in, '\n', c->in_len)) {
		client_queue(s, c, proto_error_line("request line longer than %u bytes",
						    PROTO_MAX_LINE));
		c->closing = true;
		c->in_len = 0;
		c->request_since_ns = 0;
		client_send(s, c);
	}
}

/* Watches for what the client's state needs next; marks it dead once it
 * has nothing more to say or hear. */
void client_update(struct ctl_server *s, struct client *c)
{
	uint32_t want;

	if (c->dead)
		return;
	if (c->stream) {
		/* Not watched until the stream is done: a hangup would
		 * otherwise wake the loop again and again. */
		if (c->events) {
			loop_remove(s->loop, c->fd);
			c->events = 0;
		}
		return;
	}
	if (c->out || (!c->closing && memchr(c->in, '\n', c->in_len))) {
		/* Writable: send, or (nothing to send) take the next
		 * buffered request on the next turn. */
		want = EPOLLOUT;
	} else if (c->closing || c->read_eof) {
		char sink[4096];
		size_t drained = 0;
		ssize_t n;
		while (drained < DRAIN_MAX &&
		       (n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			drained += (size_t)n;
		c->dead = true;
		return;
	} else {
		want = EPOLLIN;
	}
	if (want != c->events && loop_modify(s->loop, c->fd, want) == 0)
		c->events = want;
}

void client_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct client *c = userdata;
	struct ctl_server *s = c->server;

	(void)l;
	(void)fd;
	if (events & EPOLLERR)
		c->dead = true;
	else if (c->out)
		client_send(s, c);
	else if (c->events == EPOLLIN && (events & (EPOLLIN | EPOLLHUP)))
		client_read(c);
	client_process(s, c);
	client_update(s, c);
	if (c->dead)
		client_close(s, c);
}

/* One error line, best effort, then close: for connections refused or
 * given up on. */
static void send_last_words(int fd, const char *message)
{
	char *line = proto_error_line("%s", message);
	if (line) {
		(void)!send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
		free(line);
	}
}

static bool is_root(const struct ctl_peer *p, uid_t self_uid)
{
	return p->uid == 0 || p->uid == self_uid;
}

void ctl_admit(const struct ctl_clients_count *n, const struct ctl_peer *peer, uid_t self_uid,
	       char *busy, size_t len)
{
	busy[0] = '\0';
	if (n->all >= CTL_MAX_CLIENTS)
		snprintf(busy, len, "too many clients connected (%d)", CTL_MAX_CLIENTS);
	else if (!peer->privileged && n->unprivileged >= CTL_MAX_CLIENTS_UNPRIVILEGED)
		snprintf(busy, len, "too many clients connected (%d without the right "
			 "to change state)", CTL_MAX_CLIENTS_UNPRIVILEGED);
	else if (!peer->privileged && n->of_uid >= CTL_MAX_CLIENTS_PER_UID)
		snprintf(busy, len, "too many connections from uid %u (at most %d)",
			 (unsigned)peer->uid, CTL_MAX_CLIENTS_PER_UID);
	else if (!is_root(peer, self_uid) && n->of_uid >= CTL_MAX_CLIENTS_PER_OPERATOR)
		snprintf(busy, len, "too many connections from uid %u (at most %d)",
			 (unsigned)peer->uid, CTL_MAX_CLIENTS_PER_OPERATOR);
	else if (!is_root(peer, self_uid) &&
		 n->not_root >= CTL_MAX_CLIENTS - CTL_CLIENTS_KEPT_FOR_ROOT)
		snprintf(busy, len, "too many clients connected (%d; the last %d are kept for "
			 "root)", CTL_MAX_CLIENTS - CTL_CLIENTS_KEPT_FOR_ROOT,
			 CTL_CLIENTS_KEPT_FOR_ROOT);
}

static void client_accept(struct ctl_server *s, int cfd)
{
	struct ctl_peer peer;
	char busy[128] = "", since[64];

	if (ctl_peer_get(cfd, s->group, s->self_uid, &peer) < 0) {
		close(cfd);
		return;
	}
	struct ctl_clients_count n = { .all = s->n_clients, .unprivileged = s->n_unprivileged };
	for (const struct client *c = s->clients; c; c = c->next) {
		n.not_root += !is_root(&c->peer, s->self_uid);
		n.of_uid += c->peer.uid == peer.uid;
	}
	ctl_admit(&n, &peer, s->self_uid, busy, sizeof(busy));
	if (busy[0]) {
		if (refusal_log_now(&s->busy_log, mono_ns(), since, sizeof(since)))
			log_warning("control socket: connection from uid %u (pid %d) refused: %s%s",
				    (unsigned)peer.uid, (int)peer.pid, busy, since);
		send_last_words(cfd, busy);
		close(cfd);
		return;
	}

	struct client *c = calloc(1, sizeof(*c));
	char *in = malloc(PROTO_MAX_LINE + 1);
	if (!c || !in || loop_add(s->loop, cfd, EPOLLIN, client_event, c) < 0) {
		free(c);
		free(in);
		close(cfd);
		return;
	}
	c->server = s;
	c->fd = cfd;
	c->peer = peer;
	c->events = EPOLLIN;
	c->in = in;
	c->last_active_ns = mono_ns();
	c->next = s->clients;
	s->clients = c;
	s->n_clients++;
	if (!peer.privileged)
		s->n_unprivileged++;
	set_timer(s, true);
}

static void accept_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct ctl_server *s = userdata;

	(void)l;
	(void)events;
	/* A bounded batch: the listener stays readable, so the rest of a
	 * flood waits for the next turn, after the other events. */
	for (unsigned i = 0; i < CTL_ACCEPTS_PER_WAKEUP; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			if (ctl_budget_admit_connection(&s->budget, cfd))
				client_accept(s, cfd);
			else
				close(cfd);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* The listener would stay readable and the loop spin:
			 * stop watching it for a while. */
			log_warning_errno(-errno, "control socket: cannot accept a connection; "
					  "pausing for a second");
			if (loop_modify(s->loop, s->fd, 0) == 0) {
				s->accept_paused = true;
				s->accept_resume_ns = mono_ns() + ACCEPT_PAUSE_NS;
				set_timer(s, true);
			}
		}
		return;
	}
}

/* Closes clients that are too slow or idle too long, resumes accepting. */
static void sweep(struct ctl_server *s, uint64_t now_ns)
{
	for (struct client *c = s->clients, *next; c; c = next) {
		next = c->next;
		if (c->stream)
			continue;  /* its writer keeps its own time */
		if (c->request_since_ns && now_ns - c->request_since_ns > CTL_REQUEST_TIMEOUT_NS) {
			if (!c->out)
				send_last_words(c->fd, "no complete request line within the time "
						"allowed; closing the connection");
			client_close(s, c);
		} else if (c->response_since_ns &&
			   now_ns - c->response_since_ns > CTL_SEND_TIMEOUT_NS) {
			client_close(s, c);
		} else if (!c->request_since_ns && !c->response_since_ns &&
			   now_ns - c->last_active_ns > CTL_IDLE_TIMEOUT_NS) {
			client_close(s, c);
		}
	}
	if (s->accept_paused && now_ns >= s->accept_resume_ns &&
	    loop_modify(s->loop, s->fd, EPOLLIN) == 0)
		s->accept_paused = false;
	if (!s->clients && !s->accept_paused)
		set_timer(s, false);
}

static void timer_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	uint64_t expirations;

	(void)l;
	(void)events;
	if (read(fd, &expirations, sizeof(expirations)) == sizeof(expirations))
		sweep(userdata, mono_ns());
}

void ctl_server_set_policy(struct ctl_server *s, const struct ctl_policy *policy)
{
	s->policy = *policy;
}

int ctl_server_open(struct loop *l, const char *path, const struct ctl_policy *policy,
		    ctl_handler handler, void *userdata, struct ctl_server **ret)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	int n, r, lookup_error;

	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->handler = handler;
	s->userdata = userdata;
	s->policy = *policy;
	s->fd = -1;
	s->self_uid = geteuid();
	pthread_mutex_init(&s->done_lock, NULL);
	s->stream_done_fd = -1;
	ctl_budget_init(&s->budget, s->self_uid);
	/* Looked up once: NSS may be slow, and the loop must not wait on it. */
	lookup_error = ctl_group_lookup(CTL_GROUP, &s->group);
	if (lookup_error < 0)
		s->group = CTL_NO_GROUP;
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer_fd < 0) {
		r = -errno;
		free(s);
		return log_error_errno(r, "cannot create the control socket's timer");
	}

	n = sd_listen_fds(1);
	if (n > 1) {
		log_warning("systemd passed %d sockets; using the first", n);
	}
	if (n >= 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		s->fd = SD_LISTEN_FDS_START;
		fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
		fcntl(s->fd, F_SETFD, FD_CLOEXEC);
		struct sockaddr_un sa;
		socklen_t len = sizeof(sa);
		if (getsockname(s->fd, (struct sockaddr *)&sa, &len) == 0 && len > sizeof(sa_family_t))
			s->path = strndup(sa.sun_path, len - sizeof(sa_family_t));
		else
			s->path = strdup("(socket activation)");
		log_info("control socket %s passed by systemd", s->path);
	} else {
		if (n >= 1)
			log_warning("the socket systemd passed is not a Unix stream listener; binding %s",
				    path);
		r = bind_socket(path, &s->fd);
		if (r < 0) {
			close(s->timer_fd);
			free(s);
			return r;
		}
		s->bound_here = true;
		s->path = strdup(path);
		if (s->path)
			give_socket_to_group(s, lookup_error);
	}
	s->stream_done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->stream_done_fd < 0)
		log_warning_errno(-errno, "cannot create an eventfd: dumps are answered on the "
				  "main loop");
	r = loop_add(l, s->timer_fd, EPOLLIN, timer_event, s);
	if (r < 0) {
		close(s->timer_fd);
		s->timer_fd = -1;
	} else {
		r = loop_add(l, s->fd, EPOLLIN, accept_event, s);
	}
	if (r == 0 && s->stream_done_fd >= 0 &&
	    loop_add(l, s->stream_done_fd, EPOLLIN, stream_done_event, s) < 0) {
		close(s->stream_done_fd);
		s->stream_done_fd = -1;
	}
	if (r < 0 || !s->path) {
		ctl_server_free(s);
		return log_error_errno(r < 0 ? r : -ENOMEM, "cannot watch the control socket");
	}
	*ret = s;
	return 0;
}

void ctl_server_expire(struct ctl_server *s, uint64_t now_ns)
{
	sweep(s, now_ns);
}

const char *ctl_server_path(const struct ctl_server *s)
{
	return s->path;
}

void ctl_server_free(struct ctl_server *s)
{
	if (!s)
		return;
	/* Streams are done by now (see ctl_server.h); forget the handed-back
	 * ones not yet taken. */
	while (s->done) {
		struct ctl_stream *st = s->done;
		s->done = st->next;
		st->client->stream = NULL;
		free(st);
	}
	while (s->clients)
		client_close(s, s->clients);
	if (s->stream_done_fd >= 0) {
		loop_remove(s->loop, s->stream_done_fd);
		close(s->stream_done_fd);
	}
	pthread_mutex_destroy(&s->done_lock);
	if (s->fd >= 0) {
		loop_remove(s->loop, s->fd);
		close(s->fd);
	}
	if (s->timer_fd >= 0) {
		loop_remove(s->loop, s->timer_fd);
		close(s->timer_fd);
	}
	if (s->bound_here && s->path)
		unlink(s->path);
	free(s->path);
	free(s);
}
