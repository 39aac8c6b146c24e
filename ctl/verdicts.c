// SPDX-License-Identifier: GPL-2.0-only
#include "verdicts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runlog.h"

static json_t *section(json_t *reply, const char *key, const char *list)
{
	json_t *s = json_object_get(reply, key);
	if (!s) {
		s = json_object();
		json_object_set_new(s, list, json_array());
		json_object_set_new(reply, key, s);
	}
	return s;
}

static void add(json_t *reply, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));

	if (type && strcmp(type, "certify") == 0) {
		json_t *c = section(reply, "certify", "steps");
		/* A step's verdict, the answer (its "answer" a load or null),
		 * or where a confirmation began: no answer yet. */
		if (json_object_get(rec, "step"))
			json_array_append(json_object_get(c, "steps"), rec);
		else if (json_object_get(rec, "answer"))
			json_object_set(c, "answer", rec);
		if (json_object_get(rec, "thresholds_ms")) {
			json_object_set(c, "thresholds_ms", json_object_get(rec, "thresholds_ms"));
			json_object_set(c, "limits_pct", json_object_get(rec, "limits_pct"));
		}
	} else if (type && strcmp(type, "search") == 0) {
		json_t *s = section(reply, "search", "curve");
		if (json_object_get(rec, "probe"))
			json_array_append(json_object_get(s, "curve"), rec);
		else
			json_object_set(s, "answer", rec);
		if (json_object_get(rec, "below_us")) {
			json_object_set(s, "below_us", json_object_get(rec, "below_us"));
			json_object_set(s, "percentile", json_object_get(rec, "percentile"));
		}
		if (json_object_get(rec, "window_s"))
			json_object_set(s, "window_s", json_object_get(rec, "window_s"));
	} else if (type && strcmp(type, "event") == 0 &&
		   json_is_string(json_object_get(rec, "event")) &&
		   strcmp(json_string_value(json_object_get(rec, "event")), "drift") == 0) {
		/* The run's drift alarms, as soakd lists them. */
		json_t *a = json_object_get(reply, "drift");
		if (!a) {
			a = json_array();
			json_object_set_new(reply, "drift", a);
		}
		json_array_append(a, rec);
	}
}

int verdicts_from_log(const char *run_dir, json_t *reply)
{
	char *path = runlog_path_of(run_dir);
	struct runlog_reader *rd;
	json_t *rec;
	int r;

	if (!path)
		return -ENOMEM;
	r = runlog_open(path, &rd);
	free(path);
	if (r < 0)
		return r;
	while ((r = runlog_next(rd, &rec)) > 0) {
		add(reply, rec);
		json_decref(rec);
	}
	runlog_close(rd);
	if (!json_object_get(reply, "drift"))
		json_object_set_new(reply, "drift", json_array());
	return r;
}
