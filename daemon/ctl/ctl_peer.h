/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_PEER_H
#define SOAK_CTL_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Who is at the other end of a control connection, and what they may ask.
 *
 * The credentials are the kernel's, taken when the peer connected
 * (SO_PEERCRED, SO_PEERGROUPS), so a peer cannot change them afterwards and
 * a process that hands its connection to another one keeps its own rights
 * on it, as with any Unix socket.  Privileged peers may change state (start,
 * stop, trace on/off): root, soakd's own user (who could signal or ptrace it
 * anyway) and members of the control group; anyone who can connect may read
 * (status, dump, report, trace) unless the run's "ctl" says
 * "read_only_for_all": false.
 */

#define CTL_GROUP "soakd"
#define CTL_NO_GROUP ((gid_t)-1)

struct ctl_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	bool in_group;    /* the control group is its primary or a supplementary group */
	bool privileged;  /* may change state */
};

/* The control group's gid, CTL_NO_GROUP when there is none.  Returns 0,
 * -ENOENT when the group does not exist, or another negative errno. */
int ctl_group_lookup(const char *name, gid_t *ret_gid);

/*
 * The peer of a connected Unix socket.  group is the control group's gid
 * (CTL_NO_GROUP: none) and self_uid soakd's own effective uid.  The
 * supplementary groups come from SO_PEERGROUPS (Linux 4.13), else from
 * /proc/PID/status, which a sandbox with ProtectProc=invisible and no
 * CAP_SYS_PTRACE may hide, hence the order.  Returns 0 or a negative errno.
 */
int ctl_peer_get(int fd, gid_t group, uid_t self_uid, struct ctl_peer *ret);

/* The "Groups:" line of a /proc/PID/status text: whether it lists gid.
 * Returns 1, 0, or -EINVAL when there is no such line. */
int ctl_peer_status_has_group(const char *status, gid_t gid);

/* Whether a peer may run a request: state-changing ones need a privileged
 * peer, read-only ones too unless read_only_for_all. */
bool ctl_peer_may(const struct ctl_peer *p, bool changes_state, bool read_only_for_all);

#endif
