// SPDX-License-Identifier: GPL-2.0-only
#include "rundir.h"
#include "rundir_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "runlog.h"

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

/*
 * Writes plan.json unless the plan it holds is the current one.  A run's
 * plan is on disk before any of its records (open_log, write_pending), so
 * that a log is never without the plan that tells a restart whether to
 * resume it; until it is written, records wait like those of a failing
 * log.
 */
static int save_plan(struct rundir *d)
{
	int r = 0;

	pthread_mutex_lock(&d->plan_lock);
	pthread_mutex_lock(&d->lock);
	uint64_t gen = d->plan_gen;
	char *plan = gen != d->plan_saved_gen && d->plan ? strdup(d->plan) : NULL;
	bool due = gen != d->plan_saved_gen;
	pthread_mutex_unlock(&d->lock);
	if (due) {
		r = plan ? rundir_write_file(d, "plan.json", plan) : -ENOMEM;
		if (r == 0)
			d->plan_saved_gen = gen;
	}
	pthread_mutex_unlock(&d->plan_lock);
	free(plan);
	return r;
}

/* The length of fd's first size bytes up to and with the last newline:
 * what a torn last line leaves whole.  -errno when it cannot be read. */
static off_t whole_lines(int fd, off_t size)
{
	char buf[65536];

	for (off_t end = size; end > 0;) {
		size_t n = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t got = pread(fd, buf, n, end - (off_t)n);
		if (got != (ssize_t)n)
			return got < 0 ? -errno : -EIO;
		for (size_t k = n; k > 0; k--)
			if (buf[k - 1] == '\n')
				return end - (off_t)n + (off_t)k;
		end -= (off_t)n;
	}
	return 0;
}

/* Opens the log for appending, creating the directory, plan.json and the
 * header, in that order; makes sure plan.json is current when it is
 * open. */
int rundir_open_log(struct rundir *d)
{
	int r;

	if (d->fd < 0 && (r = mkdir_p(d->path, 0750)) < 0) {
		set_error(d, r, "cannot create");
		return r;
	}
	r = save_plan(d);
	if (r < 0) {
		set_error(d, r, "cannot write plan.json in");
		return r;
	}
	if (d->fd >= 0)
		return 0;
	/* Read too: a torn last line is looked for. */
	int fd = open(d->log_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0) {
		r = -errno;
		set_error(d, r, "cannot open the interval log in");
		return r;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		set_error(d, r, "cannot open the interval log in");
		return r;
	}
	if (!d->opened && st.st_size > 0) {
		/* A crash may have cut the last record short: what follows it
		 * must start a line of its own, or the next record (a resume's
		 * gap) joins the torn one and is lost with it. */
		off_t whole = whole_lines(fd, st.st_size);
		if (whole < 0 || (whole < st.st_size && ftruncate(fd, whole) < 0)) {
			r = whole < 0 ? (int)whole : -errno;
			close(fd);
			set_error(d, r, "cannot cut the torn last record off the interval log in");
			return r;
		}
		if (whole < st.st_size)
			log_notice("%s: the last %lld byte(s), a record a crash cut short, are cut off",
				   d->log_path, (long long)(st.st_size - whole));
		st.st_size = whole;
	}
	if (d->opened && (uint64_t)st.st_size != d->synced_size) {
		/* Reopened after a failure: what lies beyond the last sync
		 * is written again from memory, so it must go first. */
		if (ftruncate(fd, (off_t)d->synced_size) < 0) {
			r = -errno;
			close(fd);
			set_error(d, r, "cannot cut back the interval log in");
			return r;
		}
		st.st_size = (off_t)d->synced_size;
	}
	if (st.st_size == 0) {
		ssize_t n = write(fd, RUNLOG_HEADER, strlen(RUNLOG_HEADER));
		if (n != (ssize_t)strlen(RUNLOG_HEADER) || fdatasync(fd) < 0) {
			r = n >= 0 && n != (ssize_t)strlen(RUNLOG_HEADER) ? -ENOSPC : -errno;
			(void)!ftruncate(fd, 0);
			close(fd);
			set_error(d, r, "cannot write the interval log in");
			return r;
		}
		st.st_size = n;
	}
	d->synced_size = (uint64_t)st.st_size;
	d->opened = true;
	d->fd = fd;
	return 0;
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Keeps written records until they are synced; false: out of memory. */
static bool keep_unsynced(struct rundir *d, char *buf, size_t len, uint64_t records)
{
	if (!d->unsynced_len) {
		free(d->unsynced);
		d->unsynced = buf;
		d->unsynced_since_ns = mono();
	} else {
		char *more = realloc(d->unsynced, d->unsynced_len + len);
		if (!more)
			return false;
		memcpy(more + d->unsynced_len, buf, len);
		d->unsynced = more;
		free(buf);
	}
	d->unsynced_len += len;
	d->unsynced_records += records;
	return true;
}

/*
 * With d->lock held: when what waits plus room more bytes would pass
 * RUNDIR_MAX_PENDING (the disk has been failing for long), drops the
 * oldest records down to half of it, counted, keeping the newest.
 */
static void bound_pending(struct rundir *d, size_t room)
{
	size_t cut = 0;

	if (d->pending_len + room <= RUNDIR_MAX_PENDING)
		return;
	while (cut < d->pending_len && d->pending_len - cut + room > RUNDIR_MAX_PENDING / 2) {
		char *nl = memchr(d->pending + cut, '\n', d->pending_len - cut);
		cut = nl ? (size_t)(nl - d->pending) + 1 : d->pending_len;
		d->records_dropped++;
		d->pending_records--;
	}
	memmove(d->pending, d->pending + cut, d->pending_len - cut);
	d->pending_len -= cut;
}

/* Puts what is not on disk back in front of what arrived meanwhile, to be
 * written again; what cannot be kept is counted as dropped, and the bound
 * holds for the two together. */
static void requeue(struct rundir *d, char *buf, size_t len, uint64_t records)
{
	char *all = d->unsynced;
	size_t all_len = d->unsynced_len;
	uint64_t all_records = d->unsynced_records;

	d->unsynced = NULL;
	d->unsynced_len = 0;
	d->unsynced_records = 0;
	if (len) {
		char *more = realloc(all, all_len + len);
		if (more) {
			memcpy(more + all_len, buf, len);
			all = more;
			all_len += len;
			all_records += records;
		} else {
			pthread_mutex_lock(&d->lock);
			d->records_dropped += records;
			pthread_mutex_unlock(&d->lock);
		}
	}
	free(buf);

	pthread_mutex_lock(&d->lock);
	if (d->pending_len) {
		char *merged = realloc(all, all_len + d->pending_len);
		if (merged) {
			memcpy(merged + all_len, d->pending, d->pending_len);
			all = merged;
			all_len += d->pending_len;
			all_records += d->pending_records;
		} else {
			d->records_dropped += d->pending_records;
		}
		free(d->pending);
	}
	d->pending = all;
	d->pending_len = d->pending_cap = all_len;
	d->pending_records = all_records;
	bound_pending(d, 0);
	pthread_mutex_unlock(&d->lock);
}

/*
 * Writes what is pending and syncs when due (sync_now, or RUNDIR_FLUSH_NS
 * after the first record written since the last sync).  write() at once
 * puts records beyond a crash of soakd; only a successful fdatasync()
 * puts them beyond a power cut or a filesystem that aborts, so until then
 * they stay in memory.  On failure the file is cut back to its last sync
 * and every record since is queued again, so nothing is torn, doubled or
 * silently lost.
 */
static int write_pending(struct rundir *d, bool sync_now)
{
	pthread_mutex_lock(&d->lock);
	char *buf = d->pending;
	size_t len = d->pending_len;
	uint64_t records = d->pending_records;
	d->pending = NULL;
	d->pending_len = d->pending_cap = 0;
	d->pending_records = 0;
	pthread_mutex_unlock(&d->lock);

	int r = rundir_open_log(d);
	bool open_failed = r < 0; /* open_log said why */
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
	if (r == 0 && len) {
		if (keep_unsynced(d, buf, len, records)) {
			buf = NULL;
			len = 0;
			records = 0;
		} else {
			sync_now = true; /* cannot keep a copy: make it durable now */
		}
	}
	if (r == 0 && (d->unsynced_len || len) &&
	    (sync_now || mono() - d->unsynced_since_ns >= RUNDIR_FLUSH_NS)) {
		if (fdatasync(d->fd) < 0) {
			r = -errno;
		} else {
			size_t synced = d->unsynced_len + len;
			d->synced_size += synced;
			pthread_mutex_lock(&d->lock);
			d->bytes_written += synced;
			d->records_synced += d->unsynced_records + records;
			pthread_mutex_unlock(&d->lock);
			free(d->unsynced);
			d->unsynced = NULL;
			d->unsynced_len = 0;
			d->unsynced_records = 0;
			free(buf);
			buf = NULL;
			len = 0;
			records = 0;
		}
	}
	if (r == 0) {
		free(buf);
		clear_error(d);
		return 0;
	}
	if (d->fd >= 0) {
		if (!open_failed)
			set_error(d, r, "cannot write the interval log in");
		if (ftruncate(d->fd, (off_t)d->synced_size) < 0) {
			/* Cannot even cut back (a filesystem turned read-only):
			 * reopening cuts back before writing again. */
			close(d->fd);
			d->fd = -1;
		}
	}
	requeue(d, buf, len, records);
	return r;
}

/* When the writer must next look at the disk: the sync deadline of what
 * is written but not synced, else (idle, or retrying a failing disk) a
 * period from now. */
static struct timespec next_deadline(const struct rundir *d)
{
	uint64_t at = mono() + RUNDIR_FLUSH_NS;
	if (d->unsynced_len && !d->error[0])
		at = d->unsynced_since_ns + RUNDIR_FLUSH_NS;
	return (struct timespec){ .tv_sec = (time_t)(at / 1000000000u),
				  .tv_nsec = (long)(at % 1000000000u) };
}

void *rundir_writer_thread(void *arg)
{
	struct rundir *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct timespec until = next_deadline(d);
		/* Woken by each batch of records (once per tick), by a sync
		 * request, at the sync deadline of what is written, or to retry
		 * a failing disk: once per period then, not per tick. */
		while (!d->stop && !d->sync_requested && (!d->pending_len || d->error[0]))
			if (pthread_cond_timedwait(&d->wake, &d->lock, &until) == ETIMEDOUT)
				break;
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
		/* Stopping: everything was written and synced, or the disk
		 * is gone and must not hold up shutdown. */
		if (stopping)
			break;
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* Writes a whole file in the run directory atomically: put writes its
 * contents to f (0 or -errno); then it is synced and renamed in place. */
static int write_file_with(struct rundir *d, const char *name, int (*put)(FILE *f, const void *arg),
			   const void *arg)
{
	char *path = NULL, *tmp = NULL;
	int r = 0;

	if (asprintf(&path, "%s/%s", d->path, name) < 0 ||
	    asprintf(&tmp, "%s/.%s.tmp", d->path, name) < 0) {
		free(path);
		return -ENOMEM;
	}
	FILE *f = fopen(tmp, "we");
	if (!f)
		r = -errno;
	else if ((r = put(f, arg)) == 0 && (fflush(f) != 0 || fdatasync(fileno(f)) < 0))
		r = -errno;
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	/* The rename is durable once the directory is: plan.json must be
	 * on disk before the log it describes (save_plan). */
	if (r == 0) {
		int dfd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || fsync(dfd) < 0)
			r = -errno;
		if (dfd >= 0)
			close(dfd);
	}
	free(tmp);
	free(path);
	return r;
}

static int put_text(FILE *f, const void *text)
{
	return fputs(text, f) < 0 ? -errno : 0;
}

int rundir_write_file(struct rundir *d, const char *name, const char *text)
{
	return write_file_with(d, name, put_text, text);
}

static int put_json(FILE *f, const void *json)
{
	errno = 0;
	if (json_dumpf(json, f, JSON_COMPACT) == 0)
		return 0;
	return errno ? -errno : -ENOMEM;
}

int rundir_write_json(struct rundir *d, const char *name, const json_t *json)
{
	return write_file_with(d, name, put_json, json);
}

int rundir_set_plan(struct rundir *d, const char *plan)
{
	char *copy = strdup(plan);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&d->lock);
	free(d->plan);
	d->plan = copy;
	d->plan_gen++;
	pthread_mutex_unlock(&d->lock);
	/* Failing, it is written again before the next records (open_log). */
	return save_plan(d);
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
		d->records_appended++;
		d->records_dropped++;
		pthread_mutex_unlock(&d->lock);
		return;
	}
	size_t len = strlen(line);
	pthread_mutex_lock(&d->lock);
	d->records_appended++;
	bound_pending(d, len);
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
	d->pending_records++;
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
	/* records = records_synced + records_pending + records_dropped */
	json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "path", d->path,
			      "bytes_written", (json_int_t)d->bytes_written,
			      "pending_bytes", (json_int_t)d->pending_len,
			      "records", (json_int_t)d->records_appended,
			      "records_synced", (json_int_t)d->records_synced,
			      "records_pending", (json_int_t)(d->records_appended -
							      d->records_synced -
							      d->records_dropped),
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
	/* What the writer could not make durable is lost: count it. */
	d->records_dropped += d->pending_records + d->unsynced_records;
	if (d->records_dropped)
		log_error("%" PRIu64 " of the run's %" PRIu64 " records could not be written to %s "
			  "and are lost (records_dropped)",
			  d->records_dropped, d->records_appended, d->log_path);
	else if (d->records_appended)
		log_info("all %" PRIu64 " of the run's records are synced in %s", d->records_appended,
			 d->log_path);
	if (d->fd >= 0)
		close(d->fd);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->plan_lock);
	pthread_cond_destroy(&d->wake);
	pthread_cond_destroy(&d->synced);
	free(d->pending);
	free(d->unsynced);
	free(d->plan);
	free(d->log_path);
	free(d->path);
	free(d);
}
