// SPDX-License-Identifier: GPL-2.0-only
/*
 * "run": {"search": ...}: the capacity search's target, windows, bounds
 * and the soak after it.  See config_search.h.
 */
#include "config_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* "80%" or 0.8. */
static bool get_fraction(struct cfg_ctx *c, json_t *v, const char *key, double *ret)
{
	json_t *j = json_object_get(v, key);
	double f = -1;

	if (!j)
		return false;
	cfg_push_key(c, key);
	if (json_is_number(j)) {
		f = json_number_value(j);
	} else if (json_is_string(j)) {
		const char *s = json_string_value(j);
		char *end;
		f = strtod(s, &end);
		f = end != s && strcmp(end, "%") == 0 ? f / 100 : -1;
	}
	bool good = isfinite(f) && f > 0 && f <= 1;
	if (!good)
		cfg_report(c, "\"%s\" must be a share of the rate found, such as \"80%%\" or 0.8", key);
	else
		*ret = f;
	cfg_pop(c);
	return good;
}

static size_t find_workload(const struct run_config *run, const char *name)
{
	for (size_t i = 0; i < run->n_workloads; i++)
		if (strcmp(run->workloads[i].name, name) == 0)
			return i;
	return run->n_workloads;
}

void search_config_parse(struct cfg_ctx *c, json_t *v, json_t *workloads,
			 struct run_config *run)
{
	static const char *const keys[] = { "workload", "percentile", "below", "window", "windows",
					    "min", "max", "resolution", "then", "then_for", NULL };
	struct search_config *sc = &run->search;
	const char *name = NULL;
	uint64_t windows = 3;
	size_t i;

	cfg_push_key(c, "run");
	cfg_push_key(c, "search");
	if (!json_is_object(v)) {
		cfg_report(c, "\"search\" must be an object: {\"percentile\": 99, \"below\": \"2ms\", "
			      "\"window\": \"30s\", \"max\": RATE}");
		goto out;
	}
	cfg_check_keys(c, v, "\"search\"", keys);
	if (run->certify.enabled) {
		cfg_report_key(c, "a run either certifies or searches, not both");
		goto out;
	}
	sc->percentile = 99;
	sc->resolution = 0.05;
	cfg_get_number(c, v, "percentile", 1, 99.9999, &sc->percentile);
	if (!json_object_get(v, "below"))
		cfg_report(c, "\"search\" needs \"below\": the latency the percentile must stay "
			      "under, such as \"2ms\"");
	else if (cfg_get_duration(c, v, "below", &sc->below_ns) && !sc->below_ns) {
		cfg_push_key(c, "below");
		cfg_report(c, "\"below\" must be above 0");
		cfg_pop(c);
	}
	if (!json_object_get(v, "window"))
		cfg_report(c, "\"search\" needs \"window\": how long each judged window lasts, "
			      "such as \"30s\"");
	else if (cfg_get_duration(c, v, "window", &sc->window_ns) &&
		 (!sc->window_ns || sc->window_ns % run->interval_ns)) {
		cfg_push_key(c, "window");
		cfg_report(c, "\"window\" must be a whole number of the run's intervals");
		cfg_pop(c);
		sc->window_ns = 0;
	}
	cfg_get_uint(c, v, "windows", 1, SEARCH_MAX_WINDOWS, &windows);
	sc->windows = (unsigned)windows;
	cfg_get_number(c, v, "max", 0, CONFIG_MAX_RATE, &sc->max_rate);
	if (sc->max_rate <= 0)
		cfg_report(c, "\"search\" needs \"max\": the highest rate to try, in ops/s");
	sc->min_rate = sc->max_rate / 100;
	cfg_get_number(c, v, "min", 0, CONFIG_MAX_RATE, &sc->min_rate);
	if (sc->min_rate <= 0 || sc->min_rate >= sc->max_rate) {
		cfg_push_key(c, "min");
		cfg_report(c, "\"min\" must be above 0 and below \"max\"");
		cfg_pop(c);
	}
	cfg_get_number(c, v, "resolution", 0.001, 0.5, &sc->resolution);
	if (get_fraction(c, v, "then", &sc->then_fraction)) {
		sc->then_ns = run->duration_ns ? run->duration_ns : CONFIG_FOREVER_NS;
		cfg_get_duration(c, v, "then_for", &sc->then_ns);
	} else if (json_object_get(v, "then_for")) {
		cfg_push_key(c, "then_for");
		cfg_report_key(c, "\"then_for\" needs \"then\": the share of the rate found to soak at");
		cfg_pop(c);
	}
	if (cfg_get_string(c, v, "workload", &name)) {
		i = find_workload(run, name);
		if (i == run->n_workloads) {
			cfg_push_key(c, "workload");
			cfg_report(c, "no workload is named \"%s\"", name);
			cfg_pop(c);
			goto out;
		}
	} else if (run->n_workloads != 1) {
		cfg_report(c, "\"search\" needs \"workload\": which of the run's workloads to search");
		goto out;
	} else {
		i = 0;
	}
	struct workload_config *w = &run->workloads[i];
	json_t *obj = json_array_get(workloads, i);
	if (json_is_object(obj) && json_object_get(obj, "schedule"))
		cfg_report(c, "workload \"%s\" has a \"schedule\" of its own: a searched "
			      "workload's schedule is the search's probes", w->name);
	else if (w->rate <= 0)
		cfg_report(c, "workload \"%s\" runs closed-loop: a search varies a \"rate\", so it "
			      "needs one (any: the probes scale it)", w->name);
	else if (!w->autostart || w->start_offset_ns)
		cfg_report(c, "workload \"%s\" must start with the run (autostart, no \"start\")",
			   w->name);
	else if (run->duration_ns)
		cfg_report_key(c, "a search ends when it has its answer (and its \"then\" soak): "
				  "leave the run's \"duration\" out");
	if (c->errors || !sc->window_ns || !sc->below_ns)
		goto out;
	snprintf(sc->workload, sizeof(sc->workload), "%s", w->name);
	/* The first probe, at "min"; run/search.c sets each next one. */
	w->steps[0] = (struct sched_step){ .scale = sc->min_rate / w->rate,
					   .duration_ns = sc->window_ns * sc->windows };
	w->n_steps = 1;
	w->searched = true;
	sc->enabled = true;
out:
	cfg_pop(c);
	cfg_pop(c);
}

void search_config_print(const struct search_config *sc, FILE *out)
{
	char below[32], window[32], then_for[32];

	if (!sc->enabled)
		return;
	format_duration(sc->below_ns, below, sizeof(below));
	format_duration(sc->window_ns, window, sizeof(window));
	fprintf(out, ",\n   \"search\": {\"workload\": \"%s\", \"percentile\": %g, \"below\": \"%s\", "
		"\"window\": \"%s\", \"windows\": %u, \"min\": %g, \"max\": %g, \"resolution\": %g",
		sc->workload, sc->percentile, below, window, sc->windows, sc->min_rate, sc->max_rate,
		sc->resolution);
	if (sc->then_fraction > 0) {
		if (sc->then_ns >= CONFIG_FOREVER_NS)
			snprintf(then_for, sizeof(then_for), "forever");
		else
			format_duration(sc->then_ns, then_for, sizeof(then_for));
		fprintf(out, ", \"then\": \"%g%%\", \"then_for\": \"%s\"", sc->then_fraction * 100,
			then_for);
	}
	fputs("}", out);
}
