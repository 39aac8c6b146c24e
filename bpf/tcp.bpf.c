// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP latency toward the endpoints soakd watches, on typed tracepoints
 * (tp_btf): the smoothed RTT each time a segment is received on an
 * established connection (tcp_probe), connect latency from SYN_SENT to
 * ESTABLISHED (inet_sock_set_state), and retransmits and resets counted.
 * Only connections whose remote address and port are in `endpoints` count.
 *
 * Only the first arguments of each tracepoint are read, so the programs
 * load on kernels that appended arguments (tcp_retransmit_skb gained `err`,
 * tcp_send_reset `reason`, in 6.x).
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "soak_bpf.h"

#define SOAK_AF_INET 2
#define SOAK_AF_INET6 10
#define SOAK_IPPROTO_TCP 6

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);   /* set by soakd before load */
	__type(key, struct soak_tcp_key);
	__type(value, __u32);
} endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);   /* set by soakd: one per endpoint slot */
	__type(key, __u32);
	__type(value, struct soak_tcp_hist);
} tcp_hists SEC(".maps");

/* Connects are rare next to segments; an LRU map cannot leak entries for
 * sockets whose SYN_SENT exit we missed while detached. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct soak_tcp_connect);
} connecting SEC(".maps");

static __always_inline bool remote_of(const struct sock *sk, struct soak_tcp_key *key)
{
	const struct sock_common *skc = &sk->__sk_common;
	__u16 family = skc->skc_family;

	__builtin_memset(key, 0, sizeof(*key));
	key->port = skc->skc_dport;
	if (family == SOAK_AF_INET) {
		__u32 daddr = skc->skc_daddr;
		__builtin_memcpy(key->addr, &daddr, 4);
		key->family = SOAK_AF_INET;
		return true;
	}
	if (family != SOAK_AF_INET6)
		return false;
	bpf_core_read(key->addr, sizeof(key->addr), &skc->skc_v6_daddr);
	/* ::ffff:a.b.c.d is IPv4 reached through an IPv6 socket. */
	if (!key->addr[0] && !key->addr[1] && !key->addr[2] && !key->addr[3] &&
	    !key->addr[4] && !key->addr[5] && !key->addr[6] && !key->addr[7] &&
	    !key->addr[8] && !key->addr[9] && key->addr[10] == 0xff && key->addr[11] == 0xff) {
		__builtin_memcpy(key->addr, &key->addr[12], 4);
		__builtin_memset(&key->addr[4], 0, 12);
		key->family = SOAK_AF_INET;
	} else {
		key->family = SOAK_AF_INET6;
	}
	return true;
}

static __always_inline __u32 *endpoint_slot(const struct sock *sk)
{
	struct soak_tcp_key key;

	if (!sk || !remote_of(sk, &key))
		return NULL;
	return bpf_map_lookup_elem(&endpoints, &key);
}

static __always_inline struct soak_tcp_hist *endpoint_hist(const struct sock *sk)
{
	__u32 *slot = endpoint_slot(sk);

	return slot ? bpf_map_lookup_elem(&tcp_hists, slot) : NULL;
}

static __always_inline void record(__u32 *buckets, __u64 v)
{
	__u32 i = soak_hist_slot(v, SOAK_LAT_SUB_BITS, SOAK_LAT_MAX_LOG2);

	if (i >= SOAK_LAT_SLOTS)
		i = SOAK_LAT_SLOTS - 1;
	buckets[i]++;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(soak_tcp_probe, struct sock *sk)
{
	struct soak_tcp_hist *h = endpoint_hist(sk);
	__u32 srtt;

	if (!h)
		return 0;
	/* srtt_us holds 8 times the smoothed RTT in us (RFC 6298's alpha).
	 * The tracepoint's BTF says struct sock, so the verifier would not
	 * let a direct access reach into struct tcp_sock. */
	srtt = BPF_CORE_READ((struct tcp_sock *)sk, srtt_us);
	if (!srtt)
		return 0;
	record(h->srtt, (__u64)srtt * 1000 >> 3);
	h->srtt_samples++;
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(soak_tcp_state, const struct sock *sk, const int oldstate, const int newstate)
{
	struct soak_tcp_connect *pending, fresh = {};
	struct soak_tcp_hist *h;
	__u64 sk_key = (__u64)sk;
	__u32 *slot;

	if (BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) != SOAK_IPPROTO_TCP)
		return 0;
	if (newstate == TCP_SYN_SENT) {
		slot = endpoint_slot(sk);
		if (!slot)
			return 0;
		fresh.start_ns = bpf_ktime_get_ns();
		fresh.slot = *slot;
		bpf_map_update_elem(&connecting, &sk_key, &fresh, BPF_ANY);
		return 0;
	}
	if (oldstate != TCP_SYN_SENT)
		return 0;
	pending = bpf_map_lookup_elem(&connecting, &sk_key);
	if (!pending)
		return 0;
	h = bpf_map_lookup_elem(&tcp_hists, &pending->slot);
	if (h) {
		if (newstate == TCP_ESTABLISHED) {
			record(h->connect, bpf_ktime_get_ns() - pending->start_ns);
			h->connects++;
		} else {
			h->connect_failures++;
		}
	}
	bpf_map_delete_elem(&connecting, &sk_key);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(soak_tcp_retransmit, const struct sock *sk)
{
	struct soak_tcp_hist *h = endpoint_hist(sk);

	if (h)
		h->retransmits++;
	return 0;
}

/* sk is NULL for a reset answering a segment no socket owns. */
SEC("tp_btf/tcp_send_reset")
int BPF_PROG(soak_tcp_send_reset, const struct sock *sk)
{
	struct soak_tcp_hist *h = endpoint_hist(sk);

	if (h)
		h->resets_sent++;
	return 0;
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(soak_tcp_receive_reset, struct sock *sk)
{
	struct soak_tcp_hist *h = endpoint_hist(sk);

	if (h)
		h->resets_received++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
