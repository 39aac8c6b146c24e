// SPDX-License-Identifier: GPL-2.0-only
/*
 * Versioned buckets ("versioning": true): versioning switched on at setup,
 * and the sweep that leaves the bucket without any version of the run's
 * objects (with versioning a DELETE only adds a delete marker and keeps
 * every version written before: the run's cleanup would leave them all);
 * and the sweep of incomplete multipart uploads.  All are synchronous
 * requests outside the measured load, like the bucket's probe and the
 * ledger's final sweep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"
#include "workload/workload.h"

/* Entries per page of a version listing (S3's own default). */
#define VERSIONS_PAGE 1000
/* A listing page larger than this is refused (1000 entries are ~400 KiB). */
#define VERSIONS_BODY_MAX (UINT64_C(16) << 20)
#define VERSION_ID_MAX 1024

struct growing {
	char *data;
	size_t len, cap;
	bool overflow;
};

static size_t on_receive(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct growing *g = userdata;
	size_t n = size * nmemb;
	if (g->len + n + 1 > VERSIONS_BODY_MAX) {
		g->overflow = true;
		return 0;
	}
	if (g->len + n + 1 > g->cap) {
		size_t cap = g->cap ? g->cap : 64 * 1024;
		while (cap < g->len + n + 1)
			cap *= 2;
		char *d = realloc(g->data, cap);
		if (!d)
			return 0;
		g->data = d;
		g->cap = cap;
	}
	memcpy(g->data + g->len, ptr, n);
	g->len += n;
	g->data[g->len] = '\0';
	return n;
}

/* A synchronous request whose whole answer is kept in *body; a GET of
 * the sweep (st not NULL) is aborted by a stop: -ECANCELED. */
static int request(const struct obj_client *cl, const struct obj_stream *st, const char *method,
		   const char *url, const char *send_body, struct growing *body, long *ret_status,
		   char *err, size_t errlen)
{
	struct obj_response resp;
	if (strcmp(method, "GET") != 0) {
		int r = obj_request(cl, method, url, send_body, &resp);
		if (r < 0) {
			obj_request_failed(r, err, errlen);
			return r;
		}
		*ret_status = resp.status;
		if (resp.result != CURLE_OK || resp.status >= 300) {
			obj_response_describe(cl, &resp, err, errlen);
			return resp.result != CURLE_OK ? -EIO : 0;
		}
		return 0;
	}
	CURL *e = curl_easy_init();
	char errbuf[CURL_ERROR_SIZE] = "";
	if (!e)
		return -ENOMEM;
	int r = cl->proto->setup_handle(cl, e);
	if (r < 0) {
		curl_easy_cleanup(e);
		return r;
	}
	body->len = 0;
	body->overflow = false;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cl->headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_receive);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cl->cfg->timeout_ns / 1000000));
	if (st)
		obj_sweep_watch(st, e);
	CURLcode result = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, ret_status);
	curl_easy_cleanup(e);
	if (result == CURLE_ABORTED_BY_CALLBACK && st) {
		snprintf(err, errlen, "the sweep was stopped");
		return -ECANCELED;
	}
	if (result != CURLE_OK) {
		char clean[LOG_REMOTE_MAX + 1];
		log_clean(errbuf, strlen(errbuf), LOG_REMOTE_MAX, clean, sizeof(clean));
		snprintf(err, errlen, "%s", body->overflow ? "the listing is too large"
				     : clean[0] ? clean : curl_easy_strerror(result));
		return -EIO;
	}
	if (*ret_status != 200) {
		char message[400];
		cl->proto->error_message(body->data ? body->data : "", body->len, message,
					 sizeof(message));
		snprintf(err, errlen, "HTTP %ld %s", *ret_status, message);
	}
	return 0;
}

int obj_versioning_enable(const struct obj_client *cl, unsigned bucket, char *err, size_t errlen)
{
	static const char body[] =
		"<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<Status>Enabled</Status></VersioningConfiguration>";
	char base[OBJ_MAX_URL_LEN], url[OBJ_MAX_URL_LEN + 32], name[80], why[512] = "";
	long status = 0;

	obj_bucket_name(cl, bucket, name, sizeof(name));
	if (obj_bucket_url(cl, bucket, base, sizeof(base)) < 0) {
		snprintf(err, errlen, "the URL of bucket %s is too long", name);
		return -ENAMETOOLONG;
	}
	snprintf(url, sizeof(url), "%s/?versioning=", base);
	int r = request(cl, NULL, "PUT", url, body, NULL, &status, why, sizeof(why));
	if (r == -EIO || (r == 0 && status >= 500 && status != 501)) {
		snprintf(err, errlen, "cannot enable versioning on bucket %s at %s: %s", name,
			 cl->cfg->endpoint, why);
		return -EAGAIN;
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot enable versioning on bucket %s: %s", name, why);
		return r;
	}
	if (status != 200) {
		snprintf(err, errlen, "%s does not enable versioning on bucket %s (\"versioning\": "
				      "true): %s", cl->cfg->endpoint, name, why);
		return -EOPNOTSUPP;
	}
	log_info("%s: versioning is enabled on bucket %s", cl->wcfg->name, name);
	return 0;
}

/* The text of <TAG>...</TAG> at or after p, unescaped; the end of the
 * element, or NULL when there is none before limit. */
static const char *element(const char *p, const char *limit, const char *tag, char *out,
			   size_t outlen)
{
	char open[48], close[48];
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	const char *s = strstr(p, open);
	if (!s || s >= limit)
		return NULL;
	s += strlen(open);
	const char *e = strstr(s, close);
	if (!e || e > limit)
		return NULL;
	size_t o = 0;
	while (s < e && o + 1 < outlen) {
		static const struct { const char *ent; char c; } ents[] = {
			{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
			{ "&apos;", '\'' },
		};
		size_t k;
		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++)
			if (strncmp(s, ents[k].ent, strlen(ents[k].ent)) == 0)
				break;
		if (k < sizeof(ents) / sizeof(ents[0])) {
			out[o++] = ents[k].c;
			s += strlen(ents[k].ent);
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
	return e + strlen(close);
}

/* DELETE of key?param=value (a version or delete marker: versionId; an
 * incomplete upload: uploadId); 0 when it is gone (a 404 too, where
 * gone404: an upload completed or aborted meanwhile). */
static int delete_query(const struct obj_client *cl, const char *key, const char *param,
			const char *value, bool gone404)
{
	char url[OBJ_MAX_URL_LEN], esc[VERSION_ID_MAX * 3 + 1], why[512];
	long status = 0;
	if (cl->proto->object_url(cl, key, url, sizeof(url)) < 0 ||
	    obj_escape_query(value, esc, sizeof(esc)) < 0 ||
	    strlen(url) + strlen(param) + strlen(esc) + 3 >= sizeof(url))
		return -ENAMETOOLONG;
	strcat(url, "?");
	strcat(url, param);
	strcat(url, "=");
	strcat(url, esc);
	int r = request(cl, NULL, "DELETE", url, NULL, NULL, &status, why, sizeof(why));
	return r < 0 ? r : status == 204 || status == 200 || (gone404 && status == 404) ? 0 : -EIO;
}

/* A value from a server, fit for a log line, in out (LOG_REMOTE_MAX + 1). */
static const char *clean(const char *value, char *out, size_t outlen)
{
	return log_clean(value, strlen(value), LOG_REMOTE_MAX, out, outlen);
}

/* A paged listing of a bucket, of versions or of incomplete uploads, each
 * entry of the thread's names deleted. */
struct listing {
	const char *what;               /* "version", "upload": in log lines */
	const char *max_param;          /* entries per page: "max-keys", "max-uploads" */
	bool prefixed;                  /* asked for the run's names only */
	const char *id_marker;          /* "version-id-marker", "upload-id-marker" */
	const char *kind;               /* the listing's own parameter, sorted last */
	const char *next_id_tag;        /* "NextVersionIdMarker", "NextUploadIdMarker" */
	const char *entry_tags[3];      /* the entries, NULL-ended */
	const char *id_tag;             /* "VersionId", "UploadId" */
	const char *id_param;           /* the DELETE's: "versionId", "uploadId" */
	bool gone404;                   /* a 404 answering that DELETE is gone too */
};

struct sweep {
	uint64_t found, deleted, failed;
	const char *why;                /* a stop cut it short (obj_sweep.c) */
	unsigned bucket, pages;         /* where it stopped */
};

/*
 * The next page's markers, from a truncated page: 0, or -EPROTO with err
 * set when the server gives none, or gives the markers this page was asked
 * with (or a key before them): asked again, it would answer the same page
 * for ever.  S3 lists keys in order.
 */
static int next_markers(const struct obj_client *cl, const struct listing *ls, const char *page,
			const char *end, const char *key, const char *id, char *next_key,
			size_t keylen, char *next_id, size_t idlen, char *err, size_t errlen)
{
	char k[LOG_REMOTE_MAX + 1], v[LOG_REMOTE_MAX + 1], was[LOG_REMOTE_MAX + 1];
	next_key[0] = next_id[0] = '\0';
	element(page, end, "NextKeyMarker", next_key, keylen);
	element(page, end, ls->next_id_tag, next_id, idlen);
	if (!next_key[0]) {
		snprintf(err, errlen, "%s says the %s listing goes on (IsTruncated) but gives no "
			 "NextKeyMarker", cl->cfg->endpoint, ls->what);
		return -EPROTO;
	}
	int order = strcmp(next_key, key);
	if (order < 0 || (order == 0 && strcmp(next_id, id) == 0)) {
		snprintf(err, errlen, "%s answers the %s listing with a marker that does not move "
			 "on (NextKeyMarker \"%s\", %s \"%s\" after key-marker \"%s\"): the same "
			 "page would come back for ever", cl->cfg->endpoint, ls->what,
			 clean(next_key, k, sizeof(k)), ls->next_id_tag, clean(next_id, v, sizeof(v)),
			 clean(key, was, sizeof(was)));
		return -EPROTO;
	}
	return 0;
}

/* The page's entries from p on: deletes those of the thread's names. */
static void sweep_page(struct obj_stream *st, const struct listing *ls, const char *p,
		       struct sweep *sw)
{
	for (;;) {
		const char *s = NULL, *tag = NULL;
		for (int t = 0; ls->entry_tags[t]; t++) {
			char open[32];
			snprintf(open, sizeof(open), "<%s>", ls->entry_tags[t]);
			const char *at = strstr(p, open);
			if (at && (!s || at < s)) {
				s = at;
				tag = ls->entry_tags[t];
			}
		}
		if (!s)
			return;
		char close_tag[32];
		snprintf(close_tag, sizeof(close_tag), "</%s>", tag);
		const char *close = strstr(s, close_tag);
		if (!close)
			return;
		char entry_key[OBJ_KEY_MAX], entry_id[VERSION_ID_MAX];
		unsigned stream;
		uint64_t id;
		p = close + 1;
		if (!element(s, close, "Key", entry_key, sizeof(entry_key)) ||
		    !element(s, close, ls->id_tag, entry_id, sizeof(entry_id)))
			continue;
		/* Each thread sweeps its own names. */
		if (obj_key_parse(st->cl, entry_key, &stream, &id) < 0 || stream != st->index)
			continue;
		if (obj_sweep_cut_short(st, &sw->why))
			return;
		sw->found++;
		if (delete_query(st->cl, entry_key, ls->id_param, entry_id, ls->gone404) == 0)
			sw->deleted++;
		else
			sw->failed++;
	}
}

/* Every page of every bucket, as far as a stop or the server lets it. */
static void sweep_listing(struct obj_stream *st, const struct listing *ls, struct sweep *sw)
{
	struct obj_client *cl = st->cl;
	struct growing body = { 0 };
	char err[1024];

	for (sw->bucket = 0; sw->bucket < cl->cfg->buckets && !sw->why; sw->bucket++) {
		char base[OBJ_MAX_URL_LEN], name[80], esc_prefix[OBJ_KEY_MAX * 3] = "";
		char key_marker[OBJ_KEY_MAX * 3] = "", id_marker[VERSION_ID_MAX * 3] = "";
		/* The markers as the server gave them (key_marker escaped). */
		char key[OBJ_KEY_MAX] = "", id[VERSION_ID_MAX] = "";
		obj_bucket_name(cl, sw->bucket, name, sizeof(name));
		if (obj_bucket_url(cl, sw->bucket, base, sizeof(base)) < 0 ||
		    (ls->prefixed &&
		     obj_escape_query(cl->name_root, esc_prefix, sizeof(esc_prefix)) < 0))
			break;
		for (sw->pages = 0;; sw->pages++) {
			char url[OBJ_MAX_URL_LEN * 2];
			long status = 0;
			if (obj_sweep_cut_short(st, &sw->why))
				break;
			/* Bounded like a LIST op: a server that always has
			 * another page never holds the thread. */
			if (sw->pages == OBJ_LIST_MAX_PAGES) {
				log_warning("%s: the %s listing of bucket %s at %s goes on past %u "
					    "pages: the sweep stops there (some of the run's may be "
					    "left)", cl->wcfg->name, ls->what, name, cl->cfg->endpoint,
					    OBJ_LIST_MAX_PAGES);
				break;
			}
			/* SigV4 wants the query sorted by name. */
			if ((size_t)snprintf(url, sizeof(url), "%s/?%s%s%s%s=%u%s%s%s%s%s%s&%s=", base,
					     key_marker[0] ? "key-marker=" : "", key_marker,
					     key_marker[0] ? "&" : "", ls->max_param, VERSIONS_PAGE,
					     ls->prefixed ? "&prefix=" : "", esc_prefix,
					     id_marker[0] ? "&" : "", id_marker[0] ? ls->id_marker : "",
					     id_marker[0] ? "=" : "", id_marker, ls->kind) >= sizeof(url))
				break;
			int r = request(cl, st, "GET", url, NULL, &body, &status, err, sizeof(err));
			if (r == -ECANCELED && obj_sweep_cut_short(st, &sw->why))
				break;
			if (r < 0 || status != 200 || !body.data) {
				log_warning("%s: cannot list the %ss of the run's objects in bucket %s: %s",
					    cl->wcfg->name, ls->what, name,
					    r < 0 || status != 200 ? err : "an empty answer");
				break;
			}
			sweep_page(st, ls, body.data, sw);
			if (sw->why || !strstr(body.data, "<IsTruncated>true</IsTruncated>"))
				break;
			char next_key[OBJ_KEY_MAX], next_id[VERSION_ID_MAX];
			if (next_markers(cl, ls, body.data, body.data + body.len, key, id, next_key,
					 sizeof(next_key), next_id, sizeof(next_id), err,
					 sizeof(err)) < 0) {
				log_warning("%s: the sweep of bucket %s stops (some of the run's %ss may "
					    "be left): %s", cl->wcfg->name, name, ls->what, err);
				break;
			}
			if (obj_escape_query(next_key, key_marker, sizeof(key_marker)) < 0 ||
			    obj_escape_query(next_id, id_marker, sizeof(id_marker)) < 0)
				break;
			snprintf(key, sizeof(key), "%s", next_key);
			snprintf(id, sizeof(id), "%s", next_id);
		}
	}
	free(body.data);
}

void obj_versions_sweep(struct obj_stream *st)
{
	static const struct listing versions = {
		.what = "version", .max_param = "max-keys", .prefixed = true,
		.id_marker = "version-id-marker", .kind = "versions",
		.next_id_tag = "NextVersionIdMarker", .entry_tags = { "Version", "DeleteMarker" },
		.id_tag = "VersionId", .id_param = "versionId",
	};
	struct obj_client *cl = st->cl;
	struct sweep sw = { 0 };

	sweep_listing(st, &versions, &sw);
	if (sw.why) {
		/* bucket is past the one the stop came in. */
		char name[80];
		obj_bucket_name(cl, sw.bucket - 1, name, sizeof(name));
		log_warning("%s: %s: thread %u's sweep of old versions and delete markers stops "
			    "before its end: bucket %s after %u page(s) of its listing, %u bucket(s) "
			    "after it not listed (%" PRIu64 " deleted, %" PRIu64 " could not be; the rest "
			    "stay in the buckets)", cl->wcfg->name, sw.why, st->index, name, sw.pages,
			    cl->cfg->buckets - sw.bucket, sw.deleted, sw.failed);
	} else if (sw.found) {
		log_info("%s: thread %u deleted %" PRIu64 " of %" PRIu64 " versions and delete "
			 "markers of the run's objects%s", cl->wcfg->name, st->index, sw.deleted,
			 sw.found, sw.failed ? " (the others could not be deleted)" : "");
	}
}

/*
 * Incomplete multipart uploads of the thread's names: those a SIGKILL, a
 * crash or a stop deadline left (an abandoned upload's parts stay on the
 * server, billed, until aborted).  The whole bucket's uploads are listed
 * (MinIO lists the uploads of an exact key or of all, not of a prefix)
 * and the thread's own are aborted.
 */
void obj_uploads_sweep(struct obj_stream *st)
{
	static const struct listing uploads = {
		.what = "upload", .max_param = "max-uploads", .prefixed = false,
		.id_marker = "upload-id-marker", .kind = "uploads",
		.next_id_tag = "NextUploadIdMarker", .entry_tags = { "Upload" },
		.id_tag = "UploadId", .id_param = "uploadId", .gone404 = true,
	};
	struct obj_client *cl = st->cl;
	struct sweep sw = { 0 };

	sweep_listing(st, &uploads, &sw);
	if (sw.why)
		log_warning("%s: %s: thread %u's sweep of incomplete multipart uploads stops before "
			    "its end (%" PRIu64 " aborted; the rest stay on the server)",
			    cl->wcfg->name, sw.why, st->index, sw.deleted);
	else if (sw.found)
		log_warning("%s: thread %u found %" PRIu64 " incomplete multipart uploads of the "
			    "run's names (left by a crash or a stop) and aborted %" PRIu64 "%s",
			    cl->wcfg->name, st->index, sw.found, sw.deleted,
			    sw.failed ? " (the others could not be)" : "");
}
