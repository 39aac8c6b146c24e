// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the probes watch: the block devices under the device workloads'
 * targets, as the block layer names them, and the TCP endpoints of object
 * workloads and of the config's "tcp_endpoints".
 */
#include "probes.h"
#include "probes_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "workload/workload.h"
#include "config/config_trace.h"
#include "config/obj_config.h"

#define SYSFS_DEV_BLOCK "/sys/dev/block"
#define STACK_MAX_DEPTH 8
#define KDEV_MINORBITS 20

struct kdev_list {
	__u32 *kdevs;
	size_t n, cap;
};

static __u32 kdev_of(dev_t dev)
{
	return ((__u32)major(dev) << KDEV_MINORBITS) | (__u32)minor(dev);
}

static int kdev_list_add(struct kdev_list *l, __u32 kdev)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->kdevs[i] == kdev)
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		__u32 *k = realloc(l->kdevs, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		l->kdevs = k;
		l->cap = cap;
	}
	l->kdevs[l->n++] = kdev;
	return 0;
}

/*
 * Requests are made to the bottom of a stack: a device-mapper or md device
 * (slaves/ in sysfs) passes its I/O down, and the block layer sees the
 * devices under it.  A loop device or a partition is itself what the block
 * layer sees (requests carry the partition).
 */
static int add_bottom_devices(dev_t dev, int depth, struct kdev_list *out)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool lower = false;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u/slaves", major(dev), minor(dev));
	dir = depth < STACK_MAX_DEPTH ? opendir(path) : NULL;
	while (dir && (de = readdir(dir)) && r == 0) {
		char devpath[PATH_MAX + 300];
		unsigned maj, min;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(devpath, sizeof(devpath), "%s/%s/dev", path, de->d_name);
		f = fopen(devpath, "re");
		if (!f)
			continue;
		if (fscanf(f, "%u:%u", &maj, &min) == 2) {
			lower = true;
			r = add_bottom_devices(makedev(maj, min), depth + 1, out);
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	if (r == 0 && !lower)
		r = kdev_list_add(out, kdev_of(dev));
	return r;
}

/* The block devices a target's I/O reaches, or why there are none. */
static int target_devices(const char *path, struct kdev_list *out, char *why, size_t len)
{
	struct stat st;
	dev_t dev;

	if (stat(path, &st) < 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		dev = st.st_rdev;
	} else if (S_ISREG(st.st_mode)) {
		dev = st.st_dev;
		if (major(dev) == 0) {
			snprintf(why, len, "%s: on a filesystem without a block device under it "
					   "(tmpfs, btrfs, overlay, NFS...)", path);
			return -ENODEV;
		}
	} else {
		snprintf(why, len, "%s: neither a block device nor a regular file", path);
		return -ENODEV;
	}
	return add_bottom_devices(dev, 0, out);
}

void probe_device_init(struct probe_device *d, __u32 kdev, __u32 slot)
{
	char link[PATH_MAX], path[128];
	ssize_t n;

	memset(d, 0, sizeof(*d));
	d->used = true;
	d->kdev = kdev;
	d->slot = slot;
	d->no_start = !probe_device_iostats(d);
	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u", kdev >> KDEV_MINORBITS,
		 kdev & ((1u << KDEV_MINORBITS) - 1));
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		const char *base;
		link[n] = '\0';
		base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
		snprintf(d->name, sizeof(d->name), "%.*s", (int)sizeof(d->name) - 1, base);
	} else {
		snprintf(d->name, sizeof(d->name), "%u:%u", kdev >> KDEV_MINORBITS,
			 kdev & ((1u << KDEV_MINORBITS) - 1));
	}
}

bool probe_device_iostats(const struct probe_device *d)
{
	char path[160], c = '1';
	unsigned maj = d->kdev >> KDEV_MINORBITS, min = d->kdev & ((1u << KDEV_MINORBITS) - 1);

	/* A partition's queue is its disk's. */
	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u/queue/iostats", maj, min);
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u/../queue/iostats", maj, min);
		f = fopen(path, "re");
	}
	if (!f)
		return true;   /* no queue of its own to say otherwise */
	if (fread(&c, 1, 1, f) != 1)
		c = '1';
	fclose(f);
	return c != '0';
}

int probe_blk_op_alloc(struct probe_blk_op *o)
{
	if (o->total)
		return 0;
	o->total = malloc(sizeof(*o->total));
	o->interval = malloc(sizeof(*o->interval));
	if (!o->total || !o->interval) {
		free(o->total);
		free(o->interval);
		o->total = o->interval = NULL;
		return -ENOMEM;
	}
	kstats_blk_init(o->total);
	kstats_blk_init(o->interval);
	return 0;
}

int probe_endpoint_alloc(struct probe_endpoint *e)
{
	if (e->total)
		return 0;
	e->total = malloc(sizeof(*e->total));
	e->interval = malloc(sizeof(*e->interval));
	if (!e->total || !e->interval) {
		free(e->total);
		free(e->interval);
		e->total = e->interval = NULL;
		return -ENOMEM;
	}
	kstats_tcp_init(e->total);
	kstats_tcp_init(e->interval);
	return 0;
}

static void note_unwatched(struct probes *p, const char *why)
{
	size_t off = strlen(p->unwatched);

	log_notice("block probes cannot watch %s", why);
	if (off + 3 < sizeof(p->unwatched))
		snprintf(p->unwatched + off, sizeof(p->unwatched) - off, "%s%.*s", off ? "; " : "",
			 (int)(sizeof(p->unwatched) - off - 3), why);
}

/* Every device workload's targets, resolved to slots [0, n_fixed_devs). */
static int resolve_targets(struct probes *p, struct kdev_list *all)
{
	const struct run_config *cfg = p->cfg;

	p->workloads = calloc(cfg->n_workloads ? cfg->n_workloads : 1, sizeof(*p->workloads));
	if (!p->workloads)
		return -ENOMEM;
	p->n_workloads = cfg->n_workloads;
	for (size_t i = 0; i < cfg->n_workloads; i++) {
		const struct workload_config *wc = &cfg->workloads[i];
		struct probe_workload *pw = &p->workloads[i];
		struct kdev_list mine = { 0 };

		if (wc->type != WORKLOAD_DEVICE)
			continue;
		for (size_t t = 0; t < wc->n_targets; t++) {
			char why[PATH_MAX + 128];
			int r = target_devices(wc->targets[t].path, &mine, why, sizeof(why));
			if (r == -ENOMEM) {
				free(mine.kdevs);
				return r;
			}
			if (r < 0)
				note_unwatched(p, why);
		}
		pw->slots = calloc(mine.n ? mine.n : 1, sizeof(*pw->slots));
		if (!pw->slots) {
			free(mine.kdevs);
			return -ENOMEM;
		}
		for (size_t k = 0; k < mine.n; k++) {
			size_t slot;
			if (kdev_list_add(all, mine.kdevs[k]) < 0) {
				free(mine.kdevs);
				return -ENOMEM;
			}
			for (slot = 0; all->kdevs[slot] != mine.kdevs[k]; slot++)
				;
			pw->slots[pw->n_slots++] = (__u32)slot;
		}
		free(mine.kdevs);
	}
	return 0;
}

static void label_endpoint(struct probe_endpoint *e)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	if (e->key.family == AF_INET) {
		inet_ntop(AF_INET, e->key.addr, addr, sizeof(addr));
		snprintf(e->label, sizeof(e->label), "%s:%u", addr, ntohs(e->key.port));
	} else {
		inet_ntop(AF_INET6, e->key.addr, addr, sizeof(addr));
		snprintf(e->label, sizeof(e->label), "[%s]:%u", addr, ntohs(e->key.port));
	}
}

int probes_watch_endpoint(struct probes *p, const struct sockaddr *sa, socklen_t len,
			  size_t owner)
{
	struct soak_tcp_key key = { 0 };
	int r = 0;

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;
		key.family = AF_INET;
		key.port = in->sin_port;
		memcpy(key.addr, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		key.family = AF_INET6;
		key.port = in6->sin6_port;
		memcpy(key.addr, &in6->sin6_addr, 16);
		/* The kernel side sees v4-mapped addresses as IPv4. */
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			key.family = AF_INET;
			memmove(key.addr, key.addr + 12, 4);
			memset(key.addr + 4, 0, 12);
		}
	} else {
		return -EAFNOSUPPORT;
	}
	if (!p)
		return 0;

	uint64_t bit = owner < 64 ? UINT64_C(1) << owner : 0;
	pthread_mutex_lock(p->eps_lock);
	for (size_t i = 0; i < p->n_eps; i++)
		if (memcmp(&p->eps[i].key, &key, sizeof(key)) == 0) {
			p->eps[i].owners |= bit;
			goto out;
		}
	if (p->n_eps == p->max_eps) {
		r = -ENOSPC;
		goto out;
	}
	struct probe_endpoint *e = &p->eps[p->n_eps];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->owners = bit;
	label_endpoint(e);
	r = probe_endpoint_map(p, e);
	if (r == 0)
		p->n_eps++;
out:
	pthread_mutex_unlock(p->eps_lock);
	return r;
}

/* Resolves host and port (numbers or names) and watches every address. */
static void watch_host(struct probes *p, const char *host, unsigned port, size_t owner,
		       const char *what)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char service[8];
	int r;

	/* A lookup may wait on DNS, on the main loop: none without probes,
	 * and the watchdog is pinged (prepare_progress) before each. */
	if (p->fam[PROBE_TCP].state == PROBE_UNAVAILABLE)
		return;
	workload_progress(&(struct workload_progress){ .target = host,
						       .what = "resolving an endpoint" });
	snprintf(service, sizeof(service), "%u", port);
	r = getaddrinfo(host, service, &hints, &res);
	if (r != 0) {
		log_warning("TCP probes will not watch %s: cannot resolve %s: %s", what, host,
			    gai_strerror(r));
		return;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		r = probes_watch_endpoint(p, ai->ai_addr, ai->ai_addrlen, owner);
		if (r == -ENOSPC) {
			log_warning("TCP probes will not watch %s: max_endpoints (%zu) are watched "
				    "already", what, p->max_eps);
			break;
		} else if (r < 0) {
			log_warning("TCP probes will not watch %s: %s", what, strerror(-r));
		}
	}
	freeaddrinfo(res);
}

/* "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT" into host, and port if given.
 * Returns 0, or -EINVAL. */
static int split_host_port(const char *text, size_t len, char *host, size_t hostlen,
			   unsigned *port)
{
	const char *end = text + len, *colon = NULL;
	const char *h = text;
	size_t n;

	if (len && text[0] == '[') {
		const char *close = memchr(text, ']', len);
		if (!close)
			return -EINVAL;
		h = text + 1;
		n = (size_t)(close - h);
		if (close + 1 < end && close[1] == ':')
			colon = close + 1;
	} else {
		colon = memchr(text, ':', len);
		if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			return -EINVAL;   /* a bare IPv6 address is not a host:port */
		n = colon ? (size_t)(colon - text) : len;
	}
	if (n == 0 || n >= hostlen)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	if (colon) {
		char digits[8];
		size_t dn = (size_t)(end - colon - 1);
		char *stop;
		unsigned long p;
		if (dn == 0 || dn >= sizeof(digits))
			return -EINVAL;
		memcpy(digits, colon + 1, dn);
		digits[dn] = '\0';
		p = strtoul(digits, &stop, 10);
		if (*stop || p == 0 || p > 65535)
			return -EINVAL;
		*port = (unsigned)p;
	}
	return 0;
}

/* Where an object workload's connections go: its endpoint URL's host and
 * port (the scheme's by default; the bucket's name in front with
 * virtual-host addressing), or connect_to's when set, as libcurl's
 * CURLOPT_CONNECT_TO does. */
static void watch_object_url(struct probes *p, size_t i, const char *url, bool named)
{
	const struct object_config *o = p->cfg->workloads[i].object;
	char host[TRACE_MAX_ENDPOINT_LEN], name[TRACE_MAX_ENDPOINT_LEN];
	const char *authority, *at;
	unsigned port;
	size_t n;

	port = strncmp(url, "https:", 6) == 0 ? 443 : 80;
	authority = strstr(url, "://");
	authority = authority ? authority + 3 : url;
	n = strcspn(authority, "/?#");
	at = memchr(authority, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - authority);
		authority = at + 1;
	}
	if (split_host_port(authority, n, host, sizeof(host), &port) < 0) {
		log_warning("TCP probes will not watch %s: cannot read its host and port",
			    url);
		return;
	}
	if (named && o->virtual_host && o->bucket) {
		int len = snprintf(name, sizeof(name), "%s.%s", o->bucket, host);
		if (len < 0 || (size_t)len >= sizeof(host))
			return;
		memcpy(host, name, (size_t)len + 1);
	}
	if (o->connect_to && *o->connect_to &&
	    split_host_port(o->connect_to, strlen(o->connect_to), host, sizeof(host), &port) < 0) {
		log_warning("TCP probes will not watch %s: cannot read connect_to \"%s\"",
			    url, o->connect_to);
		return;
	}
	watch_host(p, host, port, i, url);
}

/* Each of "endpoints" (a pool), or the single "endpoint".  Requests name
 * the first endpoint and connect to the others' own host and port
 * (obj_endpoints.c): only the first has the bucket's name in front. */
static void watch_object(struct probes *p, size_t i)
{
	const struct object_config *o = p->cfg->workloads[i].object;

	if (!o || !o->endpoint)
		return;
	if (!o->n_endpoints)
		watch_object_url(p, i, o->endpoint, true);
	for (size_t k = 0; k < o->n_endpoints; k++)
		watch_object_url(p, i, o->endpoints[k], k == 0);
}

static void watch_endpoints(struct probes *p)
{
	const struct trace_config *t = &p->cfg->trace;

	for (size_t i = 0; i < t->n_tcp_endpoints; i++) {
		char host[TRACE_MAX_ENDPOINT_LEN], err[TRACE_MAX_ENDPOINT_LEN + 100];
		unsigned port;
		if (trace_split_endpoint(t->tcp_endpoints[i], host, sizeof(host), &port, err,
					 sizeof(err)) == 0)
			watch_host(p, host, port, SIZE_MAX, t->tcp_endpoints[i]);
	}
	for (size_t i = 0; i < p->cfg->n_workloads; i++)
		if (p->cfg->workloads[i].type == WORKLOAD_OBJECT)
			watch_object(p, i);
}

void probes_workload_active(struct probes *p, size_t workload, bool active)
{
	struct probe_workload *pw;

	if (!p || workload >= p->n_workloads || p->workloads[workload].active == active)
		return;
	pw = &p->workloads[workload];
	pw->active = active;
	for (size_t k = 0; k < pw->n_slots; k++) {
		struct probe_device *d = &p->devs[pw->slots[k]];
		if (active)
			d->active_users++;
		else if (d->active_users)
			d->active_users--;
		probe_device_map(p, d, p->cfg->trace.all_devices || d->active_users > 0);
	}
}

/* The whole disk of a partition (kdev), or 0 when kdev is none. */
static __u32 disk_of(__u32 kdev)
{
	char path[160];
	unsigned maj, min;
	FILE *f;

	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u/partition", kdev >> KDEV_MINORBITS,
		 kdev & ((1u << KDEV_MINORBITS) - 1));
	if (access(path, F_OK) < 0)
		return 0;
	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u/../dev", kdev >> KDEV_MINORBITS,
		 kdev & ((1u << KDEV_MINORBITS) - 1));
	f = fopen(path, "re");
	if (!f)
		return 0;
	int n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	return n == 2 ? kdev_of(makedev(maj, min)) : 0;
}

/* A watched partition takes its whole disk's flushes, unless the disk is
 * watched itself or another partition of it took them first. */
static void flush_aliases(struct probes *p, const struct kdev_list *fixed)
{
	for (size_t s = 0; s < fixed->n; s++) {
		__u32 disk = disk_of(fixed->kdevs[s]);
		bool taken = !disk;
		for (size_t k = 0; k < fixed->n && !taken; k++)
			taken = fixed->kdevs[k] == disk || (k < s && p->devs[k].flush_kdev == disk);
		if (!taken)
			p->devs[s].flush_kdev = disk;
	}
}

int probes_new(const struct run_config *cfg, struct probes **ret)
{
	struct kdev_list fixed = { 0 };
	struct probes *p = calloc(1, sizeof(*p));
	char err[PROBE_REASON_MAX];
	int r;

	if (!p)
		return -ENOMEM;
	p->cfg = cfg;
	p->eps_lock = malloc(sizeof(*p->eps_lock));
	if (!p->eps_lock) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(p->eps_lock, NULL);
	r = resolve_targets(p, &fixed);
	if (r < 0)
		goto fail;
	p->n_fixed_devs = fixed.n;
	p->max_slots = fixed.n + (cfg->trace.all_devices ? cfg->trace.max_devices : 0);
	if (p->max_slots == 0)
		p->max_slots = 1;
	p->max_eps = cfg->trace.max_endpoints + cfg->trace.n_tcp_endpoints;
	p->devs = calloc(p->max_slots, sizeof(*p->devs));
	p->eps = calloc(p->max_eps, sizeof(*p->eps));
	if (!p->devs || !p->eps) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t s = 0; s < fixed.n; s++) {
		probe_device_init(&p->devs[s], fixed.kdevs[s], (__u32)s);
		p->devs[s].fixed = true;
		p->devs[s].stash = cfg->trace.blk_stash_always;
	}
	p->n_devs = fixed.n;
	if (!cfg->trace.all_devices)
		flush_aliases(p, &fixed);
	free(fixed.kdevs);
	fixed.kdevs = NULL;

	r = probes_load(p);
	if (r < 0)
		goto fail;
	/* With all_devices every target's device is in the map from the
	 * start, at its own slot, so the kernel does not give it another. */
	for (size_t s = 0; cfg->trace.all_devices && s < p->n_devs; s++)
		probe_device_map(p, &p->devs[s], true);
	watch_endpoints(p);

	for (int f = 0; f < PROBE_FAMILIES; f++) {
		bool on = f == PROBE_BLK ? cfg->trace.blk : cfg->trace.tcp;
		if (p->fam[f].state == PROBE_UNAVAILABLE) {
			/* A rejected program is soakd's bug, not the machine's. */
			log_msg(p->fam[f].cause == PROBE_CAUSE_VERIFIER ||
						p->fam[f].cause == PROBE_CAUSE_ERROR
					? LOG_ERR
					: LOG_NOTICE,
				"kernel tracing of %s is unavailable (%s): %s",
				probe_family_name((enum probe_family)f),
				probe_cause_name(p->fam[f].cause), p->fam[f].reason);
			continue;
		}
		if (probes_set(p, (enum probe_family)f, on, err, sizeof(err)) < 0)
			log_warning("%s", err);
	}
	*ret = p;
	return 0;
fail:
	free(fixed.kdevs);
	probes_free(p);
	return r;
}

void probes_free(struct probes *p)
{
	if (!p)
		return;
	probes_unload(p);
	for (size_t s = 0; p->devs && s < p->max_slots; s++)
		for (int op = 0; op < SOAK_BLK_OPS; op++) {
			free(p->devs[s].ops[op].last);
			kstats_blk_free(p->devs[s].ops[op].total);
			kstats_blk_free(p->devs[s].ops[op].interval);
			free(p->devs[s].ops[op].total);
			free(p->devs[s].ops[op].interval);
		}
	for (size_t i = 0; p->eps && i < p->n_eps; i++) {
		free(p->eps[i].last);
		kstats_tcp_free(p->eps[i].total);
		kstats_tcp_free(p->eps[i].interval);
		free(p->eps[i].total);
		free(p->eps[i].interval);
	}
	for (size_t i = 0; p->workloads && i < p->n_workloads; i++)
		free(p->workloads[i].slots);
	free(p->workloads);
	free(p->devs);
	free(p->eps);
	pthread_mutex_destroy(p->eps_lock);
	free(p->eps_lock);
	free(p);
}
