// SPDX-License-Identifier: GPL-2.0-only
#include "ctl_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_GROUP_BUF (1u << 20)
#define STATUS_MAX 8192

int ctl_group_lookup(const char *name, gid_t *ret_gid)
{
	size_t size = 1024;
	int r;

	for (;;) {
		struct group gr, *found = NULL;
		char *buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		r = getgrnam_r(name, &gr, buf, size, &found);
		if (r == 0 && found)
			*ret_gid = found->gr_gid;
		free(buf);
		if (r == ERANGE && size < MAX_GROUP_BUF) {
			size *= 2;
			continue;
		}
		if (r != 0)
			return -r;
		return found ? 0 : -ENOENT;
	}
}

int ctl_peer_status_has_group(const char *status, gid_t gid)
{
	const char *line = status;

	while (line && strncmp(line, "Groups:", 7) != 0) {
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!line)
		return -EINVAL;
	line += 7;
	while (*line && *line != '\n') {
		char *end;
		if (*line == ' ' || *line == '\t') {
			line++;
			continue;
		}
		errno = 0;
		unsigned long v = strtoul(line, &end, 10);
		if (end == line || errno)
			return -EINVAL;
		if (v == (unsigned long)gid)
			return 1;
		line = end;
	}
	return 0;
}

/* SO_PEERGROUPS: the peer's supplementary groups when it connected. */
static int peer_groups_have(int fd, gid_t group)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE)
			return -errno;
		/* len now says how much the kernel has. */
		groups = malloc(len);
		if (!groups)
			return -ENOMEM;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
			r = -errno;
			free(groups);
			return r;
		}
	}
	r = 0;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			r = 1;
	if (groups != small)
		free(groups);
	return r;
}

/* The fallback: the peer process's groups now, which may differ from those
 * it connected with, and which a sandbox may hide. */
static int proc_groups_have(pid_t pid, gid_t group)
{
	char path[64], status[STATUS_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	status[n] = '\0';
	return ctl_peer_status_has_group(status, group);
}

int ctl_peer_get(int fd, gid_t group, uid_t self_uid, struct ctl_peer *ret)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_peer p = { 0 };

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	p.pid = cred.pid;
	p.uid = cred.uid;
	p.gid = cred.gid;
	if (group != CTL_NO_GROUP) {
		int r = cred.gid == group ? 1 : peer_groups_have(fd, group);
		if (r < 0 && r != -ENOMEM && cred.pid > 0)
			r = proc_groups_have(cred.pid, group);
		p.in_group = r > 0;
	}
	p.privileged = p.uid == 0 || p.uid == self_uid || p.in_group;
	*ret = p;
	return 0;
}

bool ctl_peer_may(const struct ctl_peer *p, bool changes_state, bool read_only_for_all)
{
	if (p->privileged)
		return true;
	return !changes_state && read_only_for_all;
}
