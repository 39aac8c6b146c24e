/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_CONFIG_H
#define SOAK_OBJ_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config_json.h"
#include "object/obj_size.h"
#include "run_config.h"

/* Hard limits on what an object workload may ask for. */
#define OBJ_MAX_CONCURRENCY 4096
#define OBJ_MAX_THREADS 64
#define OBJ_MAX_OBJECTS 10000000u
#define OBJ_MAX_PREFIXES 4096
#define OBJ_MAX_PREFIX_LEN 512
/* The smallest object "verify" takes: its 16-byte header (obj_payload.h). */
#define OBJ_VERIFIED_MIN_SIZE 16u
#define OBJ_MAX_URL_LEN 2048
#define OBJ_MAX_BUCKETS 1000
#define OBJ_MAX_PARTS 10000                      /* S3's limit per upload */
#define OBJ_MAX_PARALLEL_PARTS 64
#define OBJ_MIN_PART_SIZE (UINT64_C(5) << 20)    /* S3's, for every part but the last */

enum obj_protocol {
	OBJ_PROTO_S3,
	OBJ_PROTO_HTTP,
};

/* The measured ops, in the order they appear in results. */
enum obj_op {
	OBJ_OP_PUT,
	OBJ_OP_GET,
	OBJ_OP_STAT,
	OBJ_OP_DELETE,
	OBJ_OP_LIST,
	OBJ_MIX_OPS,
};

enum obj_range {
	OBJ_RANGE_NONE,     /* whole objects */
	OBJ_RANGE_FIXED,    /* read_offset / read_length */
	OBJ_RANGE_RANDOM,   /* a random offset and length in each object */
};

enum obj_naming {
	OBJ_NAMES_RANDOM,
	OBJ_NAMES_SEQUENTIAL,
};

enum obj_checksum {
	OBJ_CHECKSUM_NONE,
	OBJ_CHECKSUM_MD5,      /* Content-MD5 */
	OBJ_CHECKSUM_CRC32C,   /* x-amz-checksum-crc32c */
};

/* When every object of the ledger is read once (issue 17). */
enum obj_audit {
	OBJ_AUDIT_ON_RESUME,   /* after a restart of soakd, before the mix goes on */
	OBJ_AUDIT_INTERVAL,    /* that, and every audit_interval_ns of run time */
	OBJ_AUDIT_OFF,
};

enum obj_creds_source {
	OBJ_CREDS_NONE,
	OBJ_CREDS_FILE,
	OBJ_CREDS_SYSTEMD,
};

#define OBJ_MAX_ENDPOINTS 16

/* The object workload's part of a workload's configuration. */
struct object_config {
	enum obj_protocol protocol;
	char *endpoint;             /* scheme://host[:port][/path], no trailing '/' */
	/* "endpoints": a pool of gateways to one store (endpoint is the
	 * first); n_endpoints is 0 with a single "endpoint". */
	char **endpoints;
	size_t n_endpoints;
	char *region;               /* S3 */
	char *bucket;               /* S3 */
	unsigned buckets;           /* S3: above 1, objects spread over BUCKET-0 .. BUCKET-(N-1) */
	bool create_bucket;
	bool sse_s3;                /* "sse": "s3": PUTs ask for SSE-S3 (AES256) */
	bool versioning;            /* "versioning": the buckets keep every version */
	uint64_t multipart_threshold; /* S3: larger objects go up in parts; 0: never */
	uint64_t multipart_part_size;
	unsigned multipart_parallel;  /* parts of one upload in flight at once */
	bool virtual_host;          /* S3 addressing: bucket.host/key instead of host/bucket/key */
	char *connect_to;           /* "HOST[:PORT]" to connect to instead of the endpoint's */
	char *ca_file;
	bool tls_verify;

	enum obj_creds_source creds_source;
	char *creds_file;           /* absolute path, or the systemd credential's name */
	char *creds_profile;

	unsigned concurrency;       /* transfers in flight, over all threads */
	unsigned threads;           /* streams, each with one libcurl multi handle */
	uint32_t objects;           /* names in the pool, over all threads */
	bool prefill;
	unsigned mix[OBJ_MIX_OPS];  /* weights */
	unsigned mix_total;
	struct obj_size_spec size;
	bool verify;
	bool cleanup;
	enum obj_range range;
	uint64_t read_offset, read_length; /* read_length 0: to the end */
	enum obj_naming naming;
	char *prefix;               /* every name starts with it */
	unsigned prefixes;          /* spread names over this many sub-prefixes */
	enum obj_checksum checksum;
	unsigned list_max_keys;
	uint64_t timeout_ns;
	uint64_t connect_timeout_ns;
	enum obj_audit audit;
	uint64_t audit_interval_ns;

	char *labels[OBJ_MAX_THREADS]; /* each thread's name in results */
};

/* Parses the object-specific keys of obj into w->object; problems go
 * through cfg_report. */
void obj_config_parse(struct cfg_ctx *c, json_t *obj, struct workload_config *w);
void obj_config_free(struct object_config *o);
/* Its part of the resolved plan: JSON members, each line indented by 5. */
void obj_config_print(const struct object_config *o, FILE *out);

const char *obj_op_name(enum obj_op op);

/* Shared by obj_config.c and obj_config_net.c. */
/* obj[key] as one of the NULL-terminated words: its index, or -1 when
 * absent or wrong (reported). */
int obj_cfg_enum(struct cfg_ctx *c, json_t *obj, const char *key, const char *const *words);
char *obj_cfg_strdup(struct cfg_ctx *c, const char *s);
/* Secret-looking keys of obj, refused with where secrets belong. */
void obj_cfg_refuse_secrets(struct cfg_ctx *c, json_t *obj);
void obj_cfg_parse_endpoint(struct cfg_ctx *c, json_t *obj, struct object_config *o);
void obj_cfg_parse_s3(struct cfg_ctx *c, json_t *obj, struct object_config *o);
void obj_cfg_parse_tls(struct cfg_ctx *c, json_t *obj, struct object_config *o);
void obj_cfg_parse_credentials(struct cfg_ctx *c, json_t *obj, struct object_config *o);

#endif
