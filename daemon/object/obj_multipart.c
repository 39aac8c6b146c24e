// SPDX-License-Identifier: GPL-2.0-only
/*
 * S3 multipart upload of objects above "multipart_threshold": one PUT op
 * is a sequence of requests on its transfer's handle (as a listing's pages
 * are): CreateMultipartUpload, UploadPart for each "multipart_part_size"
 * slice of the generated payload (streamed, never buffered), then
 * CompleteMultipartUpload with the parts' ETags.  A part or a completion
 * that fails aborts the upload (AbortMultipartUpload) so no parts are left
 * on the server, and the op fails with the first failure's class.  The
 * object is then read and verified as a whole, like any other.
 *
 * Query strings are written in SigV4's canonical order (libcurl signs them
 * as given) and with "uploads=" rather than a bare "uploads".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

bool obj_mp_wanted(const struct obj_client *cl, const struct obj_xfer *x)
{
	const struct object_config *o = cl->cfg;
	return o->protocol == OBJ_PROTO_S3 && o->multipart_threshold &&
	       x->size > o->multipart_threshold &&
	       (x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL);
}

/* Resets what the previous request on the handle set. */
static void reset_handle(struct obj_xfer *x, const struct obj_client *cl)
{
	CURL *e = x->easy;
	x->status = 0;
	x->pos = 0;
	x->body_len = 0;
	x->body[0] = '\0';
	x->list_len = 0;
	x->errbuf[0] = '\0';
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(e, CURLOPT_RANGE, NULL);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cl->headers);
}

static int step_url(struct obj_xfer *x, const struct obj_client *cl, const char *query)
{
	char base[OBJ_MAX_URL_LEN];
	int r = cl->proto->object_url(cl, x->key, base, sizeof(base));
	if (r < 0)
		return r;
	if ((size_t)snprintf(x->url, sizeof(x->url), "%s?%s", base, query) >= sizeof(x->url))
		return -ENAMETOOLONG;
	curl_easy_setopt(x->easy, CURLOPT_URL, x->url);
	return 0;
}

static int prepare_part(struct obj_xfer *x, const struct obj_client *cl)
{
	char query[3 * sizeof(x->mp_upload_id) + 64], id[3 * sizeof(x->mp_upload_id)];
	uint64_t part = cl->cfg->multipart_part_size;
	int r = obj_escape_query(x->mp_upload_id, id, sizeof(id));

	if (r < 0)
		return r;
	reset_handle(x, cl);
	x->mp_step = OBJ_MP_PART;
	x->off = (uint64_t)x->mp_part * part;
	x->len = x->size - x->off < part ? x->size - x->off : part;
	snprintf(query, sizeof(query), "partNumber=%u&uploadId=%s", x->mp_part + 1, id);
	r = step_url(x, cl, query);
	curl_easy_setopt(x->easy, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(x->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->len);
	return r;
}

int obj_mp_prepare(struct obj_xfer *x, const struct obj_client *cl)
{
	uint64_t part = cl->cfg->multipart_part_size;

	x->mp_parts = (uint32_t)((x->size + part - 1) / part);
	if (x->mp_parts > OBJ_MAX_PARTS)
		return -EFBIG;
	x->mp_part = 0;
	x->mp_sent = 0;
	x->mp_failed = false;
	x->mp_upload_id[0] = '\0';
	x->mp_etags_len = 0;
	reset_handle(x, cl);
	x->mp_step = OBJ_MP_INIT;
	/* SSE-S3 is asked for when the upload is created. */
	if (x->headers)
		curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE, 0L);
	return step_url(x, cl, "uploads=");
}

static bool append(struct obj_xfer *x, const char *text)
{
	size_t n = strlen(text);
	if (x->mp_etags_len + n + 1 > x->mp_etags_cap) {
		size_t cap = x->mp_etags_cap ? x->mp_etags_cap * 2 : 4096;
		while (cap < x->mp_etags_len + n + 1)
			cap *= 2;
		char *grown = realloc(x->mp_etags, cap);
		if (!grown)
			return false;
		x->mp_etags = grown;
		x->mp_etags_cap = cap;
	}
	memcpy(x->mp_etags + x->mp_etags_len, text, n + 1);
	x->mp_etags_len += n;
	return true;
}

static int prepare_complete(struct obj_xfer *x, const struct obj_client *cl)
{
	char query[3 * sizeof(x->mp_upload_id) + 64], id[3 * sizeof(x->mp_upload_id)];
	int r = obj_escape_query(x->mp_upload_id, id, sizeof(id));

	if (r < 0 || !append(x, "</CompleteMultipartUpload>"))
		return r < 0 ? r : -ENOMEM;
	reset_handle(x, cl);
	x->mp_step = OBJ_MP_COMPLETE;
	snprintf(query, sizeof(query), "uploadId=%s", id);
	curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->mp_etags);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->mp_etags_len);
	return step_url(x, cl, query);
}

static enum obj_outcome abort_upload(struct obj_xfer *x, const struct obj_client *cl,
				     enum op_error_class c)
{
	char query[3 * sizeof(x->mp_upload_id) + 64], id[3 * sizeof(x->mp_upload_id)];

	x->mp_failed = true;
	x->mp_fail_class = c;
	if (!x->mp_upload_id[0] || obj_escape_query(x->mp_upload_id, id, sizeof(id)) < 0)
		return OBJ_ERROR;
	reset_handle(x, cl);
	x->mp_step = OBJ_MP_ABORT;
	snprintf(query, sizeof(query), "uploadId=%s", id);
	curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
	return step_url(x, cl, query) == 0 ? OBJ_MORE : OBJ_ERROR;
}

/* The text between <tag> and </tag> of the response kept in list_buf. */
static bool response_value(const struct obj_xfer *x, const char *tag, char *out, size_t len)
{
	char open[64], close[64];
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	const char *s = x->list_buf && x->list_len ? strstr(x->list_buf, open) : NULL;
	const char *e = s ? strstr(s, close) : NULL;
	if (!e || (size_t)(e - s - strlen(open)) >= len)
		return false;
	s += strlen(open);
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return true;
}

enum obj_outcome obj_mp_step_done(struct obj_xfer *x, const struct obj_client *cl,
				  enum obj_outcome outcome, enum op_error_class *ret_class)
{
	char etag[160], part[256];

	if (x->mp_step == OBJ_MP_ABORT) {
		/* Whatever the abort's answer: the op failed before it. */
		x->mp_step = OBJ_MP_NONE;
		*ret_class = x->mp_fail_class;
		return OBJ_ERROR;
	}
	if (outcome != OBJ_OK) {
		/* A failed completion may still have happened: its class
		 * (timeout, 5xx) says so, and the abort is then harmless. */
		return abort_upload(x, cl, *ret_class);
	}
	switch (x->mp_step) {
	case OBJ_MP_INIT:
		if (!response_value(x, "UploadId", x->mp_upload_id, sizeof(x->mp_upload_id)) ||
		    !x->mp_upload_id[0]) {
			log_warning("%s: PUT %s: no UploadId in the answer to "
				    "CreateMultipartUpload", cl->wcfg->name, x->key);
			*ret_class = OP_ERR_TRANSFER;
			x->mp_step = OBJ_MP_NONE;
			return OBJ_ERROR;
		}
		x->mp_etags_len = 0;
		if (!append(x, "<CompleteMultipartUpload>") || prepare_part(x, cl) < 0)
			return abort_upload(x, cl, OP_ERR_TRANSFER);
		return OBJ_MORE;
	case OBJ_MP_PART: {
		struct curl_header *h = NULL;
		x->mp_sent += x->pos;
		if (curl_easy_header(x->easy, "ETag", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h ||
		    !h->value || strlen(h->value) >= sizeof(etag) || strpbrk(h->value, "<>&"))
			return abort_upload(x, cl, OP_ERR_TRANSFER);
		snprintf(etag, sizeof(etag), "%s", h->value);
		snprintf(part, sizeof(part), "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
			 x->mp_part + 1, etag);
		if (!append(x, part))
			return abort_upload(x, cl, OP_ERR_TRANSFER);
		x->mp_part++;
		int r = x->mp_part < x->mp_parts ? prepare_part(x, cl) : prepare_complete(x, cl);
		return r < 0 ? abort_upload(x, cl, OP_ERR_TRANSFER) : OBJ_MORE;
	}
	case OBJ_MP_COMPLETE:
		/* S3 may answer 200 and put an error in the body. */
		if (x->list_buf && x->list_len && strstr(x->list_buf, "<Error>")) {
			char code[128] = "";
			response_value(x, "Code", code, sizeof(code));
			char clean[160];
			log_clean(code, strlen(code), 64, clean, sizeof(clean));
			log_warning("%s: PUT %s: CompleteMultipartUpload failed: %s", cl->wcfg->name,
				    x->key, clean);
			return abort_upload(x, cl, OP_ERR_HTTP_5XX);
		}
		x->mp_step = OBJ_MP_NONE;
		x->pos = x->mp_sent;
		return OBJ_OK;
	default:
		return outcome;
	}
}
