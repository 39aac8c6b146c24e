// SPDX-License-Identifier: GPL-2.0-only
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "runlog.h"

struct rundir {
	char *path, *log_path, *plan;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t wake, synced;

	/* Under lock. */
	char *pending;
	size_t pending_len, pending_cap;
	uint64_t records_dropped;
	bool stop, sync_requested;
	uint64_t sync_seq, synced_seq;
	int sync_result;
	char error[256];
	uint64_t bytes_written;

	/* Writer thread only. */
	int fd;
	uint64_t good_size;          /* the log's size up to the last whole record */
	uint64_t last_sync_ns;
	bool error_logged;
};

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

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

static void set_error(struct rundir *d, int error, const char *what)
{
	pthread_mutex_lock(&d->lock);
	snprintf(d->error, sizeof(d->error), "%s %s: %s", what, d->path, strerror(-error));
	pthread_mutex_unlock(&d->lock);
	/* Once per episode: a full disk must not flood the journal. */
	if (!d->error_logged)
		log_error("results cannot be written: %s %s: %s; workloads keep running, "
			  "records wait in memory and are written when the disk takes them",
			  what, d->path, strerror(-error));
	d->error_logged = true;
}

static void clear_error(struct rundir *d)
{
	if (d->error_logged)
		log_notice("results are written to %s again", d->path);
	d->error_logged = false;
	pthread_mutex_lock(&d->lock);
	d->error[0] = '\0';
	pthread_mutex_unlock(&d->lock);
}

/* Opens the log for appending, creating the directory and header. */
static int open_log(struct rundir *d)
{
	int r;

	if (d->fd >= 0)
		return 0;
	r = mkdir_p(d->path, 0750);
	if (r < 0) {
		set_error(d, r, "cannot create");
		return r;
	}
	int fd = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0) {
		r = -errno;
		set_error(d, r, "cannot open the interval log in");
		return r;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	d->good_size = (uint64_t)st.st_size;
	if (st.st_size == 0) {
		ssize_t n = write(fd, RUNLOG_HEADER, strlen(RUNLOG_HEADER));
		if (n != (ssize_t)strlen(RUNLOG_HEADER)) {
			r = n < 0 ? -errno : -ENOSPC;
			(void)!ftruncate(fd, 0);
			close(fd);
			set_error(d, r, "cannot write the interval log in");
			return r;
		}
		d->good_size = (uint64_t)n;
	}
	pthread_mutex_lock(&d->lock);
	char *plan = d->plan ? strdup(d->plan) : NULL;
	pthread_mutex_unlock(&d->lock);
	if (plan) {
		char *name = NULL;
		if (asprintf(&name, "%s/plan.json", d->path) >= 0) {
			struct stat pst;
			if (stat(name, &pst) < 0)
				rundir_write_file(d, "plan.json", plan);
			free(name);
		}
		free(plan);
	}
	d->fd = fd;
	return 0;
}

/* Writes what is pending; on failure the file is cut back to its last
 * whole record, so a partial write never leaves a torn record between
 * good ones. */
static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_pending(struct rundir *d, bool sync_now)
{
	pthread_mutex_lock(&d->lock);
	char *buf = d->pending;
	size_t len = d->pending_len;
	d->pending = NULL;
	d->pending_len = d->pending_cap = 0;
	pthread_mutex_unlock(&d->lock);

	int r = open_log(d);
	size_t off = 0;
	while (r == 0 && off < len) {
		ssize_t n = write(d->fd, buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r = n < 0 ? -errno : -ENOSPC;
		else
			off += (size_t)n;
	}
	/* write() at once puts records beyond a crash of soakd; fdatasync()
	 * at most every RUNDIR_FLUSH_NS bounds what a power cut can take. */
	if (r == 0 && len && (sync_now || mono() - d->last_sync_ns >= RUNDIR_FLUSH_NS)) {
		if (fdatasync(d->fd) < 0)
			r = -errno;
		else
			d->last_sync_ns = mono();
	}
	if (r == 0) {
		d->good_size += len;
		pthread_mutex_lock(&d->lock);
		d->bytes_written += len;
		pthread_mutex_unlock(&d->lock);
		free(buf);
		clear_error(d);
		return 0;
	}
	if (d->fd >= 0) {
		if (ftruncate(d->fd, (off_t)d->good_size) < 0) {
			/* Cannot even cut back: reopen later, the reader drops
			 * the torn line. */
			close(d->fd);
			d->fd = -1;
		}
		set_error(d, r, "cannot write the interval log in");
	}
	/* Put the records back in front of what arrived meanwhile. */
	pthread_mutex_lock(&d->lock);
	if (d->pending_len) {
		char *merged = realloc(buf, len + d->pending_len);
		if (merged) {
			memcpy(merged + len, d->pending, d->pending_len);
			buf = merged;
			len += d->pending_len;
		}
		free(d->pending);
	}
	d->pending = buf;
	d->pending_len = d->pending_cap = len;
	pthread_mutex_unlock(&d->lock);
	return r;
}

static void *writer_thread(void *arg)
{
	struct rundir *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop || d->pending_len) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += RUNDIR_FLUSH_NS / 1000000000;
		/* Woken by each batch of records (once per tick), by a sync
		 * request, or to retry a failing disk. */
		while (!d->stop && !d->sync_requested && !d->pending_len) {
			if (pthread_cond_timedwait(&d->wake, &d->lock, &until) == ETIMEDOUT)
				break;
		}
		if (d->error[0] && !d->stop && !d->sync_requested) {
			/* The disk failed: retry once per period, not per tick. */
			pthread_cond_timedwait(&d->wake, &d->lock, &until);
		}
		uint64_t seq = d->sync_seq;
		bool sync_now = d->sync_requested || d->stop;
		d->sync_requested = false;
		bool stopping = d->stop;
		pthread_mutex_unlock(&d->lock);
		int r = write_pending(d, sync_now);
		pthread_mutex_lock(&d->lock);
		d->synced_seq = seq;
		d->sync_result = r;
		pthread_cond_broadcast(&d->synced);
		if (stopping && r < 0)
			break; /* the disk is gone: don't hold up shutdown */
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int rundir_write_file(struct rundir *d, const char *name, const char *text)
{
	char *path = NULL, *tmp = NULL;
	int r = 0;

	if (asprintf(&path, "%s/%s", d->path, name) < 0 ||
	    asprintf(&tmp, "%s/.%s.tmp", d->path, name) < 0) {
		free(path);
		return -ENOMEM;
	}
	FILE *f = fopen(tmp, "we");
	if (!f || fputs(text, f) < 0 || fflush(f) != 0 || fdatasync(fileno(f)) < 0)
		r = -errno;
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	free(tmp);
	free(path);
	return r;
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
		bool same = old_plan && strcmp(old_plan, plan) == 0 && stat(d->log_path, &st) == 0;
		free(old_plan);
		if (same && !new_run) {
			*ret_resume = true;
		} else {
			if (!same && !new_run)
				log_notice("the configuration of run %s has changed: starting a new run",
					   run_name);
			r = rotate(d->path);
			if (r < 0)
				log_warning_errno(r, "cannot move the previous run in %s aside", d->path);
		}
	}
	r = open_log(d);
	if (r < 0 && r != -ENOMEM)
		r = 0; /* failed state: retried by the writer */
	if (r == 0) {
		r = -pthread_create(&d->thread, NULL, writer_thread, d);
		d->thread_started = r == 0;
	}
	if (r < 0) {
		rundir_close(d);
		return r;
	}
	*ret = d;
	return 0;
}

int rundir_set_plan(struct rundir *d, const char *plan)
{
	char *copy = strdup(plan);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&d->lock);
	free(d->plan);
	d->plan = copy;
	pthread_mutex_unlock(&d->lock);
	return rundir_write_file(d, "plan.json", plan);
}

const char *rundir_path(const struct rundir *d)
{
	return d->path;
}

const char *rundir_log_path(const struct rundir *d)
{
	return d->log_path;
}

void rundir_append(struct rundir *d, const json_t *record)
{
	char *line = runlog_frame(record);
	if (!line) {
		pthread_mutex_lock(&d->lock);
		d->records_dropped++;
		pthread_mutex_unlock(&d->lock);
		return;
	}
	size_t len = strlen(line);
	pthread_mutex_lock(&d->lock);
	if (d->pending_len + len > RUNDIR_MAX_PENDING) {
		/* The disk has been failing for long: drop the oldest
		 * records, count them, keep the newest. */
		size_t cut = 0;
		while (cut < d->pending_len && d->pending_len - cut + len > RUNDIR_MAX_PENDING / 2) {
			char *nl = memchr(d->pending + cut, '\n', d->pending_len - cut);
			cut = nl ? (size_t)(nl - d->pending) + 1 : d->pending_len;
			d->records_dropped++;
		}
		memmove(d->pending, d->pending + cut, d->pending_len - cut);
		d->pending_len -= cut;
	}
	if (d->pending_len + len > d->pending_cap) {
		size_t cap = (d->pending_len + len) * 2;
		char *p = realloc(d->pending, cap);
		if (!p) {
			d->records_dropped++;
			pthread_mutex_unlock(&d->lock);
			free(line);
			return;
		}
		d->pending = p;
		d->pending_cap = cap;
	}
	memcpy(d->pending + d->pending_len, line, len);
	d->pending_len += len;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	free(line);
}

int rundir_sync(struct rundir *d)
{
	int r;

	if (!d->thread_started)
		return -ESRCH;
	pthread_mutex_lock(&d->lock);
	uint64_t seq = ++d->sync_seq;
	d->sync_requested = true;
	pthread_cond_signal(&d->wake);
	while (d->synced_seq < seq && d->thread_started)
		pthread_cond_wait(&d->synced, &d->lock);
	r = d->sync_result;
	pthread_mutex_unlock(&d->lock);
	return r;
}

json_t *rundir_status_json(struct rundir *d)
{
	pthread_mutex_lock(&d->lock);
	json_t *j = json_pack("{s:s,s:I,s:I,s:I}", "path", d->path,
			      "bytes_written", (json_int_t)d->bytes_written,
			      "pending_bytes", (json_int_t)d->pending_len,
			      "records_dropped", (json_int_t)d->records_dropped);
	if (d->error[0])
		json_object_set_new(j, "error", json_string(d->error));
	pthread_mutex_unlock(&d->lock);
	return j;
}

void rundir_close(struct rundir *d)
{
	if (!d)
		return;
	if (d->thread_started) {
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	if (d->pending_len)
		log_error("%zu bytes of results could not be written to %s", d->pending_len,
			  d->path);
	if (d->fd >= 0)
		close(d->fd);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
	pthread_cond_destroy(&d->synced);
	free(d->pending);
	free(d->plan);
	free(d->log_path);
	free(d->path);
	free(d);
}
