// SPDX-License-Identifier: GPL-2.0-only
/* Placeholder until the object engine lands: object workloads are refused. */
#include "obj_config.h"

void obj_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w)
{
	(void)obj;
	(void)w;
	cfg_push_key(c, "type");
	cfg_report(c, "object workloads are not supported by this build");
	cfg_pop(c);
}

void obj_config_free(struct object_config *o)
{
	(void)o;
}

void obj_config_print(const struct object_config *o, FILE *out)
{
	(void)o;
	(void)out;
}

/* Until the object engine lands, config parsing refuses object workloads,
 * so this engine is never instantiated. */
#include "workload.h"

static size_t obj_n_streams(const struct workload_config *cfg)
{
	(void)cfg;
	return 0;
}

static const char *obj_stream_label(const struct workload_config *cfg, size_t index)
{
	(void)cfg;
	(void)index;
	return "";
}

const struct workload_engine obj_engine = {
	.name = "object",
	.n_streams = obj_n_streams,
	.stream_label = obj_stream_label,
};
