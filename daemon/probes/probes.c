// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading, switching and reading the BPF probes: the only file that
 * includes a skeleton (probes_why.c words what fails).  Lifecycle, as in
 * libbpf-tools: open -> size the maps and set rodata -> load ->
 * attach/detach at run time -> read at each tick -> destroy.
 */
#include "probes.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "blk.skel.h"
#include "probes_int.h"
#include "tcp.skel.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

static int blk_load(void *skel)
{
	return blk_bpf__load(skel);
}

static int tcp_load(void *skel)
{
	return tcp_bpf__load(skel);
}

/* Loads a family's opened skeleton with the verifier's log kept for a
 * rejection; a family that loads is off until switched on. */
static void load_family(struct probe_family_state *fs, int (*load)(void *skel), void *skel)
{
	struct verifier_logs logs = { { NULL } };
	char list[256];
	int r = verifier_logs_give(&logs, fs);

	if (r == 0)
		r = load(skel);
	if (r < 0)
		load_failed(fs, r, &logs);
	verifier_logs_free(&logs, fs);
	if (r < 0)
		return;
	fs->state = PROBE_OFF;
	if (missing_list(fs, list, sizeof(list))[0])
		snprintf(fs->note, sizeof(fs->note), "tracepoints missing: %s", list);
}

static void open_blk(struct probes *p, const struct btf *vmlinux)
{
	struct probe_family_state *fs = &p->fam[PROBE_BLK];
	int r;

	p->blk = blk_bpf__open();
	if (!p->blk) {
		load_failed(fs, -errno, NULL);
		return;
	}
	add_prog(fs, "block_rq_complete", p->blk->progs.soak_blk_complete,
		 &p->blk->links.soak_blk_complete, false);
	add_prog(fs, "block_rq_issue", p->blk->progs.soak_blk_issue,
		 &p->blk->links.soak_blk_issue, true);
	add_prog(fs, "block_rq_insert", p->blk->progs.soak_blk_insert,
		 &p->blk->links.soak_blk_insert, true);
	check_tracepoints(fs, vmlinux);
	if (fs->progs[0].missing) {
		set_reason(fs, PROBE_CAUSE_KERNEL, "tracepoint block_rq_complete is missing from this kernel");
		return;
	}
	if (fs->progs[1].missing)
		log_warning("tracepoint block_rq_issue is missing: devices whose block layer does "
			    "not stamp issue times will show no latency");

	p->blk->rodata->all_devices = p->cfg->trace.all_devices;
	p->blk->rodata->first_auto_slot = (__u32)p->n_fixed_devs;
	p->blk->rodata->max_slots = (__u32)p->max_slots;
	/* Twice: a partition's whole disk is in it too, for its flushes. */
	if ((r = bpf_map__set_max_entries(p->blk->maps.devices, (__u32)(2 * p->max_slots))) < 0 ||
	    (r = bpf_map__set_max_entries(p->blk->maps.blk_hists,
					  (__u32)(p->max_slots * SOAK_BLK_OPS))) < 0) {
		load_failed(fs, r, NULL);
		return;
	}
	load_family(fs, blk_load, p->blk);
}

static void open_tcp(struct probes *p, const struct btf *vmlinux)
{
	struct probe_family_state *fs = &p->fam[PROBE_TCP];
	char list[256];
	int r;

	p->tcp = tcp_bpf__open();
	if (!p->tcp) {
		load_failed(fs, -errno, NULL);
		return;
	}
	add_prog(fs, "tcp_probe", p->tcp->progs.soak_tcp_probe, &p->tcp->links.soak_tcp_probe,
		 false);
	add_prog(fs, "inet_sock_set_state", p->tcp->progs.soak_tcp_state,
		 &p->tcp->links.soak_tcp_state, false);
	add_prog(fs, "tcp_retransmit_skb", p->tcp->progs.soak_tcp_retransmit,
		 &p->tcp->links.soak_tcp_retransmit, false);
	add_prog(fs, "tcp_send_reset", p->tcp->progs.soak_tcp_send_reset,
		 &p->tcp->links.soak_tcp_send_reset, false);
	add_prog(fs, "tcp_receive_reset", p->tcp->progs.soak_tcp_receive_reset,
		 &p->tcp->links.soak_tcp_receive_reset, false);
	if (check_tracepoints(fs, vmlinux) == fs->n_progs) {
		set_reason(fs, PROBE_CAUSE_KERNEL, "tracepoints %s are missing from this kernel",
			   missing_list(fs, list, sizeof(list)));
		return;
	}
	if ((r = bpf_map__set_max_entries(p->tcp->maps.endpoints, (__u32)p->max_eps)) < 0 ||
	    (r = bpf_map__set_max_entries(p->tcp->maps.tcp_hists, (__u32)p->max_eps)) < 0) {
		load_failed(fs, r, NULL);
		return;
	}
	load_family(fs, tcp_load, p->tcp);
}

static void load_all(struct probes *p)
{
	enum probe_cause cause = PROBE_CAUSE_PRIVILEGE;
	const char *why;
	struct btf *vmlinux;

	libbpf_set_print(libbpf_print);
	why = missing_privilege();
	if (!why && access(VMLINUX_BTF, R_OK) < 0) {
		cause = errno == ENOENT ? PROBE_CAUSE_KERNEL
			: errno == EACCES || errno == EPERM ? PROBE_CAUSE_PRIVILEGE
							    : PROBE_CAUSE_ERROR;
		why = errno == ENOENT ? "this kernel has no BTF (" VMLINUX_BTF " is missing; it "
					"needs CONFIG_DEBUG_INFO_BTF), which the CO-RE probes need"
				      : "cannot read " VMLINUX_BTF ", which the CO-RE probes need";
	}
	if (why) {
		for (int f = 0; f < PROBE_FAMILIES; f++)
			set_reason(&p->fam[f], cause, "%s", why);
		return;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		for (int f = 0; f < PROBE_FAMILIES; f++)
			set_reason(&p->fam[f], PROBE_CAUSE_KERNEL, "cannot parse the kernel's BTF: %s",
				   strerror(errno));
		return;
	}
	open_blk(p, vmlinux);
	open_tcp(p, vmlinux);
	btf__free(vmlinux);
}

static bool fallback_needed(const struct probes *p)
{
	if (p->cfg->trace.blk_stash_always)
		return true;
	for (size_t s = 0; s < p->n_devs; s++)
		if (p->devs[s].used && p->devs[s].stash)
			return true;
	return false;
}

static void detach(struct probe_family_state *fs, bool fallback_only)
{
	/* Last program first: the fallback stashes go before the program
	 * that consumes them. */
	for (size_t i = fs->n_progs; i-- > 0;) {
		struct probe_prog *pp = &fs->progs[i];
		if (fallback_only && !pp->fallback)
			continue;
		bpf_link__destroy(*pp->link);
		*pp->link = NULL;
	}
}

static int attach(struct probes *p, enum probe_family f, char *err, size_t errlen)
{
	struct probe_family_state *fs = &p->fam[f];
	bool fallback = f == PROBE_BLK && fallback_needed(p);

	bool attached[PROBE_MAX_PROGS] = { false };

	for (size_t i = 0; i < fs->n_progs; i++) {
		struct probe_prog *pp = &fs->progs[i];
		if (pp->missing || *pp->link || (pp->fallback && !fallback))
			continue;
		*pp->link = bpf_program__attach(pp->prog);
		if (!*pp->link) {
			int r = -errno;
			snprintf(err, errlen, "cannot attach to tracepoint %s: %s", pp->tracepoint,
				 strerror(-r));
			/* Leave the family as it was. */
			while (i-- > 0)
				if (attached[i]) {
					bpf_link__destroy(*fs->progs[i].link);
					*fs->progs[i].link = NULL;
				}
			return r;
		}
		attached[i] = true;
	}
	return 0;
}

/* Entries left at a detach would pair a reused request (a stash entry)
 * or socket (a pending connect whose SYN went out while detached) with an
 * old start time. */
static void clear_starts(int fd)
{
	__u64 key, next;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key) < 0)
			break;
	}
}

int probes_set(struct probes *p, enum probe_family f, bool on, char *err, size_t errlen)
{
	struct probe_family_state *fs;
	int r;

	if (!p) {
		snprintf(err, errlen, "%s probes are unavailable: out of memory",
			 probe_family_name(f));
		return -EOPNOTSUPP;
	}
	fs = &p->fam[f];
	if (fs->state == PROBE_UNAVAILABLE) {
		snprintf(err, errlen, "%s probes are unavailable: %s", probe_family_name(f),
			 fs->reason);
		return -EOPNOTSUPP;
	}
	if (!on) {
		detach(fs, false);
		clear_starts(f == PROBE_BLK ? bpf_map__fd(p->blk->maps.stash)
					    : bpf_map__fd(p->tcp->maps.connecting));
		fs->state = PROBE_OFF;
		return 0;
	}
	r = attach(p, f, err, errlen);
	if (r < 0)
		return r;
	fs->state = PROBE_ON;
	return 0;
}

int probes_toggle_all(struct probes *p, bool *ret_on)
{
	bool any_on = false, on;
	int switched = 0;
	char err[256];

	if (!p)
		return 0;
	for (int f = 0; f < PROBE_FAMILIES; f++)
		any_on |= p->fam[f].state == PROBE_ON;
	on = !any_on;
	for (int f = 0; f < PROBE_FAMILIES; f++) {
		if (p->fam[f].state == PROBE_UNAVAILABLE)
			continue;
		if (probes_set(p, (enum probe_family)f, on, err, sizeof(err)) < 0)
			log_warning("%s", err);
		else
			switched++;
	}
	*ret_on = on;
	return switched;
}

/* Sets (value) or removes (NULL) a device in the kernel's devices map, and
 * tells every CPU's cache of it (blk.bpf.c) to look again. */
int probe_devices_write(struct probes *p, __u32 kdev, const __u32 *value, __u64 flags)
{
	int fd = bpf_map__fd(p->blk->maps.devices);
	int r = value ? bpf_map_update_elem(fd, &kdev, value, flags)
		      : bpf_map_delete_elem(fd, &kdev);

	if (r < 0)
		return -errno;
	__atomic_fetch_add(&p->blk->data->devices_gen, 1, __ATOMIC_RELEASE);
	return 0;
}

/* The block layer turned out not to stamp a device's requests: time them
 * with the fallback map from now on. */
/* A device's value in the devices map (soak_bpf.h). */
__u32 probe_device_value(const struct probe_device *d)
{
	return d->slot | (d->stash ? SOAK_DEV_STASH : 0) | (d->no_start ? SOAK_DEV_NO_START : 0);
}

/* The map as d's flags now say, where d is in it. */
static int devices_rewrite(struct probes *p, const struct probe_device *d)
{
	__u32 value = probe_device_value(d), flushes = value | SOAK_DEV_FLUSH_ONLY;
	int r = 0;

	if (d->in_map && (r = probe_devices_write(p, d->kdev, &value, BPF_EXIST)) == 0 && d->flush_kdev)
		r = probe_devices_write(p, d->flush_kdev, &flushes, BPF_ANY);
	return r;
}

static void start_stash(struct probes *p, struct probe_device *d, __u32 slot)
{
	char err[256];
	int r;

	(void)slot;
	d->stash = true;
	if ((r = devices_rewrite(p, d)) < 0)
		log_warning("%s: cannot switch to per-request timing: %s", d->name, strerror(-r));
	if (p->fam[PROBE_BLK].progs[1].missing)
		return;
	log_notice("%s: the block layer does not stamp issue times on this device (no blk-stat "
		   "user such as writeback throttling); timing its requests with a per-request "
		   "map instead, which costs about 0.3 us per I/O", d->name);
	if (p->fam[PROBE_BLK].state == PROBE_ON && attach(p, PROBE_BLK, err, sizeof(err)) < 0)
		log_warning("%s", err);
}

void probe_device_map(struct probes *p, struct probe_device *d, bool present)
{
	__u32 value;
	int r;

	if (!p->blk || p->fam[PROBE_BLK].state == PROBE_UNAVAILABLE || d->in_map == present)
		return;
	value = probe_device_value(d);
	r = probe_devices_write(p, d->kdev, present ? &value : NULL, BPF_ANY);
	if (r < 0 && (present || r != -ENOENT)) {
		log_warning("%s: cannot %s: %s", d->name, present ? "trace" : "stop tracing",
			    strerror(-r));
		return;
	}
	d->in_map = present;
	if (d->flush_kdev) {
		__u32 flushes = value | SOAK_DEV_FLUSH_ONLY;
		r = probe_devices_write(p, d->flush_kdev, present ? &flushes : NULL, BPF_ANY);
		if (r < 0 && (present || r != -ENOENT))
			log_warning("%s: cannot %s its disk's flushes: %s", d->name,
				    present ? "trace" : "stop tracing", strerror(-r));
	}
}

int probe_endpoint_map(struct probes *p, const struct probe_endpoint *e)
{
	__u32 slot = (__u32)(e - p->eps);

	if (!p->tcp || p->fam[PROBE_TCP].state == PROBE_UNAVAILABLE)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(p->tcp->maps.endpoints), &e->key, &slot, BPF_ANY) < 0)
		return -errno;
	return 0;
}

/* Devices the all_devices view discovered since the last tick. */
static void learn_devices(struct probes *p)
{
	int fd = bpf_map__fd(p->blk->maps.devices);
	__u32 key, *prev = NULL, value;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &value) < 0)
			continue;
		__u32 slot = value & SOAK_DEV_SLOT_MASK;
		if (slot >= p->max_slots || p->devs[slot].used)
			continue;
		probe_device_init(&p->devs[slot], key, slot);
		p->devs[slot].in_map = true;
		if (slot >= p->n_devs)
			p->n_devs = slot + 1;
		if (p->cfg->trace.blk_stash_always)
			start_stash(p, &p->devs[slot], slot);
	}
}

/* Sums one per-CPU value over CPUs as the difference to the last read
 * (counters are 32-bit per CPU and wrap), and keeps it as the new last. */
static void blk_delta(const struct soak_blk_hist *cur, struct soak_blk_hist *last, int ncpus,
		      size_t stride, struct kstats_blk_delta *d)
{
	memset(d, 0, sizeof(*d));
	for (int c = 0; c < ncpus; c++) {
		const struct soak_blk_hist *a = (const void *)((const char *)cur + c * stride);
		const struct soak_blk_hist *b = (const void *)((const char *)last + c * stride);
		d->bytes += a->bytes - b->bytes;
		d->count += (__u32)(a->count - b->count);
		d->errors += (__u32)(a->errors - b->errors);
		d->unstamped += (__u32)(a->unstamped - b->unstamped);
		d->unissued += (__u32)(a->unissued - b->unissued);
		d->queued += (__u32)(a->queued - b->queued);
		for (size_t i = 0; i < SOAK_LAT_SLOTS; i++) {
			d->latency[i] += (__u32)(a->latency[i] - b->latency[i]);
			d->queue[i] += (__u32)(a->queue[i] - b->queue[i]);
		}
		for (size_t i = 0; i < SOAK_SIZE_SLOTS; i++)
			d->size[i] += (__u32)(a->size[i] - b->size[i]);
	}
	memcpy(last, cur, (size_t)ncpus * stride);
}

static void tcp_delta(const struct soak_tcp_hist *cur, struct soak_tcp_hist *last, int ncpus,
		      size_t stride, struct kstats_tcp_delta *d)
{
	memset(d, 0, sizeof(*d));
	for (int c = 0; c < ncpus; c++) {
		const struct soak_tcp_hist *a = (const void *)((const char *)cur + c * stride);
		const struct soak_tcp_hist *b = (const void *)((const char *)last + c * stride);
		d->srtt_samples += (__u32)(a->srtt_samples - b->srtt_samples);
		d->connects += (__u32)(a->connects - b->connects);
		d->connect_failures += (__u32)(a->connect_failures - b->connect_failures);
		d->retransmits += (__u32)(a->retransmits - b->retransmits);
		d->resets_sent += (__u32)(a->resets_sent - b->resets_sent);
		d->resets_received += (__u32)(a->resets_received - b->resets_received);
		for (size_t i = 0; i < SOAK_LAT_SLOTS; i++) {
			d->srtt[i] += (__u32)(a->srtt[i] - b->srtt[i]);
			d->connect[i] += (__u32)(a->connect[i] - b->connect[i]);
		}
	}
	memcpy(last, cur, (size_t)ncpus * stride);
}

__u32 probe_take_auto_slot(struct probes *p)
{
	if (!p->blk)
		return UINT32_MAX;
	/* Taken as the program takes one (a slot lost to a race stays unused,
	 * as one lost between two CPUs does). */
	return (__u32)p->n_fixed_devs +
	       __atomic_fetch_add(&p->blk->bss->next_slot, 1, __ATOMIC_SEQ_CST);
}

void probe_read_blk(struct probes *p)
{
	size_t stride = (sizeof(struct soak_blk_hist) + 7) & ~(size_t)7;
	int fd = bpf_map__fd(p->blk->maps.blk_hists);

	if (p->cfg->trace.all_devices) {
		learn_devices(p);
		if (p->blk->bss->slots_exhausted && !p->exhausted_logged) {
			p->exhausted_logged = true;
			log_warning("block probes: \"all_devices\" met more devices than "
				    "\"max_devices\" (%zu) holds: the I/O of the devices beyond it is "
				    "not counted; raise \"max_devices\" to watch them",
				    p->max_slots - p->n_fixed_devs);
		}
	}
	for (size_t s = 0; s < p->n_devs; s++) {
		struct probe_device *d = &p->devs[s];
		if (!d->used)
			continue;
		/* A queue whose statistics were switched off or on. */
		bool no_start = !probe_device_iostats(d);
		if (no_start != d->no_start) {
			d->no_start = no_start;
			int r = devices_rewrite(p, d);
			if (r < 0)
				log_warning("%s: cannot follow its queue's iostats: %s", d->name,
					    strerror(-r));
		}
		for (int op = 0; op < SOAK_BLK_OPS; op++) {
			struct probe_blk_op *o = &d->ops[op];
			__u32 key = (__u32)(s * SOAK_BLK_OPS + (size_t)op);

			o->has_interval = false;
			if (bpf_map_lookup_elem(fd, &key, p->percpu) < 0)
				continue;
			if (!o->last && !(o->last = calloc((size_t)p->ncpus, stride)))
				continue;
			blk_delta(p->percpu, o->last, p->ncpus, stride, p->blk_delta);
			bool fresh = p->blk_delta->count || p->blk_delta->bytes;
			if (!fresh && !o->carried)
				continue;
			if (probe_blk_op_alloc(o) < 0)
				continue;
			/* What a reload carried over is in total already. */
			if (!o->carried)
				kstats_blk_reset(o->interval);
			o->carried = false;
			kstats_blk_add(o->interval, p->blk_delta);
			kstats_blk_add(o->total, p->blk_delta);
			o->has_interval = true;
			if (p->blk_delta->unstamped && !d->stash)
				start_stash(p, d, (__u32)s);
		}
	}
}

void probe_read_tcp(struct probes *p)
{
	size_t stride = (sizeof(struct soak_tcp_hist) + 7) & ~(size_t)7;
	int fd = bpf_map__fd(p->tcp->maps.tcp_hists);

	pthread_mutex_lock(p->eps_lock);
	for (size_t s = 0; s < p->n_eps; s++) {
		struct probe_endpoint *e = &p->eps[s];
		__u32 key = (__u32)s;

		e->has_interval = false;
		if (bpf_map_lookup_elem(fd, &key, p->percpu) < 0)
			continue;
		if (!e->last && !(e->last = calloc((size_t)p->ncpus, stride)))
			continue;
		tcp_delta(p->percpu, e->last, p->ncpus, stride, p->tcp_delta);
		if (probe_endpoint_alloc(e) < 0)
			continue;
		if (!e->carried)
			kstats_tcp_reset(e->interval);
		e->carried = false;
		kstats_tcp_add(e->interval, p->tcp_delta);
		if (kstats_tcp_empty(e->interval))
			continue;
		kstats_tcp_add(e->total, p->tcp_delta);
		e->has_interval = true;
	}
	pthread_mutex_unlock(p->eps_lock);
}

/* The kernel counts, per program, the events it skipped because the
 * program was running already on that CPU (an interrupt's completion
 * inside a task's): each is an op the kernel's figures lack. */
void probe_read_missed(struct probes *p, enum probe_family f)
{
	struct probe_family_state *fs = &p->fam[f];
	uint64_t sum = fs->carried;

	for (size_t i = 0; i < fs->n_progs; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = fs->progs[i].missing ? -1 : bpf_program__fd(fs->progs[i].prog);
		memset(&info, 0, sizeof(info));
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			sum += info.recursion_misses;
	}
	fs->missed = sum > fs->missed ? sum : fs->missed;
	/* Said at the first, then each time they have doubled. */
	if (fs->missed > fs->logged && (!fs->logged || fs->missed >= 2 * fs->logged)) {
		log_warning("trace: the kernel skipped %" PRIu64 " event(s) of the %s probes so far "
			    "(a probe entered again on a CPU where it was running): the kernel's "
			    "figures lack as many ops", fs->missed, probe_family_name(f));
		fs->logged = fs->missed;
	}
}

void probes_tick(struct probes *p, uint64_t now_ns)
{
	(void)now_ns;
	if (!p)
		return;
	if (p->fam[PROBE_BLK].state != PROBE_UNAVAILABLE) {
		probe_read_blk(p);
		probe_read_missed(p, PROBE_BLK);
	}
	if (p->fam[PROBE_TCP].state != PROBE_UNAVAILABLE) {
		probe_read_tcp(p);
		probe_read_missed(p, PROBE_TCP);
	}
	probes_journal(p);
}

int probes_load(struct probes *p)
{
	size_t blk_size = (sizeof(struct soak_blk_hist) + 7) & ~(size_t)7;
	size_t tcp_size = (sizeof(struct soak_tcp_hist) + 7) & ~(size_t)7;

	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		for (int f = 0; f < PROBE_FAMILIES; f++)
			set_reason(&p->fam[f], PROBE_CAUSE_ERROR, "cannot count the possible CPUs: %s",
				   strerror(-p->ncpus));
		return 0;
	}
	p->percpu = calloc((size_t)p->ncpus, blk_size > tcp_size ? blk_size : tcp_size);
	p->blk_delta = malloc(sizeof(*p->blk_delta));
	p->tcp_delta = malloc(sizeof(*p->tcp_delta));
	if (!p->percpu || !p->blk_delta || !p->tcp_delta)
		return -ENOMEM;
	load_all(p);
	return 0;
}

void probes_unload(struct probes *p)
{
	if (p->blk) {
		detach(&p->fam[PROBE_BLK], false);
		blk_bpf__destroy(p->blk);
	}
	if (p->tcp) {
		detach(&p->fam[PROBE_TCP], false);
		tcp_bpf__destroy(p->tcp);
	}
	free(p->percpu);
	free(p->blk_delta);
	free(p->tcp_delta);
}
