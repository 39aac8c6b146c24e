// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's figures a dump read from the log gives per workload: each
 * interval record's "kernel" (kernel.blk per request type, kernel.tcp)
 * summed, the block layer's latency histograms merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#include "rundump_int.h"

void rd_kernel_free(struct rd_kernel *k)
{
	for (size_t i = 0; i < k->n_blk; i++)
		hist_delete(k->blk[i].lat);
	memset(k, 0, sizeof(*k));
}

/* An interval's "kernel" (kernel.blk per request type, kernel.tcp) into k. */
int rd_kernel_add(struct rd_kernel *k, json_t *kernel)
{
	json_t *blk = json_object_get(kernel, "blk"), *tcp = json_object_get(kernel, "tcp"), *o;
	const char *name;

	/* Malformed, it is left out: the interval's own ops still count. */
	if (!json_is_object(kernel))
		return 0;
	json_object_foreach(blk, name, o) {
		struct rd_kblk *b = NULL;
		for (size_t i = 0; i < k->n_blk && !b; i++)
			if (strcmp(k->blk[i].name, name) == 0)
				b = &k->blk[i];
		if (!b) {
			if (k->n_blk == RD_MAX_KBLK_OPS || strlen(name) >= sizeof(b->name))
				continue;
			b = &k->blk[k->n_blk];
			memset(b, 0, sizeof(*b));
			if (!(b->lat = hist_new()))
				return -ENOMEM;
			strcpy(b->name, name);
			k->n_blk++;
		}
		b->count = rd_sat_add(b->count, rd_u64(o, "count"));
		b->errors = rd_sat_add(b->errors, rd_u64(o, "errors"));
		b->bytes = rd_sat_add(b->bytes, rd_u64(o, "bytes"));
		b->unstamped = rd_sat_add(b->unstamped, rd_u64(o, "unstamped"));
		b->unissued = rd_sat_add(b->unissued, rd_u64(o, "unissued"));
		rd_merge_b64(b->lat, o, "latency_hist");
	}
	if (json_is_object(tcp)) {
		k->tcp = true;
		k->srtt_samples = rd_sat_add(k->srtt_samples, rd_u64(tcp, "srtt_samples"));
		k->connects = rd_sat_add(k->connects, rd_u64(tcp, "connects"));
		k->connect_failures = rd_sat_add(k->connect_failures, rd_u64(tcp, "connect_failures"));
		k->retransmits = rd_sat_add(k->retransmits, rd_u64(tcp, "retransmits"));
		k->resets_sent = rd_sat_add(k->resets_sent, rd_u64(tcp, "resets_sent"));
		k->resets_received = rd_sat_add(k->resets_received, rd_u64(tcp, "resets_received"));
	}
	return 0;
}

json_t *rd_kernel_json(const struct rd_kernel *k)
{
	if (!k->n_blk && !k->tcp)
		return NULL;
	json_t *blk = json_object();
	for (size_t i = 0; i < k->n_blk; i++) {
		const struct rd_kblk *b = &k->blk[i];
		char *text = hist_to_base64(b->lat);
		json_object_set_new(blk, b->name, json_pack(
			"{s:I,s:I,s:I,s:I,s:I,s:o,s:s?}", "count", (json_int_t)b->count,
			"errors", (json_int_t)b->errors, "bytes", (json_int_t)b->bytes,
			"unstamped", (json_int_t)b->unstamped, "unissued", (json_int_t)b->unissued,
			"latency_us", rd_latency_json(b->lat), "latency_hist", text));
		free(text);
	}
	json_t *j = json_pack("{s:o}", "blk", blk);
	if (j && k->tcp)
		json_object_set_new(j, "tcp", json_pack(
			"{s:I,s:I,s:I,s:I,s:I,s:I}", "srtt_samples", (json_int_t)k->srtt_samples,
			"connects", (json_int_t)k->connects,
			"connect_failures", (json_int_t)k->connect_failures,
			"retransmits", (json_int_t)k->retransmits,
			"resets_sent", (json_int_t)k->resets_sent,
			"resets_received", (json_int_t)k->resets_received));
	return j;
}
