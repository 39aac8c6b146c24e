// SPDX-License-Identifier: GPL-2.0-only
#include "checkpoint.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/log.h"

#define CHECKPOINT_FILE "checkpoint.json"

struct checkpoint_job {
	struct checkpointer *c;
	struct rundir *rundir;
	json_t *checkpoint;
};

static int write_checkpoint(struct rundir *rundir, json_t *ck)
{
	int r = rundir_sync(rundir);
	if (r < 0)
		return r;
	return rundir_write_json(rundir, CHECKPOINT_FILE, ck);
}

static void *checkpoint_main(void *arg)
{
	struct checkpoint_job *job = arg;
	int r = write_checkpoint(job->rundir, job->checkpoint);
	if (r < 0)
		log_warning_errno(r, "cannot write a checkpoint in %s; a restart reads the whole log",
				  rundir_path(job->rundir));
	json_decref(job->checkpoint);
	/*
	 * A checkpoint is the results whole, every closed slice's text
	 * included: megabytes of small blocks, built and freed once an hour
	 * (and after a resume's replay, which leaves its own).  glibc keeps
	 * freed pages it cannot trim from the top of its heaps; give them
	 * back, or a long run's RSS stays at its highest checkpoint.
	 */
	malloc_trim(0);
	atomic_store(&job->c->done, true);
	free(job);
	return NULL;
}

void checkpointer_wait(struct checkpointer *c)
{
	if (c->running) {
		pthread_join(c->thread, NULL);
		c->running = false;
	}
}

void checkpointer_write(struct checkpointer *c, struct rundir *rundir, const struct results *r,
			uint64_t run_ns, bool wait, json_t *host)
{
	if (c->running && !atomic_load(&c->done) && !wait) {
		json_decref(host);
		return;
	}
	checkpointer_wait(c);
	/* Built here (the histograms' compact form: cheap); encoded and
	 * written by the thread. */
	json_t *ck = results_checkpoint(r, run_ns);
	if (ck && host)
		json_object_set(ck, "host", host);
	json_decref(host);
	struct checkpoint_job *job = ck ? malloc(sizeof(*job)) : NULL;
	if (!job) {
		json_decref(ck);
		return;
	}
	c->last_run_ns = run_ns;
	*job = (struct checkpoint_job){ .c = c, .rundir = rundir, .checkpoint = ck };
	atomic_store(&c->done, false);
	if (!wait && pthread_create(&c->thread, NULL, checkpoint_main, job) == 0) {
		c->running = true;
		return;
	}
	checkpoint_main(job);
}

bool checkpoint_restore(struct rundir *rundir, struct results *r, uint64_t *ret_covered,
			json_t **ret_host)
{
	char *path = NULL;
	json_error_t jerr;
	uint64_t run_ns = 0;

	if (asprintf(&path, "%s/" CHECKPOINT_FILE, rundir_path(rundir)) < 0)
		return false;
	json_t *ck = json_load_file(path, 0, &jerr);
	int ret = ck ? results_restore(r, ck, &run_ns) : -ENOENT;
	if (ret < 0 && ck) {
		log_warning("%s does not fit this run; reading the whole log", path);
		for (size_t i = 0; i < r->n; i++)
			results_set_workload(r, i, r->w[i].workload);
		r->recorded_end_ns = r->recorded_wall_ns = 0;
		run_ns = 0;
	}
	*ret_host = ret == 0 ? json_incref(json_object_get(ck, "host")) : NULL;
	json_decref(ck);
	free(path);
	*ret_covered = run_ns;
	return ret == 0;
}

void checkpoint_used(struct rundir *rundir)
{
	char *path = NULL;

	if (asprintf(&path, "%s/" CHECKPOINT_FILE, rundir_path(rundir)) < 0)
		return;
	if (unlink(path) < 0 && errno != ENOENT)
		log_warning_errno(-errno, "cannot remove %s", path);
	free(path);
}

uint64_t checkpoint_record_run_ns(json_t *rec)
{
	json_t *v = json_object_get(rec, "end_ns");
	if (!json_is_integer(v))
		v = json_object_get(rec, "run_ns");
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}
