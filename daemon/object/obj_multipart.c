// SPDX-License-Identifier: GPL-2.0-only
/*
 * S3 multipart upload of objects above "multipart_threshold": one PUT op
 * is CreateMultipartUpload on its transfer's handle, then UploadPart for
 * each "multipart_part_size" slice of the generated payload (streamed,
 * never buffered), up to "multipart_parallel" at once on handles of their
 * own in the thread's multi handle, then CompleteMultipartUpload with the
 * parts' ETags, again on the op's handle.  A part or a completion that
 * fails aborts the upload (AbortMultipartUpload, once no part is in
 * flight) so no parts are left on the server, and the op fails with the
 * first failure's class.  The object is then read and verified as a
 * whole, like any other.
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
#include "workload/workload.h"

bool obj_mp_wanted(const struct obj_client *cl, const struct obj_xfer *x)
{
	const struct object_config *o = cl->cfg;
	return o->protocol == OBJ_PROTO_S3 && o->multipart_threshold &&
	       x->size > o->multipart_threshold &&
	       (x->kind == OBJ_KIND_PUT || x->kind == OBJ_KIND_PREFILL);
}

/* Resets what the previous request on the handle set: its answer, and the
 * options a step before this one may have left. */
static void reset_handle(struct obj_xfer *x, const struct obj_client *cl)
{
	CURL *e = x->easy;
	obj_xfer_reset_response(x);
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

/* A part's body: its slice of the object's generated payload. */
static size_t part_upload(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct obj_part *p = userdata;
	size_t n = size * nitems;

	if (n > p->len - p->pos)
		n = (size_t)(p->len - p->pos);
	obj_payload_fill(&p->x->payload, p->off + p->pos, (uint8_t *)buf, n);
	p->pos += n;
	return n;
}

static int part_seek(void *userdata, curl_off_t offset, int origin)
{
	struct obj_part *p = userdata;
	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > p->len)
		return CURL_SEEKFUNC_FAIL;
	p->pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

/* An UploadPart answer's body says nothing soakd needs. */
static size_t part_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	(void)ptr;
	(void)userdata;
	return size * nmemb;
}

static int part_slots(struct obj_xfer *x, const struct obj_client *cl)
{
	unsigned want = cl->cfg->multipart_parallel;
	if (x->n_part_slots >= want)
		return 0;
	struct obj_part *grown = realloc(x->parts, want * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	x->parts = grown;
	for (; x->n_part_slots < want; x->n_part_slots++) {
		struct obj_part *p = &x->parts[x->n_part_slots];
		memset(p, 0, sizeof(*p));
		p->easy = curl_easy_init();
		if (!p->easy || cl->proto->setup_handle(cl, p->easy) < 0) {
			if (p->easy)
				curl_easy_cleanup(p->easy);
			return -ENOMEM;
		}
		curl_easy_setopt(p->easy, CURLOPT_ERRORBUFFER, p->errbuf);
		curl_easy_setopt(p->easy, CURLOPT_READFUNCTION, part_upload);
		curl_easy_setopt(p->easy, CURLOPT_SEEKFUNCTION, part_seek);
		curl_easy_setopt(p->easy, CURLOPT_WRITEFUNCTION, part_body);
		curl_easy_setopt(p->easy, CURLOPT_HTTPHEADER, cl->headers);
		curl_easy_setopt(p->easy, CURLOPT_UPLOAD, 1L);
	}
	/* Pointers into parts move with a realloc: set them now. */
	for (unsigned i = 0; i < x->n_part_slots; i++) {
		struct obj_part *p = &x->parts[i];
		p->x = x;
		curl_easy_setopt(p->easy, CURLOPT_PRIVATE, p);
		curl_easy_setopt(p->easy, CURLOPT_READDATA, p);
		curl_easy_setopt(p->easy, CURLOPT_SEEKDATA, p);
	}
	return 0;
}

/* Starts the next part on the free part handle p. */
static int start_part(struct obj_stream *st, struct obj_xfer *x, struct obj_part *p)
{
	const struct obj_client *cl = st->cl;
	uint64_t part = cl->cfg->multipart_part_size;
	char base[OBJ_MAX_URL_LEN], id[3 * sizeof(x->mp_upload_id)];
	int r = obj_escape_query(x->mp_upload_id, id, sizeof(id));

	if (r == 0)
		r = cl->proto->object_url(cl, x->key, base, sizeof(base));
	if (r < 0)
		return r;
	p->number = x->mp_next + 1;
	p->off = (uint64_t)x->mp_next * part;
	p->len = x->size - p->off < part ? x->size - p->off : part;
	p->pos = 0;
	p->errbuf[0] = '\0';
	if ((size_t)snprintf(p->url, sizeof(p->url), "%s?partNumber=%u&uploadId=%s", base,
			     p->number, id) >= sizeof(p->url))
		return -ENAMETOOLONG;
	curl_easy_setopt(p->easy, CURLOPT_URL, p->url);
	curl_easy_setopt(p->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)p->len);
	obj_eps_apply(st->cl, p->easy, x->endpoint);
	if (curl_multi_add_handle(st->multi, p->easy) != CURLM_OK)
		return -ENOMEM;
	p->busy = true;
	x->mp_next++;
	x->mp_inflight++;
	return 0;
}

static void fail_parts(struct obj_xfer *x, enum op_error_class c)
{
	if (!x->mp_failed) {
		x->mp_failed = true;
		x->mp_fail_class = c;
	}
}

/* Starts parts while handles are free and parts are left. */
static void launch(struct obj_stream *st, struct obj_xfer *x)
{
	for (unsigned i = 0; i < x->n_part_slots && !x->mp_failed && x->mp_next < x->mp_parts; i++)
		if (!x->parts[i].busy && start_part(st, x, &x->parts[i]) < 0)
			fail_parts(x, OP_ERR_TRANSFER);
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
	char part[OBJ_ETAG_MAX + 96];
	int r = obj_escape_query(x->mp_upload_id, id, sizeof(id));

	x->mp_etags_len = 0;
	if (r < 0 || !append(x, "<CompleteMultipartUpload>"))
		return r < 0 ? r : -ENOMEM;
	for (uint32_t i = 0; i < x->mp_parts; i++) {
		snprintf(part, sizeof(part), "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag>"
			 "</Part>", i + 1, x->mp_part_etags[i]);
		if (!append(x, part))
			return -ENOMEM;
	}
	if (!append(x, "</CompleteMultipartUpload>"))
		return -ENOMEM;
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
	if (!x->mp_upload_id[0] || obj_escape_query(x->mp_upload_id, id, sizeof(id)) < 0) {
		x->mp_step = OBJ_MP_NONE;
		return OBJ_ERROR;
	}
	reset_handle(x, cl);
	x->mp_step = OBJ_MP_ABORT;
	snprintf(query, sizeof(query), "uploadId=%s", id);
	curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
	if (step_url(x, cl, query) == 0)
		return OBJ_MORE;
	x->mp_step = OBJ_MP_NONE; /* the op ends here, failed */
	return OBJ_ERROR;
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
	if (x->mp_step == OBJ_MP_ABORT) {
		/* Whatever the abort's answer: the op failed before it. */
		x->mp_step = OBJ_MP_NONE;
		*ret_class = x->mp_fail_class;
		return OBJ_ERROR;
	}
	if (outcome != OBJ_OK) {
		/* A failed completion may still have happened: its class
		 * (timeout, 5xx) says so, and the abort is then harmless.  So
		 * may one sent again after a reused connection closed
		 * unanswered: its 404 (NoSuchUpload) can be the first send's
		 * completion. */
		if (x->mp_step == OBJ_MP_COMPLETE && x->sends > 1 && *ret_class == OP_ERR_HTTP_4XX)
			*ret_class = OP_ERR_TRANSFER;
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
		free(x->mp_part_etags);
		x->mp_part_etags = calloc(x->mp_parts, sizeof(*x->mp_part_etags));
		if (!x->mp_part_etags || part_slots(x, cl) < 0)
			return abort_upload(x, cl, OP_ERR_TRANSFER);
		x->mp_step = OBJ_MP_PART;
		x->mp_next = x->mp_done = 0;
		x->mp_inflight = 0;
		launch(x->st, x);
		if (!x->mp_inflight)
			return abort_upload(x, cl, OP_ERR_TRANSFER);
		return OBJ_WAIT;
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

bool obj_mp_is_part(const struct obj_stream *st, const void *private_ptr)
{
	const char *p = private_ptr;
	return p < (const char *)st->xfers || p >= (const char *)(st->xfers + st->n_xfers);
}

static enum op_error_class part_class(CURLcode result, long status)
{
	if (result == CURLE_OPERATION_TIMEDOUT)
		return OP_ERR_TIMEOUT;
	if (result == CURLE_COULDNT_CONNECT)
		return OP_ERR_CONNECT;
	if (result != CURLE_OK)
		return OP_ERR_TRANSFER;
	return status >= 500 ? OP_ERR_HTTP_5XX : status >= 400 ? OP_ERR_HTTP_4XX : OP_ERR_TRANSFER;
}

void obj_mp_part_done(struct obj_stream *st, struct obj_part *p, CURLcode result)
{
	struct obj_xfer *x = p->x;
	const struct obj_client *cl = st->cl;
	struct curl_header *h = NULL;
	long status = 0;

	curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
	p->busy = false;
	x->mp_inflight--;
	if (result == CURLE_OK && status >= 200 && status <= 299 &&
	    curl_easy_header(p->easy, "ETag", 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h &&
	    h->value && strlen(h->value) < OBJ_ETAG_MAX && !strpbrk(h->value, "<>&")) {
		snprintf(x->mp_part_etags[p->number - 1], OBJ_ETAG_MAX, "%s", h->value);
		x->mp_sent += p->pos;
		x->mp_done++;
	} else {
		enum op_error_class c = part_class(result, status);
		unsigned n = atomic_fetch_add(&((struct obj_client *)cl)->errors_logged[c], 1);
		if (n < OBJ_ERRORS_LOGGED) {
			char why[CURL_ERROR_SIZE + 32];
			if (result != CURLE_OK)
				log_clean(p->errbuf, strlen(p->errbuf), LOG_REMOTE_MAX, why, sizeof(why));
			else
				snprintf(why, sizeof(why), "HTTP %ld", status);
			log_warning("%s: PUT %s part %u failed: %s; the upload is aborted",
				    cl->wcfg->name, x->key, p->number,
				    why[0] ? why : curl_easy_strerror(result));
		}
		fail_parts(x, c);
	}
	launch(st, x);
	if (x->mp_inflight)
		return;
	/* No part in flight: the op's own handle says how it ends. */
	enum obj_outcome next = OBJ_MORE;
	if (x->mp_failed || prepare_complete(x, cl) < 0)
		next = abort_upload(x, cl, x->mp_failed ? x->mp_fail_class : OP_ERR_TRANSFER);
	if (next == OBJ_MORE && obj_op_resend(st, x) == 0)
		return;
	/* Neither the completion nor the abort can be sent: the op ends
	 * now, failed, counted in this interval (left busy, it would only
	 * be counted missed when the workload ends). */
	x->mp_step = OBJ_MP_NONE;
	obj_op_end(st, x, OBJ_ERROR, x->mp_failed ? x->mp_fail_class : OP_ERR_TRANSFER, false,
		   mono_ns());
}

void obj_mp_abandon(struct obj_stream *st, struct obj_xfer *x)
{
	for (unsigned i = 0; i < x->n_part_slots; i++)
		if (x->parts[i].busy) {
			curl_multi_remove_handle(st->multi, x->parts[i].easy);
			x->parts[i].busy = false;
		}
	x->mp_inflight = 0;
}

void obj_mp_free(struct obj_xfer *x)
{
	for (unsigned i = 0; i < x->n_part_slots; i++)
		curl_easy_cleanup(x->parts[i].easy);
	free(x->parts);
	free(x->mp_part_etags);
	x->parts = NULL;
	x->mp_part_etags = NULL;
	x->n_part_slots = 0;
}
