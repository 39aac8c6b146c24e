// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workload-wide client: credentials read for use, what every request
 * carries, where keys live, and this run's tag in every name.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "base/log.h"
#include "obj_engine.h"

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static int load_creds(struct obj_client *cl, char *err, size_t errlen)
{
	const struct object_config *o = cl->cfg;
	char path[PATH_MAX];
	struct stat st;
	int r;

	if (o->creds_source == OBJ_CREDS_NONE)
		return 0;
	if (o->creds_source == OBJ_CREDS_SYSTEMD) {
		r = obj_creds_systemd_path(o->creds_file, path, sizeof(path), err, errlen);
		if (r < 0)
			return r;
	} else {
		snprintf(path, sizeof(path), "%s", o->creds_file);
	}
	r = obj_creds_load(path, o->creds_profile, &cl->creds, err, errlen);
	if (r < 0)
		return r;
	if (o->creds_source == OBJ_CREDS_FILE && stat(path, &st) == 0 && (st.st_mode & 0077))
		log_warning("%s: credentials file %s can be read by other users (mode %04o); "
			    "chmod 600 it", cl->wcfg->name, path, (unsigned)(st.st_mode & 07777));
	if (asprintf(&cl->userpwd, "%s:%s", cl->creds.access_key, cl->creds.secret_key) < 0) {
		cl->userpwd = NULL;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int add_header(struct obj_client *cl, const char *line)
{
	struct curl_slist *n = curl_slist_append(cl->headers, line);
	if (!n)
		return -ENOMEM;
	cl->headers = n;
	return 0;
}

void obj_bucket_name(const struct obj_client *cl, unsigned i, char *buf, size_t len)
{
	if (cl->cfg->buckets > 1)
		snprintf(buf, len, "%s-%u", cl->cfg->bucket, i);
	else
		snprintf(buf, len, "%s", cl->cfg->bucket ? cl->cfg->bucket : "");
}

unsigned obj_key_bucket(const struct obj_client *cl, const char *key)
{
	return cl->cfg->buckets > 1 ? (unsigned)(obj_name_hash(key, strlen(key)) % cl->cfg->buckets)
				    : 0;
}

/* path style: ENDPOINT/BUCKET; virtual-host style: SCHEME://BUCKET.HOST[:PORT][/PATH]. */
int obj_bucket_url(const struct obj_client *cl, unsigned i, char *buf, size_t len)
{
	const struct object_config *o = cl->cfg;
	char bucket[80];
	int n;

	obj_bucket_name(cl, i, bucket, sizeof(bucket));
	if (o->protocol == OBJ_PROTO_HTTP)
		n = snprintf(buf, len, "%s", o->endpoint);
	else if (!o->virtual_host)
		n = snprintf(buf, len, "%s/%s", o->endpoint, bucket);
	else {
		const char *host = strstr(o->endpoint, "://") + 3;
		n = snprintf(buf, len, "%.*s%s.%s", (int)(host - o->endpoint), o->endpoint, bucket,
			     host);
	}
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int obj_client_set_tag(struct obj_client *cl, const char *tag)
{
	snprintf(cl->run_tag, sizeof(cl->run_tag), "%s", tag);
	if ((size_t)snprintf(cl->name_root, sizeof(cl->name_root), "%s%s/", cl->cfg->prefix,
			     cl->run_tag) >= sizeof(cl->name_root) - 64)
		return -ENAMETOOLONG;
	return 0;
}

int obj_client_init(struct obj_client *cl, const struct workload_config *wcfg, char *err,
		    size_t errlen)
{
	const struct object_config *o = wcfg->object;
	uint8_t tag[8];
	int r;

	cl->wcfg = wcfg;
	cl->cfg = o;
	cl->proto = o->protocol == OBJ_PROTO_S3 ? &obj_proto_s3 : &obj_proto_http;
	r = load_creds(cl, err, errlen);
	if (r < 0)
		return r;
	if (obj_bucket_url(cl, 0, cl->base_url, sizeof(cl->base_url)) < 0) {
		snprintf(err, errlen, "the endpoint's URL is too long");
		return -ENAMETOOLONG;
	}
	/* A fresh tag per run: names never collide with another run's, so
	 * nothing this run did not create is ever overwritten or cleaned up.
	 * A resumed run takes its tag back from its ledger (obj_engine.c). */
	if (getrandom(tag, sizeof(tag), 0) != sizeof(tag)) {
		snprintf(err, errlen, "cannot get random bytes: %s", strerror(errno));
		return -errno;
	}
	char hex[sizeof(cl->run_tag)];
	for (size_t i = 0; i < sizeof(tag); i++)
		snprintf(hex + 2 * i, 3, "%02x", tag[i]);
	if (obj_client_set_tag(cl, hex) < 0) {
		snprintf(err, errlen, "\"prefix\" is too long");
		return -ENAMETOOLONG;
	}

	/* Expect: 100-continue costs a round trip per PUT, which no load
	 * generator waits for.  An empty "Expect:" removes it, but libcurl's
	 * SigV4 would sign the removed header, so S3 handles send the body
	 * without waiting instead (obj_s3.c). */
	r = o->protocol == OBJ_PROTO_HTTP ? add_header(cl, "Expect:") : 0;
	if (r == 0 && o->protocol == OBJ_PROTO_S3) {
		if (asprintf(&cl->sigv4, "aws:amz:%s:s3", o->region) < 0) {
			cl->sigv4 = NULL;
			r = -ENOMEM;
		}
		if (r == 0)
			r = add_header(cl, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
		if (r == 0 && cl->creds.session_token) {
			char *line = NULL;
			if (asprintf(&line, "x-amz-security-token: %s", cl->creds.session_token) < 0)
				r = -ENOMEM;
			else {
				r = add_header(cl, line);
				wipe_free(line);
			}
		}
	}
	if (r == 0 && o->connect_to) {
		/* CURLOPT_CONNECT_TO: any host, any port -> HOST[:PORT]. */
		const char *colon = o->connect_to[0] == '[' ? strstr(o->connect_to, "]:")
							    : strrchr(o->connect_to, ':');
		if (asprintf(&cl->connect_to, "::%s%s", o->connect_to, colon ? "" : ":") < 0) {
			cl->connect_to = NULL;
			r = -ENOMEM;
		} else {
			cl->connect_to_list = curl_slist_append(NULL, cl->connect_to);
			if (!cl->connect_to_list)
				r = -ENOMEM;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	return obj_eps_client_init(cl, err, errlen);
}

void obj_client_free(struct obj_client *cl)
{
	obj_creds_clear(&cl->creds);
	wipe_free(cl->userpwd);
	cl->userpwd = NULL;
	free(cl->sigv4);
	free(cl->connect_to);
	/* The security token is in one of these lines. */
	for (struct curl_slist *h = cl->headers; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(cl->headers);
	curl_slist_free_all(cl->connect_to_list);
	cl->sigv4 = cl->connect_to = NULL;
	cl->headers = cl->connect_to_list = NULL;
}
