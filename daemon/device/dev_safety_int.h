/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What dev_safety.c (the checks of a device and its open) and
 * dev_safety_loop.c (loop devices: over the target, and under it) share.
 */
#ifndef SOAK_DEV_SAFETY_INT_H
#define SOAK_DEV_SAFETY_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "dev_safety.h"

/* err = "refusing to write to PATH: " and the rest. */
void safety_refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "--destroy-data" or "destroy_data", as the user gave it. */
const char *safety_override_name(enum dev_safety_via via);
/* "/dev/NAME" for messages about a device the user did not name. */
void safety_dev_label(const struct dev_safety_env *env, dev_t dev, char *ret, size_t len);
/* "it is" for the device itself, "its partition /dev/X is" for one of its
 * partitions: the subject of a refusal. */
void safety_subject(const struct dev_safety_env *env, dev_t devno, dev_t dev, char *ret,
		    size_t len);

/* The checks of a block device by its number, each 0, -EPERM or -EBUSY
 * with err set, or another -errno (err not set): the root disk; in use
 * (mounted, swap, holders, a loop device over it not in except, NULL for
 * none). */
int safety_check_root_disk(const struct dev_safety_env *env, const char *path, dev_t devno,
			   enum dev_safety_via via, char *err, size_t errlen);
int safety_check_in_use(const struct dev_safety_env *env, const char *path, dev_t devno,
			const struct devsys_set *except, enum dev_safety_via via, char *err,
			size_t errlen);

/* dev_safety_loop.c: a loop device over devno (self: it and its
 * partitions) other than except, as safety_check_in_use says; and what a
 * loop device target writes to (0, or -errno with err set). */
int safety_check_loop_over_block(const struct dev_safety_env *env, const char *path,
				 dev_t devno, const struct devsys_set *self,
				 const struct devsys_set *except,
				 enum dev_safety_via via, char *err, size_t errlen);
int safety_check_loop_target(const struct dev_safety_env *env, const char *path, int path_fd,
			     dev_t devno, enum dev_safety_via via, char *err, size_t errlen);

#endif
