/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_OFFLINE_H
#define SOAK_CTL_OFFLINE_H

#include <stddef.h>

#include <jansson.h>

#include "rundump.h"

/*
 * Results of recorded runs, without soakd: a run directory (or its
 * intervals.log) dumped or reported, and several runs merged.  Each returns
 * 0 and a reply shaped as soakd's, or -errno with a message in err.
 */
int offline_dump(const char *run_dir, enum rundump_format format,
		 const struct rundump_filter *filter, json_t **ret, char *err, size_t errlen);

/*
 * Merges runs of several hosts exactly, as warp's merge does: only the wall
 * time all of them were running counts (intervals wholly inside the
 * overlap), histograms merge and counts add.
 */
int offline_merge(const char *const *sources, size_t n, enum rundump_format format,
		  const struct rundump_filter *filter, json_t **ret, char *err, size_t errlen);

#endif
