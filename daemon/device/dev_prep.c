// SPDX-License-Identifier: GPL-2.0-only
/*
 * Zero, then salt, whole block devices (ACT's act_prep).  One thread and one
 * io_uring drive every device: the work is bandwidth-bound, and each device
 * keeps PREP_DEPTH writes of PREP_BLOCK bytes in flight, which saturates
 * any SSD while costing one core at most for the random data.
 */
#include "dev_prep.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <systemd/sd-daemon.h>

#include "base/log.h"
#include "dev_path.h"
#include "workload/workload.h"

#define PREP_BLOCK (1u << 20)
#define PREP_DEPTH 8u
#define PREP_STAMP_EVERY 4096u
#define PREP_STAMP_BYTES 16u
#define PREP_LOG_EVERY_NS (UINT64_C(5) * 1000000000)
#define PREP_STATUS_EVERY_NS UINT64_C(1000000000)
/* Asked of systemd at each status: well beyond the next one. */
#define PREP_EXTEND_USEC (UINT64_C(30) * 1000000)

enum prep_phase { PHASE_ZERO, PHASE_SALT, PHASE_DONE };

struct prep_slot {
	uint64_t offset;
	uint32_t len;
	uint32_t done;          /* bytes of a short write already written */
	const uint8_t *buf;
};

struct prep_dev {
	const char *path;
	int fd;
	uint64_t size;
	enum prep_phase phase;
	uint64_t issued;        /* next offset to write in this phase */
	uint64_t written;       /* bytes written in this phase */
	unsigned inflight;
	uint64_t phase_start_ns;
	uint64_t mark_ns, mark_bytes; /* for the rate in progress lines */
	struct prep_slot slots[PREP_DEPTH];
	unsigned free_slots[PREP_DEPTH];
	unsigned n_free;
	uint8_t *salt;          /* PREP_DEPTH blocks of random data */
	uint64_t rng;
};

struct prep {
	struct prep_dev *devs;
	size_t n;
	struct io_uring ring;
	bool ring_ready;
	uint8_t *zeros;
	uint64_t start_ns;
	int error;
	char *err;
	size_t errlen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *state)
{
	/* xorshift64*: incompressible enough for a drive, and fast. */
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

static void fill_random(uint8_t *buf, size_t len, uint64_t *rng)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = rng_next(rng);
		memcpy(buf + i, &v, 8);
	}
}

/*
 * The salt buffers are filled with random data once; each write then
 * stamps every 4 KiB with its offset and a fresh random word, so no two
 * blocks of the device are alike (nothing for deduplication) and none
 * compresses, at a 256th of the cost of new random data per write: one
 * core keeps up with several NVMe drives.
 */
static void stamp(uint8_t *buf, uint32_t len, uint64_t offset, uint64_t *rng)
{
	for (uint32_t o = 0; o + PREP_STAMP_BYTES <= len; o += PREP_STAMP_EVERY) {
		uint64_t words[2] = { offset + o, rng_next(rng) };
		memcpy(buf + o, words, sizeof(words));
	}
}

static const char *phase_verb(enum prep_phase p)
{
	return p == PHASE_ZERO ? "zeroing" : p == PHASE_SALT ? "salting" : "done";
}

static void mib_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (UINT64_C(1) << 40))
		snprintf(buf, len, "%.2f TiB", bytes / (double)(UINT64_C(1) << 40));
	else if (bytes >= (UINT64_C(1) << 30))
		snprintf(buf, len, "%.2f GiB", bytes / (double)(UINT64_C(1) << 30));
	else
		snprintf(buf, len, "%.1f MiB", bytes / (double)(1u << 20));
}

static void eta_text(double seconds, char *buf, size_t len)
{
	uint64_t s = seconds > 0 ? (uint64_t)(seconds + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%" PRIu64 "s", s);
}

static unsigned percent(const struct prep_dev *d)
{
	return d->size ? (unsigned)(d->written * 100 / d->size) : 100;
}

static void log_progress(struct prep_dev *d, uint64_t now)
{
	char done[32], total[32], eta[32];
	double secs = (now - d->mark_ns) / 1e9;
	double rate = secs > 0 ? (d->written - d->mark_bytes) / secs : 0;
	/* What is left: the rest of this phase, and all of salting after zeroing. */
	uint64_t left = d->size - d->written + (d->phase == PHASE_ZERO ? d->size : 0);

	mib_text(d->written, done, sizeof(done));
	mib_text(d->size, total, sizeof(total));
	eta_text(rate > 0 ? left / rate : 0, eta, sizeof(eta));
	log_info("prep %s: %s %u%% (%s of %s) at %.0f MiB/s, about %s left", d->path,
		 phase_verb(d->phase), percent(d), done, total, rate / (1 << 20), eta);
	d->mark_ns = now;
	d->mark_bytes = d->written;
}

/* "/dev/loop3 zeroing 37%, /dev/loop4 done" */
static void summary(const struct prep *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->n && off < len; i++) {
		const struct prep_dev *d = &p->devs[i];
		int n = d->phase == PHASE_DONE
				? snprintf(buf + off, len - off, "%s%s done", i ? ", " : "", d->path)
				: snprintf(buf + off, len - off, "%s%s %s %u%%", i ? ", " : "",
					   d->path, phase_verb(d->phase), percent(d));
		off += n > 0 ? (size_t)n : len;
	}
}

static void notify_status(const struct prep *p)
{
	char status[1024];
	uint64_t watchdog_usec = 0;

	summary(p, status, sizeof(status));
	sd_notifyf(0, "STATUS=prep: %s\nEXTEND_TIMEOUT_USEC=%" PRIu64, status, PREP_EXTEND_USEC);
	if (sd_watchdog_enabled(0, &watchdog_usec) > 0)
		sd_notify(0, "WATCHDOG=1");
}

/* The progress to soakd (status, and the control socket answered);
 * false: stop now. */
static bool report_progress(const struct prep *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct prep_dev *d = &p->devs[i];
		if (d->phase == PHASE_DONE)
			continue;
		struct workload_progress wp = {
			.target = d->path,
			.what = d->phase == PHASE_ZERO ? "prep (zeroing, then salting)" : "prep (salting)",
			.done = d->written + (d->phase == PHASE_SALT ? d->size : 0),
			.total = 2 * d->size, .unit = "bytes" };
		return workload_progress(&wp);
	}
	struct workload_progress wp = { .what = "prep", .unit = "bytes" };
	return workload_progress(&wp);
}

static void fail(struct prep *p, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct prep *p, int error, const char *fmt, ...)
{
	va_list ap;

	if (p->error)
		return;
	p->error = error;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
}

static int open_device(struct prep_dev *d, char *err, size_t errlen)
{
	struct stat st;
	int lbs = 512;

	/* d->fd: opened by dev_safety_open, O_EXCL, which holds the device
	 * against mounts and mkfs while we write. */
	if (fstat(d->fd, &st) < 0 || !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s is not a block device: prep works on whole block devices "
				      "or partitions", d->path);
		return -ENOTBLK;
	}
	if (ioctl(d->fd, BLKGETSIZE64, &d->size) < 0 || ioctl(d->fd, BLKSSZGET, &lbs) < 0) {
		snprintf(err, errlen, "cannot read the size of %s: %s", d->path, strerror(errno));
		return -errno;
	}
	if (d->size % (uint64_t)lbs) {
		snprintf(err, errlen, "%s: size %" PRIu64 " is not a multiple of its %d-byte blocks",
			 d->path, d->size, lbs);
		return -EINVAL;
	}
	if (posix_memalign((void **)&d->salt, 4096, (size_t)PREP_DEPTH * PREP_BLOCK)) {
		d->salt = NULL;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < PREP_DEPTH; i++)
		d->free_slots[i] = PREP_DEPTH - 1 - i;
	d->n_free = PREP_DEPTH;
	if (getrandom(&d->rng, sizeof(d->rng), 0) != sizeof(d->rng))
		d->rng = now_ns();
	d->rng |= 1;            /* xorshift must not start at 0 */
	fill_random(d->salt, (size_t)PREP_DEPTH * PREP_BLOCK, &d->rng);
	return 0;
}

static void queue_write(struct prep *p, size_t dev_index, unsigned slot_index)
{
	struct prep_dev *d = &p->devs[dev_index];
	struct prep_slot *s = &d->slots[slot_index];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);

	/* The ring holds PREP_DEPTH entries per device: never full here. */
	io_uring_prep_write(sqe, d->fd, s->buf + s->done, s->len - s->done, s->offset + s->done);
	io_uring_sqe_set_data64(sqe, (uint64_t)dev_index << 8 | slot_index);
}

static void issue(struct prep *p, size_t dev_index)
{
	struct prep_dev *d = &p->devs[dev_index];

	while (!p->error && d->phase != PHASE_DONE && d->n_free && d->issued < d->size) {
		unsigned slot_index = d->free_slots[--d->n_free];
		struct prep_slot *s = &d->slots[slot_index];
		uint64_t left = d->size - d->issued;

		s->offset = d->issued;
		s->len = left < PREP_BLOCK ? (uint32_t)left : PREP_BLOCK;
		s->done = 0;
		if (d->phase == PHASE_ZERO) {
			s->buf = p->zeros;
		} else {
			uint8_t *buf = d->salt + (size_t)slot_index * PREP_BLOCK;
			stamp(buf, s->len, s->offset, &d->rng);
			s->buf = buf;
		}
		d->issued += s->len;
		d->inflight++;
		queue_write(p, dev_index, slot_index);
	}
}

static void complete(struct prep *p, uint64_t user_data, int res)
{
	size_t dev_index = (size_t)(user_data >> 8);
	unsigned slot_index = (unsigned)(user_data & 0xff);
	struct prep_dev *d = &p->devs[dev_index];
	struct prep_slot *s = &d->slots[slot_index];

	if (res == -EINTR || res == -EAGAIN) {
		queue_write(p, dev_index, slot_index);
		return;
	}
	if (res <= 0) {
		fail(p, res < 0 ? res : -EIO, "prep of %s failed: write of %u bytes at offset %" PRIu64
		     " %s: %s", d->path, s->len - s->done, s->offset + s->done,
		     res < 0 ? "failed" : "wrote nothing", strerror(res < 0 ? -res : EIO));
	} else if (s->done + (uint32_t)res < s->len) {
		/* Short write: send the rest. */
		s->done += (uint32_t)res;
		d->written += (uint32_t)res;
		queue_write(p, dev_index, slot_index);
		return;
	} else {
		d->written += (uint32_t)res;
	}
	d->inflight--;
	d->free_slots[d->n_free++] = slot_index;
}

/* Ends a phase once all its writes are in: flush the drive's cache, say so. */
static void advance(struct prep *p, struct prep_dev *d, uint64_t now)
{
	char size[32];

	if (d->phase == PHASE_DONE || d->inflight || d->issued < d->size || p->error)
		return;
	if (fdatasync(d->fd) < 0) {
		fail(p, -errno, "prep of %s failed: cannot flush it: %s", d->path, strerror(errno));
		return;
	}
	mib_text(d->size, size, sizeof(size));
	double secs = (now - d->phase_start_ns) / 1e9;
	log_info("prep %s: %s %s in %.1f s (%.0f MiB/s)", d->path,
		 d->phase == PHASE_ZERO ? "zeroed" : "salted", size, secs,
		 secs > 0 ? d->size / secs / (1 << 20) : 0.0);
	if (d->phase == PHASE_ZERO) {
		d->phase = PHASE_SALT;
		d->issued = d->written = 0;
		d->phase_start_ns = d->mark_ns = now;
		d->mark_bytes = 0;
		log_info("prep %s: salting %s with random data", d->path, size);
	} else {
		d->phase = PHASE_DONE;
		log_info("prep %s: done: zeroed and salted in %.1f s", d->path,
			 (now - p->start_ns) / 1e9);
	}
}

static bool all_done(const struct prep *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->devs[i].phase != PHASE_DONE)
			return false;
	return true;
}

static unsigned inflight(const struct prep *p)
{
	unsigned n = 0;
	for (size_t i = 0; i < p->n; i++)
		n += p->devs[i].inflight;
	return n;
}

static int run(struct prep *p)
{
	uint64_t next_log = p->start_ns + PREP_LOG_EVERY_NS;
	uint64_t next_status = p->start_ns;

	for (;;) {
		uint64_t now = now_ns();

		if (!report_progress(p) && !p->error) {
			char where[768];
			summary(p, where, sizeof(where));
			fail(p, -EINTR, "prep interrupted: soakd is stopping (%s): what is not done is left "
			     "partly written", where);
		}
		for (size_t i = 0; i < p->n; i++) {
			advance(p, &p->devs[i], now);
			issue(p, i);
		}
		if (now >= next_status || all_done(p)) {
			notify_status(p);
			next_status = now + PREP_STATUS_EVERY_NS;
		}
		if (now >= next_log && !p->error) {
			for (size_t i = 0; i < p->n; i++)
				if (p->devs[i].phase != PHASE_DONE)
					log_progress(&p->devs[i], now);
			next_log = now + PREP_LOG_EVERY_NS;
		}
		if (inflight(p) == 0 && (p->error || all_done(p)))
			return p->error;

		uint64_t wait = next_status > now ? next_status - now : 0;
		struct __kernel_timespec ts = { .tv_sec = (long long)(wait / 1000000000u),
						.tv_nsec = (long long)(wait % 1000000000u) };
		struct io_uring_cqe *cqe;
		int r = io_uring_submit_and_wait_timeout(&p->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			fail(p, r, "prep failed: io_uring: %s", strerror(-r));
			/* Nothing more will complete that we could wait for. */
			return p->error;
		}
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&p->ring, head, cqe) {
			complete(p, cqe->user_data, cqe->res);
			seen++;
		}
		io_uring_cq_advance(&p->ring, seen);
	}
}

int dev_prep(const struct target_config *targets, size_t n, enum dev_safety_via via, char *err,
	     size_t errlen)
{
	struct prep p = { .n = n, .err = err, .errlen = errlen };
	int r = 0;

	if (n == 0)
		return 0;
	if (n > CONFIG_MAX_TARGETS) {
		snprintf(err, errlen, "at most %d devices can be prepped at once", CONFIG_MAX_TARGETS);
		return -E2BIG;
	}
	/* Every device is checked, and held, before any is written. */
	int fds[CONFIG_MAX_TARGETS];
	dev_t seen[CONFIG_MAX_TARGETS];
	size_t held = 0;
	for (size_t i = 0; i < n; i++, held++) {
		struct dev_path path;
		r = dev_path_resolve(targets[i].path, targets[i].allow_unsafe_path, &path, err,
				     errlen);
		if (r < 0)
			goto release;
		if (path.fd < 0 || !S_ISBLK(path.st.st_mode)) {
			snprintf(err, errlen, "%s is not a block device: prep works on whole block "
					      "devices or partitions", targets[i].path);
			r = path.fd < 0 ? -ENOENT : -ENOTBLK;
			dev_path_close(&path);
			goto release;
		}
		seen[i] = path.st.st_rdev;
		for (size_t j = 0; j < i; j++)
			if (seen[j] == path.st.st_rdev) {
				snprintf(err, errlen, "%s and %s are the same device", targets[j].path,
					 targets[i].path);
				dev_path_close(&path);
				r = -EINVAL;
				goto release;
			}
		fds[i] = dev_safety_open(targets[i].path, path.fd, targets[i].destroy_data, via,
					 O_RDWR | O_DIRECT, err, errlen);
		dev_path_close(&path);
		if (fds[i] < 0) {
			r = fds[i];
			goto release;
		}
	}

	p.devs = calloc(n, sizeof(*p.devs));
	if (!p.devs || posix_memalign((void **)&p.zeros, 4096, PREP_BLOCK)) {
		/* The descriptors are still in fds: release closes them, not
		 * out (p.devs holds none yet, and its zeroed fds are stdin). */
		free(p.devs);
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto release;
	}
	memset(p.zeros, 0, PREP_BLOCK);
	for (size_t i = 0; i < n; i++) {
		p.devs[i] = (struct prep_dev){ .path = targets[i].path, .fd = fds[i] };
		fds[i] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		r = open_device(&p.devs[i], err, errlen);
		if (r < 0)
			goto out;
	}
	r = io_uring_queue_init((unsigned)(n * PREP_DEPTH), &p.ring, 0);
	if (r < 0) {
		snprintf(err, errlen, "cannot set up io_uring for prep: %s", strerror(-r));
		goto out;
	}
	p.ring_ready = true;

	p.start_ns = now_ns();
	for (size_t i = 0; i < n; i++) {
		struct prep_dev *d = &p.devs[i];
		char size[32];
		mib_text(d->size, size, sizeof(size));
		d->phase_start_ns = d->mark_ns = p.start_ns;
		log_info("prep %s: zeroing %s (%" PRIu64 " bytes), then salting it with random data",
			 d->path, size, d->size);
	}
	r = run(&p);
out:
	if (p.ring_ready)
		io_uring_queue_exit(&p.ring);
	for (size_t i = 0; p.devs && i < n; i++) {
		if (p.devs[i].fd >= 0)
			close(p.devs[i].fd);
		free(p.devs[i].salt);
	}
	free(p.devs);
	free(p.zeros);
release:
	for (size_t i = 0; i < held; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

int dev_prep_workload(const struct workload_config *cfg, uint64_t which, char *err, size_t errlen)
{
	struct target_config devices[CONFIG_MAX_TARGETS];
	size_t n = 0;

	if (!cfg->prep || !which)
		return 0;
	for (size_t i = 0; i < cfg->n_targets && n < CONFIG_MAX_TARGETS; i++) {
		struct dev_path path;
		if (i >= 64 || !(which & (UINT64_C(1) << i)))
			continue;
		int r = dev_path_resolve(cfg->targets[i].path, cfg->targets[i].allow_unsafe_path,
					 &path, err, errlen);
		if (r < 0)
			return r;
		/* Regular files are laid out with random data when created. */
		if (path.fd >= 0 && S_ISBLK(path.st.st_mode))
			devices[n++] = cfg->targets[i];
		dev_path_close(&path);
	}
	if (n == 0) {
		log_info("workload %s: prep: no block devices among its targets, nothing to do",
			 cfg->name);
		return 0;
	}
	return dev_prep(devices, n, DEV_SAFETY_VIA_CONFIG, err, errlen);
}
