/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What runmodel.c (reading records) and runmodel_series.c (series and
 * slices) share.  Only these two files include this.
 */
#ifndef SOAK_RUNMODEL_INT_H
#define SOAK_RUNMODEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "runmodel.h"

struct rm_series *rm_series_new(const char *name);
void rm_series_free(struct rm_series *s);
/* Adds one interval's value (NAN: none); 0 or -ENOMEM. */
int rm_series_add(struct rm_series *s, double t0, double t1, double v);
/* The named series of list, made when new (NULL when the list is full). */
struct rm_series *rm_series_of(struct rm_series **list, size_t *n, size_t max, const char *name);
/* Merges an interval's histogram into the slice that holds start_ns. */
int rm_slice_add(struct runmodel *m, struct rm_op *o, uint64_t start_ns, double secs,
		 uint64_t count, const struct hist *h, struct hist *scratch);

#endif
