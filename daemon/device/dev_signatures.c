// SPDX-License-Identifier: GPL-2.0-only
/*
 * What libblkid finds on a device (dev_signatures.h): partition tables,
 * filesystems, RAID, LVM, crypto and swap signatures, in words.
 */
#include "dev_signatures.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <blkid.h>

#define SIGNATURES_MAX 8

static const char *article(const char *word)
{
	return strchr("aeiouAEIOU", word[0]) && word[0] ? "an" : "a";
}

/* One signature libblkid has just found, in words. */
static void describe_signature(blkid_probe pr, char *ret, size_t len)
{
	const char *type = NULL, *usage = NULL, *uuid = NULL, *label = NULL, *badcsum = NULL;
	char ids[400] = "";
	int n = 0;

	ret[0] = '\0';
	if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0) {
		blkid_probe_lookup_value(pr, "PTUUID", &uuid, NULL);
		snprintf(ret, len, "%s %s partition table%s%s%s", article(type), type,
			 uuid ? " (PTUUID " : "", uuid ? uuid : "", uuid ? ")" : "");
		return;
	}
	if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) != 0)
		return;
	blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
	blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
	blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
	blkid_probe_lookup_value(pr, "SBBADCSUM", &badcsum, NULL);
	if (uuid)
		n += snprintf(ids + n, sizeof(ids) - (size_t)n, "UUID %s", uuid);
	if (label && (size_t)n < sizeof(ids))
		n += snprintf(ids + n, sizeof(ids) - (size_t)n, "%slabel \"%s\"", n ? ", " : "",
			      label);
	if (badcsum && (size_t)n < sizeof(ids))
		n += snprintf(ids + n, sizeof(ids) - (size_t)n, "%sbad checksum", n ? ", " : "");

	const char *what = "signature";
	if (usage && strcmp(usage, "filesystem") == 0)
		what = "filesystem";
	else if (usage && strcmp(usage, "raid") == 0)
		what = "signature (a RAID or LVM member)";
	else if (usage && strcmp(usage, "crypto") == 0)
		what = "signature (an encrypted volume)";
	snprintf(ret, len, "%s %s %s%s%s%s", article(type), type, what, ids[0] ? " (" : "", ids,
		 ids[0] ? ")" : "");
}

/* Everything libblkid finds on the device, joined with "and"; returns how
 * many signatures, or a negative errno when the device cannot be read. */
static int find_signatures(int fd, char *ret, size_t len)
{
	blkid_probe pr = blkid_new_probe();
	size_t off = 0;
	int found = 0, r = 0;

	ret[0] = '\0';
	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		blkid_free_probe(pr);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 1);
	/* BADCSUM: a filesystem with a damaged superblock is still data. */
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
					      BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL |
					      BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);

	/* Each call yields the next signature, over all chains. */
	for (int i = 0; i < SIGNATURES_MAX; i++) {
		char one[512];
		errno = 0;
		int p = blkid_do_probe(pr);
		if (p == 1)
			break;
		if (p < 0) {
			r = errno ? -errno : -EIO;
			break;
		}
		describe_signature(pr, one, sizeof(one));
		if (!one[0] || strstr(ret, one))
			continue;
		int n = snprintf(ret + off, len - off, "%s%s", found ? " and " : "", one);
		if (n > 0 && off + (size_t)n < len)
			off += (size_t)n;
		found++;
	}
	blkid_free_probe(pr);
	return r < 0 ? r : found;
}

/*
 * The probe on a thread of its own, waited for as long as the caller
 * allows: a stalled device (the very case soakd is for) would hold a
 * buffered read, and with it the caller (soakd's main loop at a reload),
 * for as long as it stalls.  A probe given up on goes on alone and frees
 * what it holds when the device answers; until then it is listed, and the
 * same device is not probed again (each retry would leave one more thread
 * waiting, and its caller waiting again).
 */
struct probe_job {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	int fd;                     /* the job's own: closed by the thread */
	int result;
	bool done, abandoned;
	/* What is probed: a block device by its number, a file by inode. */
	bool is_blockdev;
	dev_t dev;
	ino_t ino;
	struct probe_job *next_abandoned;
	char signatures[DEV_SIGNATURES_LEN];
};

/* The probes given up on whose device has not answered yet.  Lock order:
 * a job's lock, then this one. */
static struct probe_job *abandoned_jobs;
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_target(const struct probe_job *j, const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return j->is_blockdev && j->dev == st->st_rdev;
	return !j->is_blockdev && j->dev == st->st_dev && j->ino == st->st_ino;
}

static bool still_probing(const struct stat *st)
{
	bool found = false;

	pthread_mutex_lock(&abandoned_lock);
	for (struct probe_job *j = abandoned_jobs; j && !found; j = j->next_abandoned)
		found = same_target(j, st);
	pthread_mutex_unlock(&abandoned_lock);
	return found;
}

static void probe_job_free(struct probe_job *j)
{
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->done_cond);
	free(j);
}

static void *probe_main(void *arg)
{
	struct probe_job *j = arg;
	int r = find_signatures(j->fd, j->signatures, sizeof(j->signatures));

	close(j->fd);
	pthread_mutex_lock(&j->lock);
	j->result = r;
	j->done = true;
	bool abandoned = j->abandoned;
	if (abandoned) {
		pthread_mutex_lock(&abandoned_lock);
		for (struct probe_job **p = &abandoned_jobs; *p; p = &(*p)->next_abandoned)
			if (*p == j) {
				*p = j->next_abandoned;
				break;
			}
		pthread_mutex_unlock(&abandoned_lock);
	}
	pthread_cond_signal(&j->done_cond);
	pthread_mutex_unlock(&j->lock);
	if (abandoned)
		probe_job_free(j);
	return NULL;
}

int dev_signatures_find(int fd, uint64_t wait_ns, char *ret, size_t len)
{
	struct probe_job *j = NULL;
	pthread_attr_t attr;
	pthread_t thread;
	struct timespec until;
	struct stat st;
	int r = 0;

	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (still_probing(&st))
		r = -EINPROGRESS;
	else if (!(j = calloc(1, sizeof(*j))))
		r = -ENOMEM;
	if (r < 0) {
		close(fd);
		return r;
	}
	j->fd = fd;
	j->is_blockdev = S_ISBLK(st.st_mode);
	j->dev = j->is_blockdev ? st.st_rdev : st.st_dev;
	j->ino = st.st_ino;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->done_cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The probe takes no signal meant for its caller's process. */
	sigset_t all, was;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = -pthread_create(&thread, &attr, probe_main, j);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (r < 0) {
		close(fd);
		probe_job_free(j);
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(wait_ns / 1000000000);
	until.tv_nsec += (long)(wait_ns % 1000000000);
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&j->lock);
	while (!j->done && r == 0)
		r = -pthread_cond_timedwait(&j->done_cond, &j->lock, &until);
	bool done = j->done;
	if (!done && r == -ETIMEDOUT)
		r = 0;
	if (!done) {
		j->abandoned = true;
		pthread_mutex_lock(&abandoned_lock);
		j->next_abandoned = abandoned_jobs;
		abandoned_jobs = j;
		pthread_mutex_unlock(&abandoned_lock);
	}
	pthread_mutex_unlock(&j->lock);
	if (!done)
		return r < 0 ? r : -ETIMEDOUT;
	snprintf(ret, len, "%s", j->signatures);
	r = j->result;
	probe_job_free(j);
	return r;
}
