// SPDX-License-Identifier: GPL-2.0-only
/* What the probes measured, for soakctl, dumps and journald. */
#include "probes.h"
#include "probes_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/journal_ids.h"
#include "base/log.h"
#include "workload/workload.h"

static const char *const family_names[PROBE_FAMILIES] = { "blk", "tcp" };
static const char *const blk_op_names[SOAK_BLK_OPS] = { "read", "write", "flush", "discard",
							"other" };

const char *probe_family_name(enum probe_family f)
{
	return f < PROBE_FAMILIES ? family_names[f] : "?";
}

int probe_family_from_name(const char *name)
{
	for (int f = 0; f < PROBE_FAMILIES; f++)
		if (strcmp(name, family_names[f]) == 0)
			return f;
	return -1;
}

const char *probe_state_name(enum probe_state s)
{
	return s == PROBE_ON ? "on" : s == PROBE_OFF ? "off" : "unavailable";
}

enum probe_state probes_state(const struct probes *p, enum probe_family f)
{
	return p ? p->fam[f].state : PROBE_UNAVAILABLE;
}

const char *probes_reason(const struct probes *p, enum probe_family f)
{
	if (!p)
		return "kernel tracing was not set up (out of memory at start)";
	return p->fam[f].state == PROBE_UNAVAILABLE ? p->fam[f].reason : "";
}

enum probe_cause probes_cause(const struct probes *p, enum probe_family f)
{
	if (!p)
		return PROBE_CAUSE_ERROR;
	return p->fam[f].state == PROBE_UNAVAILABLE ? p->fam[f].cause : PROBE_CAUSE_NONE;
}

const char *probe_cause_name(enum probe_cause c)
{
	static const char *const names[] = {
		[PROBE_CAUSE_NONE] = "",
		[PROBE_CAUSE_PRIVILEGE] = "privilege",
		[PROBE_CAUSE_KERNEL] = "kernel",
		[PROBE_CAUSE_VERIFIER] = "verifier",
		[PROBE_CAUSE_ERROR] = "error",
	};

	return c <= PROBE_CAUSE_ERROR ? names[c] : "error";
}

static int blk_op_index(const char *name)
{
	for (int op = 0; op < SOAK_BLK_OPS; op++)
		if (strcmp(name, blk_op_names[op]) == 0)
			return op;
	return -1;
}

/* The last interval of workload i's devices for one op, merged: either a
 * device's own (*ret_owned NULL) or a copy to free. */
static const struct kstats_blk *workload_blk(const struct probes *p, size_t workload, int op,
					     struct kstats_blk **ret_owned)
{
	const struct probe_workload *pw = &p->workloads[workload];
	const struct kstats_blk *only = NULL;
	struct kstats_blk *merged = NULL;

	*ret_owned = NULL;
	for (size_t k = 0; k < pw->n_slots; k++) {
		const struct probe_blk_op *bo = &p->devs[pw->slots[k]].ops[op];
		if (!bo->has_interval)
			continue;
		if (!only) {
			only = bo->interval;
			continue;
		}
		if (!merged) {
			merged = malloc(sizeof(*merged));
			if (!merged)
				return only;
			kstats_blk_init(merged);
			kstats_blk_merge(merged, only);
		}
		kstats_blk_merge(merged, bo->interval);
	}
	*ret_owned = merged;
	return merged ? merged : only;
}

bool probes_workload_blk(const struct probes *p, size_t workload, const char *op,
			 struct kstats_summary *ret)
{
	const struct kstats_blk *s;
	struct kstats_blk *owned;
	int o = blk_op_index(op);

	if (!p || o < 0 || workload >= p->n_workloads)
		return false;
	s = workload_blk(p, workload, o, &owned);
	if (s)
		kstats_blk_summary(s, ret);
	kstats_blk_free(owned);
	free(owned);
	return s != NULL;
}

static struct kstats_tcp *workload_tcp(const struct probes *p, size_t workload)
{
	struct kstats_tcp *merged = malloc(sizeof(*merged));
	bool any = false;

	if (!merged)
		return NULL;
	kstats_tcp_init(merged);
	pthread_mutex_lock(p->eps_lock);
	for (size_t i = 0; i < p->n_eps; i++)
		if (workload < 64 && (p->eps[i].owners >> workload & 1) && p->eps[i].has_interval) {
			kstats_tcp_merge(merged, p->eps[i].interval);
			any = true;
		}
	pthread_mutex_unlock(p->eps_lock);
	if (!any) {
		free(merged);
		return NULL;
	}
	return merged;
}

void probes_record_extra(void *userdata, const struct workload *w, uint64_t start_ns,
			 uint64_t end_ns, json_t *record)
{
	const struct probes *p = userdata;
	size_t index;
	json_t *kernel, *blk;
	struct kstats_tcp *tcp;

	(void)start_ns;
	(void)end_ns;
	if (!p || w->slot >= p->n_workloads)
		return;
	index = w->slot;
	blk = json_object();
	for (int op = 0; op < SOAK_BLK_OPS; op++) {
		struct kstats_blk *owned;
		const struct kstats_blk *s = workload_blk(p, index, op, &owned);
		if (s)
			json_object_set_new(blk, blk_op_names[op], kstats_blk_json(s));
		kstats_blk_free(owned);
		free(owned);
	}
	kernel = json_pack("{s:o}", "blk", blk);
	tcp = workload_tcp(p, index);
	if (tcp)
		json_object_set_new(kernel, "tcp", kstats_tcp_json(tcp));
	kstats_tcp_free(tcp);
	free(tcp);
	if (json_object_size(blk) || tcp)
		json_object_set_new(record, "kernel", kernel);
	else
		json_decref(kernel);
}

bool probes_workload_tcp(const struct probes *p, size_t workload, struct kstats_tcp_summary *ret)
{
	struct kstats_tcp *s = p ? workload_tcp(p, workload) : NULL;

	if (!s)
		return false;
	kstats_tcp_summary(s, ret);
	kstats_tcp_free(s);
	free(s);
	return true;
}

json_t *probes_trace_json(const struct probes *p)
{
	json_t *arr = json_array();

	for (int f = 0; f < PROBE_FAMILIES; f++) {
		enum probe_state s = probes_state(p, (enum probe_family)f);
		json_t *probe = json_pack("{s:s,s:s}", "name", family_names[f], "state",
					  probe_state_name(s));
		json_t *tps = json_array();

		if (s == PROBE_UNAVAILABLE) {
			json_object_set_new(probe, "reason", json_string(probes_reason(p, f)));
			json_object_set_new(probe, "cause",
					    json_string(probe_cause_name(probes_cause(p, f))));
		}
		for (size_t i = 0; p && i < p->fam[f].n_progs; i++) {
			const struct probe_prog *pp = &p->fam[f].progs[i];
			if (!pp->missing && *pp->link)
				json_array_append_new(tps, json_string(pp->tracepoint));
		}
		json_object_set_new(probe, "attached", tps);
		if (p && s != PROBE_UNAVAILABLE)
			json_object_set_new(probe, "missed", json_integer((json_int_t)p->fam[f].missed));
		if (p && p->fam[f].note[0])
			json_object_set_new(probe, "note", json_string(p->fam[f].note));
		if (p && f == PROBE_BLK) {
			json_t *devs = json_array();
			for (size_t s2 = 0; s2 < p->n_devs; s2++)
				if (p->devs[s2].used && p->devs[s2].in_map)
					json_array_append_new(devs, json_string(p->devs[s2].name));
			json_object_set_new(probe, "devices", devs);
			json_object_set_new(probe, "all_devices",
					    json_boolean(p->cfg->trace.all_devices));
			if (p->unwatched[0])
				json_object_set_new(probe, "unwatched", json_string(p->unwatched));
		}
		if (p && f == PROBE_TCP) {
			json_t *eps = json_array();
			pthread_mutex_lock(p->eps_lock);
			for (size_t i = 0; i < p->n_eps; i++)
				json_array_append_new(eps, json_string(p->eps[i].label));
			pthread_mutex_unlock(p->eps_lock);
			json_object_set_new(probe, "endpoints", eps);
		}
		json_array_append_new(arr, probe);
	}
	return arr;
}

static json_t *device_workloads(const struct probes *p, __u32 slot)
{
	json_t *names = json_array();

	for (size_t i = 0; i < p->n_workloads; i++)
		for (size_t k = 0; k < p->workloads[i].n_slots; k++)
			if (p->workloads[i].slots[k] == slot) {
				json_array_append_new(names,
						      json_string(p->cfg->workloads[i].name));
				break;
			}
	return names;
}

static json_t *blk_interval_json(const struct kstats_blk *k)
{
	struct kstats_summary sum;

	kstats_blk_summary(k, &sum);
	return json_pack("{s:I,s:f,s:f,s:f,s:f}", "count", (json_int_t)sum.count,
			 "p50_us", sum.p50 / 1e3, "p99_us", sum.p99 / 1e3, "max_us", sum.max / 1e3,
			 "queue_p99_us", hist_percentile(&k->queue, 99) / 1e3);
}

static json_t *blk_json(const struct probes *p, bool interval)
{
	json_t *blk = json_object();

	for (size_t s = 0; p && s < p->n_devs; s++) {
		const struct probe_device *d = &p->devs[s];
		json_t *ops = json_object();
		char dev[32];

		if (!d->used)
			continue;
		for (int op = 0; op < SOAK_BLK_OPS; op++) {
			const struct probe_blk_op *o = &d->ops[op];
			json_t *j = NULL;
			if (interval && o->has_interval)
				j = blk_interval_json(o->interval);
			else if (!interval && o->total)
				j = kstats_blk_json(o->total);
			if (j)
				json_object_set_new(ops, blk_op_names[op], j);
		}
		/* A target's device is listed even without requests, as
		 * watched and idle, unless nothing could watch it. */
		if (!json_object_size(ops) &&
		    (interval || !d->fixed || p->fam[PROBE_BLK].state == PROBE_UNAVAILABLE)) {
			json_decref(ops);
			continue;
		}
		snprintf(dev, sizeof(dev), "%u:%u", d->kdev >> 20, d->kdev & 0xfffff);
		json_object_set_new(blk, d->name,
				    json_pack("{s:s,s:o,s:b,s:o}", "dev", dev,
					      "workloads", device_workloads(p, (__u32)s),
					      "per_request_map", d->stash, "ops", ops));
	}
	return blk;
}

static json_t *tcp_json(const struct probes *p, bool interval)
{
	json_t *tcp = json_object();

	if (!p)
		return tcp;
	pthread_mutex_lock(p->eps_lock);
	for (size_t i = 0; i < p->n_eps; i++) {
		const struct probe_endpoint *e = &p->eps[i];
		json_t *j;

		if (interval) {
			struct kstats_tcp_summary sum;
			if (!e->has_interval)
				continue;
			kstats_tcp_summary(e->interval, &sum);
			j = json_pack("{s:I,s:f,s:f,s:I,s:f,s:I,s:I}",
				      "srtt_samples", (json_int_t)sum.srtt_samples,
				      "srtt_p50_us", sum.srtt_p50 / 1e3,
				      "srtt_p99_us", sum.srtt_p99 / 1e3,
				      "connects", (json_int_t)sum.connects,
				      "connect_p99_us", sum.connect_p99 / 1e3,
				      "retransmits", (json_int_t)sum.retransmits,
				      "resets",
				      (json_int_t)(sum.resets_sent + sum.resets_received));
		} else {
			if (e->total) {
				j = kstats_tcp_json(e->total);
			} else {
				struct kstats_tcp *empty = malloc(sizeof(*empty));
				if (!empty)
					continue;
				kstats_tcp_init(empty);
				j = kstats_tcp_json(empty);
				free(empty);
			}
			/* "workload": the first of them, "workloads": all. */
			json_t *names = json_array();
			for (size_t w = 0; w < p->n_workloads && w < 64; w++)
				if (e->owners >> w & 1)
					json_array_append_new(names,
							      json_string(p->cfg->workloads[w].name));
			if (json_array_size(names))
				json_object_set(j, "workload", json_array_get(names, 0));
			json_object_set_new(j, "workloads", names);
		}
		json_object_set_new(tcp, e->label, j);
	}
	pthread_mutex_unlock(p->eps_lock);
	return tcp;
}

json_t *probes_dump_json(const struct probes *p)
{
	return json_pack("{s:o,s:o,s:o}", "blk", blk_json(p, false), "tcp", tcp_json(p, false),
			 "probes", probes_trace_json(p));
}

json_t *probes_status_json(const struct probes *p)
{
	return json_pack("{s:o,s:o}", "blk", blk_json(p, true), "tcp", tcp_json(p, true));
}

static void journal_blk(const struct probes *p, const struct probe_device *d, int op)
{
	const struct kstats_blk *k = d->ops[op].interval;
	struct kstats_summary sum;

	kstats_blk_summary(k, &sum);
	struct log_fields jf = { .n = 0 };

	log_fields_add(&jf, "MESSAGE=kernel %s %s: %" PRIu64 " requests, p50 %.1f us, p99 %.1f us, "
		       "max %.1f us, %" PRIu64 " errors", d->name, blk_op_names[op], sum.count,
		       sum.p50 / 1e3, sum.p99 / 1e3, sum.max / 1e3, sum.errors);
	log_fields_add(&jf, "PRIORITY=%d", LOG_INFO);
	log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
	log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_KERNEL_BLK);
	log_fields_add(&jf, "SOAK_RUN=%s", p->cfg->name);
	log_fields_add(&jf, "SOAK_KERNEL=blk");
	log_fields_add(&jf, "SOAK_DEVICE=%s", d->name);
	log_fields_add(&jf, "SOAK_OP=%s", blk_op_names[op]);
	log_fields_add(&jf, "SOAK_BLK_OPS=%" PRIu64, sum.count);
	log_fields_add(&jf, "SOAK_BLK_ERRORS=%" PRIu64, sum.errors);
	log_fields_add(&jf, "SOAK_BLK_BYTES=%" PRIu64, sum.bytes);
	log_fields_add(&jf, "SOAK_BLK_P50_US=%.3f", sum.p50 / 1e3);
	log_fields_add(&jf, "SOAK_BLK_P90_US=%.3f", sum.p90 / 1e3);
	log_fields_add(&jf, "SOAK_BLK_P99_US=%.3f", sum.p99 / 1e3);
	log_fields_add(&jf, "SOAK_BLK_P999_US=%.3f", sum.p999 / 1e3);
	log_fields_add(&jf, "SOAK_BLK_MAX_US=%.3f", sum.max / 1e3);
	log_fields_add(&jf, "SOAK_BLK_QUEUE_P50_US=%.3f", hist_percentile(&k->queue, 50) / 1e3);
	log_fields_add(&jf, "SOAK_BLK_QUEUE_P99_US=%.3f", hist_percentile(&k->queue, 99) / 1e3);
	log_fields_send(&jf, LOG_INFO);
}

static void journal_tcp(const struct probes *p, const struct probe_endpoint *e)
{
	const char *owner = "";
	for (size_t w = 0; w < p->n_workloads && w < 64 && !owner[0]; w++)
		if (e->owners >> w & 1)
			owner = p->cfg->workloads[w].name;
	struct kstats_tcp_summary sum;

	kstats_tcp_summary(e->interval, &sum);
	struct log_fields jf = { .n = 0 };

	log_fields_add(&jf, "MESSAGE=kernel tcp %s: srtt p50 %.1f us, p99 %.1f us; %" PRIu64
		       " connects, p99 %.1f us; %" PRIu64 " retransmits", e->label,
		       sum.srtt_p50 / 1e3, sum.srtt_p99 / 1e3, sum.connects,
		       sum.connect_p99 / 1e3, sum.retransmits);
	log_fields_add(&jf, "PRIORITY=%d", LOG_INFO);
	log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
	log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_KERNEL_TCP);
	log_fields_add(&jf, "SOAK_RUN=%s", p->cfg->name);
	log_fields_add(&jf, "SOAK_KERNEL=tcp");
	log_fields_add(&jf, "SOAK_ENDPOINT=%s", e->label);
	log_fields_add(&jf, "SOAK_WORKLOAD=%s", owner);
	log_fields_add(&jf, "SOAK_TCP_SRTT_SAMPLES=%" PRIu64, sum.srtt_samples);
	log_fields_add(&jf, "SOAK_TCP_SRTT_P50_US=%.3f", sum.srtt_p50 / 1e3);
	log_fields_add(&jf, "SOAK_TCP_SRTT_P99_US=%.3f", sum.srtt_p99 / 1e3);
	log_fields_add(&jf, "SOAK_TCP_SRTT_MAX_US=%.3f", sum.srtt_max / 1e3);
	log_fields_add(&jf, "SOAK_TCP_CONNECTS=%" PRIu64, sum.connects);
	log_fields_add(&jf, "SOAK_TCP_CONNECT_P50_US=%.3f", sum.connect_p50 / 1e3);
	log_fields_add(&jf, "SOAK_TCP_CONNECT_P99_US=%.3f", sum.connect_p99 / 1e3);
	log_fields_add(&jf, "SOAK_TCP_CONNECT_FAILURES=%" PRIu64, sum.connect_failures);
	log_fields_add(&jf, "SOAK_TCP_RETRANSMITS=%" PRIu64, sum.retransmits);
	log_fields_add(&jf, "SOAK_TCP_RESETS_SENT=%" PRIu64, sum.resets_sent);
	log_fields_add(&jf, "SOAK_TCP_RESETS_RECEIVED=%" PRIu64, sum.resets_received);
	log_fields_send(&jf, LOG_INFO);
}

/* One entry per device and op, and per endpoint, that saw anything in the
 * interval just read. */
void probes_journal(const struct probes *p)
{
	for (size_t s = 0; s < p->n_devs; s++)
		for (int op = 0; p->devs[s].used && op < SOAK_BLK_OPS; op++)
			if (p->devs[s].ops[op].has_interval)
				journal_blk(p, &p->devs[s], op);
	pthread_mutex_lock(p->eps_lock);
	for (size_t i = 0; i < p->n_eps; i++)
		if (p->eps[i].has_interval)
			journal_tcp(p, &p->eps[i]);
	pthread_mutex_unlock(p->eps_lock);
}
