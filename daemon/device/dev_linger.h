/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_LINGER_H
#define SOAK_DEV_LINGER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * Targets still held by ops a stream gave up in flight (dev_linger.c):
 * until the device completes them, no other workload may open the target,
 * or their late writes would land over its blocks and its verify state.
 */

/* -EBUSY when a lingering stream holds the target st describes (of fd, a
 * descriptor just resolved; O_PATH will do) or blocks of it (a loop device
 * over a held file, or the file under a held loop device), err naming it,
 * its ops and why workload "name" has to wait; else 0. */
int dev_linger_check_target(int fd, const struct stat *st, const char *name, char *err,
			    size_t errlen);

/* Whether a stream of this process holds the block device st describes
 * (of fd, as above), or blocks of it, open for writing: true with the
 * name of its workload in workload. */
bool dev_linger_claimed_by(int fd, const struct stat *st, char *workload, size_t len);

#endif
