// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where and how an object workload connects: the endpoint, the S3 keys
 * (bucket, region, addressing), TLS, and the credentials' source.
 *
 * Secrets never come from the configuration: "credentials" names a file or
 * a systemd credential, which is read here only to check it (so that
 * --check-config catches a missing file or profile) and read again, for
 * use, when the workload is prepared.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/regfile.h"
#include "obj_config.h"
#include "object/obj_creds.h"
/* Relative paths in an object workload (credentials, CA file) are read
 * relative to the configuration file, which is where people keep them. */
static char *path_near_config(struct cfg_ctx *c, const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char *config = cfg_absolute_path(c->name), *abs = NULL;
	if (!config)
		return NULL;
	char *slash = strrchr(config, '/');
	if (slash)
		*slash = '\0';
	if (asprintf(&abs, "%s/%s", config, path) < 0)
		abs = NULL;
	free(config);
	return abs;
}

void obj_cfg_parse_endpoint(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	const char *s;

	if (!json_object_get(obj, "endpoint")) {
		cfg_report(c, "an object workload needs \"endpoint\", such as \"http://127.0.0.1:9000\"");
		return;
	}
	if (!cfg_get_string(c, obj, "endpoint", &s))
		return;
	cfg_push_key(c, "endpoint");
	size_t n = strlen(s);
	const char *host = strncmp(s, "http://", 7) == 0 ? s + 7
			   : strncmp(s, "https://", 8) == 0 ? s + 8 : NULL;
	size_t host_len = host ? strcspn(host, "/") : 0;
	if (!host || host_len == 0)
		cfg_report(c, "\"endpoint\" must be an http:// or https:// URL with a host");
	else if (n > OBJ_MAX_URL_LEN / 2)
		cfg_report(c, "\"endpoint\" is longer than %d bytes", OBJ_MAX_URL_LEN / 2);
	else if (memchr(host, '@', host_len))
		cfg_report(c, "\"endpoint\" must not hold credentials; use \"credentials\"");
	else if (strpbrk(s, "?# \t\r\n\""))
		cfg_report(c, "\"endpoint\" must not hold a query, a fragment or spaces");
	else {
		o->endpoint = obj_cfg_strdup(c, s);
		size_t authority_end = (size_t)(host - s) + host_len;
		while (o->endpoint && n > authority_end && o->endpoint[n - 1] == '/')
			o->endpoint[--n] = '\0';
	}
	cfg_pop(c);
}

static bool valid_bucket(const char *s)
{
	size_t n = strlen(s);
	if (n < 3 || n > 63 || s[0] == '.' || s[0] == '-' || s[n - 1] == '.' || s[n - 1] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			return false;
	return true;
}

/* Secrets under any of these names are refused with a pointer to the
 * right place, rather than as a mere unknown key. */
void obj_cfg_refuse_secrets(struct cfg_ctx *c, json_t *obj)
{
	static const char *const secrets[] = {
		"secret", "secret_key", "access_key", "aws_secret_access_key", "aws_access_key_id",
		"password", "token", "aws_session_token", NULL,
	};
	for (int i = 0; secrets[i]; i++) {
		if (!json_object_get(obj, secrets[i]))
			continue;
		cfg_push_key(c, secrets[i]);
		cfg_report_key(c, "secrets are never read from the configuration: put them in an AWS "
				  "credentials file and give {\"file\": PATH} or {\"systemd\": NAME}");
		cfg_pop(c);
	}
}

void obj_cfg_parse_credentials(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	static const char *const keys[] = { "file", "systemd", "profile", NULL };
	json_t *v = json_object_get(obj, "credentials");
	const char *s = NULL, *profile = "default";
	char err[512], path[PATH_MAX];
	struct obj_creds creds;

	if (!v) {
		if (o->protocol == OBJ_PROTO_S3)
			cfg_report(c, "an s3 workload needs \"credentials\": {\"file\": PATH} (an AWS "
				      "credentials file) or {\"systemd\": NAME} (LoadCredential=)");
		return;
	}
	cfg_push_key(c, "credentials");
	if (o->protocol != OBJ_PROTO_S3) {
		cfg_report(c, "\"credentials\" is for \"protocol\": \"s3\"; http workloads sign nothing");
		goto out;
	}
	if (!json_is_object(v)) {
		cfg_report(c, "\"credentials\" must be {\"file\": PATH} or {\"systemd\": NAME}, with "
			      "an optional \"profile\"");
		goto out;
	}
	obj_cfg_refuse_secrets(c, v);
	cfg_check_keys2(c, v, "\"credentials\"", keys, (const char *const[]){
		"secret", "secret_key", "access_key", "aws_secret_access_key", "aws_access_key_id",
		"password", "token", "aws_session_token", NULL });
	cfg_get_string(c, v, "profile", &profile);
	bool has_file = json_object_get(v, "file"), has_systemd = json_object_get(v, "systemd");
	if (has_file == has_systemd) {
		cfg_report(c, "\"credentials\" needs exactly one of \"file\" and \"systemd\"");
		goto out;
	}
	o->creds_profile = obj_cfg_strdup(c, profile);
	if (has_file && cfg_get_string(c, v, "file", &s)) {
		cfg_push_key(c, "file");
		o->creds_source = OBJ_CREDS_FILE;
		o->creds_file = path_near_config(c, s);
		if (!*s || !o->creds_file)
			cfg_report(c, "credentials file \"%s\" cannot be resolved", s);
		else if (obj_creds_load(o->creds_file, profile, &creds, err, sizeof(err)) < 0)
			cfg_report(c, "%s", err);
		else
			obj_creds_clear(&creds);
		cfg_pop(c);
	} else if (has_systemd && cfg_get_string(c, v, "systemd", &s)) {
		cfg_push_key(c, "systemd");
		o->creds_source = OBJ_CREDS_SYSTEMD;
		o->creds_file = obj_cfg_strdup(c, s);
		if (!cfg_valid_name(s) || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
			cfg_report(c, "systemd credential name \"%s\" must be 1-%d letters, digits, "
				      "'-', '_' or '.'", s, CONFIG_MAX_NAME - 1);
		/* Outside the service there is no credential to look at: it
		 * is checked when soakd starts under systemd. */
		else if (getenv("CREDENTIALS_DIRECTORY") &&
			 obj_creds_systemd_path(s, path, sizeof(path), err, sizeof(err)) == 0) {
			if (obj_creds_load(path, profile, &creds, err, sizeof(err)) < 0)
				cfg_report(c, "%s", err);
			else
				obj_creds_clear(&creds);
		}
		cfg_pop(c);
	}
out:
	cfg_pop(c);
}

void obj_cfg_parse_tls(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	const char *s;

	cfg_get_bool(c, obj, "tls_verify", &o->tls_verify);
	if (cfg_get_string(c, obj, "ca_file", &s)) {
		cfg_push_key(c, "ca_file");
		o->ca_file = path_near_config(c, s);
		/* libcurl opens it with a blocking open: a FIFO would hang
		 * every TLS connection. */
		char err[PATH_MAX + 128];
		int fd = *s && o->ca_file ? regfile_open(o->ca_file, "CA file", err, sizeof(err))
					  : -ENOENT;
		if (fd >= 0)
			close(fd);
		else if (!*s || !o->ca_file)
			cfg_report(c, "cannot read CA file \"%s\": %s", s, strerror(-fd));
		else
			cfg_report(c, "%s", err);
		cfg_pop(c);
	}
	if (o->endpoint && strncmp(o->endpoint, "https://", 8) != 0 &&
	    (o->ca_file || json_object_get(obj, "tls_verify"))) {
		cfg_push_key(c, o->ca_file ? "ca_file" : "tls_verify");
		cfg_report(c, "TLS settings need an https:// \"endpoint\"");
		cfg_pop(c);
	}
}

static bool host_is_ip(const char *endpoint)
{
	const char *host = strstr(endpoint, "://") + 3;
	if (*host == '[')
		return true;
	size_t n = strcspn(host, ":/");
	for (size_t i = 0; i < n; i++)
		if (!((host[i] >= '0' && host[i] <= '9') || host[i] == '.'))
			return false;
	return true;
}

void obj_cfg_parse_s3(struct cfg_ctx *c, json_t *obj, struct object_config *o)
{
	static const char *const addressing[] = { "path", "virtual-host", NULL };
	const char *s;

	if (!json_object_get(obj, "bucket"))
		cfg_report(c, "an s3 workload needs \"bucket\"");
	else if (cfg_get_string(c, obj, "bucket", &s)) {
		cfg_push_key(c, "bucket");
		if (!valid_bucket(s))
			cfg_report(c, "bucket name \"%s\" must be 3-63 lowercase letters, digits, '.' "
				      "or '-', starting and ending with a letter or digit", s);
		else
			o->bucket = obj_cfg_strdup(c, s);
		cfg_pop(c);
	}
	if (cfg_get_string(c, obj, "region", &s)) {
		cfg_push_key(c, "region");
		bool ok = *s && strlen(s) < 64;
		for (const char *p = s; ok && *p; p++)
			ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
		if (!ok)
			cfg_report(c, "region \"%s\" must be lowercase letters, digits and '-'", s);
		else {
			free(o->region);
			o->region = obj_cfg_strdup(c, s);
		}
		cfg_pop(c);
	}
	cfg_get_bool(c, obj, "create_bucket", &o->create_bucket);
	cfg_get_bool(c, obj, "versioning", &o->versioning);
	uint64_t n = o->buckets;
	cfg_get_uint(c, obj, "buckets", 1, OBJ_MAX_BUCKETS, &n);
	o->buckets = (unsigned)n;
	/* BUCKET-N must be a bucket name too. */
	if (o->buckets > 1 && o->bucket && strlen(o->bucket) + 4 > 63) {
		cfg_push_key(c, "buckets");
		cfg_report(c, "with \"buckets\", the names are \"%s-0\" .. \"%s-%u\": \"bucket\" "
			      "must be at most 59 characters", o->bucket, o->bucket, o->buckets - 1);
		cfg_pop(c);
	}
	cfg_get_size(c, obj, "multipart_threshold", &o->multipart_threshold);
	n = o->multipart_parallel;
	cfg_get_uint(c, obj, "multipart_parallel", 1, OBJ_MAX_PARALLEL_PARTS, &n);
	o->multipart_parallel = (unsigned)n;
	if (cfg_get_size(c, obj, "multipart_part_size", &o->multipart_part_size) &&
	    o->multipart_part_size < OBJ_MIN_PART_SIZE) {
		cfg_push_key(c, "multipart_part_size");
		cfg_report(c, "\"multipart_part_size\" must be at least 5MiB (S3's smallest part)");
		cfg_pop(c);
	}
	if (cfg_get_string(c, obj, "sse", &s)) {
		cfg_push_key(c, "sse");
		if (strcmp(s, "s3") == 0)
			o->sse_s3 = true;
		else if (strcmp(s, "none") != 0)
			cfg_report(c, "\"sse\" must be \"s3\" (SSE-S3: the server encrypts with its "
				      "own keys) or \"none\", not \"%s\"", s);
		cfg_pop(c);
	}
	int a = obj_cfg_enum(c, obj, "addressing", addressing);
	if (a >= 0)
		o->virtual_host = a == 1;
	if (o->virtual_host && o->endpoint && host_is_ip(o->endpoint)) {
		cfg_push_key(c, "addressing");
		cfg_report(c, "\"virtual-host\" addressing needs a host name in \"endpoint\", not an "
			      "IP address (\"connect_to\" can point the name at an address)");
		cfg_pop(c);
	}
}
