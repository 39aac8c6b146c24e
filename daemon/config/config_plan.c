// SPDX-License-Identifier: GPL-2.0-only
/*
 * The resolved plan (plan.json): every workload with its defaults filled in
 * and its schedule with absolute offsets.  Its text is also what a reload
 * compares to tell a kept workload from a changed one.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_act.h"
#include "config_certify.h"
#include "config_search.h"
#include "config_export.h"
#include "config_drift.h"
#include "config_trace.h"
#include "config_verify.h"
#include "obj_config.h"
#include "parse.h"
#include "rfc3339.h"

static void print_duration(FILE *out, const char *key, uint64_t ns, const char *sep)
{
	char buf[64];
	if (ns >= CONFIG_FOREVER_NS)
		snprintf(buf, sizeof(buf), "forever");
	else
		format_duration(ns, buf, sizeof(buf));
	fprintf(out, "\"%s\": \"%s\"%s", key, buf, sep);
}

static void print_device_plan(const struct workload_config *w, FILE *out)
{
	char buf[64];

	fprintf(out, "     \"model\": \"pattern\", \"targets\": [");
	config_print_targets(w, out);
	format_size(w->file_size, buf, sizeof(buf));
	fprintf(out, "],\n     \"file_size\": \"%s\", \"read_pct\": %u, \"block_size\": [",
		w->file_size ? buf : "existing", w->read_pct);
	for (size_t b = 0; b < w->n_block_sizes; b++) {
		format_size(w->block_sizes[b].bytes, buf, sizeof(buf));
		fprintf(out, "%s{\"size\": \"%s\", \"weight\": %u}", b ? ", " : "", buf,
			w->block_sizes[b].weight);
	}
	fprintf(out, "], \"access\": \"%s\", \"queue_depth\": %u, \"prep\": %s,\n",
		access_name(w->access), w->queue_depth, w->prep ? "true" : "false");
}

/* One workload's part of the plan: everything that defines it, so two
 * workloads with the same text are the same workload (reload). */
static void print_workload(const struct workload_config *w, FILE *out)
{
	fprintf(out, "    {\"name\": \"%s\", \"type\": \"%s\", \"autostart\": %s,\n",
		w->name, workload_type_name(w->type), w->autostart ? "true" : "false");
	if (w->type == WORKLOAD_OBJECT)
		obj_config_print(w->object, out);
	else if (w->model != MODEL_PATTERN)
		act_config_print(w, out);
	else
		print_device_plan(w, out);
	if (w->type == WORKLOAD_DEVICE)
		verify_config_print(&w->verify, out);
	if (w->rate > 0)
		fprintf(out, "     \"rate\": %g, \"arrival\": \"%s\", ", w->rate,
			w->arrival == ARRIVAL_POISSON ? "poisson" : "uniform");
	else
		fprintf(out, "     \"rate\": \"closed-loop\", ");
	print_duration(out, "max_lag", w->max_lag_ns, ", ");
	if (w->drift.enabled) {
		drift_config_print(&w->drift, out);
		fputs(", ", out);
	}
	fprintf(out, "\"seed\": %" PRIu64 ",\n     \"schedule\": [\n", w->seed);
	uint64_t at = w->start_offset_ns;
	for (size_t s = 0; s < w->n_steps; s++) {
		const struct sched_step *st = &w->steps[s];
		fprintf(out, "       {");
		print_duration(out, "at", at, ", ");
		print_duration(out, "for", st->duration_ns, ", ");
		fprintf(out, "\"scale\": %g, \"ramp\": %s", st->scale, st->ramp ? "true" : "false");
		if (w->rate > 0)
			fprintf(out, ", \"rate\": %g", w->rate * st->scale);
		fprintf(out, "}%s\n", s + 1 < w->n_steps ? "," : "");
		at = at + st->duration_ns >= CONFIG_FOREVER_NS ? CONFIG_FOREVER_NS : at + st->duration_ns;
	}
	fprintf(out, "     ]}");
}

char *config_workload_text(const struct workload_config *w)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	print_workload(w, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

void config_print_plan(const struct run_config *c, FILE *out)
{
	fprintf(out, "{\n  \"run\": {\"name\": \"%s\", ", c->name);
	print_duration(out, "duration", c->duration_ns ? c->duration_ns : CONFIG_FOREVER_NS, ", ");
	print_duration(out, "interval", c->interval_ns, ", ");
	print_duration(out, "slice", c->slice_ns, ", ");
	fprintf(out, "\"on_finish\": \"%s\",\n   ", c->exit_on_finish ? "exit" : "idle");
	if (c->start_at_ns) {
		char when[64];
		rfc3339_format(c->start_at_ns, when, sizeof(when));
		fprintf(out, "\"start_at\": \"%s\", ", when);
	}
	trace_config_print(&c->trace, out);
	if (c->exports.prom_textfile || c->exports.statsd_address) {
		fputs(",\n   ", out);
		export_config_print(&c->exports, out);
	}
	certify_config_print(&c->certify, out);
	search_config_print(&c->search, out);
	fprintf(out, "},\n  \"workloads\": [\n");
	for (size_t i = 0; i < c->n_workloads; i++) {
		print_workload(&c->workloads[i], out);
		fprintf(out, "%s\n", i + 1 < c->n_workloads ? "," : "");
	}
	fprintf(out, "  ]\n}\n");
}
