// SPDX-License-Identifier: GPL-2.0-only
/*
 * The configuration of object workloads: the keys an "object" workload
 * takes beside the common ones, their defaults and their limits.  What the
 * load does is parsed here; where it goes (endpoint, TLS, credentials) in
 * obj_config_net.c; the plan is printed by obj_plan.c.
 */
#include "obj_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"

#define DEFAULT_CONCURRENCY 16
#define DEFAULT_OBJECTS 1000
#define DEFAULT_SIZE (UINT64_C(1) << 20)
#define DEFAULT_TIMEOUT_NS (UINT64_C(30) * 1000000000)
#define DEFAULT_CONNECT_TIMEOUT_NS (UINT64_C(5) * 1000000000)
#define MAX_MIX_WEIGHT 1000000

static const char *const op_names[OBJ_MIX_OPS + 1] = { "put", "get", "stat", "delete", "list",
							NULL };

const char *obj_op_name(enum obj_op op)
{
	return op < OBJ_MIX_OPS ? op_names[op] : "?";
}

/* Reads obj[key] as one of the NULL-terminated words; returns its index,
 * or -1 when absent or wrong (reported). */
int obj_cfg_enum(struct cfg_ctx *c, json_t *obj, const char *key, const char *const *words)
{
	const char *s;
	if (!cfg_get_string(c, obj, key, &s))
		return -1;
	for (int i = 0; words[i]; i++)
		if (strcmp(s, words[i]) == 0)
			return i;
	cfg_push_key(c, key);
	char list[160] = "";
	for (int i = 0; words[i]; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
			 i == 0 ? "" : words[i + 1] ? ", " : " or ", words[i]);
	cfg_report(c, "\"%s\" must be %s, not \"%s\"", key, list, s);
	cfg_pop(c);
	return -1;
}

char *obj_cfg_strdup(struct cfg_ctx *c, const char *s)
{
	char *d = strdup(s);
	if (!d)
		cfg_report(c, "out of memory");
	return d;
}

static void parse_mix(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	json_t *v = json_object_get(obj, "mix");

	if (!v) {
		cfg_report(c, "an object workload needs \"mix\": weights of \"put\", \"get\", "
			      "\"stat\", \"delete\" and \"list\", such as {\"get\": 70, \"put\": 30}");
		return;
	}
	cfg_push_key(c, "mix");
	if (!json_is_object(v)) {
		cfg_report(c, "\"mix\" must be an object of weights, such as {\"get\": 70, \"put\": 30}");
		cfg_pop(c);
		return;
	}
	cfg_check_keys(c, v, "\"mix\"", op_names);
	o->mix_total = 0;
	for (int op = 0; op < OBJ_MIX_OPS; op++) {
		uint64_t weight = 0;
		cfg_get_uint(c, v, op_names[op], 0, MAX_MIX_WEIGHT, &weight);
		o->mix[op] = (unsigned)weight;
		o->mix_total += (unsigned)weight;
	}
	if (o->mix_total == 0)
		cfg_report(c, "\"mix\" needs at least one op with a weight above 0");
	else if (o->mix[OBJ_OP_DELETE] > o->mix[OBJ_OP_PUT])
		cfg_report(c, "\"delete\" (%u) outweighs \"put\" (%u): the objects would run out "
			      "(as warp's --delete-distrib must not exceed --put-distrib)",
			   o->mix[OBJ_OP_DELETE], o->mix[OBJ_OP_PUT]);
	if (o->mix[OBJ_OP_LIST] && o->protocol == OBJ_PROTO_HTTP) {
		cfg_push_key(c, "list");
		cfg_report(c, "\"list\" needs \"protocol\": \"s3\" (plain HTTP has no listing)");
		cfg_pop(c);
	}
	cfg_pop(c);
}

static void parse_size_spec(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	static const char *const keys[] = { "dist", "min", "max", "mean", NULL };
	static const char *const dists[] = { "fixed", "uniform", "log2", "exponential", NULL };
	json_t *v = json_object_get(obj, "size");
	unsigned given = OBJ_SIZE_HAS_MAX;
	const char *why = NULL;

	o->size = (struct obj_size_spec){ .dist = OBJ_SIZE_FIXED, .max = DEFAULT_SIZE };
	if (v) {
		bool ok = true;
		cfg_push_key(c, "size");
		if (!json_is_object(v)) {
			ok = cfg_parse_size_value(c, v, "\"size\"", &o->size.max);
		} else {
			cfg_check_keys(c, v, "\"size\"", keys);
			given = 0;
			int d = obj_cfg_enum(c, v, "dist", dists);
			if (d < 0 && !json_object_get(v, "dist"))
				cfg_report(c, "\"size\" needs \"dist\": \"uniform\", \"log2\" or "
					      "\"exponential\" (or give a plain size such as \"16KiB\")");
			ok = d >= 0;
			if (ok)
				o->size.dist = (enum obj_size_dist)d;
			if (cfg_get_size(c, v, "min", &o->size.min))
				given |= OBJ_SIZE_HAS_MIN;
			if (cfg_get_size(c, v, "max", &o->size.max))
				given |= OBJ_SIZE_HAS_MAX;
			if (cfg_get_size(c, v, "mean", &o->size.mean))
				given |= OBJ_SIZE_HAS_MEAN;
			if (ok && o->size.dist == OBJ_SIZE_FIXED && given != OBJ_SIZE_HAS_MAX) {
				cfg_report(c, "\"fixed\" takes only \"max\"; or give a plain size "
					      "such as \"16KiB\"");
				ok = false;
			}
		}
		cfg_pop(c);
		if (!ok)
			return;
	}
	if (obj_size_resolve(&o->size, given, &why) < 0) {
		cfg_push_key(c, "size");
		cfg_report(c, "\"size\": %s", why);
		cfg_pop(c);
	}
}

static void parse_reads(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	static const char *const ranges[] = { "random", NULL };
	bool fixed = json_object_get(obj, "read_offset") || json_object_get(obj, "read_length");

	cfg_get_size(c, obj, "read_offset", &o->read_offset);
	if (cfg_get_size(c, obj, "read_length", &o->read_length) && o->read_length == 0) {
		cfg_push_key(c, "read_length");
		cfg_report(c, "\"read_length\" must be above 0 (leave it out to read to the end)");
		cfg_pop(c);
	}
	if (fixed)
		o->range = OBJ_RANGE_FIXED;
	if (json_object_get(obj, "read_range")) {
		if (obj_cfg_enum(c, obj, "read_range", ranges) == 0)
			o->range = OBJ_RANGE_RANDOM;
		if (fixed) {
			cfg_push_key(c, "read_range");
			cfg_report(c, "\"read_range\": \"random\" and \"read_offset\"/\"read_length\" "
				      "exclude each other");
			cfg_pop(c);
		}
	}
}

static void parse_prefix(struct cfg_ctx *c, json_t *obj, struct object_config *o, const char *name)
{
	const char *s;

	if (cfg_get_string(c, obj, "prefix", &s)) {
		cfg_push_key(c, "prefix");
		bool ok = strlen(s) <= OBJ_MAX_PREFIX_LEN && s[0] != '/';
		for (const char *p = s; ok && *p; p++)
			ok = (unsigned char)*p > ' ' && *p != 0x7f && !strchr("\\?#%\"", *p);
		if (!ok)
			cfg_report(c, "\"prefix\" must be up to %d printable characters without "
				      "spaces, '\\', '?', '#', '%%' or '\"', not starting with '/'",
				   OBJ_MAX_PREFIX_LEN);
		else
			o->prefix = obj_cfg_strdup(c, s);
		cfg_pop(c);
	}
	if (!o->prefix && asprintf(&o->prefix, "soakd-%s/", name) < 0) {
		o->prefix = NULL;
		cfg_report(c, "out of memory");
	}
	uint64_t u = o->prefixes;
	cfg_get_uint(c, obj, "prefixes", 1, OBJ_MAX_PREFIXES, &u);
	o->prefixes = (unsigned)u;
}

/*
 * The longest URL a request of the workload can have must fit: the
 * longest endpoint, a path-style bucket, the prefix as it is escaped (3
 * bytes for a byte that is not a letter, digit or -._~/) and what soakd
 * puts after it (its run tag, a sub-prefix, the name: under 128 bytes).
 * Past that every request failed as it was set up.
 */
static void check_url_room(struct cfg_ctx *c, const struct object_config *o)
{
	size_t endpoint = o->endpoint ? strlen(o->endpoint) : 0, prefix = 0;

	for (size_t i = 0; i < o->n_endpoints; i++)
		if (strlen(o->endpoints[i]) > endpoint)
			endpoint = strlen(o->endpoints[i]);
	for (const unsigned char *p = (const unsigned char *)(o->prefix ? o->prefix : ""); *p; p++)
		prefix += isalnum(*p) || strchr("-._~/", *p) ? 1 : 3;
	size_t bucket = o->protocol == OBJ_PROTO_S3 && o->bucket ? strlen(o->bucket) + 12 : 0;
	size_t url = endpoint + 1 + bucket + prefix + 128;
	if (url < OBJ_MAX_URL_LEN)
		return;
	cfg_push_key(c, "prefix");
	cfg_report(c, "a request's URL would take up to %zu bytes, more than the %d soakd takes: "
		      "the endpoint is %zu bytes and the prefix %zu once escaped (3 for a byte "
		      "that is not a letter, digit or -._~/); shorten either", url, OBJ_MAX_URL_LEN,
		   endpoint, prefix);
	cfg_pop(c);
}

/* Keys an object workload takes beside config_common_workload_keys. */
static const char *const object_keys[] = {
	"protocol", "endpoint", "endpoints", "region", "bucket", "create_bucket", "addressing", "connect_to",
	"ca_file", "tls_verify", "credentials", "concurrency", "threads", "objects", "prefill",
	"mix", "size", "verify", "cleanup", "read_offset", "read_length", "read_range", "names",
	"prefix", "prefixes", "checksum", "list_max_keys", "timeout", "connect_timeout",
	"audit", "sse", "buckets", "multipart_threshold", "multipart_part_size",
	"multipart_parallel", "versioning",
	/* refused by refuse_secrets, with a better message than "unknown" */
	"secret", "secret_key", "access_key", "aws_secret_access_key", "aws_access_key_id",
	"password", "token", "aws_session_token", NULL,
};

static void make_labels(struct object_config *o)
{
	for (unsigned i = 0; i < o->threads; i++) {
		const char *where = o->protocol == OBJ_PROTO_S3 && o->bucket ? o->bucket : "";
		int r = o->threads == 1
				? asprintf(&o->labels[i], "%s%s%s", o->endpoint, *where ? "/" : "", where)
				: asprintf(&o->labels[i], "%s%s%s#%u", o->endpoint, *where ? "/" : "",
					   where, i);
		if (r < 0)
			o->labels[i] = NULL;
	}
}

/* "audit": "on_resume" | "interval:DURATION" | "off". */
static void parse_audit(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	const char *s, *why = NULL;

	if (!cfg_get_string(c, obj, "audit", &s))
		return;
	cfg_push_key(c, "audit");
	if (strcmp(s, "on_resume") == 0) {
		o->audit = OBJ_AUDIT_ON_RESUME;
	} else if (strcmp(s, "off") == 0) {
		o->audit = OBJ_AUDIT_OFF;
	} else if (strncmp(s, "interval:", 9) == 0) {
		o->audit = OBJ_AUDIT_INTERVAL;
		if (parse_duration(s + 9, &o->audit_interval_ns, &why) < 0)
			cfg_report(c, "\"audit\": \"%s\": %s", s, why ? why : "not a duration");
		else if (o->audit_interval_ns < UINT64_C(1000000000))
			cfg_report(c, "\"audit\": \"%s\": the interval must be at least 1s", s);
	} else {
		cfg_report(c, "\"audit\" must be \"on_resume\", \"interval:DURATION\" (e.g. "
			      "\"interval:6h\") or \"off\", not \"%s\"", s);
	}
	cfg_pop(c);
}

void obj_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	static const char *const protocols[] = { "s3", "http", NULL };
	static const char *const namings[] = { "random", "sequential", NULL };
	static const char *const checksums[] = { "none", "md5", "crc32c", NULL };
	struct object_config *o = calloc(1, sizeof(*o));
	const char *s;
	uint64_t u;

	if (!o) {
		cfg_report(c, "out of memory");
		return;
	}
	w->object = o;
	*o = (struct object_config){
		.concurrency = DEFAULT_CONCURRENCY, .threads = 1, .objects = DEFAULT_OBJECTS,
		.buckets = 1, .multipart_part_size = UINT64_C(8) << 20, .multipart_parallel = 4,
		.prefill = true, .verify = true, .cleanup = true, .tls_verify = true,
		.prefixes = 1, .list_max_keys = 1000, .timeout_ns = DEFAULT_TIMEOUT_NS,
		.connect_timeout_ns = DEFAULT_CONNECT_TIMEOUT_NS,
	};
	o->region = strdup("us-east-1");
	obj_cfg_refuse_secrets(c, obj);
	cfg_check_keys2(c, obj, "an object workload", config_common_workload_keys, object_keys);

	int p = obj_cfg_enum(c, obj, "protocol", protocols);
	if (p >= 0)
		o->protocol = (enum obj_protocol)p;
	else if (!json_object_get(obj, "protocol"))
		cfg_report(c, "an object workload needs \"protocol\": \"s3\" or \"http\"");
	obj_cfg_parse_endpoint(c, obj, o);
	if (o->protocol == OBJ_PROTO_S3) {
		obj_cfg_parse_s3(c, obj, o);
	} else {
		static const char *const s3_only[] = { "bucket", "region", "create_bucket",
						       "addressing", "sse", "buckets",
						       "multipart_threshold", "multipart_part_size",
						       "multipart_parallel", "versioning", NULL };
		for (int i = 0; s3_only[i]; i++)
			if (json_object_get(obj, s3_only[i])) {
				cfg_push_key(c, s3_only[i]);
				cfg_report_key(c, "\"%s\" is for \"protocol\": \"s3\"; an http "
						  "workload puts objects under \"endpoint\"", s3_only[i]);
				cfg_pop(c);
			}
	}
	if (cfg_get_string(c, obj, "connect_to", &s)) {
		cfg_push_key(c, "connect_to");
		if (!*s || strlen(s) > 255 || strpbrk(s, "/ \t\"?#@"))
			cfg_report(c, "\"connect_to\" must be HOST or HOST:PORT");
		else
			o->connect_to = obj_cfg_strdup(c, s);
		cfg_pop(c);
	}
	obj_cfg_parse_tls(c, obj, o);
	obj_cfg_parse_credentials(c, obj, o);

	u = o->concurrency;
	cfg_get_uint(c, obj, "concurrency", 1, OBJ_MAX_CONCURRENCY, &u);
	o->concurrency = (unsigned)u;
	u = o->threads;
	cfg_get_uint(c, obj, "threads", 1, OBJ_MAX_THREADS, &u);
	o->threads = (unsigned)u;
	if (o->threads > o->concurrency) {
		cfg_push_key(c, "threads");
		cfg_report(c, "\"threads\" (%u) is more than \"concurrency\" (%u): each thread needs "
			      "at least one transfer", o->threads, o->concurrency);
		cfg_pop(c);
		o->threads = 1;
	}
	u = o->objects;
	cfg_get_uint(c, obj, "objects", 1, OBJ_MAX_OBJECTS, &u);
	o->objects = (uint32_t)u;
	if (o->objects < o->threads) {
		cfg_push_key(c, "objects");
		cfg_report(c, "\"objects\" (%u) must be at least \"threads\" (%u)", o->objects,
			   o->threads);
		cfg_pop(c);
	}
	cfg_get_bool(c, obj, "prefill", &o->prefill);
	parse_mix(c, obj, o);
	parse_size_spec(c, obj, o);
	cfg_get_bool(c, obj, "verify", &o->verify);
	/* A verified object's first 16 bytes name it and its version: a
	 * smaller one could tell neither a stale read nor, under 9 bytes, an
	 * old version from the new.  Drawn sizes start there. */
	if (o->verify && o->size.max < OBJ_VERIFIED_MIN_SIZE) {
		cfg_push_key(c, "size");
		cfg_report(c, "verified objects are at least %u bytes (their first bytes name the "
			      "object and its version); give a larger size, or \"verify\": false",
			   OBJ_VERIFIED_MIN_SIZE);
		cfg_pop(c);
	} else if (o->verify && o->size.min < OBJ_VERIFIED_MIN_SIZE) {
		o->size.min = OBJ_VERIFIED_MIN_SIZE;
		if (o->size.mean && o->size.mean < o->size.min)
			o->size.mean = o->size.min;
	}
	cfg_get_bool(c, obj, "cleanup", &o->cleanup);
	parse_audit(c, obj, o);
	parse_reads(c, obj, o);
	int n = obj_cfg_enum(c, obj, "names", namings);
	if (n >= 0)
		o->naming = (enum obj_naming)n;
	parse_prefix(c, obj, o, w->name);
	check_url_room(c, o);
	int k = obj_cfg_enum(c, obj, "checksum", checksums);
	if (k >= 0)
		o->checksum = (enum obj_checksum)k;
	if (o->checksum == OBJ_CHECKSUM_CRC32C && o->protocol != OBJ_PROTO_S3) {
		cfg_push_key(c, "checksum");
		cfg_report(c, "\"crc32c\" (x-amz-checksum-crc32c) needs \"protocol\": \"s3\"; "
			      "use \"md5\" (Content-MD5) with http");
		cfg_pop(c);
	}
	u = o->list_max_keys;
	cfg_get_uint(c, obj, "list_max_keys", 1, 1000, &u);
	o->list_max_keys = (unsigned)u;
	if (cfg_get_duration(c, obj, "timeout", &o->timeout_ns) && o->timeout_ns < 1000000) {
		cfg_push_key(c, "timeout");
		cfg_report(c, "\"timeout\" must be at least 1ms");
		cfg_pop(c);
	}
	if (cfg_get_duration(c, obj, "connect_timeout", &o->connect_timeout_ns) &&
	    o->connect_timeout_ns < 1000000) {
		cfg_push_key(c, "connect_timeout");
		cfg_report(c, "\"connect_timeout\" must be at least 1ms");
		cfg_pop(c);
	}
	/* An endpoint that stalls fills every transfer slot and makes the
	 * schedule lag; that is the endpoint's failure to report, not a
	 * reason to stop the load, so lag stops an object workload only
	 * when "max_lag" says so. */
	if (!json_object_get(obj, "max_lag"))
		w->max_lag_ns = 0;
	if (o->endpoint)
		make_labels(o);
}

void obj_config_free(struct object_config *o)
{
	if (!o)
		return;
	free(o->endpoint);
	for (size_t i = 0; i < o->n_endpoints; i++)
		free(o->endpoints[i]);
	free(o->endpoints);
	free(o->region);
	free(o->bucket);
	free(o->connect_to);
	free(o->ca_file);
	free(o->creds_file);
	free(o->creds_profile);
	free(o->prefix);
	for (unsigned i = 0; i < OBJ_MAX_THREADS; i++)
		free(o->labels[i]);
	free(o);
}

