// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host sampler (host.h): files opened once, read with pread at every
 * tick, two readings turned into the interval's shares and rates.
 *
 * Percentages of CPU are of all CPUs' time over the interval (so they add
 * up to at most 100 whatever the number of CPUs), from /proc/stat's ticks;
 * soakd's own share is its getrusage() time over the same total.  PSI is
 * the share of the interval some (or all) non-idle tasks stalled, from the
 * cumulative "total" microseconds.  A device's utilisation is the share of
 * the interval it had I/O in flight (io_ticks), its queue depth the
 * average number in flight (time_in_queue over the interval).
 */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include "base/log.h"
#include "device/dev_facts.h"
#include "rundump.h"
#include "device/dev_sys.h"
#include "workload/workload.h"

#include "host_parse.h"

#define HOST_READ_MAX (64 * 1024)

enum { PSI_CPU, PSI_MEM, PSI_IO, PSI_N };

struct host_dev {
	dev_t devno;
	char name[64];
	int stat_fd;
	struct host_blkstat prev;
	bool have_prev;
	int nvme_fd;                 /* -1: not an NVMe drive, or not open */
	uint64_t nvme_next_ns;
	struct host_nvme_smart smart;
	bool have_smart;
	bool seen;                   /* host_watch_workloads: still a target's */
};

struct host_reading {
	uint64_t mono_ns;
	struct host_cpu_ticks cpu;
	bool have_cpu;
	uint64_t self_cpu_ns;
	struct host_psi psi[PSI_N];
	bool have_psi[PSI_N];
	struct host_netdev net[HOST_MAX_IFACES];
	size_t n_net;
	uint64_t retrans;
	bool have_retrans;
};

struct host {
	char sysfs[256];
	int stat_fd, meminfo_fd, netdev_fd, snmp_fd;
	int psi_fd[PSI_N];
	struct host_dev devs[HOST_MAX_DEVS];
	size_t n_devs;
	bool devs_full_logged;
	struct host_reading prev;
	bool have_prev;
	long clk_tck;
	struct rundump *summary, *slices;  /* host_fold */
	uint64_t folded_through_ns;        /* run time the last record folded ended */
	uint64_t slice_ns;
	char buf[HOST_READ_MAX];
};

static int open_at(const char *root, const char *name)
{
	char path[512];

	if (snprintf(path, sizeof(path), "%s/%s", root, name) >= (int)sizeof(path))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

/* The file's text in h->buf; NULL when it cannot be read. */
static const char *reread(struct host *h, int fd)
{
	if (fd < 0)
		return NULL;
	ssize_t n = pread(fd, h->buf, sizeof(h->buf) - 1, 0);
	if (n < 0)
		return NULL;
	h->buf[n] = '\0';
	/* Longer than the buffer (/proc/net/dev of a host with hundreds of
	 * interfaces): its whole lines, not a last one cut short, which
	 * would make the parser refuse them all. */
	if ((size_t)n == sizeof(h->buf) - 1) {
		char *nl = strrchr(h->buf, '\n');
		if (nl)
			nl[1] = '\0';
	}
	return h->buf;
}

int host_new(const char *proc, const char *sysfs, struct host **ret)
{
	static const char *const psi[PSI_N] = { "pressure/cpu", "pressure/memory", "pressure/io" };
	struct host *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	snprintf(h->sysfs, sizeof(h->sysfs), "%s", sysfs);
	h->stat_fd = open_at(proc, "stat");
	h->meminfo_fd = open_at(proc, "meminfo");
	h->netdev_fd = open_at(proc, "net/dev");
	h->snmp_fd = open_at(proc, "net/snmp");
	for (size_t i = 0; i < PSI_N; i++)
		h->psi_fd[i] = open_at(proc, psi[i]);
	h->clk_tck = sysconf(_SC_CLK_TCK);
	if (h->clk_tck <= 0)
		h->clk_tck = 100;
	*ret = h;
	return 0;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void host_free(struct host *h)
{
	if (!h)
		return;
	close_fd(h->stat_fd);
	close_fd(h->meminfo_fd);
	close_fd(h->netdev_fd);
	close_fd(h->snmp_fd);
	for (size_t i = 0; i < PSI_N; i++)
		close_fd(h->psi_fd[i]);
	for (size_t i = 0; i < h->n_devs; i++) {
		close_fd(h->devs[i].stat_fd);
		close_fd(h->devs[i].nvme_fd);
	}
	rundump_free(h->summary);
	rundump_free(h->slices);
	free(h);
}

/* An NVMe namespace's whole disk, opened for the admin command and checked
 * on the descriptor to be the device sysfs named. */
static int open_nvme(struct host *h, dev_t devno)
{
	char name[64], path[80];
	dev_t disk;
	struct stat st;

	if (devsys_whole_disk(h->sysfs, devno, &disk) < 0 ||
	    devsys_name(h->sysfs, disk, name, sizeof(name)) < 0 || strncmp(name, "nvme", 4) != 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/%s", name);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != disk) {
		close(fd);
		return -1;
	}
	return fd;
}

int host_watch_device(struct host *h, dev_t devno, const char *name)
{
	char dir[512];

	for (size_t i = 0; i < h->n_devs; i++)
		if (h->devs[i].devno == devno) {
			h->devs[i].seen = true;
			return 0;
		}
	if (h->n_devs == HOST_MAX_DEVS)
		return -E2BIG;
	int r = devsys_block_dir(h->sysfs, devno, dir, sizeof(dir));
	if (r < 0)
		return r;
	int fd = open_at(dir, "stat");
	if (fd < 0)
		return -errno;
	struct host_dev *d = &h->devs[h->n_devs++];
	memset(d, 0, sizeof(*d));
	d->devno = devno;
	d->seen = true;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->stat_fd = fd;
	d->nvme_fd = strncmp(name, "nvme", 4) == 0 ? open_nvme(h, devno) : -1;
	return 0;
}

static void drop_dev(struct host *h, size_t i)
{
	close_fd(h->devs[i].stat_fd);
	close_fd(h->devs[i].nvme_fd);
	memmove(&h->devs[i], &h->devs[i + 1], (h->n_devs - i - 1) * sizeof(h->devs[0]));
	h->n_devs--;
}

/* Calls fn for each block device under the workloads' targets. */
static void each_target_dev(struct workload *const *workloads, size_t n,
			    void (*fn)(struct host *h, const struct dev_facts *f), struct host *h)
{
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; workloads[i] && s < workloads[i]->n_streams; s++) {
			const struct dev_facts *f = workloads[i]->streams[s].facts;
			if (f && f->have_block)
				fn(h, f);
		}
}

static void mark_seen(struct host *h, const struct dev_facts *f)
{
	for (size_t i = 0; i < h->n_devs; i++)
		if (h->devs[i].devno == makedev(f->block.major, f->block.minor))
			h->devs[i].seen = true;
}

static void watch(struct host *h, const struct dev_facts *f)
{
	if (host_watch_device(h, makedev(f->block.major, f->block.minor), f->block.name) !=
	    -E2BIG || h->devs_full_logged)
		return;
	h->devs_full_logged = true;
	log_warning("host: the targets are on more than %d block devices: %s and any after it "
		    "have no device figures in the host records", HOST_MAX_DEVS, f->block.name);
}

void host_watch_workloads(struct host *h, struct workload *const *workloads, size_t n)
{
	/* A device no workload uses any more (a reload removed it, a new
	 * run left it) is no target's: its figures would count in the
	 * targets' utilisation, and it would keep a place from one that is.
	 * Dropped first, so the new ones find the places free. */
	for (size_t i = 0; i < h->n_devs; i++)
		h->devs[i].seen = false;
	each_target_dev(workloads, n, mark_seen, h);
	for (size_t i = h->n_devs; i-- > 0;)
		if (!h->devs[i].seen)
			drop_dev(h, i);
	if (h->n_devs < HOST_MAX_DEVS)
		h->devs_full_logged = false;   /* said again if it overflows again */
	each_target_dev(workloads, n, watch, h);
}

/* The SMART log by the admin command Get Log Page; -errno, and the
 * drive is not asked again if it refuses. */
static int read_smart(struct host_dev *d)
{
	uint8_t log[HOST_NVME_SMART_LEN];
	struct nvme_admin_cmd cmd = {
		.opcode = 0x02,                 /* Get Log Page */
		.nsid = 0xffffffff,             /* the controller as a whole */
		.addr = (uint64_t)(uintptr_t)log,
		.data_len = sizeof(log),
		/* NUMDL (dwords - 1) in bits 31:16, log identifier 02h. */
		.cdw10 = ((sizeof(log) / 4 - 1) << 16) | 0x02,
		/* The main thread waits for it: a controller that stalls
		 * under the soak must not hold the ticks (and the watchdog)
		 * for the kernel's default admin timeout, a minute. */
		.timeout_ms = HOST_NVME_TIMEOUT_MS,
	};

	memset(log, 0, sizeof(log));
	int status = ioctl(d->nvme_fd, NVME_IOCTL_ADMIN_CMD, &cmd);
	if (status != 0) {
		/* Negative: the kernel refused (errno); positive: the drive
		 * answered with that NVMe status.  Said once per drive: the
		 * results lack its SMART figures. */
		int r = status < 0 ? -errno : -EIO;
		if (status < 0)
			log_warning("%s: no NVMe SMART readings: Get Log Page refused (%s)%s",
				    d->name, strerror(-r), r == -EPERM || r == -EACCES
				    ? "; it needs CAP_SYS_ADMIN, which soakd.service's "
				      "CapabilityBoundingSet= leaves out (SECURITY.md)" : "");
		else
			log_warning("%s: no NVMe SMART readings: the drive answered Get Log Page "
				    "with status 0x%x", d->name, (unsigned)status);
		close(d->nvme_fd);
		d->nvme_fd = -1;
		/* The last reading is no longer current: the records leave
		 * the drive out rather than repeat it. */
		d->have_smart = false;
		return r;
	}
	d->have_smart = host_parse_nvme_smart(log, sizeof(log), &d->smart) == 0;
	return 0;
}

static void take_reading(struct host *h, struct host_reading *rd, uint64_t now_ns)
{
	const char *text;
	struct rusage ru;

	memset(rd, 0, sizeof(*rd));
	rd->mono_ns = now_ns;
	text = reread(h, h->stat_fd);
	rd->have_cpu = text && host_parse_stat(text, &rd->cpu) == 0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		rd->self_cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
				  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
	for (size_t i = 0; i < PSI_N; i++) {
		text = reread(h, h->psi_fd[i]);
		rd->have_psi[i] = text && host_parse_psi(text, &rd->psi[i]) == 0;
	}
	text = reread(h, h->netdev_fd);
	if (!text || host_parse_netdev(text, rd->net, HOST_MAX_IFACES, &rd->n_net) < 0)
		rd->n_net = 0;
	text = reread(h, h->snmp_fd);
	rd->have_retrans = text && host_parse_snmp_retrans(text, &rd->retrans) == 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? round(10000.0 * (double)part / (double)whole) / 100 : 0;
}

static uint64_t delta(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* A counter the kernel prints as 32 bits (a block device's io_ticks and
 * time_in_queue, "%u" ms): it wraps, about every 1.5 days of time in
 * queue at 32 in flight, and a wrap is not a reset. */
static uint64_t delta32(uint64_t now, uint64_t before)
{
	/* A wrap goes from near the top to near the bottom; a counter that
	 * steps back a little was reset, and counts nothing. */
	if (now < before && before <= UINT32_MAX && before - now > UINT32_MAX / 2)
		return (uint32_t)((uint32_t)now - (uint32_t)before);
	return delta(now, before);
}

static json_t *real2(double v)
{
	return json_real(round(v * 100) / 100);
}

static json_t *cpu_json(struct host *h, const struct host_reading *a, const struct host_reading *b)
{
	if (!a->have_cpu || !b->have_cpu)
		return NULL;
	uint64_t total = delta(host_cpu_total(&b->cpu), host_cpu_total(&a->cpu));
	uint64_t total_ns = total * (1000000000 / (uint64_t)h->clk_tck);
	return json_pack("{s:o,s:o,s:o,s:o,s:o}",
			 "user", json_real(pct(delta(b->cpu.user + b->cpu.nice,
						     a->cpu.user + a->cpu.nice), total)),
			 "system", json_real(pct(delta(b->cpu.system + b->cpu.irq + b->cpu.softirq,
						       a->cpu.system + a->cpu.irq + a->cpu.softirq),
						 total)),
			 "iowait", json_real(pct(delta(b->cpu.iowait, a->cpu.iowait), total)),
			 "steal", json_real(pct(delta(b->cpu.steal, a->cpu.steal), total)),
			 "soakd", json_real(pct(delta(b->self_cpu_ns, a->self_cpu_ns), total_ns)));
}

static json_t *psi_json(const struct host_reading *a, const struct host_reading *b)
{
	static const char *const some[PSI_N] = { "cpu_some", "mem_some", "io_some" };
	static const char *const full[PSI_N] = { NULL, "mem_full", "io_full" };
	uint64_t us = (b->mono_ns - a->mono_ns) / 1000;
	json_t *o = json_object();

	for (size_t i = 0; o && i < PSI_N; i++) {
		if (!a->have_psi[i] || !b->have_psi[i])
			continue;
		json_object_set_new(o, some[i], json_real(pct(delta(b->psi[i].some_us,
								     a->psi[i].some_us), us)));
		if (full[i] && b->psi[i].has_full)
			json_object_set_new(o, full[i],
					    json_real(pct(delta(b->psi[i].full_us, a->psi[i].full_us),
							  us)));
	}
	return o;
}

static json_t *disks_json(struct host *h, double secs)
{
	json_t *o = json_object();
	double ms = secs * 1000;

	for (size_t i = 0; o && i < h->n_devs; i++) {
		struct host_dev *d = &h->devs[i];
		struct host_blkstat now;
		const char *text = reread(h, d->stat_fd);
		if (!text || host_parse_blkstat(text, &now) < 0) {
			/* Gone (its sysfs file answers ENODEV once the disk is
			 * removed): watched again from a new first reading if
			 * it comes back under the same number. */
			drop_dev(h, i--);
			continue;
		}
		if (d->have_prev) {
			double util = delta32(now.io_ticks_ms, d->prev.io_ticks_ms) / ms * 100;
			json_object_set_new(o, d->name, json_pack("{s:o,s:o,s:o,s:o}",
				"util_pct", real2(util > 100 ? 100 : util),
				"queue_depth", real2(delta32(now.time_in_queue_ms,
							   d->prev.time_in_queue_ms) / ms),
				"read_Bps", real2(delta(now.read_sectors, d->prev.read_sectors) *
						  512.0 / secs),
				"write_Bps", real2(delta(now.write_sectors, d->prev.write_sectors) *
						   512.0 / secs)));
		}
		d->prev = now;
		d->have_prev = true;
	}
	return o;
}

static json_t *net_json(const struct host_reading *a, const struct host_reading *b, double secs)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < b->n_net; i++)
		for (size_t k = 0; k < a->n_net; k++)
			if (strcmp(a->net[k].name, b->net[i].name) == 0) {
				json_object_set_new(o, b->net[i].name, json_pack("{s:o,s:o}",
					"rx_Bps", real2(delta(b->net[i].rx_bytes,
							      a->net[k].rx_bytes) / secs),
					"tx_Bps", real2(delta(b->net[i].tx_bytes,
							      a->net[k].tx_bytes) / secs)));
				break;
			}
	return o;
}

static json_t *nvme_json(struct host *h, uint64_t now_ns)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < h->n_devs; i++) {
		struct host_dev *d = &h->devs[i];
		if (d->nvme_fd >= 0 && now_ns >= d->nvme_next_ns) {
			read_smart(d);
			d->nvme_next_ns = now_ns + HOST_NVME_EVERY_NS;
		}
		if (d->have_smart)
			json_object_set_new(o, d->name, json_pack("{s:i,s:I,s:i}",
				"temp_c", d->smart.temp_c, "media_errors",
				(json_int_t)(d->smart.media_errors > INT64_MAX ? INT64_MAX
									     : d->smart.media_errors),
				"pct_used", (int)d->smart.pct_used));
	}
	return o;
}

json_t *host_sample(struct host *h, uint64_t now_ns, int64_t run_start_ns, int64_t wall_offset_ns)
{
	struct host_reading now;
	struct host_mem mem;
	json_t *rec = NULL;

	take_reading(h, &now, now_ns);
	if (h->have_prev && now_ns > h->prev.mono_ns) {
		const struct host_reading *a = &h->prev;
		double secs = (now_ns - a->mono_ns) / 1e9;
		const char *text = reread(h, h->meminfo_fd);
		bool have_mem = text && host_parse_meminfo(text, &mem) == 0;
		rec = json_pack("{s:s,s:I,s:I,s:I,s:I}", "type", "host",
				"start_ns", (json_int_t)mono_since(run_start_ns, a->mono_ns),
				"end_ns", (json_int_t)mono_since(run_start_ns, now_ns),
				"wall_start_ns", (json_int_t)((int64_t)a->mono_ns + wall_offset_ns),
				"wall_end_ns", (json_int_t)((int64_t)now_ns + wall_offset_ns));
		json_t *cpu = cpu_json(h, a, &now);
		if (rec && cpu)
			json_object_set_new(rec, "cpu", cpu);
		if (rec)
			json_object_set_new(rec, "psi", psi_json(a, &now));
		if (rec && have_mem)
			json_object_set_new(rec, "mem", json_pack("{s:I,s:I}",
				"available_bytes", (json_int_t)mem.available,
				"used_bytes", (json_int_t)delta(mem.total, mem.available)));
		if (rec)
			json_object_set_new(rec, "disks", disks_json(h, secs));
		if (rec)
			json_object_set_new(rec, "net", net_json(a, &now, secs));
		if (rec && a->have_retrans && now.have_retrans)
			json_object_set_new(rec, "tcp", json_pack("{s:I}", "retrans",
				(json_int_t)delta(now.retrans, a->retrans)));
		if (rec)
			json_object_set_new(rec, "nvme", nvme_json(h, now_ns));
	} else {
		/* The devices' first reading, so the next sample has rates. */
		json_decref(disks_json(h, 1));
		json_decref(nvme_json(h, now_ns));
	}
	h->prev = now;
	h->have_prev = true;
	if (rec)
		host_fold(h, rec);
	return rec;
}

void host_pause(struct host *h)
{
	if (!h)
		return;
	h->have_prev = false;
	for (size_t i = 0; i < h->n_devs; i++)
		h->devs[i].have_prev = false;
}

void host_begin_run(struct host *h, uint64_t slice_ns)
{
	if (!h)
		return;
	host_pause(h);
	rundump_free(h->summary);
	rundump_free(h->slices);
	h->summary = h->slices = NULL;
	h->folded_through_ns = 0;
	h->slice_ns = slice_ns;
}

void host_fold(struct host *h, json_t *rec)
{
	if (!h)
		return;
	if (!h->summary)
		h->summary = rundump_new(RUNDUMP_JSON, NULL);
	if (!h->slices && h->slice_ns)
		h->slices = rundump_new(RUNDUMP_REPORT,
					&(struct rundump_filter){ .slice_ns = h->slice_ns });
	if (h->summary)
		rundump_add(h->summary, rec);
	if (h->slices)
		rundump_add(h->slices, rec);
	json_t *end = json_object_get(rec, "end_ns");
	if (json_is_integer(end) && json_integer_value(end) > 0 &&
	    (uint64_t)json_integer_value(end) > h->folded_through_ns)
		h->folded_through_ns = (uint64_t)json_integer_value(end);
}

json_t *host_checkpoint(const struct host *h)
{
	json_t *summary = h && h->summary ? rundump_host_state(h->summary) : NULL;
	if (!summary)
		return NULL;
	json_t *slices = h->slices ? rundump_host_state(h->slices) : NULL;
	return json_pack("{s:o,s:o*,s:I}", "summary", summary, "slices", slices, "through_ns",
			 (json_int_t)h->folded_through_ns);
}

int host_restore(struct host *h, json_t *state)
{
	json_t *through = json_object_get(state, "through_ns");
	json_t *slices = json_object_get(state, "slices");
	int r;

	if (!h)
		return 0;
	if (!json_is_integer(through) || json_integer_value(through) < 0)
		return -EINVAL;
	if (!h->summary)
		h->summary = rundump_new(RUNDUMP_JSON, NULL);
	if (!h->slices && h->slice_ns)
		h->slices = rundump_new(RUNDUMP_REPORT,
					&(struct rundump_filter){ .slice_ns = h->slice_ns });
	if (!h->summary || (h->slice_ns && !h->slices))
		return -ENOMEM;
	r = rundump_host_restore(h->summary, json_object_get(state, "summary"));
	if (r == 0 && h->slices && slices)
		r = rundump_host_restore(h->slices, slices);
	if (r == 0)
		h->folded_through_ns = (uint64_t)json_integer_value(through);
	return r;
}

uint64_t host_folded_through(const struct host *h)
{
	return h ? h->folded_through_ns : 0;
}

void host_add_to_reply(const struct host *h, json_t *reply, bool report)
{
	const struct rundump *d = h ? (report ? h->slices : h->summary) : NULL;
	json_t *host = d && json_is_object(reply) ? rundump_host(d) : NULL;

	if (host)
		json_object_set_new(reply, "host", host);
}
