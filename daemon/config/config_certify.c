// SPDX-License-Identifier: GPL-2.0-only
/*
 * "run": {"certify": ...}: the steps, the hold, the thresholds and limits,
 * and the certified workloads' schedules made of them.  See
 * config_certify.h.
 */
#include "config_certify.h"

#include <math.h>
#include <string.h>

#include "parse.h"
#include "report.h"

/* A load given as "3x" or 3. */
static bool get_load(struct cfg_ctx *c, json_t *v, const char *what, double *ret)
{
	const char *why = "";

	if (json_is_number(v)) {
		double n = json_number_value(v);
		if (isfinite(n) && n > 0 && n <= 1e6) {
			*ret = n;
			return true;
		}
		cfg_report(c, "%s must be a load above 0 such as \"3x\"", what);
		return false;
	}
	if (!json_is_string(v)) {
		cfg_report(c, "%s must be a load such as \"3x\"", what);
		return false;
	}
	if (parse_multiple(json_string_value(v), ret, &why) < 0 || *ret > 1e6) {
		cfg_report(c, "bad load \"%s\" in %s: %s (write it as \"3x\")", json_string_value(v),
			   what, *why ? why : "too large");
		return false;
	}
	return true;
}

static void parse_steps(struct cfg_ctx *c, json_t *v, struct certify_config *cc)
{
	json_t *arr = json_object_get(v, "steps");

	if (arr) {
		if (json_object_get(v, "start") || json_object_get(v, "factor") ||
		    json_object_get(v, "max")) {
			cfg_report(c, "give either \"steps\" or \"start\", \"factor\" and \"max\", "
				      "not both");
			return;
		}
		cfg_push_key(c, "steps");
		if (!json_is_array(arr) || json_array_size(arr) == 0 ||
		    json_array_size(arr) > SCHED_MAX_STEPS) {
			cfg_report(c, "\"steps\" must be a list of 1 to %d loads such as "
				      "[\"1x\", \"3x\", \"6x\"]", SCHED_MAX_STEPS);
			cfg_pop(c);
			return;
		}
		size_t i;
		json_t *e;
		json_array_foreach(arr, i, e) {
			cfg_push_index(c, i);
			if (get_load(c, e, "a step", &cc->loads[i]) && i > 0 &&
			    cc->loads[i] <= cc->loads[i - 1])
				cfg_report(c, "the steps' loads must increase: a certification stops "
					      "at the first load that fails");
			cfg_pop(c);
		}
		cc->n_steps = json_array_size(arr);
		cfg_pop(c);
		return;
	}
	double start = 0, factor = 0, max = 0;
	json_t *jstart = json_object_get(v, "start"), *jmax = json_object_get(v, "max");
	if (!jstart || !json_object_get(v, "factor") || !jmax) {
		cfg_report(c, "\"certify\" needs \"steps\" (a list of loads) or \"start\", "
			      "\"factor\" and \"max\"");
		return;
	}
	cfg_push_key(c, "start");
	bool good = get_load(c, jstart, "\"start\"", &start);
	cfg_pop(c);
	cfg_push_key(c, "max");
	good = get_load(c, jmax, "\"max\"", &max) && good;
	cfg_pop(c);
	cfg_get_number(c, v, "factor", 0, 1e6, &factor);
	if (factor <= 1) {
		cfg_push_key(c, "factor");
		cfg_report(c, "\"factor\" must be above 1: each step multiplies the load by it");
		cfg_pop(c);
		return;
	}
	if (!good)
		return;
	if (max < start) {
		cfg_push_key(c, "max");
		cfg_report(c, "\"max\" must be at least \"start\"");
		cfg_pop(c);
		return;
	}
	/* A hair of slack so 1x * 2 * 2 * 2 reaches "8x" despite rounding. */
	for (double load = start; load <= max * (1 + 1e-9); load *= factor) {
		if (cc->n_steps == SCHED_MAX_STEPS) {
			cfg_push_key(c, "factor");
			cfg_report(c, "from \"start\" to \"max\" by this \"factor\" makes more than "
				      "%d steps", SCHED_MAX_STEPS);
			cfg_pop(c);
			return;
		}
		cc->loads[cc->n_steps++] = load;
	}
}

/* A list of thresholds or limits: "1,8,64", or ["1ms", "8ms", 64]. */
static bool list_text(json_t *v, char *buf, size_t len)
{
	size_t off = 0;
	size_t i;
	json_t *e;

	if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
		return true;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return false;
	json_array_foreach(v, i, e) {
		int n;
		if (json_is_string(e))
			n = snprintf(buf + off, len - off, "%s%s", i ? "," : "", json_string_value(e));
		else if (json_is_number(e))
			n = snprintf(buf + off, len - off, "%s%g", i ? "," : "", json_number_value(e));
		else
			return false;
		if (n < 0 || (size_t)n >= len - off)
			return false;
		off += (size_t)n;
	}
	return true;
}

static void parse_thresholds(struct cfg_ctx *c, json_t *v, struct certify_config *cc)
{
	struct report_options o;
	const char *why = "";
	char text[1024];

	report_default_options(&o);
	json_t *t = json_object_get(v, "thresholds"), *l = json_object_get(v, "limits");
	if (t) {
		cfg_push_key(c, "thresholds");
		if (!list_text(t, text, sizeof(text)))
			cfg_report(c, "\"thresholds\" must be a list of latencies such as "
				      "[\"1ms\", \"8ms\", \"64ms\"] or \"1,8,64\" (ms)");
		else if (report_parse_thresholds(text, &o, &why) < 0)
			cfg_report(c, "bad \"thresholds\": %s", why);
		cfg_pop(c);
	}
	if (l) {
		cfg_push_key(c, "limits");
		if (!list_text(l, text, sizeof(text)))
			cfg_report(c, "\"limits\" must be a list of percentages such as [5, 1, 0.1], "
				      "one per threshold");
		else if (report_parse_limits(text, &o, &why) < 0)
			cfg_report(c, "bad \"limits\": %s", why);
		cfg_pop(c);
	}
	bool any = false;
	for (size_t i = 0; i < o.n_thresholds; i++)
		any = any || o.limits_pct[i] >= 0;
	if (!any) {
		cfg_report(c, "a certification needs a limit for at least one threshold "
			      "(\"limits\": ACT's are 5, 1 and 0.1 %% over 1, 8 and 64 ms)");
		return;
	}
	memcpy(cc->thresholds_ns, o.thresholds_ns, sizeof(o.thresholds_ns[0]) * o.n_thresholds);
	memcpy(cc->limits_pct, o.limits_pct, sizeof(o.limits_pct[0]) * o.n_thresholds);
	cc->n_thresholds = o.n_thresholds;
}

static json_t *workload_json(json_t *workloads, size_t i)
{
	json_t *w = json_array_get(workloads, i);
	return json_is_object(w) ? w : NULL;
}

/* Whether workload i can be certified; its schedule becomes the steps. */
static void certify_workload(struct cfg_ctx *c, const struct certify_config *cc,
			     struct run_config *run, size_t i, json_t *obj)
{
	struct workload_config *w = &run->workloads[i];
	uint64_t interval = run->interval_ns;

	if (obj && json_object_get(obj, "schedule")) {
		cfg_report(c, "workload \"%s\" has a \"schedule\" of its own: a certified "
			      "workload's schedule is the certification's steps", w->name);
		return;
	}
	if (w->rate <= 0) {
		cfg_report(c, "workload \"%s\" runs closed-loop: a certification steps a "
			      "\"rate\" up, so it needs one", w->name);
		return;
	}
	if (!w->autostart || w->start_offset_ns % interval) {
		cfg_report(c, "workload \"%s\" must start with the run (autostart, and a "
			      "\"start\" of whole intervals) so its steps end on interval "
			      "boundaries", w->name);
		return;
	}
	w->certify_unit = w->type == WORKLOAD_DEVICE && w->model != MODEL_PATTERN &&
					  w->act.load > 0 ? 1 / w->act.load : 1;
	for (size_t s = 0; s < cc->n_steps; s++) {
		double scale = cc->loads[s] * w->certify_unit;
		if (w->rate * scale > CONFIG_MAX_RATE) {
			char load[32];
			certify_load_name(cc->loads[s], load, sizeof(load));
			cfg_report(c, "step %s of workload \"%s\" runs at %g ops/s, more than the %g "
				      "a workload may ask for", load, w->name, w->rate * scale,
				   CONFIG_MAX_RATE);
			return;
		}
		w->steps[s] = (struct sched_step){ .scale = scale, .duration_ns = cc->hold_ns };
	}
	w->n_steps = cc->n_steps;
	w->certified = true;
}

void certify_config_parse(struct cfg_ctx *c, json_t *v, json_t *workloads,
			  struct run_config *run)
{
	static const char *const keys[] = { "workload", "steps", "start", "factor", "max",
					    "hold", "thresholds", "limits", "confirm", NULL };
	struct certify_config *cc = &run->certify;
	const char *name = NULL;

	cfg_push_key(c, "run");
	cfg_push_key(c, "certify");
	if (!json_is_object(v)) {
		cfg_report(c, "\"certify\" must be an object: {\"steps\": [...], \"hold\": ...}");
		goto out;
	}
	cfg_check_keys(c, v, "\"certify\"", keys);
	if (cfg_get_duration(c, v, "confirm", &cc->confirm_ns) &&
	    (!cc->confirm_ns || cc->confirm_ns % run->interval_ns)) {
		cfg_push_key(c, "confirm");
		cfg_report(c, "\"confirm\" must be a whole number of the run's intervals");
		cfg_pop(c);
		cc->confirm_ns = 0;
	}
	parse_steps(c, v, cc);
	if (!json_object_get(v, "hold")) {
		cfg_report(c, "\"certify\" needs \"hold\": how long each step runs, such as \"1h\"");
	} else if (cfg_get_duration(c, v, "hold", &cc->hold_ns) &&
		   (cc->hold_ns == 0 || cc->hold_ns % run->interval_ns)) {
		cfg_push_key(c, "hold");
		cfg_report(c, "\"hold\" must be a whole number of the run's intervals");
		cfg_pop(c);
		cc->hold_ns = 0;
	}
	parse_thresholds(c, v, cc);
	if (cfg_get_string(c, v, "workload", &name)) {
		size_t i;
		for (i = 0; i < run->n_workloads; i++)
			if (strcmp(run->workloads[i].name, name) == 0)
				break;
		if (i == run->n_workloads) {
			cfg_push_key(c, "workload");
			cfg_report(c, "no workload is named \"%s\"", name);
			cfg_pop(c);
			goto out;
		}
		snprintf(cc->workload, sizeof(cc->workload), "%s", name);
	}
	if (!cc->n_steps || !cc->hold_ns || !cc->n_thresholds)
		goto out;
	if (run->duration_ns && cc->confirm_ns) {
		cfg_report(c, "a certification with \"confirm\" ends when it is confirmed: leave "
			      "the run's \"duration\" out");
		goto out;
	}
	if (run->duration_ns && run->duration_ns / cc->hold_ns < cc->n_steps) {
		cfg_report(c, "the run's \"duration\" ends before the last of the %zu steps: leave "
			      "it out, and the run ends with the certification", cc->n_steps);
		goto out;
	}
	for (size_t i = 0; i < run->n_workloads; i++)
		if (!name || strcmp(run->workloads[i].name, name) == 0)
			certify_workload(c, cc, run, i, workload_json(workloads, i));
	cc->enabled = true;
out:
	cfg_pop(c);
	cfg_pop(c);
}

void certify_load_name(double load, char *buf, size_t len)
{
	snprintf(buf, len, "%gx", load);
}

void certify_config_print(const struct certify_config *cc, FILE *out)
{
	char buf[64];

	if (!cc->enabled)
		return;
	fprintf(out, ",\n   \"certify\": {\"workload\": ");
	if (cc->workload[0])
		fprintf(out, "\"%s\"", cc->workload);
	else
		fprintf(out, "\"(all)\"");
	format_duration(cc->hold_ns, buf, sizeof(buf));
	fprintf(out, ", \"hold\": \"%s\", ", buf);
	if (cc->confirm_ns) {
		format_duration(cc->confirm_ns, buf, sizeof(buf));
		fprintf(out, "\"confirm\": \"%s\", ", buf);
	}
	fprintf(out, "\"steps\": [");
	for (size_t i = 0; i < cc->n_steps; i++) {
		certify_load_name(cc->loads[i], buf, sizeof(buf));
		fprintf(out, "%s\"%s\"", i ? ", " : "", buf);
	}
	fprintf(out, "], \"thresholds\": [");
	for (size_t i = 0; i < cc->n_thresholds; i++) {
		format_duration(cc->thresholds_ns[i], buf, sizeof(buf));
		fprintf(out, "%s\"%s\"", i ? ", " : "", buf);
	}
	fprintf(out, "], \"limits\": [");
	for (size_t i = 0; i < cc->n_thresholds; i++) {
		if (cc->limits_pct[i] < 0)
			fprintf(out, "%s\"-\"", i ? ", " : "");
		else
			fprintf(out, "%s%g", i ? ", " : "", cc->limits_pct[i]);
	}
	fprintf(out, "]}");
}
