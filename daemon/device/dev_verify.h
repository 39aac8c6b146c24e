/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_VERIFY_H
#define SOAK_DEV_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * "verify": true in the device engine: every write carries verify blocks
 * (verify.h), every read is checked as it completes and counted per class
 * in its op's interval, the generation map and flush epochs live in the
 * run directory (verify_map.h), and the target is flushed every
 * flush_interval by an fsync op on the stream's own ring.  Called by
 * dev_setup.c (prepare, free) and dev_engine.c (the I/O path, through the
 * prototypes in dev_engine_int.h).
 */

struct workload;
struct workload_stream;
struct dev_stream;
struct dev_verify;

/* Sets up verification of stream `index` (its target open and laid out):
 * fills the region with generation 0 when asked, opens the state in the
 * run directory and, on a resumed run, checks what verify_on_resume says. */
int dev_verify_prepare(struct workload *w, size_t index, char *err, size_t errlen);
void dev_verify_free(struct dev_verify *v);
/* The run directory holds a verify state for w's target `index` (whatever
 * target it was made for): the run has written and tracked that device. */
bool dev_verify_state_exists(const struct workload *w, size_t index);
/* Whether dev_verify_prepare fills target index (which then needs to be
 * opened for writing): at a run's start, or when no verify state of it
 * exists (a first fill interrupted, a target a reload brought in). */
bool dev_verify_fills(const struct workload *w, size_t index);

/* The I/O path's hooks are declared in dev_engine_int.h, which
 * dev_engine.c includes (so the engine does not depend on this module). */

#endif
