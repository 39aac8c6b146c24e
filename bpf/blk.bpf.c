// SPDX-License-Identifier: GPL-2.0-only
/*
 * Block-layer latency per device and op, on typed tracepoints (tp_btf).
 *
 * The hot path is one program per completed request: blk-mq stamps
 * start_time_ns when it sets a request up for a bio (just before the
 * request is inserted into a scheduler or plug) and io_start_time_ns when
 * it hands the request to the driver (blk_mq_start_request, right after the
 * block_rq_issue tracepoint), so block_rq_complete can read both with
 * CO-RE and needs no per-request map.  The kernel stamps io_start_time_ns
 * only while the queue has a blk-stat user (QUEUE_FLAG_STATS: writeback
 * throttling, which is on by default, iolatency, iocost, hybrid polling).
 * Where it does not, completions count as "unstamped", and soakd marks the
 * device SOAK_DEV_STASH and attaches the fallback: soak_blk_issue and
 * soak_blk_insert stash times in a hash map keyed by the request, which
 * costs ~0.3 us per I/O, for the marked devices only.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "soak_bpf.h"

/* Stable since Linux 4.10 (include/linux/blk_types.h). */
#define SOAK_REQ_OP_BITS 8
#define SOAK_REQ_OP_MASK ((1u << SOAK_REQ_OP_BITS) - 1)
#define SOAK_REQ_OP_READ 0
#define SOAK_REQ_OP_WRITE 1
#define SOAK_REQ_OP_FLUSH 2
#define SOAK_REQ_OP_DISCARD 3
#define SOAK_MINORBITS 20

/* Count every device the block layer completes a request for, not just
 * the ones soakd put into `devices`. */
const volatile bool all_devices = false;
/* Slots [0, first_auto_slot) are soakd's; all_devices allocates above. */
const volatile __u32 first_auto_slot = 0;
const volatile __u32 max_slots = 1;

__u32 next_slot = 0;
__u64 slots_exhausted = 0;
/* Bumped by soakd after every change it makes to `devices`. */
__u32 devices_gen = 1;

/* Kernel dev_t (major << 20 | minor) -> slot, with SOAK_DEV_STASH. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);   /* set by soakd before load */
	__type(key, __u32);
	__type(value, __u32);
} devices SEC(".maps");

/* Each CPU's last answer from `devices`: a device's requests come in runs
 * on a CPU, and a hit here costs less than hashing the key again. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct soak_dev_cache);
} dev_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SOAK_BLK_OPS);   /* set by soakd: slots * SOAK_BLK_OPS */
	__type(key, __u32);
	__type(value, struct soak_blk_hist);
} blk_hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct soak_blk_stash);
} stash SEC(".maps");

/* What the block layer calls the device: the partition the request was
 * made for, or the whole disk when it has none (flushes, passthrough).
 * The first bio's device says it first: rq->part is set only where the
 * queue keeps I/O statistics (queue/iostats 1), and a partition's
 * requests would otherwise go to its whole disk. */
static __always_inline __u32 request_dev(const struct request *rq)
{
	struct bio *bio = rq->bio;
	struct block_device *part = bio ? bio->bi_bdev : NULL;
	struct gendisk *disk;

	if (!part)
		part = rq->part;
	if (part)
		return part->bd_dev;
	disk = rq->q->disk;
	if (!disk)
		return 0;
	return ((__u32)disk->major << SOAK_MINORBITS) | (__u32)disk->first_minor;
}

static __always_inline __u32 *lookup_or_add(__u32 dev)
{
	__u32 *slot = bpf_map_lookup_elem(&devices, &dev);
	__u32 fresh;

	if (slot || !all_devices || !dev)
		return slot;
	/* Full: next_slot stays where it is (counting every miss on, it
	 * would wrap and hand out slots in use). */
	if (*(volatile __u32 *)&next_slot + first_auto_slot >= max_slots) {
		__sync_fetch_and_add(&slots_exhausted, 1);
		return NULL;
	}
	fresh = __sync_fetch_and_add(&next_slot, 1) + first_auto_slot;
	if (fresh >= max_slots) {
		__sync_fetch_and_add(&slots_exhausted, 1);
		return NULL;
	}
	/* Two CPUs may race for the same device: one insert wins, and the
	 * loser's slot stays unused. */
	bpf_map_update_elem(&devices, &dev, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&devices, &dev);
}

/* The device's `devices` value (slot and flags); false when it is not
 * traced. */
static __always_inline bool device_slot(__u32 dev, __u32 *ret)
{
	__u32 zero = 0, gen = *(volatile __u32 *)&devices_gen, *slot;
	struct soak_dev_cache *c = bpf_map_lookup_elem(&dev_cache, &zero);

	if (c && c->dev == dev && c->gen == gen) {
		*ret = c->value;
		return c->present;
	}
	slot = lookup_or_add(dev);
	if (c) {
		c->dev = dev;
		c->gen = gen;
		c->present = slot != NULL;
		c->value = slot ? *slot : 0;
	}
	if (slot)
		*ret = *slot;
	return slot != NULL;
}

static __always_inline __u32 request_op(const struct request *rq)
{
	switch (rq->cmd_flags & SOAK_REQ_OP_MASK) {
	case SOAK_REQ_OP_READ:
		return SOAK_BLK_READ;
	case SOAK_REQ_OP_WRITE:
		return SOAK_BLK_WRITE;
	case SOAK_REQ_OP_FLUSH:
		return SOAK_BLK_FLUSH;
	case SOAK_REQ_OP_DISCARD:
		return SOAK_BLK_DISCARD;
	default:
		return SOAK_BLK_OTHER;
	}
}

static __always_inline void record(__u32 *buckets, __u64 v)
{
	__u32 i = soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2);

	if (i >= SOAK_LAT_SLOTS)
		i = SOAK_LAT_SLOTS - 1;
	buckets[i]++;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(soak_blk_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns(), issue_ns, start_ns;
	struct soak_blk_stash *stashed = NULL;
	struct soak_blk_hist *h;
	__u32 key, i, flags, op;
	__u64 rq_key = (__u64)rq;

	op = request_op(rq);
	/* A read or write of no bytes is not I/O of its own: the empty
	 * PREFLUSH request an fsync makes (its flush is the FLUSH request
	 * counted beside it), or the second completion of a FUA write on a
	 * device without FUA, ended again after its post-flush (its data
	 * were counted when they completed). */
	if (!nr_bytes && !rq->__data_len && (op == SOAK_BLK_READ || op == SOAK_BLK_WRITE))
		return 0;
	if (!device_slot(request_dev(rq), &flags))
		return 0;
	if ((flags & SOAK_DEV_FLUSH_ONLY) && op != SOAK_BLK_FLUSH)
		return 0;
	key = (flags & SOAK_DEV_SLOT_MASK) * SOAK_BLK_OPS + op;
	h = bpf_map_lookup_elem(&blk_hists, &key);
	if (!h)
		return 0;

	h->bytes += nr_bytes;
	/* A partial completion (blk_update_request with fewer bytes than
	 * remain) is not the end of the request: count its bytes only. */
	if (nr_bytes < rq->__data_len)
		return 0;

	issue_ns = rq->io_start_time_ns;
	start_ns = flags & SOAK_DEV_NO_START ? 0 : rq->start_time_ns;
	if (flags & SOAK_DEV_STASH) {
		/* The stash wins: with "blk_timestamps": "map" it is what
		 * is being measured, and otherwise the kernel's stamps are
		 * missing anyway. */
		stashed = bpf_map_lookup_elem(&stash, &rq_key);
		if (stashed) {
			if (stashed->issue_ns)
				issue_ns = stashed->issue_ns;
			if (stashed->insert_ns)
				start_ns = stashed->insert_ns;
			bpf_map_delete_elem(&stash, &rq_key);
		}
	}

	h->count++;
	if (error)
		h->errors++;
	i = soak_hist_slot(rq->stats_sectors ? (__u64)rq->stats_sectors << 9 : nr_bytes,
			   SOAK_SIZE_SUB_BITS, SOAK_SIZE_MAX_LOG2);
	if (i >= SOAK_SIZE_SLOTS)
		i = SOAK_SIZE_SLOTS - 1;
	h->size[i]++;
	/* Ended without reaching the driver (an empty flush on a device
	 * without a write cache, say): there is no issue to time from. */
	if (rq->state == bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE)) {
		h->unissued++;
		return 0;
	}
	if (!issue_ns || issue_ns > now) {
		h->unstamped++;
		return 0;
	}
	record(h->latency, now - issue_ns);
	/* The plug's cached clock can stamp both times alike. */
	if (start_ns && start_ns <= issue_ns) {
		record(h->queue, issue_ns - start_ns);
		h->queued++;
	}
	return 0;
}

/* The device's `devices` value when its requests are timed by the
 * stash, else 0. */
static __always_inline __u32 stash_flags(const struct request *rq)
{
	__u32 dev = request_dev(rq);
	__u32 *slot = bpf_map_lookup_elem(&devices, &dev);

	return slot && (*slot & SOAK_DEV_STASH) ? *slot : 0;
}

/* Fallback only: attached by soakd once a device's completions arrive
 * without io_start_time_ns. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(soak_blk_issue, struct request *rq)
{
	struct soak_blk_stash *stashed, fresh = {};
	__u64 rq_key = (__u64)rq;

	if (!stash_flags(rq))
		return 0;
	stashed = bpf_map_lookup_elem(&stash, &rq_key);
	if (stashed) {
		stashed->issue_ns = bpf_ktime_get_ns();
		return 0;
	}
	fresh.issue_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&stash, &rq_key, &fresh, BPF_ANY);
	return 0;
}

/* Fallback only, for queues that do not stamp start_time_ns either
 * (iostats off: a stamp there is an earlier use's); requests issued
 * directly are never inserted, and their queue time is not measured then. */
SEC("tp_btf/block_rq_insert")
int BPF_PROG(soak_blk_insert, struct request *rq)
{
	struct soak_blk_stash fresh = {};
	__u64 rq_key = (__u64)rq;
	__u32 flags = stash_flags(rq);

	if (!flags || (rq->start_time_ns && !(flags & SOAK_DEV_NO_START)))
		return 0;
	fresh.insert_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&stash, &rq_key, &fresh, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
