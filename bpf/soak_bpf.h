/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_BPF_H
#define SOAK_BPF_H

/*
 * What the BPF programs (bpf/NAME.bpf.c) and soakd (daemon/probes/probes.c) share:
 * map value layouts in __u32/__u64 only, and the histogram bucket
 * arithmetic, which both sides must compute identically.
 *
 * Kernel histograms are log2 with linear sub-buckets: every power of two
 * [2^k, 2^(k+1)) is split into 2^sub_bits equal buckets, values below
 * 2^sub_bits get one bucket each, and values from 2^(max_log2+1) up are
 * clamped into the last bucket.  With SOAK_LAT_SUB_BITS = 4 a latency
 * bucket is 1/16 of its lower bound wide, so reporting its midpoint is off
 * by at most 1/32 (3.125%) of any value that fell into it.
 */

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Latencies, in ns: 1 ns resolution up to 16 ns, 3.1% above, clamped at
 * 2^38 ns (275 s, far above the block layer's 30 s default timeout). */
#define SOAK_LAT_SUB_BITS 4
#define SOAK_LAT_MAX_LOG2 37
#define SOAK_LAT_SLOTS ((SOAK_LAT_MAX_LOG2 - SOAK_LAT_SUB_BITS + 2) << SOAK_LAT_SUB_BITS)

/* Request sizes, in bytes: 4 buckets per power of two up to 4 GiB. */
#define SOAK_SIZE_SUB_BITS 2
#define SOAK_SIZE_MAX_LOG2 31
#define SOAK_SIZE_SLOTS ((SOAK_SIZE_MAX_LOG2 - SOAK_SIZE_SUB_BITS + 2) << SOAK_SIZE_SUB_BITS)

enum soak_blk_op {
	SOAK_BLK_READ,
	SOAK_BLK_WRITE,
	SOAK_BLK_FLUSH,
	SOAK_BLK_DISCARD,
	SOAK_BLK_OTHER,     /* write-zeroes, secure erase, zone ops, driver-private */
	SOAK_BLK_OPS,
};

/* Value of the devices map: the device's slot, and whether completions
 * need the fallback stash (set by soakd); FLUSH_ONLY: a whole disk whose
 * flushes go to a watched partition's slot (a flush request carries no
 * partition), its other requests not counted. */
#define SOAK_DEV_STASH 0x80000000u
#define SOAK_DEV_FLUSH_ONLY 0x40000000u
/* The queue keeps no I/O statistics (queue/iostats 0): the block layer
 * leaves start_time_ns as an earlier use of the request set it. */
#define SOAK_DEV_NO_START 0x20000000u
#define SOAK_DEV_SLOT_MASK 0x1fffffffu

/* A CPU's last answer from the devices map, valid while devices_gen is
 * unchanged. */
struct soak_dev_cache {
	__u32 dev;
	__u32 gen;
	__u32 value;
	__u32 present;
};

/*
 * One per device slot and op, per CPU: blk_hists[slot * SOAK_BLK_OPS + op].
 * Counters only grow; soakd diffs successive reads (modulo 2^32, so an
 * interval may hold up to 4e9 events per CPU).
 */
struct soak_blk_hist {
	__u64 bytes;        /* completed bytes, partial completions included */
	__u32 count;        /* completed requests */
	__u32 errors;       /* completed with a non-zero blk_status_t */
	__u32 unstamped;    /* issued, but no issue time known: not in latency[] */
	__u32 unissued;     /* completed without reaching the driver */
	__u32 queued;       /* samples in queue[] */
	__u32 zero;
	__u32 latency[SOAK_LAT_SLOTS];  /* issue -> complete, ns */
	__u32 queue[SOAK_LAT_SLOTS];    /* insert -> issue, ns */
	__u32 size[SOAK_SIZE_SLOTS];    /* request bytes */
};

/* Fallback stash for queues that do not stamp io_start_time_ns, keyed by
 * the request's address. */
struct soak_blk_stash {
	__u64 insert_ns;
	__u64 issue_ns;
};

/* A remote TCP endpoint.  IPv4 (also when seen as a v4-mapped IPv6
 * address) is family 2 with the address in addr[0..3]; IPv6 is family 10.
 * port and addr are in network byte order; unused bytes are zero. */
struct soak_tcp_key {
	__u8 addr[16];
	__u16 family;
	__u16 port;
	__u32 zero;
};

/* One per endpoint slot, per CPU. */
struct soak_tcp_hist {
	__u32 srtt_samples;
	__u32 connects;          /* SYN_SENT -> ESTABLISHED */
	__u32 connect_failures;  /* SYN_SENT -> CLOSE */
	__u32 retransmits;
	__u32 resets_sent;
	__u32 resets_received;
	__u32 srtt[SOAK_LAT_SLOTS];     /* smoothed RTT at each received segment, ns */
	__u32 connect[SOAK_LAT_SLOTS];  /* SYN sent -> established, ns */
};

/* Pending active opens, keyed by the socket's address. */
struct soak_tcp_connect {
	__u64 start_ns;
	__u32 slot;
	__u32 zero;
};

/* floor(log2(v)) for v > 0, without a count-leading-zeros instruction
 * (the BPF instruction set has none). */
static __always_inline __u32 soak_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (__u32)(v >> 1);
	return r;
}

/* The bucket of value v in a histogram of the given shape. */
static __always_inline __u32 soak_hist_slot(__u64 v, __u32 sub_bits, __u32 max_log2)
{
	__u32 k;

	if (v < (1ULL << sub_bits))
		return (__u32)v;
	k = soak_log2(v);
	if (k > max_log2)
		return ((max_log2 - sub_bits + 2) << sub_bits) - 1;
	return ((k - sub_bits + 1) << sub_bits) +
	       (__u32)((v >> (k - sub_bits)) & ((1u << sub_bits) - 1));
}

/* The values [*lo, *lo + *width) that bucket slot holds (the last bucket
 * also holds everything clamped into it). */
static __always_inline void soak_hist_range(__u32 slot, __u32 sub_bits, __u64 *lo, __u64 *width)
{
	__u32 k;

	if (slot < (1u << sub_bits) * 2) {
		*lo = slot;
		*width = 1;
		return;
	}
	k = (slot >> sub_bits) + sub_bits - 1;
	*width = 1ULL << (k - sub_bits);
	*lo = ((1ULL << sub_bits) + (slot & ((1u << sub_bits) - 1))) << (k - sub_bits);
}

#endif
