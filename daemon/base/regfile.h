/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_REGFILE_H
#define SOAK_REGFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Opening a file soakd reads by a path someone gave it (the configuration,
 * a credentials file, a CA file).  The open never blocks (a FIFO with no
 * writer would hang soakd for good) and the file is checked on the
 * descriptor: anything but a regular file is refused.
 */

/* "a FIFO", "a directory", ... for st_mode. */
const char *regfile_type(mode_t mode);

/*
 * Opens path read-only as a regular file.  Returns the descriptor
 * (blocking again, O_CLOEXEC), or a negative errno with err set to a
 * message naming what (e.g. "configuration"), the path and the problem.
 */
int regfile_open(const char *path, const char *what, char *err, size_t errlen);

#endif
