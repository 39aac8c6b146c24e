// SPDX-License-Identifier: GPL-2.0-only
/* A device workload's targets (see config_targets.h). */
#include "config_targets.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void parse_target(struct cfg_ctx *c, json_t *v, struct target_config *t)
{
	const char *path = NULL;

	if (json_is_string(v)) {
		path = json_string_value(v);
	} else if (json_is_object(v)) {
		static const char *const keys[] = { "path", "destroy_data", "allow_unsafe_path",
						    NULL };
		cfg_check_keys(c, v, "a target", keys);
		if (!cfg_get_string(c, v, "path", &path) && !json_object_get(v, "path"))
			cfg_report(c, "a target needs \"path\"");
		cfg_get_bool(c, v, "destroy_data", &t->destroy_data);
		cfg_get_bool(c, v, "allow_unsafe_path", &t->allow_unsafe_path);
	} else {
		cfg_report(c, "a target must be a path or {\"path\": ..., \"destroy_data\": ..., "
			   "\"allow_unsafe_path\": ...}");
	}
	if (!path)
		return;
	if (!*path || strlen(path) >= PATH_MAX) {
		cfg_report(c, "target path must not be empty or longer than %d bytes", PATH_MAX - 1);
		return;
	}
	/* It goes into log lines and sd_notify's STATUS=, where a newline
	 * would start a line of the path's making. */
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			cfg_report(c, "target path \"%s\" holds a control character (byte 0x%02x)",
				   path, *p);
			return;
		}
	t->path = cfg_absolute_path(path);
	if (!t->path)
		cfg_report(c, "cannot resolve target path \"%s\": %s", path, strerror(errno));
}

/* "targets" of a pattern workload, "devices" of an ACT model. */
void config_parse_targets(struct cfg_ctx *c, json_t *obj, const char *key,
			  struct workload_config *w)
{
	json_t *arr = json_object_get(obj, key);
	if (!arr) {
		cfg_report(c, "workload \"%s\" needs \"%s\": a list of files or block devices",
			   w->name, key);
		return;
	}
	cfg_push_key(c, key);
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		cfg_report(c, "\"%s\" must be a non-empty list", key);
	} else if (json_array_size(arr) > CONFIG_MAX_TARGETS) {
		cfg_report(c, "\"%s\" lists %zu entries, at most %d are allowed", key,
			   json_array_size(arr), CONFIG_MAX_TARGETS);
	} else {
		size_t i;
		json_t *v;
		json_array_foreach(arr, i, v) {
			cfg_push_index(c, i);
			parse_target(c, v, &w->targets[i]);
			for (size_t j = 0; j < i && w->targets[i].path; j++)
				if (w->targets[j].path &&
				    strcmp(w->targets[j].path, w->targets[i].path) == 0)
					cfg_report(c, "target \"%s\" is listed twice", w->targets[i].path);
			cfg_pop(c);
		}
		w->n_targets = json_array_size(arr);
	}
	cfg_pop(c);
}
