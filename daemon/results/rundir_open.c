// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening a run's directory: the run there is resumed when its plan.json
 * is this configuration's and it has a log; otherwise it is moved aside
 * (never deleted) and a new run begins.
 */
#include "rundir.h"
#include "rundir_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/log.h"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *out = open_memstream(&text, &len);
	if (out) {
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, out);
		fclose(out);
	}
	fclose(f);
	return text;
}

/* Moves an old run aside as <path>.<N>. */
static int rotate(const char *path)
{
	char *to = NULL;

	for (unsigned n = 1; n < 100000; n++) {
		free(to);
		if (asprintf(&to, "%s.%u", path, n) < 0)
			return -ENOMEM;
		struct stat st;
		if (lstat(to, &st) == 0)
			continue;
		int r = rename(path, to) < 0 ? -errno : 0;
		if (r == 0)
			log_info("the previous run in %s was moved to %s", path, to);
		free(to);
		return r;
	}
	free(to);
	return -EEXIST;
}

int rundir_open(const char *state_dir, const char *run_name, const char *plan, bool new_run,
		struct rundir **ret, bool *ret_resume)
{
	struct rundir *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->fd = -1;
	if (asprintf(&d->path, "%s/%s", state_dir, run_name) < 0 ||
	    asprintf(&d->log_path, "%s/intervals.log", d->path) < 0 || !(d->plan = strdup(plan))) {
		free(d->path);
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->plan_lock, NULL);
	d->plan_gen = 1;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&d->synced, NULL);

	*ret_resume = false;
	struct stat st;
	if (stat(d->path, &st) == 0) {
		char *plan_path = NULL, *old_plan = NULL;
		if (asprintf(&plan_path, "%s/plan.json", d->path) >= 0)
			old_plan = read_file(plan_path);
		free(plan_path);
		bool logged = stat(d->log_path, &st) == 0;
		bool same = old_plan && strcmp(old_plan, plan) == 0 && logged;
		if (same && !new_run) {
			*ret_resume = true;
		} else {
			/*
			 * plan.json is written before the log (save_plan): a
			 * log without it was left by a soakd that did not do
			 * so, or had it removed.  Nothing else in the run
			 * directory says which configuration it ran (the
			 * log's header is a version, a checkpoint names
			 * workloads, not their definitions), so it cannot be
			 * resumed as this one; it is kept, moved aside.
			 */
			if (new_run)
				;
			else if (!old_plan && logged)
				log_notice("run %s has an interval log but no plan.json to tell "
					   "its configuration by: starting a new run", run_name);
			else if (!logged)
				log_info("run %s has no interval log to resume: starting it anew",
					 run_name);
			else
				log_notice("the configuration of run %s has changed: starting a new run",
					   run_name);
			/* Not moved, it would take the new run's records:
			 * two runs in one log, under the old one's plan. */
			r = rotate(d->path);
			if (r < 0 && logged) {
				log_error_errno(r, "cannot move the previous run in %s aside, so the "
						"new run cannot be written there (move or remove it)",
						d->path);
				free(old_plan);
				rundir_close(d);
				return r;
			}
			/* No log to mix with (an empty mount point, say): the
			 * new run goes in, its own plan.json written over. */
			if (r < 0)
				log_warning_errno(r, "cannot move the previous run in %s aside; it "
						  "has no interval log, so the new run is written there",
						  d->path);
		}
		free(old_plan);
		/* Resumed: the plan.json there stays as it is. */
		if (*ret_resume && asprintf(&plan_path, "%s/plan.json", d->path) >= 0) {
			if (stat(plan_path, &st) == 0)
				d->plan_saved_gen = d->plan_gen;
			free(plan_path);
		}
	}
	r = rundir_open_log(d);
	if (r < 0 && r != -ENOMEM)
		r = 0; /* failed state: retried by the writer */
	if (r == 0) {
		r = -pthread_create(&d->thread, NULL, rundir_writer_thread, d);
		d->thread_started = r == 0;
	}
	if (r < 0) {
		rundir_close(d);
		return r;
	}
	*ret = d;
	return 0;
}
