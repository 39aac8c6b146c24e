/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_SIGNATURES_H
#define SOAK_DEV_SIGNATURES_H

#include <stddef.h>
#include <stdint.h>

/* Room for what dev_signatures_find says. */
#define DEV_SIGNATURES_LEN 1024

/*
 * Everything libblkid finds on the device fd is open on (for reading,
 * without O_DIRECT), in words joined with "and" in ret; takes fd.  The
 * probe reads on a thread of its own, waited for at most wait_ns: a device
 * that does not answer by then gives -ETIMEDOUT, and the probe goes on
 * alone until it does; meanwhile the same device gives -EINPROGRESS at
 * once.  Returns how many signatures, or -errno.
 */
int dev_signatures_find(int fd, uint64_t wait_ns, char *ret, size_t len);

#endif
