// SPDX-License-Identifier: GPL-2.0-only
/*
 * Safe resolution of target paths: one component at a time from "/", each
 * step an O_PATH|O_NOFOLLOW openat() relative to the directory before it,
 * each decision made on what fstat() says of the descriptor in hand.  See
 * dev_path.h for the rules.
 */
#include "dev_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* As the kernel's own limit on symlinks followed in one lookup. */
#define DEV_PATH_MAX_LINKS 40

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Whether a user other than root or us can add, rename or remove entries. */
static bool others_may_write(const struct stat *dir)
{
	if (!trusted_uid(dir->st_uid))
		return true;
	if ((dir->st_mode & S_IWGRP) && dir->st_gid != 0 && dir->st_gid != getegid())
		return true;
	return dir->st_mode & S_IWOTH;
}

/* In a sticky directory only an entry's owner, the directory's owner and
 * root may rename or remove it. */
static bool entry_protected(const struct stat *dir, const struct stat *entry)
{
	return (dir->st_mode & S_ISVTX) && trusted_uid(dir->st_uid) && trusted_uid(entry->st_uid);
}

static const char *dir_words(const struct stat *dir)
{
	if (!trusted_uid(dir->st_uid))
		return "a directory owned by another user";
	if (dir->st_mode & S_ISVTX)
		return "a directory any user may write to (sticky, but anyone may plant a name "
		       "there)";
	return "a directory other users may write to";
}

#define OVERRIDE "; give the target \"allow_unsafe_path\": true if this path is trusted"

/* Joins dir and name for messages, within len. */
static void join(char *ret, size_t len, const char *dir, const char *name)
{
	snprintf(ret, len, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
}

/* Drops the last component of an absolute path in place. */
static void parent_of(char *walked)
{
	char *slash = strrchr(walked, '/');

	if (!slash || slash == walked)
		strcpy(walked, "/");
	else
		*slash = '\0';
}

static int open_root(struct stat *ret_st)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, ret_st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* Replaces *dir by fd (and its stat). */
static void step_into(int *dir, struct stat *dir_st, int fd, const struct stat *st)
{
	close(*dir);
	*dir = fd;
	*dir_st = *st;
}

int dev_path_resolve(const char *path, bool allow_unsafe, struct dev_path *ret, char *err,
		     size_t errlen)
{
	/* What is left to walk; a symlink's text is put before the rest. */
	char rest[2 * PATH_MAX], walked[2 * PATH_MAX] = "/", at[sizeof(walked) + NAME_MAX + 2];
	struct stat dir_st, st;
	unsigned links = 0;
	size_t pos = 0;
	int dir, fd, r;

	*ret = (struct dev_path)DEV_PATH_INIT;
	if (path[0] != '/' || strlen(path) >= PATH_MAX) {
		snprintf(err, errlen, "%s: not an absolute path of at most %d bytes", path,
			 PATH_MAX - 1);
		return -EINVAL;
	}
	snprintf(rest, sizeof(rest), "%s", path);
	dir = open_root(&dir_st);
	if (dir < 0) {
		snprintf(err, errlen, "%s: cannot open /: %s", path, strerror(-dir));
		return dir;
	}

	for (;;) {
		char name[NAME_MAX + 1];
		size_t len;

		while (rest[pos] == '/')
			pos++;
		if (!rest[pos]) {
			snprintf(err, errlen, "%s: names a directory (%s), not a file or a device",
				 path, walked);
			r = -EISDIR;
			goto fail;
		}
		len = strcspn(rest + pos, "/");
		if (len > NAME_MAX) {
			snprintf(err, errlen, "%s: a component is longer than %d bytes", path, NAME_MAX);
			r = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, rest + pos, len);
		name[len] = '\0';
		pos += len;
		while (rest[pos] == '/')
			pos++;
		bool last = !rest[pos];

		if (strcmp(name, ".") == 0 && !last)
			continue;
		if (strcmp(name, "..") == 0 && !last) {
			fd = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st) < 0) {
				r = -errno;
				if (fd >= 0)
					close(fd);
				snprintf(err, errlen, "%s: cannot resolve %s/..: %s", path, walked,
					 strerror(-r));
				goto fail;
			}
			step_into(&dir, &dir_st, fd, &st);
			parent_of(walked);
			continue;
		}
		join(at, sizeof(at), walked, name);

		fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && last) {
			/* To be created here: by anyone first, if others may write. */
			if (others_may_write(&dir_st) && !allow_unsafe) {
				snprintf(err, errlen, "%s: unsafe path: it would be created in %s, %s"
					 OVERRIDE, path, walked, dir_words(&dir_st));
				r = -EPERM;
				goto fail;
			}
			ret->dir_fd = dir;
			ret->dir_st = dir_st;
			snprintf(ret->name, sizeof(ret->name), "%s", name);
			return 0;
		}
		if (fd < 0 || fstat(fd, &st) < 0) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			snprintf(err, errlen, "%s: cannot access %s: %s", path, at, strerror(-r));
			goto fail;
		}

		/* Could somebody else have put this entry here, or swap it? */
		bool final = last && !S_ISLNK(st.st_mode);
		if (!allow_unsafe && others_may_write(&dir_st) &&
		    (final || !entry_protected(&dir_st, &st))) {
			snprintf(err, errlen, "%s: unsafe path: %s is in %s, %s (owner uid %u, mode "
				 "%04o)" OVERRIDE, path, at, walked, dir_words(&dir_st),
				 (unsigned)dir_st.st_uid, (unsigned)(dir_st.st_mode & 07777));
			close(fd);
			r = -EPERM;
			goto fail;
		}

		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n;

			if (!allow_unsafe && !trusted_uid(st.st_uid)) {
				snprintf(err, errlen, "%s: unsafe path: %s is a symlink owned by uid %u, "
					 "neither root nor soakd's user" OVERRIDE, path, at,
					 (unsigned)st.st_uid);
				close(fd);
				r = -EPERM;
				goto fail;
			}
			if (++links > DEV_PATH_MAX_LINKS) {
				snprintf(err, errlen, "%s: too many symlinks", path);
				close(fd);
				r = -ELOOP;
				goto fail;
			}
			/* An O_PATH descriptor of a symlink reads with an empty name. */
			n = readlinkat(fd, "", target, sizeof(target));
			r = -errno;
			close(fd);
			if (n < 0 || (size_t)n >= sizeof(target) ||
			    (size_t)n + 1 + strlen(rest + pos) >= sizeof(rest)) {
				if (n >= 0)
					r = -ENAMETOOLONG;
				snprintf(err, errlen, "%s: cannot read the symlink %s: %s", path, at,
					 strerror(-r));
				goto fail;
			}
			target[n] = '\0';
			/* rest becomes TARGET/REST (lengths checked above). */
			memmove(rest + n + 1, rest + pos, strlen(rest + pos) + 1);
			memcpy(rest, target, (size_t)n);
			rest[n] = '/';
			pos = 0;
			if (target[0] == '/') {
				int root = open_root(&st);
				if (root < 0) {
					r = root;
					snprintf(err, errlen, "%s: cannot open /: %s", path, strerror(-r));
					goto fail;
				}
				step_into(&dir, &dir_st, root, &st);
				strcpy(walked, "/");
			}
			continue;
		}

		if (!last) {
			if (!S_ISDIR(st.st_mode)) {
				snprintf(err, errlen, "%s: %s is not a directory", path, at);
				close(fd);
				r = -ENOTDIR;
				goto fail;
			}
			if (strlen(at) >= sizeof(walked)) {
				snprintf(err, errlen, "%s: resolves to a path too long", path);
				close(fd);
				r = -ENAMETOOLONG;
				goto fail;
			}
			step_into(&dir, &dir_st, fd, &st);
			memcpy(walked, at, strlen(at) + 1);
			continue;
		}

		if (S_ISREG(st.st_mode) && !trusted_uid(st.st_uid) && !allow_unsafe) {
			snprintf(err, errlen, "%s: unsafe path: %s is a file owned by uid %u, neither "
				 "root nor soakd's user" OVERRIDE, path, at, (unsigned)st.st_uid);
			close(fd);
			r = -EPERM;
			goto fail;
		}
		ret->fd = fd;
		ret->st = st;
		ret->dir_fd = dir;
		ret->dir_st = dir_st;
		snprintf(ret->name, sizeof(ret->name), "%s", name);
		return 0;
	}
fail:
	close(dir);
	return r;
}

void dev_path_close(struct dev_path *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->dir_fd >= 0)
		close(p->dir_fd);
	p->fd = p->dir_fd = -1;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int dev_fd_reopen(int fd, int flags)
{
	char proc[64];
	int r;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	r = open(proc, flags | O_CLOEXEC | O_NOCTTY);
	return r < 0 ? -errno : r;
}

int dev_path_reopen(const struct dev_path *p, int flags)
{
	struct stat st;
	int fd = dev_fd_reopen(p->fd, flags);

	if (fd == -ENOENT && access("/proc/self/fd", F_OK) < 0) {
		/* No /proc: the name, not followed, and then the identity. */
		fd = openat(p->dir_fd, p->name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !same_inode(&st, &p->st) || st.st_rdev != p->st.st_rdev) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int dev_path_create(struct dev_path *p, int flags)
{
	int fd, direct;

	fd = openat(p->dir_fd, p->name,
		    (flags & ~O_DIRECT) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		    0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &p->st) < 0) {
		int r = -errno;
		dev_path_remove_created(p, fd);
		close(fd);
		return r;
	}
	if (!(flags & O_DIRECT))
		return fd;
	direct = dev_fd_reopen(fd, flags);
	if (direct < 0)
		dev_path_remove_created(p, fd);
	close(fd);
	return direct;
}

void dev_path_remove_created(const struct dev_path *p, int fd)
{
	struct stat mine, named;

	/* Only if the name still holds the file we made: never another's. */
	if (fstat(fd, &mine) == 0 &&
	    fstatat(p->dir_fd, p->name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
	    same_inode(&mine, &named))
		unlinkat(p->dir_fd, p->name, 0);
}
