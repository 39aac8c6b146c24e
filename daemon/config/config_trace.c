// SPDX-License-Identifier: GPL-2.0-only
#include "config_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_DEVICES 64
#define DEFAULT_MAX_ENDPOINTS 16

void trace_config_defaults(struct trace_config *t)
{
	*t = (struct trace_config){
		.blk = true, .tcp = true,
		.max_devices = DEFAULT_MAX_DEVICES, .max_endpoints = DEFAULT_MAX_ENDPOINTS,
	};
}

void trace_config_free(struct trace_config *t)
{
	for (size_t i = 0; i < t->n_tcp_endpoints; i++)
		free(t->tcp_endpoints[i]);
	free(t->tcp_endpoints);
	t->tcp_endpoints = NULL;
	t->n_tcp_endpoints = 0;
}

int trace_split_endpoint(const char *text, char *host, size_t hostlen, unsigned *port,
			 char *err, size_t errlen)
{
	const char *colon, *h = text;
	size_t n;
	char *end;
	unsigned long p;

	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':') {
			snprintf(err, errlen, "\"%s\" must read [ADDRESS]:PORT", text);
			return -EINVAL;
		}
		h = text + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || strchr(text, ':') != colon) {
			snprintf(err, errlen, "\"%s\" must read HOST:PORT (an IPv6 address in "
					      "brackets: [::1]:PORT)", text);
			return -EINVAL;
		}
		n = (size_t)(colon - h);
	}
	if (n == 0 || n >= hostlen) {
		snprintf(err, errlen, "\"%s\" has no host, or one longer than %zu bytes", text,
			 hostlen - 1);
		return -EINVAL;
	}
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p == 0 || p > 65535 || colon[1] == '+' ||
	    colon[1] == '-') {
		snprintf(err, errlen, "\"%s\" needs a port from 1 to 65535", text);
		return -EINVAL;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (unsigned)p;
	return 0;
}

static void parse_endpoints(struct cfg_ctx *c, json_t *arr, struct trace_config *t)
{
	size_t i;
	json_t *v;

	cfg_push_key(c, "tcp_endpoints");
	if (!json_is_array(arr)) {
		cfg_report(c, "\"tcp_endpoints\" must be a list of \"HOST:PORT\" strings");
		cfg_pop(c);
		return;
	}
	if (json_array_size(arr) > TRACE_MAX_ENDPOINTS) {
		cfg_report(c, "\"tcp_endpoints\" lists %zu endpoints, at most %d are allowed",
			   json_array_size(arr), TRACE_MAX_ENDPOINTS);
		cfg_pop(c);
		return;
	}
	t->tcp_endpoints = calloc(json_array_size(arr) + 1, sizeof(char *));
	if (!t->tcp_endpoints) {
		cfg_report(c, "out of memory");
		cfg_pop(c);
		return;
	}
	json_array_foreach(arr, i, v) {
		char host[TRACE_MAX_ENDPOINT_LEN], err[TRACE_MAX_ENDPOINT_LEN + 100];
		unsigned port;

		cfg_push_index(c, i);
		if (!json_is_string(v))
			cfg_report(c, "a TCP endpoint must be a \"HOST:PORT\" string");
		else if (trace_split_endpoint(json_string_value(v), host, sizeof(host), &port, err,
					      sizeof(err)) < 0)
			cfg_report(c, "%s", err);
		else if (!(t->tcp_endpoints[t->n_tcp_endpoints++] = strdup(json_string_value(v))))
			cfg_report(c, "out of memory");
		cfg_pop(c);
	}
	cfg_pop(c);
}

void trace_config_parse(struct cfg_ctx *c, json_t *v, struct trace_config *t)
{
	static const char *const keys[] = { "blk", "tcp", "all_devices", "max_devices",
					    "blk_timestamps", "tcp_endpoints", "max_endpoints",
					    NULL };
	const char *s;
	uint64_t u;

	cfg_push_key(c, "trace");
	if (json_is_boolean(v)) {
		t->blk = t->tcp = json_is_true(v);
		cfg_pop(c);
		return;
	}
	if (!json_is_object(v)) {
		cfg_report(c, "\"trace\" must be true, false or "
			      "{\"blk\": BOOL, \"tcp\": BOOL, ...}");
		cfg_pop(c);
		return;
	}
	cfg_check_keys(c, v, "\"trace\" (expected blk, tcp, all_devices, max_devices, "
			     "blk_timestamps, tcp_endpoints, max_endpoints)", keys);
	cfg_get_bool(c, v, "blk", &t->blk);
	cfg_get_bool(c, v, "tcp", &t->tcp);
	cfg_get_bool(c, v, "all_devices", &t->all_devices);
	u = t->max_devices;
	cfg_get_uint(c, v, "max_devices", 1, TRACE_MAX_DEVICES, &u);
	t->max_devices = (unsigned)u;
	u = t->max_endpoints;
	cfg_get_uint(c, v, "max_endpoints", 1, TRACE_MAX_ENDPOINTS, &u);
	t->max_endpoints = (unsigned)u;
	if (cfg_get_string(c, v, "blk_timestamps", &s)) {
		cfg_push_key(c, "blk_timestamps");
		if (strcmp(s, "auto") == 0)
			t->blk_stash_always = false;
		else if (strcmp(s, "map") == 0)
			t->blk_stash_always = true;
		else
			cfg_report(c, "\"blk_timestamps\" must be \"auto\" or \"map\", "
				      "not \"%s\"", s);
		cfg_pop(c);
	}
	if (json_object_get(v, "tcp_endpoints"))
		parse_endpoints(c, json_object_get(v, "tcp_endpoints"), t);
	cfg_pop(c);
}

void trace_config_print(const struct trace_config *t, FILE *out)
{
	fprintf(out, "\"trace\": {\"blk\": %s, \"tcp\": %s, \"all_devices\": %s, "
		     "\"max_devices\": %u, \"blk_timestamps\": \"%s\", \"max_endpoints\": %u, "
		     "\"tcp_endpoints\": [",
		t->blk ? "true" : "false", t->tcp ? "true" : "false",
		t->all_devices ? "true" : "false", t->max_devices,
		t->blk_stash_always ? "map" : "auto", t->max_endpoints);
	for (size_t i = 0; i < t->n_tcp_endpoints; i++) {
		json_t *s = json_string(t->tcp_endpoints[i]);
		char *q = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
		fprintf(out, "%s%s", i ? ", " : "", q ? q : "\"?\"");
		free(q);
		json_decref(s);
	}
	fprintf(out, "]}");
}
