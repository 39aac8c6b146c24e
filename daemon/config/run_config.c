// SPDX-License-Identifier: GPL-2.0-only
/*
 * The names the configuration's values print as, and the pieces of the plan
 * the parsers of each kind share.
 */
#include "run_config.h"

#include <stdlib.h>

#include <jansson.h>

/* Keys every workload kind takes; each kind adds its own. */
const char *const config_common_workload_keys[] = {
	"name", "type", "autostart", "rate", "arrival", "schedule", "start", "max_lag", "seed",
	"drift", NULL,
};

const char *workload_type_name(enum workload_type t)
{
	return t == WORKLOAD_OBJECT ? "object" : "device";
}

const char *device_model_name(enum device_model m)
{
	return m == MODEL_ACT_STORAGE ? "act-storage" : m == MODEL_ACT_INDEX ? "act-index" : "pattern";
}

const char *access_name(enum access_pattern a)
{
	return a == ACCESS_SEQUENTIAL ? "sequential" : "random";
}

void config_print_targets(const struct workload_config *w, FILE *out)
{
	for (size_t t = 0; t < w->n_targets; t++) {
		json_t *p = json_string(w->targets[t].path);
		char *q = json_dumps(p, JSON_ENCODE_ANY);
		/* allow_unsafe_path only when set: the plans of runs begun
		 * before it existed stay the same text, and resume. */
		fprintf(out, "%s{\"path\": %s, \"destroy_data\": %s%s}", t ? ", " : "",
			q ? q : "\"?\"", w->targets[t].destroy_data ? "true" : "false",
			w->targets[t].allow_unsafe_path ? ", \"allow_unsafe_path\": true" : "");
		free(q);
		json_decref(p);
	}
}
