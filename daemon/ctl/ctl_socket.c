// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control socket bound here (when systemd does not hand one over):
 * a stale socket replaced, never another file, and the socket given to
 * soakd's group.
 */

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
#include "ctl_peer.h"
#include "workload/workload.h"

#include "ctl_server_int.h"

int bind_socket(const char *path, int *ret_fd)
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

/* bind() made the socket 0660 (umask 0117): members of the control group
 * may connect once it is theirs.  soakd.socket does the same with
 * SocketGroup= and SocketMode=. */
void give_socket_to_group(const struct ctl_server *s, int lookup_error)
{
	if (s->group == CTL_NO_GROUP) {
		if (lookup_error == -ENOENT)
			log_notice("control socket %s: group %s does not exist, so only root and "
				   "soakd's own user may connect; create it (systemd-sysusers "
				   "soakd.conf) to let operators in", s->path, CTL_GROUP);
		else
			log_warning_errno(lookup_error, "control socket %s: cannot look up group "
					  "%s; only root and soakd's own user may connect",
					  s->path, CTL_GROUP);
		return;
	}
	if (chown(s->path, (uid_t)-1, s->group) < 0) {
		log_warning_errno(-errno, "control socket %s: cannot give it to group %s, so only "
				  "soakd's own group may connect", s->path, CTL_GROUP);
		return;
	}
	log_info("control socket %s: mode 0660, group %s", s->path, CTL_GROUP);
}

