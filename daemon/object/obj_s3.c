// SPDX-License-Identifier: GPL-2.0-only
/*
 * S3: requests signed with AWS Signature Version 4 by libcurl
 * (CURLOPT_AWS_SIGV4), path-style (host/bucket/key) by default or
 * virtual-host style (bucket.host/key), ListObjectsV2 listings, and the
 * bucket checked, or created, before the load starts.
 *
 * Payloads are streamed, so their SHA-256 is not known when the headers
 * are signed: requests carry "x-amz-content-sha256: UNSIGNED-PAYLOAD",
 * which libcurl then signs as the payload hash, as S3 allows.  Integrity
 * on the wire comes from TLS, Content-MD5 or x-amz-checksum-crc32c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

static int s3_setup_handle(const struct obj_client *cl, CURL *e)
{
	int r = obj_setup_common(cl, e);
	if (r < 0)
		return r;
	curl_easy_setopt(e, CURLOPT_AWS_SIGV4, cl->sigv4);
	curl_easy_setopt(e, CURLOPT_USERPWD, cl->userpwd);
	/* Send PUT bodies at once rather than wait for "100 Continue". */
	curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
	return 0;
}

static int s3_object_url(const struct obj_client *cl, const char *key, char *buf, size_t len)
{
	char escaped[OBJ_KEY_MAX * 3], bucket[OBJ_MAX_URL_LEN];
	int r = obj_escape_path(key, escaped, sizeof(escaped));
	if (r == 0 && cl->cfg->buckets > 1)
		r = obj_bucket_url(cl, obj_key_bucket(cl, key), bucket, sizeof(bucket));
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, len, "%s/%s", cl->cfg->buckets > 1 ? bucket : cl->base_url,
			     escaped) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* SigV4 wants the query sorted by name; these are written in that order. */
static int s3_list_url(const struct obj_client *cl, unsigned bucket, const char *prefix,
		       const char *token, char *buf, size_t len)
{
	char esc_prefix[OBJ_KEY_MAX * 3], esc_token[3 * 1024 + 1] = "", base[OBJ_MAX_URL_LEN];
	int r = obj_escape_query(prefix, esc_prefix, sizeof(esc_prefix));
	if (r == 0 && token)
		r = obj_escape_query(token, esc_token, sizeof(esc_token));
	if (r == 0)
		r = obj_bucket_url(cl, bucket, base, sizeof(base));
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, len, "%s/?%s%s%slist-type=2&max-keys=%u&prefix=%s",
			     base, token ? "continuation-token=" : "", esc_token,
			     token ? "&" : "", cl->cfg->list_max_keys, esc_prefix) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* "Code: Message" from S3's <Error> document. */
static void s3_error_message(const char *body, size_t len, char *out, size_t outlen)
{
	const char *code = len ? strstr(body, "<Code>") : NULL;
	const char *message = len ? strstr(body, "<Message>") : NULL;

	if (!code) {
		obj_text_message(body, len, out, outlen);
		return;
	}
	/* The server's words, cleaned: a <Message> could hold newlines
	 * that forge log lines, terminal escapes, or kilobytes. */
	char code_text[64], message_text[LOG_REMOTE_MAX + 1];
	code += 6;
	log_clean(code, strcspn(code, "<"), sizeof(code_text) - 1, code_text, sizeof(code_text));
	if (message) {
		message += 9;
		log_clean(message, strcspn(message, "<"), LOG_REMOTE_MAX, message_text,
			  sizeof(message_text));
		snprintf(out, outlen, "%s: %s", code_text, message_text);
	} else {
		snprintf(out, outlen, "%s", code_text);
	}
}

static void creds_source(const struct obj_client *cl, char *buf, size_t len)
{
	const struct object_config *o = cl->cfg;
	snprintf(buf, len, "%s %s, profile \"%s\"",
		 o->creds_source == OBJ_CREDS_SYSTEMD ? "systemd credential" : "credentials file",
		 o->creds_file, o->creds_profile);
}

static int create_bucket(const struct obj_client *cl, const char *base, const char *bucket,
			 enum op_error_class *ret_class, char *err, size_t errlen)
{
	const struct object_config *o = cl->cfg;
	struct obj_response resp;
	char body[256] = "", why[OBJ_ERRBODY_MAX + 64];

	/* us-east-1 is S3's default location and must not be named. */
	if (strcmp(o->region, "us-east-1") != 0)
		snprintf(body, sizeof(body),
			 "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
			 "<LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>",
			 o->region);
	int r = obj_request(cl, "PUT", base, body[0] ? body : NULL, &resp);
	if (r < 0) {
		obj_request_failed(r, err, errlen);
		return r;
	}
	if (resp.result != CURLE_OK || resp.status >= 500) {
		obj_response_describe(cl, &resp, err, errlen);
		*ret_class = obj_response_class(&resp);
		return -EAGAIN;
	}
	if (resp.status == 200 || strstr(resp.body, "BucketAlreadyOwnedByYou")) {
		log_info("%s: bucket %s is ready at %s", cl->wcfg->name, bucket, o->endpoint);
		return 0;
	}
	obj_response_describe(cl, &resp, why, sizeof(why));
	snprintf(err, errlen, "cannot create bucket %s at %s: %s", bucket, o->endpoint, why);
	return -EPERM;
}

static int probe_bucket(const struct obj_client *cl, unsigned i, enum op_error_class *ret_class,
			char *err, size_t errlen)
{
	const struct object_config *o = cl->cfg;
	struct obj_response resp;
	char url[OBJ_MAX_URL_LEN + 32], why[OBJ_ERRBODY_MAX + 64], source[PATH_MAX + 128];
	char base[OBJ_MAX_URL_LEN], bucket[80];

	obj_bucket_name(cl, i, bucket, sizeof(bucket));
	if (obj_bucket_url(cl, i, base, sizeof(base)) < 0) {
		snprintf(err, errlen, "the URL of bucket %s is too long", bucket);
		return -ENAMETOOLONG;
	}
	/* A one-key listing: needs the bucket and valid credentials, and
	 * unlike HEAD its errors come with S3's code and message. */
	snprintf(url, sizeof(url), "%s/?list-type=2&max-keys=1", base);
	int r = obj_request(cl, "GET", url, NULL, &resp);
	if (r < 0) {
		obj_request_failed(r, err, errlen);
		return r;
	}
	if (resp.result != CURLE_OK || resp.status >= 500) {
		obj_response_describe(cl, &resp, err, errlen);
		*ret_class = obj_response_class(&resp);
		return obj_result_is_lasting(resp.result) ? -EPERM : -EAGAIN;
	}
	if (resp.status == 200)
		return 0;
	obj_response_describe(cl, &resp, why, sizeof(why));
	if (resp.status == 404 && strstr(resp.body, "NoSuchBucket")) {
		if (o->create_bucket)
			return create_bucket(cl, base, bucket, ret_class, err, errlen);
		snprintf(err, errlen, "bucket %s does not exist at %s (%s); create it, or set "
				      "\"create_bucket\": true", bucket, o->endpoint, why);
		return -ENOENT;
	}
	creds_source(cl, source, sizeof(source));
	if (strstr(resp.body, "<Code>AccessDenied<"))
		snprintf(err, errlen, "%s denies the credentials from %s access to bucket %s: %s",
			 o->endpoint, source, bucket, why);
	else if (resp.status == 403 || resp.status == 400)
		snprintf(err, errlen, "%s refused the credentials from %s: %s", o->endpoint, source,
			 why);
	else
		snprintf(err, errlen, "%s refused to list bucket %s: %s", o->endpoint, bucket, why);
	return -EACCES;
}

/* Every bucket of the workload ("buckets"), each checked or created. */
static int s3_probe(const struct obj_client *cl, enum op_error_class *ret_class, char *err,
		    size_t errlen)
{
	for (unsigned i = 0; i < cl->cfg->buckets; i++) {
		int r = probe_bucket(cl, i, ret_class, err, errlen);
		if (r == 0 && cl->cfg->versioning)
			r = obj_versioning_enable(cl, i, err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

const struct obj_proto obj_proto_s3 = {
	.name = "s3",
	.setup_handle = s3_setup_handle,
	.object_url = s3_object_url,
	.list_url = s3_list_url,
	.error_message = s3_error_message,
	.probe = s3_probe,
};
