/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_RUNFILES_H
#define SOAK_CTL_RUNFILES_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "runmodel.h"

/*
 * A recorded run for report --html and cmp: its interval log read into a
 * run model, and beside it in the run directory the resolved plan
 * (plan.json) and the device facts (devices.json) when they are there.
 */
struct run_files {
	char source[4096];
	struct runmodel *m;
	json_t *plan, *devices;
};

/* slice_ns 0: the plan's slice, else an hour.  0, or soakctl's exit status
 * after printing why. */
int run_files_load(struct run_files *rf, const char *dir_or_log, uint64_t slice_ns);
/* The run's own slice length ("slice" in the plan.json beside it), or 0. */
uint64_t run_files_plan_slice(const char *dir_or_log);
void run_files_done(struct run_files *rf);

/* "-": stdout; else the file, created (under a temporary name beside it
 * until output_close).  NULL after printing why. */
FILE *output_open(const char *path);
/* Closes it, in place; 0, or soakctl's exit status after printing why
 * (the file as it was before). */
int output_close(FILE *f, const char *path);
/* Closes it, leaving no file (nothing to write after all). */
void output_discard(FILE *f);

#endif
