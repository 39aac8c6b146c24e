// SPDX-License-Identifier: GPL-2.0-only
#include "config_limits.h"

#include <inttypes.h>
#include <math.h>

#include "device/dev_model.h"
#include "obj_config.h"
#include "parse.h"

/* What each target's engine allocates: two buffers (read, write) per op in
 * flight, each the largest op plus the unit a record read may round up to
 * (dev_engine.c's dev_prepare). */
static uint64_t buffer_bytes_per_target(const struct workload_config *w)
{
	struct dev_model model;
	char err[128];

	if (w->type != WORKLOAD_DEVICE || dev_model_build(w, &model, err, sizeof(err)) < 0)
		return 0;
	return (uint64_t)2 * model.slots * ((uint64_t)model.max_len + 4096);
}

static void check_schedule(struct cfg_ctx *c, json_t *obj, struct workload_config *w,
			   const struct run_config *run)
{
	bool explicit_schedule = json_object_get(obj, "schedule") != NULL;
	double ops = 0, prev = 0, peak = 0;
	size_t peak_step = 0;
	uint64_t total_ns = w->start_offset_ns;
	char buf[64];

	for (size_t i = 0; i < w->n_steps; i++) {
		const struct sched_step *s = &w->steps[i];
		double scale = s->ramp ? (prev + s->scale) / 2 : s->scale;
		ops += w->rate * scale * (double)s->duration_ns / 1e9;
		if (s->scale > peak) {
			peak = s->scale;
			peak_step = i;
		}
		prev = s->scale;
		if (__builtin_add_overflow(total_ns, s->duration_ns, &total_ns))
			total_ns = UINT64_MAX;
	}
	if (explicit_schedule && total_ns > CONFIG_MAX_SCHEDULE_NS) {
		cfg_push_key(c, "schedule");
		cfg_report(c, "\"start\" and the schedule's steps add up to more than %.0f years",
			   (double)CONFIG_MAX_SCHEDULE_NS / 1e9 / 86400 / 365.25);
		cfg_pop(c);
		return;
	}
	if (w->rate <= 0)
		return;
	if (w->rate * peak > CONFIG_MAX_RATE) {
		cfg_push_key(c, "schedule");
		cfg_push_index(c, peak_step);
		cfg_report(c, "this step runs at %g ops/s (\"rate\" %g times %g), more than the %g "
			      "ops/s a workload may ask for", w->rate * peak, w->rate, peak,
			   CONFIG_MAX_RATE);
		cfg_pop(c);
		cfg_pop(c);
		return;
	}
	if (ops <= CONFIG_MAX_SCHEDULE_OPS)
		return;
	if (!explicit_schedule && !run->duration_ns) {
		/* "Until stopped": as long as the scheduler can count, which is
		 * over 2.8 years even at the highest rate allowed. */
		w->steps[0].duration_ns =
			(uint64_t)(CONFIG_MAX_SCHEDULE_OPS / w->rate * 0.999) * UINT64_C(1000000000);
		return;
	}
	format_duration((uint64_t)(CONFIG_MAX_SCHEDULE_OPS / (w->rate * (peak > 0 ? peak : 1))) *
				UINT64_C(1000000000), buf, sizeof(buf));
	cfg_push_key(c, explicit_schedule ? "schedule" : "rate");
	cfg_report(c, "the schedule holds %.3g ops, more than the 2^53 the scheduler counts "
		      "exactly: at this rate it may last about %s; shorten it or lower the rate",
		   ops, buf);
	cfg_pop(c);
}

void config_check_workload_limits(struct cfg_ctx *c, json_t *obj, struct workload_config *w,
				  const struct run_config *run)
{
	check_schedule(c, obj, w, run);

	uint64_t per_target = buffer_bytes_per_target(w);
	if (per_target > CONFIG_MAX_BUFFER_BYTES_PER_TARGET) {
		char need[32], limit[32];
		format_size(per_target, need, sizeof(need));
		format_size(CONFIG_MAX_BUFFER_BYTES_PER_TARGET, limit, sizeof(limit));
		cfg_push_key(c, json_object_get(obj, "queue_depth") ? "queue_depth" : "block_size");
		cfg_report(c, "the ops in flight need %s of buffers per target, more than %s: lower "
			      "\"queue_depth\" or the block sizes", need, limit);
		cfg_pop(c);
	}
}

void config_check_run_limits(struct cfg_ctx *c, const struct run_config *run)
{
	uint64_t streams = 0, connections = 0, buffers = 0, objects = 0;

	for (size_t i = 0; i < run->n_workloads; i++) {
		const struct workload_config *w = &run->workloads[i];
		if (w->type == WORKLOAD_OBJECT && w->object) {
			streams += w->object->threads;
			connections += w->object->concurrency;
			objects += w->object->objects;
		} else {
			streams += w->n_targets;
			buffers += buffer_bytes_per_target(w) * w->n_targets;
		}
	}
	cfg_push_key(c, "workloads");
	if (streams > CONFIG_MAX_STREAMS)
		cfg_report(c, "the workloads need %" PRIu64 " threads (one per device target, one per "
			      "object thread), more than %d", streams, CONFIG_MAX_STREAMS);
	if (connections > CONFIG_MAX_CONNECTIONS)
		cfg_report(c, "the object workloads' \"concurrency\" adds up to %" PRIu64 ", more than "
			      "%d transfers in flight", connections, CONFIG_MAX_CONNECTIONS);
	if (objects > CONFIG_MAX_OBJECTS_TOTAL)
		cfg_report(c, "the object workloads' \"objects\" add up to %" PRIu64 ", more than %u "
			      "names in the pools", objects, CONFIG_MAX_OBJECTS_TOTAL);
	if (buffers > CONFIG_MAX_BUFFER_BYTES_TOTAL) {
		char need[32], limit[32];
		format_size(buffers, need, sizeof(need));
		format_size(CONFIG_MAX_BUFFER_BYTES_TOTAL, limit, sizeof(limit));
		cfg_report(c, "the device workloads need %s of I/O buffers, more than %s: lower "
			      "\"queue_depth\", the block sizes or the number of targets", need, limit);
	}
	cfg_pop(c);
}
