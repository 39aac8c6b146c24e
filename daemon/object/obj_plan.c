// SPDX-License-Identifier: GPL-2.0-only
/* An object workload's part of the resolved plan (--check-config). */
#include <stdlib.h>
#include <string.h>

#include "config/obj_config.h"
#include "parse.h"

/* A JSON string literal of s. */
static void print_string(FILE *out, const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	fputs(q ? q : "\"?\"", out);
	free(q);
	json_decref(j);
}

static void print_size(FILE *out, const char *key, uint64_t bytes, const char *sep)
{
	char buf[64];
	format_size(bytes, buf, sizeof(buf));
	fprintf(out, "\"%s\": \"%s\"%s", key, buf, sep);
}

void obj_config_print(const struct object_config *o, FILE *out)
{
	static const char *const checksums[] = { "none", "md5", "crc32c" };
	char buf[64];

	fprintf(out, "     \"protocol\": \"%s\", \"endpoint\": ", o->protocol == OBJ_PROTO_S3 ? "s3"
											  : "http");
	print_string(out, o->endpoint);
	if (o->protocol == OBJ_PROTO_S3) {
		fprintf(out, ", \"region\": ");
		print_string(out, o->region);
		fprintf(out, ", \"bucket\": ");
		print_string(out, o->bucket);
		fprintf(out, ", \"create_bucket\": %s, \"addressing\": \"%s\"",
			o->create_bucket ? "true" : "false", o->virtual_host ? "virtual-host" : "path");
		if (o->sse_s3)
			fprintf(out, ", \"sse\": \"s3\"");
		if (o->versioning)
			fprintf(out, ", \"versioning\": true");
		if (o->buckets > 1)
			fprintf(out, ", \"buckets\": %u", o->buckets);
		if (o->multipart_threshold) {
			fprintf(out, ", ");
			print_size(out, "multipart_threshold", o->multipart_threshold, ", ");
			print_size(out, "multipart_part_size", o->multipart_part_size, ", ");
			fprintf(out, "\"multipart_parallel\": %u", o->multipart_parallel);
		}
	}
	if (o->connect_to) {
		fprintf(out, ", \"connect_to\": ");
		print_string(out, o->connect_to);
	}
	if (o->endpoint && strncmp(o->endpoint, "https://", 8) == 0) {
		fprintf(out, ", \"tls_verify\": %s, \"ca_file\": ", o->tls_verify ? "true" : "false");
		print_string(out, o->ca_file ? o->ca_file : "system");
	}
	fprintf(out, ",\n");
	if (o->creds_source != OBJ_CREDS_NONE) {
		/* Where the secrets are, never what they are. */
		fprintf(out, "     \"credentials\": {\"%s\": ",
			o->creds_source == OBJ_CREDS_FILE ? "file" : "systemd");
		print_string(out, o->creds_file);
		fprintf(out, ", \"profile\": ");
		print_string(out, o->creds_profile);
		if (o->creds_source == OBJ_CREDS_SYSTEMD && !getenv("CREDENTIALS_DIRECTORY"))
			fprintf(out, ", \"checked\": \"when soakd starts with it\"");
		fprintf(out, "},\n");
	}
	fprintf(out, "     \"concurrency\": %u, \"threads\": %u, \"objects\": %u, \"prefill\": %s,\n",
		o->concurrency, o->threads, o->objects, o->prefill ? "true" : "false");
	fprintf(out, "     \"mix\": {");
	for (int op = 0; op < OBJ_MIX_OPS; op++)
		fprintf(out, "%s\"%s\": %u", op ? ", " : "", obj_op_name((enum obj_op)op), o->mix[op]);
	fprintf(out, "}, \"size\": {\"dist\": \"%s\", ", obj_size_dist_name(o->size.dist));
	print_size(out, "min", o->size.min, ", ");
	print_size(out, "max", o->size.max, ", ");
	double mean = obj_size_expected_mean(&o->size);
	if (mean >= 1024 * 1024)
		snprintf(buf, sizeof(buf), "%.1fMiB", mean / (1024 * 1024));
	else if (mean >= 1024)
		snprintf(buf, sizeof(buf), "%.1fKiB", mean / 1024);
	else
		snprintf(buf, sizeof(buf), "%.0fB", mean);
	fprintf(out, "\"mean\": \"%s\"},\n", buf);
	fprintf(out, "     \"verify\": %s, \"cleanup\": %s, ", o->verify ? "true" : "false",
		o->cleanup ? "true" : "false");
	if (o->range == OBJ_RANGE_FIXED) {
		print_size(out, "read_offset", o->read_offset, ", ");
		if (o->read_length)
			print_size(out, "read_length", o->read_length, ", ");
		else
			fprintf(out, "\"read_length\": \"to the end\", ");
	} else {
		fprintf(out, "\"read_range\": \"%s\", ",
			o->range == OBJ_RANGE_RANDOM ? "random" : "whole objects");
	}
	fprintf(out, "\"names\": \"%s\", \"prefix\": ",
		o->naming == OBJ_NAMES_SEQUENTIAL ? "sequential" : "random");
	print_string(out, o->prefix);
	fprintf(out, ", \"prefixes\": %u,\n     \"checksum\": \"%s\", \"list_max_keys\": %u, ",
		o->prefixes, checksums[o->checksum], o->list_max_keys);
	format_duration(o->timeout_ns, buf, sizeof(buf));
	fprintf(out, "\"timeout\": \"%s\", ", buf);
	format_duration(o->connect_timeout_ns, buf, sizeof(buf));
	fprintf(out, "\"connect_timeout\": \"%s\", ", buf);
	if (o->audit == OBJ_AUDIT_INTERVAL) {
		format_duration(o->audit_interval_ns, buf, sizeof(buf));
		fprintf(out, "\"audit\": \"interval:%s\",\n", buf);
	} else {
		fprintf(out, "\"audit\": \"%s\",\n", o->audit == OBJ_AUDIT_OFF ? "off" : "on_resume");
	}
}
