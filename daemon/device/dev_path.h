/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_PATH_H
#define SOAK_DEV_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * Safe resolution of a target's path: the answer to "which file is this?"
 * is a descriptor, and every later decision is made on that descriptor,
 * never on a second lookup of the path (a local user who can change a
 * directory on the way could otherwise swap a file for a symlink to a
 * block device between the check and the open).
 *
 * The path is walked from "/" one component at a time with O_PATH and
 * O_NOFOLLOW, as systemd's chase() does with CHASE_SAFE.  Without
 * "allow_unsafe_path" it refuses, naming the component and the reason:
 *   - a symlink owned by a user other than root or soakd's own user;
 *   - a step through a directory that another user may write to (its
 *     owner is not root or soakd's user, or it is group- or world-
 *     writable), unless the directory is sticky, owned by root or soakd's
 *     user, and the entry reached is owned by root or soakd's user, so
 *     that nobody else can rename or remove it (a private directory made
 *     with mktemp -d in /tmp, say);
 *   - a target whose own directory another user may write to, sticky or
 *     not (/tmp/soak.dat): there anyone can plant the name before soakd
 *     creates it, and the target file belongs in a directory of its own;
 *   - an existing regular file owned by a user other than root or soakd's.
 * With "allow_unsafe_path" the walk is the same and only these refusals
 * are lifted: the file used is still the one the descriptor holds.
 */

struct dev_path {
	int fd;                 /* O_PATH descriptor of the target; -1 when it does not exist */
	int dir_fd;             /* O_PATH descriptor of the directory holding it */
	char name[NAME_MAX + 1]; /* its name in dir_fd */
	struct stat st;         /* of fd, when fd >= 0 */
	struct stat dir_st;     /* of dir_fd */
};

#define DEV_PATH_INIT { .fd = -1, .dir_fd = -1 }

/*
 * Resolves path (absolute) into ret.  A missing last component is not an
 * error: ret->fd is -1 and dir_fd/name say where it would be created.
 * Returns 0, or a negative errno with err set to "PATH: REASON".
 */
int dev_path_resolve(const char *path, bool allow_unsafe, struct dev_path *ret, char *err,
		     size_t errlen);

/* Closes what dev_path_resolve opened; safe on DEV_PATH_INIT. */
void dev_path_close(struct dev_path *p);

/*
 * Opens the object behind an O_PATH descriptor with real access flags,
 * through /proc/self/fd (the same inode, whatever the path now names).
 * Where /proc is not mounted it opens dir_fd/name with O_NOFOLLOW and
 * checks that it is the same inode.  Returns a descriptor or -errno.
 */
int dev_path_reopen(const struct dev_path *p, int flags);

/* The same, from any descriptor: for a second view of one already open. */
int dev_fd_reopen(int fd, int flags);

/*
 * Creates the missing target in its directory with O_CREAT|O_EXCL|
 * O_NOFOLLOW (so nothing planted since the walk is followed or reused),
 * mode 0600, and fills p->fd and p->st.  Returns a descriptor opened with
 * flags (O_DIRECT is added by reopening, since a filesystem without direct
 * I/O would leave the file behind) or -errno.
 */
int dev_path_create(struct dev_path *p, int flags);

/* Removes the file dev_path_create made, if the name still holds it. */
void dev_path_remove_created(const struct dev_path *p, int fd);

#endif
