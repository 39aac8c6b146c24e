// SPDX-License-Identifier: GPL-2.0-only
#include "config_drift.h"

#include <string.h>

#include "parse.h"

#define DEFAULT_WINDOW_NS (UINT64_C(300) * 1000000000)
#define ALL_METRICS ((1u << DRIFT_METRICS) - 1)

static const char *const metric_names[DRIFT_METRICS] = { "p99", "p999", "throughput", "errors" };
static const char *const sensitivity_names[] = { "low", "normal", "high" };

const char *drift_metric_name(enum drift_metric m)
{
	return m < DRIFT_METRICS ? metric_names[m] : "?";
}

const char *drift_sensitivity_name(enum drift_sensitivity s)
{
	return s <= DRIFT_HIGH ? sensitivity_names[s] : "?";
}

static void parse_metrics(struct cfg_ctx *c, json_t *arr, struct drift_config *d)
{
	size_t i;
	json_t *v;

	cfg_push_key(c, "metrics");
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		cfg_report(c, "\"metrics\" must be a non-empty list of \"p99\", \"p999\", "
			      "\"throughput\" and \"errors\"");
		cfg_pop(c);
		return;
	}
	d->metrics = 0;
	json_array_foreach(arr, i, v) {
		size_t m = 0;
		cfg_push_index(c, i);
		while (m < DRIFT_METRICS && !(json_is_string(v) &&
					      strcmp(json_string_value(v), metric_names[m]) == 0))
			m++;
		if (m == DRIFT_METRICS)
			cfg_report(c, "unknown drift metric (expected \"p99\", \"p999\", "
				      "\"throughput\" or \"errors\")");
		else if (d->metrics & (1u << m))
			cfg_report(c, "drift metric \"%s\" is listed twice", metric_names[m]);
		else
			d->metrics |= 1u << m;
		cfg_pop(c);
	}
	cfg_pop(c);
}

void drift_config_parse(struct cfg_ctx *c, json_t *v, const struct run_config *run,
			struct drift_config *d)
{
	static const char *const keys[] = { "window", "sensitivity", "metrics", "on_drift", NULL };
	const char *s;

	cfg_push_key(c, "drift");
	/* Defaults: the run's own when it has them, else these. */
	if (!run->drift.enabled)
		*d = (struct drift_config){ .window_ns = DEFAULT_WINDOW_NS,
					    .sensitivity = DRIFT_NORMAL, .metrics = ALL_METRICS };
	else
		*d = run->drift;
	if (json_is_boolean(v)) {
		d->enabled = json_is_true(v);
		cfg_pop(c);
		return;
	}
	if (!json_is_object(v)) {
		cfg_report(c, "\"drift\" must be true, false or {\"window\": DURATION, "
			      "\"sensitivity\": \"low\"|\"normal\"|\"high\", ...}");
		cfg_pop(c);
		return;
	}
	d->enabled = true;
	cfg_check_keys(c, v, "\"drift\" (expected window, sensitivity, metrics, on_drift)", keys);
	uint64_t window = d->window_ns;
	if (cfg_get_duration(c, v, "window", &window)) {
		cfg_push_key(c, "window");
		if (window < 2 * run->interval_ns || window % run->interval_ns ||
		    window > DRIFT_MAX_WINDOW_NS) {
			char iv[32];
			format_duration(run->interval_ns, iv, sizeof(iv));
			cfg_report(c, "\"window\" must be a whole number of intervals (%s), at least "
				      "two, and at most 24h", iv);
		} else {
			d->window_ns = window;
		}
		cfg_pop(c);
	}
	if (cfg_get_string(c, v, "sensitivity", &s)) {
		size_t k = 0;
		while (k <= DRIFT_HIGH && strcmp(s, sensitivity_names[k]) != 0)
			k++;
		cfg_push_key(c, "sensitivity");
		if (k > DRIFT_HIGH)
			cfg_report(c, "\"sensitivity\" must be \"low\", \"normal\" or \"high\", "
				      "not \"%s\"", s);
		else
			d->sensitivity = (enum drift_sensitivity)k;
		cfg_pop(c);
	}
	if (json_object_get(v, "metrics"))
		parse_metrics(c, json_object_get(v, "metrics"), d);
	if (cfg_get_string(c, v, "on_drift", &s)) {
		cfg_push_key(c, "on_drift");
		if (strcmp(s, "stop") == 0)
			d->stop = true;
		else if (strcmp(s, "alarm") == 0)
			d->stop = false;
		else
			cfg_report(c, "\"on_drift\" must be \"alarm\" or \"stop\", not \"%s\"", s);
		cfg_pop(c);
	}
	cfg_pop(c);
}

void drift_config_print(const struct drift_config *d, FILE *out)
{
	char window[32];

	if (!d->enabled)
		return;
	format_duration(d->window_ns, window, sizeof(window));
	fprintf(out, "\"drift\": {\"window\": \"%s\", \"sensitivity\": \"%s\", \"metrics\": [",
		window, drift_sensitivity_name(d->sensitivity));
	for (unsigned m = 0, n = 0; m < DRIFT_METRICS; m++)
		if (d->metrics & (1u << m))
			fprintf(out, "%s\"%s\"", n++ ? ", " : "", metric_names[m]);
	fprintf(out, "], \"on_drift\": \"%s\"}", d->stop ? "stop" : "alarm");
}
