// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "regfile.h"

const char *regfile_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

int regfile_open(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer, forever. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open %s %s: %s", what, path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot look at %s %s: %s", what, path, strerror(errno));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s %s is %s; it must be a regular file", what, path,
			 regfile_type(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(errno));
		close(fd);
		return r;
	}
	return fd;
}
