// SPDX-License-Identifier: GPL-2.0-only
/*
 * Setting up a verified stream (dev_verify.h): the fill before the run,
 * the state in the run directory, and the check a resumed run makes of
 * what a crash may have left behind ("verify_on_resume").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "base/bootid.h"
#include "base/log.h"
#include "config/config_verify.h"
#include "dev_engine_int.h"
#include "dev_verify.h"
#include "dev_verify_int.h"
#include "workload/workload.h"

#define FILL_CHUNK (UINT64_C(1) << 20)
#define PROGRESS_EVERY_NS (UINT64_C(5) * 1000000000)
#define EXTEND_USEC (UINT64_C(30) * 1000000)

/* Progress to soakd (status), every chunk; the log, STATUS= and the
 * watchdog every few seconds.  False: soakd is to stop, now. */
static bool progress(const char *what, const char *label, uint64_t done, uint64_t total,
		     uint64_t *last_ns)
{
	struct workload_progress wp = { .target = label, .what = what, .done = done,
					.total = total, .unit = "blocks" };
	bool go_on = workload_progress(&wp);
	uint64_t now = mono_ns();

	if (now - *last_ns < PROGRESS_EVERY_NS && done < total)
		return go_on;
	*last_ns = now;
	double pct = total ? 100.0 * (double)done / (double)total : 100;
	log_info("%s: %s: %.1f%% (%" PRIu64 " of %" PRIu64 " blocks)", label, what, pct, done,
		 total);
	sd_notifyf(0, "STATUS=%s %s: %.1f%%\nEXTEND_TIMEOUT_USEC=%" PRIu64, what, label, pct,
		   EXTEND_USEC);
	/* Before READY=1 too: a long fill or check must not trip the watchdog. */
	uint64_t watchdog_usec = 0;
	if (sd_watchdog_enabled(0, &watchdog_usec) > 0)
		sd_notify(0, "WATCHDOG=1");
	return go_on;
}

/* Generation 0 over the whole region, so every read can be checked. */
static int fill(struct dev_stream *d, struct dev_verify *v, char *err, size_t errlen)
{
	uint8_t *buf;
	uint64_t last = 0;

	if (posix_memalign((void **)&buf, 4096, FILL_CHUNK)) {
		snprintf(err, errlen, "out of memory for the fill");
		return -ENOMEM;
	}
	struct verify_ident id = v->id;
	id.run = v->fill_run_id;
	for (uint64_t b = 0; b < v->n_blocks;) {
		uint64_t n = v->n_blocks - b < FILL_CHUNK / VERIFY_BLOCK ? v->n_blocks - b
									 : FILL_CHUNK / VERIFY_BLOCK;
		for (uint64_t i = 0; i < n; i++)
			verify_encode(buf + i * VERIFY_BLOCK, &id, (b + i) * VERIFY_BLOCK, 0, 0, 0);
		ssize_t w = pwrite(d->fd, buf, n * VERIFY_BLOCK, (off_t)(b * VERIFY_BLOCK));
		if (w != (ssize_t)(n * VERIFY_BLOCK)) {
			snprintf(err, errlen, "fill of %s failed at offset %" PRIu64 ": %s", v->label,
				 b * VERIFY_BLOCK, w < 0 ? strerror(errno) : "short write");
			free(buf);
			return w < 0 ? -errno : -EIO;
		}
		b += n;
		/* Stopped: no state is made of a fill not done, so the next
		 * start fills again from the beginning. */
		if (!progress("verify fill", v->label, b, v->n_blocks, &last)) {
			snprintf(err, errlen, "verify fill of %s interrupted at %.1f%%: it starts "
				 "again at the next start", v->label,
				 100.0 * (double)b / (double)v->n_blocks);
			free(buf);
			return -EINTR;
		}
	}
	free(buf);
	if (fdatasync(d->fd) < 0) {
		snprintf(err, errlen, "fill of %s: flush failed: %s", v->label, strerror(errno));
		return -errno;
	}
	v->fill_pending = true;
	return 0;
}

static int read_blocks(struct dev_stream *d, uint8_t *buf, uint64_t b, uint64_t n)
{
	ssize_t r = pread(d->fd, buf, n * VERIFY_BLOCK, (off_t)(b * VERIFY_BLOCK));
	return r == (ssize_t)(n * VERIFY_BLOCK) ? 0 : r < 0 ? -errno : -EIO;
}

static void count(struct dev_verify *v, enum verify_class c)
{
	dev_verify_count(v->resume_counts, &v->resume_corrupt, c);
}

/* "touched": each block a crash left uncertain, read and settled now. */
static int check_touched(struct dev_stream *d, struct dev_verify *v, uint8_t *buf)
{
	uint64_t n = verify_map_n_uncertain(&v->map), k = 0, b, last = 0;
	uint64_t *blocks = malloc((n ? n : 1) * sizeof(*blocks));
	size_t cursor = 0;

	if (!blocks)
		return -ENOMEM;
	while (k < n && verify_map_next_uncertain(&v->map, &cursor, &b)) {
		blocks[k++] = b;
		cursor++;
	}
	for (uint64_t i = 0; i < k; i++) {
		if (read_blocks(d, buf, blocks[i], 1) < 0) {
			count(v, VERIFY_UNCHECKED);
			continue;
		}
		count(v, dev_verify_block(v, blocks[i], buf, NULL));
		/* The blocks not read yet stay uncertain in the state. */
		if (!progress("verify on resume (touched)", v->label, i + 1, k, &last)) {
			free(blocks);
			return -EINTR;
		}
	}
	free(blocks);
	return 0;
}

/* When the host booted, to the second: it moves with a reboot. */
static int64_t boot_wall_s(void)
{
	struct timespec real, boot;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return (int64_t)real.tv_sec - (int64_t)boot.tv_sec;
}

/* "full": every block of the region. */
static int check_full(struct dev_stream *d, struct dev_verify *v, uint8_t *buf)
{
	uint64_t last = 0;

	for (uint64_t b = 0; b < v->n_blocks;) {
		uint64_t n = v->n_blocks - b < FILL_CHUNK / VERIFY_BLOCK ? v->n_blocks - b
									 : FILL_CHUNK / VERIFY_BLOCK;
		if (read_blocks(d, buf, b, n) < 0) {
			/* Block by block: one bad sector leaves only itself
			 * unread.  After a host restart the map of a block
			 * not read is no truth to judge it by later: any
			 * generation of the run may be there. */
			for (uint64_t i = 0; i < n; i++) {
				if (read_blocks(d, buf, b + i, 1) == 0) {
					count(v, dev_verify_block(v, b + i, buf, NULL));
				} else {
					count(v, VERIFY_UNCHECKED);
					if (v->adopt_all)
						verify_map_mark_uncertain(&v->map, b + i, 127);
				}
				/* Each read of a failing device may take its
				 * timeout: systemd and a stop hear of it. */
				if (!progress(v->adopt_all ? "verify on resume (full, after a host "
							     "restart)" : "verify on resume (full)",
					      v->label, b + i + 1, v->n_blocks, &last))
					return -EINTR;
			}
		} else {
			for (uint64_t i = 0; i < n; i++)
				count(v, dev_verify_block(v, b + i, buf + i * VERIFY_BLOCK, NULL));
		}
		b += n;
		if (!progress(v->adopt_all ? "verify on resume (full, after a host restart)"
					   : "verify on resume (full)",
			      v->label, b, v->n_blocks, &last))
			return -EINTR;
	}
	return 0;
}

static int check_on_resume(struct dev_stream *d, struct dev_verify *v, char *err, size_t errlen)
{
	uint8_t *buf;
	int r = 0;

	/* After a host restart nothing narrower is safe: the map's and the
	 * ring's pages reached the disk in no known order. */
	bool adopt = v->map.host_restarted;
	if (v->cfg->on_resume == VERIFY_RESUME_NONE && !adopt)
		return 0;
	if (posix_memalign((void **)&buf, 4096, FILL_CHUNK))
		return -ENOMEM;
	if (adopt) {
		log_notice("%s: the host restarted since the verify state was last synced: every "
			   "block is read back once, and the generation of this run it holds taken "
			   "as the truth (lost writes of the last moments before the restart cannot "
			   "be told apart)", v->label);
		v->adopt_all = true;
		r = check_full(d, v, buf);
		v->adopt_all = false;
	} else if (v->cfg->on_resume == VERIFY_RESUME_FULL)
		r = check_full(d, v, buf);
	else if (verify_map_n_uncertain(&v->map))
		r = check_touched(d, v, buf);
	free(buf);
	if (r == 0 && adopt && verify_map_trusted(&v->map) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot sync the verify state of %s: %s", v->label,
			 strerror(-r));
		return r;
	}
	if (r == -EINTR) {
		/* What was read is settled in the state; the rest is as it
		 * was, and a check after a host restart is still owed (the
		 * files say so until it is done). */
		snprintf(err, errlen, "verify on resume (%s) of %s interrupted: it runs again at "
			 "the next start", adopt ? "full, after a host restart"
						 : verify_resume_name(v->cfg->on_resume), v->label);
		return r;
	}
	uint64_t bad = v->resume_corrupt;
	log_info("%s: verify on resume (%s): %" PRIu64 " blocks checked, %" PRIu64 " failed, %" PRIu64
		 " were uncertain", v->label,
		 adopt ? "full, after a host restart" : verify_resume_name(v->cfg->on_resume),
		 v->resume_counts[OP_VERIFY_CHECKED], bad, v->resume_counts[OP_VERIFY_UNCERTAIN]);
	return r;
}

/* Opens (or, for a new run, creates) the state in the run directory. */
static int open_state(struct workload *w, struct dev_stream *d, struct dev_verify *v, char *err,
		      size_t errlen)
{
	if (v->map.gens)
		verify_map_close(&v->map);
	if (v->dir_fd >= 0)
		close(v->dir_fd);
	v->dir_fd = open(w->run_dir, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (v->dir_fd < 0) {
		snprintf(err, errlen, "cannot open the run directory %s for the verify state: %s",
			 w->run_dir, strerror(errno));
		return -errno;
	}
	uint64_t run_id = v->fill_run_id;
	if (!v->fill_pending && getrandom(&run_id, sizeof(run_id), 0) != sizeof(run_id))
		run_id = mono_ns() ^ ((uint64_t)getpid() << 32);
	int r = verify_map_open(v->dir_fd, v->name, v->n_blocks, v->id.target, run_id,
				v->fill_pending, boot_wall_s(), host_boot_id(), &v->map, err, errlen);
	if (r < 0)
		return r;
	v->id.run = verify_map_run_id(&v->map);
	if (v->map.created) {
		v->fill_pending = false;    /* the fill belongs to this map now */
		return 0;
	}
	if (v->map.resumed_uncertain)
		log_notice("%s: %" PRIu64 " blocks were written after the last completed flush "
			   "before soakd stopped: uncertain until read", v->label,
			   v->map.resumed_uncertain);
	return check_on_resume(d, v, err, errlen);
}

/* The run directory holds the verify state NAME (a map was made). */
static bool named_state_exists(const struct workload *w, const char *v_name)
{
	char name[160];
	struct stat st;

	if (!w->run_dir)
		return false;
	int dir_fd = open(w->run_dir, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0)
		return false;
	snprintf(name, sizeof(name), "%s.state", v_name);
	bool found = fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(dir_fd);
	return found;
}

bool dev_verify_fills(const struct workload *w, size_t index)
{
	/* A resumed run's region was filled when it began; unless that
	 * fill was interrupted (a map is made only once a fill is done). */
	return w->cfg->verify.on && w->cfg->verify.fill &&
	       (!w->resuming || !dev_verify_state_exists(w, index));
}

bool dev_verify_state_exists(const struct workload *w, size_t index)
{
	char name[sizeof(((struct dev_verify *)0)->name)];

	if (!w->cfg->verify.on)
		return false;
	snprintf(name, sizeof(name), "verify-%s-%zu", w->cfg->name, index);
	return named_state_exists(w, name);
}

int dev_verify_prepare(struct workload *w, size_t index, char *err, size_t errlen)
{
	const struct workload_config *cfg = w->cfg;
	struct dev_stream *d = w->streams[index].engine;

	if (!cfg->verify.on)
		return 0;
	struct dev_verify *v = calloc(1, sizeof(*v));
	size_t slot_blocks = d->max_len / VERIFY_BLOCK + 1;
	if (!v || !(v->slot_state = calloc(d->n_slots, 1)) ||
	    !(v->slot_epoch = calloc(d->n_slots, sizeof(*v->slot_epoch))) ||
	    !(v->slot_ring = calloc(d->n_slots, sizeof(*v->slot_ring))) ||
	    !(v->slot_gen = calloc(d->n_slots, slot_blocks)) ||
	    !(v->slot_back = calloc(d->n_slots, slot_blocks))) {
		dev_verify_free(v);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->verify = v;
	v->slot_blocks = slot_blocks;
	v->dir_fd = -1;
	v->cfg = &cfg->verify;
	v->label = cfg->targets[index].path;
	snprintf(v->name, sizeof(v->name), "verify-%s-%zu", cfg->name, index);
	v->id.workload = (uint32_t)verify_hash(cfg->name);
	v->id.target = (uint32_t)verify_hash(cfg->targets[index].path);
	v->n_blocks = d->size / VERIFY_BLOCK;
	if (getrandom(&v->fill_run_id, sizeof(v->fill_run_id), 0) != sizeof(v->fill_run_id))
		v->fill_run_id = mono_ns() ^ ((uint64_t)getpid() << 32) ^ index;
	if (dev_verify_fills(w, index)) {
		if (w->resuming)
			log_notice("%s: no verify state of this run: filling (again)", v->label);
		int r = fill(d, v, err, errlen);
		if (r < 0)
			return r;
	}
	return w->run_dir ? open_state(w, d, v, err, errlen) : 0;
}

static bool same_dir(int dir_fd, const char *path)
{
	struct stat a, b;

	return dir_fd >= 0 && fstat(dir_fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int dev_verify_start(struct workload_stream *s, char *reason, size_t reason_len)
{
	struct workload *w = s->workload;
	struct dev_stream *d = s->engine;
	struct dev_verify *v = d->verify;

	if (!v)
		return 0;
	/* A new run in the same process (the old one's directory renamed, a
	 * new one at the same path): a state of its own. */
	if ((!v->map.gens || !same_dir(v->dir_fd, w->run_dir)) && w->run_dir) {
		int r = open_state(w, d, v, reason, reason_len);
		if (r < 0)
			return r;
	}
	if (!v->map.gens) {
		snprintf(reason, reason_len, "no run directory for the verify state");
		return -EINVAL;
	}
	int op = 0;
	for (size_t i = 0; i < d->model.n_gens; i++)
		if (d->model.gens[i].op_read >= 0) {
			op = d->model.gens[i].op_read;
			break;
		}
	struct op_stats *os = &stream_current(&s->stats)->ops[op];
	for (size_t c = 0; c < OP_VERIFY_CLASSES; c++)
		os->verify[c] += v->resume_counts[c];
	os->corrupt += v->resume_corrupt;
	memset(v->resume_counts, 0, sizeof(v->resume_counts));
	v->resume_corrupt = 0;
	/* A start comes only once the last run's ops and flush are all back
	 * (dev_can_start): a flush still marked as in flight would hold every
	 * epoch of this run open, so it is a bug, refused and named. */
	if (v->flushing) {
		snprintf(reason, reason_len, "the last run's verify flush is still marked in flight");
		return -EBUSY;
	}
	v->next_flush_ns = mono_ns() + v->cfg->flush_interval_ns;
	v->flush_retry_ns = v->flush_backoff_ns = 0;  /* a new start asks at once */
	v->closing = false;                           /* see dev_verify_finish */
	int r = verify_map_dirty(&v->map);
	if (r < 0) {
		snprintf(reason, reason_len, "cannot mark the verify state in use: %s", strerror(-r));
		return r;
	}
	return 0;
}
