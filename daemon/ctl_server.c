// SPDX-License-Identifier: GPL-2.0-only
#include "ctl_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "workload.h"

struct client {
	int fd;
	char *in;          /* PROTO_MAX_LINE + 1 */
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	bool closing;      /* close once out is sent */
	uint64_t last_active_ns;
	struct client *next;
};

struct ctl_server {
	struct loop *loop;
	int fd;
	bool bound_here;   /* unlink on exit */
	char *path;
	ctl_handler handler;
	void *userdata;
	struct client *clients;
	unsigned n_clients;
};

static void client_close(struct ctl_server *s, struct client *c)
{
	loop_remove(s->loop, c->fd);
	close(c->fd);
	for (struct client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	s->n_clients--;
	free(c->in);
	free(c->out);
	free(c);
}

static void client_queue(struct ctl_server *s, struct client *c, char *line)
{
	if (!line) {
		c->closing = true;
		return;
	}
	size_t len = strlen(line);
	char *out = realloc(c->out, c->out_len - c->out_off + len);
	if (!out || c->out_len - c->out_off + len > CTL_MAX_RESPONSE) {
		free(out == c->out ? NULL : out);
		free(line);
		c->closing = true;
		return;
	}
	memmove(out, out + c->out_off, c->out_len - c->out_off);
	c->out_len -= c->out_off;
	c->out_off = 0;
	memcpy(out + c->out_len, line, len);
	c->out_len += len;
	c->out = out;
	free(line);
	loop_modify(s->loop, c->fd, EPOLLIN | EPOLLOUT);
}

static void client_flush(struct ctl_server *s, struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			client_close(s, c);
			return;
		}
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	if (c->closing) {
		client_close(s, c);
		return;
	}
	loop_modify(s->loop, c->fd, EPOLLIN);
}

static void client_dispatch(struct ctl_server *s, struct client *c, const char *line, size_t len)
{
	struct proto_request req;
	char err[256];

	if (proto_parse_request(line, len, &req, err, sizeof(err)) < 0) {
		client_queue(s, c, proto_error_line("%s", err));
		return;
	}
	client_queue(s, c, s->handler(s->userdata, &req));
	proto_request_done(&req);
}

static void client_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct client *c = userdata;
	struct ctl_server *s = NULL;

	(void)l;
	(void)fd;
	/* Find the server through the list head stored in the client's loop
	 * callback: the userdata is the client, the server is global to it. */
	s = *(struct ctl_server **)(c + 1);
	c->last_active_ns = mono_ns();

	if (events & EPOLLOUT) {
		client_flush(s, c);
		return; /* c may be gone */
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	if (c->closing) {
		/* Discard input while the last response drains. */
		char sink[4096];
		if (recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			client_close(s, c);
		return;
	}
	ssize_t n = recv(c->fd, c->in + c->in_len, PROTO_MAX_LINE + 1 - c->in_len, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		/* A client that half-closes after its request still gets its
		 * response, which was queued when the line arrived. */
		if (c->out_len > c->out_off) {
			c->closing = true;
			loop_modify(s->loop, c->fd, EPOLLOUT);
		} else {
			client_close(s, c);
		}
		return;
	}
	if (n < 0)
		return;
	c->in_len += (size_t)n;

	size_t start = 0;
	for (size_t i = 0; i < c->in_len; i++) {
		if (c->in[i] != '\n')
			continue;
		client_dispatch(s, c, c->in + start, i - start);
		start = i + 1;
		if (c->closing)
			break;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (c->in_len > PROTO_MAX_LINE) {
		client_queue(s, c, proto_error_line("request line longer than %u bytes",
						    PROTO_MAX_LINE));
		c->closing = true;
		c->in_len = 0;
	}
}

static void accept_event(struct loop *l, int fd, uint32_t events, void *userdata)
{
	struct ctl_server *s = userdata;

	(void)events;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		if (s->n_clients >= CTL_MAX_CLIENTS) {
			static const char busy[] = "{\"ok\":false,\"error\":\"too many clients connected\"}\n";
			(void)!send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(cfd);
			continue;
		}
		/* The server pointer lives right after the client so the
		 * event callback can reach both from one userdata. */
		struct client *c = calloc(1, sizeof(*c) + sizeof(struct ctl_server *));
		char *in = malloc(PROTO_MAX_LINE + 1);
		if (!c || !in) {
			free(c);
			free(in);
			close(cfd);
			continue;
		}
		c->fd = cfd;
		c->in = in;
		c->last_active_ns = mono_ns();
		*(struct ctl_server **)(c + 1) = s;
		if (loop_add(l, cfd, EPOLLIN, client_event, c) < 0) {
			free(in);
			free(c);
			close(cfd);
			continue;
		}
		c->next = s->clients;
		s->clients = c;
		s->n_clients++;
	}
}

static int bind_socket(const char *path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_error("socket path %s is longer than %zu bytes", path,
				 sizeof(sa.sun_path) - 1), -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_error_errno(-errno, "cannot create the control socket");

	/* A socket file left by a crashed soakd is removed; one that still
	 * answers belongs to a running soakd and is left alone. */
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		if (probe >= 0)
			close(probe);
		if (alive) {
			close(fd);
			log_error("another soakd is already listening on %s", path);
			return -EADDRINUSE;
		}
		unlink(path);
	}
	mode_t old = umask(0117);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0) {
		r = log_error_errno(-errno, "cannot bind the control socket %s", path);
		close(fd);
		return r;
	}
	if (listen(fd, 64) < 0) {
		r = log_error_errno(-errno, "cannot listen on %s", path);
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int ctl_server_open(struct loop *l, const char *path, ctl_handler handler, void *userdata,
		    struct ctl_server **ret)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	int n, r;

	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->handler = handler;
	s->userdata = userdata;
	s->fd = -1;

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
			free(s);
			return r;
		}
		s->bound_here = true;
		s->path = strdup(path);
	}
	r = loop_add(l, s->fd, EPOLLIN, accept_event, s);
	if (r < 0) {
		ctl_server_free(s);
		return log_error_errno(r, "cannot watch the control socket");
	}
	*ret = s;
	return 0;
}

void ctl_server_expire(struct ctl_server *s, uint64_t now_ns)
{
	for (struct client *c = s->clients, *next; c; c = next) {
		next = c->next;
		if (now_ns - c->last_active_ns > CTL_IDLE_TIMEOUT_NS)
			client_close(s, c);
	}
}

const char *ctl_server_path(const struct ctl_server *s)
{
	return s->path;
}

void ctl_server_free(struct ctl_server *s)
{
	if (!s)
		return;
	while (s->clients)
		client_close(s, s->clients);
	if (s->fd >= 0) {
		loop_remove(s->loop, s->fd);
		close(s->fd);
	}
	if (s->bound_here && s->path)
		unlink(s->path);
	free(s->path);
	free(s);
}
