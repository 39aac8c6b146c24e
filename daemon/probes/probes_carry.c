// SPDX-License-Identifier: GPL-2.0-only
/* A reload's new probes take over the old ones' counts (probes.h). */
#include "probes.h"
#include "probes_int.h"

#include <pthread.h>
#include <string.h>

#include <bpf/bpf.h>

#include "kstats.h"

static struct probe_device *device_of(struct probes *p, __u32 kdev)
{
	for (size_t s = 0; s < p->n_devs; s++)
		if (p->devs[s].used && p->devs[s].kdev == kdev)
			return &p->devs[s];
	return NULL;
}

static struct probe_endpoint *endpoint_of(struct probes *p, const struct soak_tcp_key *key)
{
	for (size_t i = 0; i < p->n_eps; i++)
		if (memcmp(&p->eps[i].key, key, sizeof(*key)) == 0)
			return &p->eps[i];
	return NULL;
}

/* A device all_devices found in from: at the next of to's own slots, as
 * its program would have given it (NULL when to does not watch all, or is
 * full). */
static struct probe_device *adopt_device(struct probes *to, const struct probe_device *a)
{
	if (!to->cfg->trace.all_devices || to->fam[PROBE_BLK].state == PROBE_UNAVAILABLE)
		return NULL;
	__u32 slot = probe_take_auto_slot(to);
	if (slot >= to->max_slots || to->devs[slot].used)
		return NULL;
	struct probe_device *b = &to->devs[slot];
	probe_device_init(b, a->kdev, slot);
	b->stash = a->stash;
	__u32 value = probe_device_value(b);
	if (probe_devices_write(to, b->kdev, &value, BPF_NOEXIST) < 0) {
		b->used = false;   /* the program met it first: learned at the next tick */
		return NULL;
	}
	b->in_map = true;
	if (slot >= to->n_devs)
		to->n_devs = slot + 1;
	return b;
}

void probes_carry(struct probes *to, struct probes *from)
{
	if (!to || !from)
		return;
	/* What the old programs counted since the last tick, into their
	 * totals and intervals, as a tick would. */
	if (from->blk && from->fam[PROBE_BLK].state != PROBE_UNAVAILABLE)
		probe_read_blk(from);
	if (from->tcp && from->fam[PROBE_TCP].state != PROBE_UNAVAILABLE)
		probe_read_tcp(from);
	to->exhausted_logged = from->exhausted_logged;
	for (int f = 0; f < PROBE_FAMILIES; f++) {
		if (from->fam[f].state != PROBE_UNAVAILABLE)
			probe_read_missed(from, (enum probe_family)f);
		to->fam[f].carried = to->fam[f].missed = to->fam[f].logged = from->fam[f].missed;
	}
	for (size_t s = 0; s < from->n_devs; s++) {
		struct probe_device *a = &from->devs[s], *b = a->used ? device_of(to, a->kdev) : NULL;
		if (a->used && !b && !a->fixed)
			b = adopt_device(to, a);
		for (int op = 0; b && op < SOAK_BLK_OPS; op++) {
			struct probe_blk_op *x = &a->ops[op], *y = &b->ops[op];
			if (!x->total || probe_blk_op_alloc(y) < 0)
				continue;
			kstats_blk_merge(y->total, x->total);
			if (x->has_interval) {
				kstats_blk_merge(y->interval, x->interval);
				y->carried = true;
			}
		}
	}
	pthread_mutex_lock(from->eps_lock);
	pthread_mutex_lock(to->eps_lock);
	for (size_t i = 0; i < from->n_eps; i++) {
		struct probe_endpoint *x = &from->eps[i], *y = endpoint_of(to, &x->key);
		if (!y || !x->total || probe_endpoint_alloc(y) < 0)
			continue;
		kstats_tcp_merge(y->total, x->total);
		if (x->has_interval) {
			kstats_tcp_merge(y->interval, x->interval);
			y->carried = true;
		}
	}
	pthread_mutex_unlock(to->eps_lock);
	pthread_mutex_unlock(from->eps_lock);
}

