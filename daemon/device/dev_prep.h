/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_PREP_H
#define SOAK_DEV_PREP_H

#include <stddef.h>

#include "config/config.h"
#include "dev_safety.h"

/*
 * Prep, as ACT's act_prep does it: write zeros over the whole device, then
 * "salt" it, writing random data over the whole device, so that a test
 * starts from a drive in a production-like state (every block mapped and
 * holding incompressible data) rather than fresh from the factory.
 *
 * Every device passes dev_safety_check() first, all of them before any is
 * written.  The devices are prepped at once (as act_prep's README suggests
 * for several), each with its own queue of large O_DIRECT writes through
 * io_uring.  Progress goes to the log (stderr or the journal) every few
 * seconds, and to systemd as STATUS=, with EXTEND_TIMEOUT_USEC= so a prep
 * before READY=1 does not trip the start timeout, and WATCHDOG=1 when the
 * watchdog is on.  A pending SIGTERM or SIGINT (callers block them) stops
 * the prep early with -EINTR.
 */

/* Preps every target, which must all be block devices. */
int dev_prep(const struct target_config *targets, size_t n, enum dev_safety_via via, char *err,
	     size_t errlen);
/* A device workload's "prep": true: preps those of its block-device targets
 * that `which` names (bit k: cfg->targets[k]; regular files need none);
 * does nothing without it. */
int dev_prep_workload(const struct workload_config *cfg, uint64_t which, char *err, size_t errlen);

#endif
