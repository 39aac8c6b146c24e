// SPDX-License-Identifier: GPL-2.0-only
#include "stats_json.h"

#include <errno.h>
#include <stdlib.h>

static const char *const class_names[OP_ERR_CLASSES] = {
	[OP_ERR_CONNECT] = "connect", [OP_ERR_TIMEOUT] = "timeout",
	[OP_ERR_HTTP_4XX] = "http_4xx", [OP_ERR_HTTP_5XX] = "http_5xx",
	[OP_ERR_TRANSFER] = "transfer",
};

static void set_hist(json_t *j, const char *key, const struct hist *h)
{
	if (!h->count)
		return;
	char *text = hist_to_base64(h);
	if (text)
		json_object_set_new(j, key, json_string(text));
	free(text);
}

json_t *op_verify_to_json(const uint64_t verify[OP_VERIFY_CLASSES], bool keep_zero)
{
	bool any = keep_zero;

	for (int c = 0; c < OP_VERIFY_CLASSES; c++)
		any |= verify[c] != 0;
	if (!any)
		return NULL;
	json_t *j = json_object();
	for (int c = 0; j && c < OP_VERIFY_CLASSES; c++)
		json_object_set_new(j, op_verify_names[c], json_integer((json_int_t)verify[c]));
	return j;
}

void obj_verify_set_json(json_t *op, const struct obj_verify *v, uint64_t corrupt)
{
	json_t *j = json_object_get(op, "verify");
	if (!json_is_object(j)) {
		j = json_object();
		json_object_set_new(op, "verify", j);
	}
	json_object_set_new(j, "checked", json_integer((json_int_t)v->checked));
	json_object_set_new(j, "corrupt", json_integer((json_int_t)corrupt));
	json_object_set_new(j, "stale", json_integer((json_int_t)v->stale));
	json_object_set_new(j, "uncertain", json_integer((json_int_t)v->uncertain));
	json_object_set_new(j, "lost", json_integer((json_int_t)v->lost));
	json_object_set_new(j, "resurrected", json_integer((json_int_t)v->resurrected));
	json_object_set_new(j, "list_missing", json_integer((json_int_t)v->list_missing));
	json_object_set_new(j, "list_extra", json_integer((json_int_t)v->list_extra));
}

static uint64_t get_count(json_t *j, const char *key);

void obj_verify_merge_json(struct obj_verify *v, json_t *verify)
{
	/* Device ops have a "verify" of their own with some of the same
	 * names; "lost" is only ever in an object op's. */
	if (!json_is_object(verify) || !json_object_get(verify, "lost"))
		return;
	v->checked += get_count(verify, "checked");
	v->stale += get_count(verify, "stale");
	v->uncertain += get_count(verify, "uncertain");
	v->lost += get_count(verify, "lost");
	v->resurrected += get_count(verify, "resurrected");
	v->list_missing += get_count(verify, "list_missing");
	v->list_extra += get_count(verify, "list_extra");
}

json_t *op_stats_to_json(const struct op_stats *o)
{
	json_t *j = json_pack("{s:I,s:I,s:I}", "count", (json_int_t)o->count,
			      "errors", (json_int_t)o->errors, "bytes", (json_int_t)o->bytes);
	if (!j)
		return NULL;
	json_object_set_new(j, "missed", json_integer((json_int_t)o->missed));
	json_object_set_new(j, "pending", json_integer((json_int_t)o->pending));
	if (o->corrupt)
		json_object_set_new(j, "corrupt", json_integer((json_int_t)o->corrupt));
	json_t *classes = NULL;
	for (int c = 0; c < OP_ERR_CLASSES; c++)
		if (o->error_class[c]) {
			if (!classes)
				classes = json_object();
			json_object_set_new(classes, class_names[c],
					    json_integer((json_int_t)o->error_class[c]));
		}
	if (classes)
		json_object_set_new(j, "errors_by_class", classes);
	json_t *verify = op_verify_to_json(o->verify, false);
	if (verify)
		json_object_set_new(j, "verify", verify);
	struct obj_verify none = { 0 };
	if (obj_verify_add(&none, &o->obj_verify))
		obj_verify_set_json(j, &o->obj_verify, o->corrupt);
	set_hist(j, "latency", &o->latency);
	set_hist(j, "service", &o->service);
	set_hist(j, "ttfb", &o->ttfb);
	set_hist(j, "connect", &o->connect);
	set_hist(j, "issue_delay", &o->issue_delay);
	set_hist(j, "missed_wait", &o->missed_wait);
	return j;
}

static int merge_hist(struct hist *dst, json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (!v)
		return 0;
	return json_is_string(v) ? hist_merge_base64(dst, json_string_value(v)) : -EINVAL;
}

static uint64_t get_count(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

int op_stats_merge_json(struct op_stats *dst, json_t *recorded)
{
	int r;

	if (!json_is_object(recorded))
		return -EINVAL;
	dst->count += get_count(recorded, "count");
	dst->errors += get_count(recorded, "errors");
	dst->bytes += get_count(recorded, "bytes");
	dst->corrupt += get_count(recorded, "corrupt");
	dst->missed += get_count(recorded, "missed");
	dst->pending = get_count(recorded, "pending"); /* a gauge: the latest */
	json_t *classes = json_object_get(recorded, "errors_by_class");
	for (int c = 0; classes && c < OP_ERR_CLASSES; c++)
		dst->error_class[c] += get_count(classes, class_names[c]);
	/* A device op's "verify" (its classes, "torn" among them) or an
	 * object op's ("lost" among them). */
	json_t *verify = json_object_get(recorded, "verify");
	for (int c = 0; json_object_get(verify, "torn") && c < OP_VERIFY_CLASSES; c++)
		dst->verify[c] += get_count(verify, op_verify_names[c]);
	obj_verify_merge_json(&dst->obj_verify, verify);
	if ((r = merge_hist(&dst->latency, recorded, "latency")) < 0 ||
	    (r = merge_hist(&dst->service, recorded, "service")) < 0 ||
	    (r = merge_hist(&dst->ttfb, recorded, "ttfb")) < 0 ||
	    (r = merge_hist(&dst->connect, recorded, "connect")) < 0 ||
	    (r = merge_hist(&dst->issue_delay, recorded, "issue_delay")) < 0 ||
	    (r = merge_hist(&dst->missed_wait, recorded, "missed_wait")) < 0)
		return r;
	return 0;
}
