// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a finished object transfer means: success, an error of one class
 * (connect, timeout, HTTP 4xx, HTTP 5xx, transfer), or corrupt data.  The
 * first few of each class are logged with the server's own message;
 * after that they are only counted, as wrk does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

static const char *const class_names[OP_ERR_CLASSES] = {
	"connect", "timeout", "HTTP 4xx", "HTTP 5xx", "transfer",
};

static const char *verb(enum obj_kind kind)
{
	switch (kind) {
	case OBJ_KIND_PUT:
	case OBJ_KIND_PREFILL: return "PUT";
	case OBJ_KIND_GET:
	case OBJ_KIND_AUDIT: return "GET";
	case OBJ_KIND_STAT:
	case OBJ_KIND_AUDIT_HEAD: return "HEAD";
	case OBJ_KIND_DELETE:
	case OBJ_KIND_CLEANUP: return "DELETE";
	case OBJ_KIND_LIST: return "LIST";
	default: return "?";
	}
}

static enum op_error_class class_of(CURLcode r)
{
	switch (r) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		return OP_ERR_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return OP_ERR_TIMEOUT;
	default:
		return OP_ERR_TRANSFER;
	}
}

enum op_error_class obj_response_class(const struct obj_response *r)
{
	if (r->result != CURLE_OK)
		return class_of(r->result);
	return r->status >= 500 && r->status <= 599 ? OP_ERR_HTTP_5XX
	       : r->status >= 400 && r->status <= 499 ? OP_ERR_HTTP_4XX : OP_ERR_TRANSFER;
}

static void log_failure(const struct obj_client *cl, const struct obj_xfer *x,
		      enum op_error_class c, const char *detail)
{
	unsigned n = atomic_fetch_add(&((struct obj_client *)cl)->errors_logged[c], 1);
	if (n >= OBJ_ERRORS_LOGGED)
		return;
	log_warning("%s: %s %s failed (%s): %s%s", cl->wcfg->name, verb(x->kind), x->key,
		    class_names[c], detail,
		    n + 1 == OBJ_ERRORS_LOGGED ? " (further errors of this class are counted, "
						 "not logged)" : "");
}

static void hex(const uint8_t *b, size_t n, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 4 < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%02x", i ? " " : "", b[i]);
	if (!n)
		snprintf(out, len, "nothing");
}

/* What the data that came back is, when its first 16 bytes are known. */
static void describe_head(const struct obj_xfer *x, char *out, size_t len)
{
	uint64_t name_hash, version;

	out[0] = '\0';
	if (x->head_len < sizeof(x->head))
		return;
	obj_payload_header(x->head, &name_hash, &version);
	if (name_hash == x->payload.name_hash && version != x->payload.version)
		snprintf(out, len, "; the object holds version %" PRIu64 " of it, not version %"
			 PRIu64 " (a stale or lost write)", version, x->payload.version);
	else if (name_hash != x->payload.name_hash)
		snprintf(out, len, "; its first bytes are not this object's header");
}

static void log_corrupt(const struct obj_client *cl, const struct obj_xfer *x, const char *what)
{
	unsigned n = atomic_fetch_add(&((struct obj_client *)cl)->corrupt_logged, 1);
	if (n >= OBJ_CORRUPT_LOGGED)
		return;
	log_error("%s: CORRUPT: %s %s (version %" PRIu64 ", %" PRIu64 " bytes%s%s): %s%s",
		  cl->wcfg->name, verb(x->kind), x->key, x->payload.version, x->size,
		  x->ranged ? ", range " : "", x->ranged ? x->range : "", what,
		  n + 1 == OBJ_CORRUPT_LOGGED ? " (further corruption is counted, not logged)" : "");
}

void obj_log_verify(const struct obj_client *cl, const struct obj_xfer *x, const char *class,
		    const char *what)
{
	unsigned n = atomic_fetch_add(&((struct obj_client *)cl)->verify_logged, 1);
	if (n >= OBJ_CORRUPT_LOGGED)
		return;
	log_error("%s: %s: %s %s: %s%s", cl->wcfg->name, class, verb(x->kind), x->key, what,
		  n + 1 == OBJ_CORRUPT_LOGGED ? " (further lost, stale and resurrected objects are "
						"counted, not logged)" : "");
}

/* The data is an older version of this very object: the server gave back
 * what an acknowledged PUT replaced. */
/* An older version of this object, by its header, or, for a range past
 * it, by its bytes from the range's first on (one of the last few
 * versions, obj_xfer.c find_older; the whole range that version's); that
 * version in *found. */
static bool is_stale(const struct obj_xfer *x, uint64_t *found)
{
	uint64_t name_hash, version;

	if (x->off != 0) {
		*found = x->alt.version;
		return x->alt_on && !x->alt_bad && x->alt.version < x->payload.version;
	}
	if (x->head_len < sizeof(x->head))
		return false;
	obj_payload_header(x->head, &name_hash, &version);
	*found = version;
	return name_hash == x->payload.name_hash && version < x->payload.version;
}

/* The data is what a write of this object that had no answer would have
 * left (obj_late.h): by its header, or, for a range without it, by the
 * bytes where it differs from what was expected. */
static int late_index(const struct obj_xfer *x)
{
	uint64_t name_hash, version;

	if (!obj_late_has_put(&x->late))
		return -1;
	if (x->head_len == sizeof(x->head)) {
		obj_payload_header(x->head, &name_hash, &version);
		return name_hash == x->payload.name_hash && version != x->payload.version
		       ? obj_late_find_version(&x->late, version) : -1;
	}
	for (int i = 0; i < OBJ_LATE_PUTS && x->late.version[i] && x->got_len; i++) {
		struct obj_payload late;
		uint8_t want[sizeof(x->got)];
		obj_payload_init(&late, x->key, strlen(x->key), x->late.version[i]);
		obj_payload_fill(&late, x->mismatch_at, want, x->got_len);
		if (x->late.version[i] != x->payload.version && memcmp(want, x->got, x->got_len) == 0)
			return i;
	}
	return -1;
}

/* Which of x->late's unanswered PUTs a read found, or -1. */
static int late_found(const struct obj_xfer *x)
{
	if (x->kind == OBJ_KIND_STAT) {
		curl_off_t length = -1;
		curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
		return length >= 0 && (uint64_t)length != x->size
		       ? obj_late_find_size(&x->late, (uint64_t)length) : -1;
	}
	return late_index(x);
}

static enum obj_outcome check_get(const struct obj_client *cl, const struct obj_xfer *x)
{
	char what[512], want_hex[64], got_hex[64], head[160];

	if (!x->verify)
		return OBJ_OK;
	/* Headed as another version of this object, and not that version
	 * further on, or not as long as an unanswered PUT of it was: damage,
	 * whatever its first bytes say. */
	int late = x->mismatch ? late_index(x) : -1;
	if (x->alt_on && (x->alt_bad || (late >= 0 && x->pos != x->late.size[late]))) {
		snprintf(what, sizeof(what), "begins as version %" PRIu64 " of this object (%s), but "
			 "%s", x->alt.version, late >= 0 ? "a write that had no answer" : "an older one",
			 x->alt_bad ? "its data differs from that version's further on"
				    : "is not as long as that write was");
		log_corrupt(cl, x, what);
		return OBJ_CORRUPT;
	}
	if (late >= 0)
		return OBJ_LATE;
	uint64_t version;
	if (x->mismatch && is_stale(x, &version)) {
		snprintf(what, sizeof(what), "version %" PRIu64 " came back where version %" PRIu64
			 " was acknowledged", version, x->payload.version);
		obj_log_verify(cl, x, "STALE", what);
		return OBJ_STALE;
	}
	if (x->mismatch) {
		uint8_t want[16];
		obj_payload_fill(&x->payload, x->mismatch_at, want, x->got_len);
		hex(want, x->got_len, want_hex, sizeof(want_hex));
		hex(x->got, x->got_len, got_hex, sizeof(got_hex));
		describe_head(x, head, sizeof(head));
		snprintf(what, sizeof(what), "differs from what was written at byte %" PRIu64
			 ": expected %s, got %s%s", x->mismatch_at, want_hex, got_hex, head);
		log_corrupt(cl, x, what);
		return OBJ_CORRUPT;
	}
	if (x->pos != x->len) {
		snprintf(what, sizeof(what), "%" PRIu64 " bytes came back where %" PRIu64
			 " were written", x->pos, x->len);
		log_corrupt(cl, x, what);
		return OBJ_CORRUPT;
	}
	return OBJ_OK;
}

static bool check_stat(const struct obj_client *cl, const struct obj_xfer *x)
{
	curl_off_t length = -1;
	char what[160];

	if (!x->verify)
		return true;
	curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
	if (length >= 0 && (uint64_t)length == x->size)
		return true;
	snprintf(what, sizeof(what), "the server reports %" CURL_FORMAT_CURL_OFF_T
		 " bytes where %" PRIu64 " were written", length, x->size);
	log_corrupt(cl, x, what);
	return false;
}

/* The text of [s, e) with XML entities decoded into out; false when it
 * does not fit. */
static bool xml_decode(const char *s, const char *e, char *out, size_t len)
{
	static const struct { const char *entity; char c; } entities[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' },
	};
	size_t o = 0;
	while (s < e && o + 1 < len) {
		char c = *s++;
		for (size_t i = 0; c == '&' && i < sizeof(entities) / sizeof(entities[0]); i++) {
			size_t n = strlen(entities[i].entity) - 1;
			if ((size_t)(e - s) >= n && strncmp(s, entities[i].entity + 1, n) == 0) {
				c = entities[i].c;
				s += n;
				break;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return s == e;
}

/* The text between <tag> and </tag>, XML entities decoded. */
static bool xml_value(const char *doc, const char *tag, char *out, size_t len)
{
	char open[64], close[64];
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	const char *s = strstr(doc, open);
	if (!s)
		return false;
	s += strlen(open);
	const char *e = strstr(s, close);
	if (!e)
		return false;
	return xml_decode(s, e, out, len);
}

/* Notes a listed key for the comparison with the pool: this thread's
 * name numbers, and names under the run's root soakd never makes. */
static void list_key(struct obj_xfer *x, const struct obj_client *cl, const char *s, const char *e)
{
	char key[OBJ_KEY_MAX];
	unsigned stream;
	uint64_t id;

	if (!x->list_whole)
		return;
	if (!xml_decode(s, e, key, sizeof(key))) {
		x->list_strange++;
		return;
	}
	int r = obj_key_parse(cl, key, &stream, &id);
	if (r == -EINVAL)
		x->list_strange++;
	if (r < 0 || stream != x->st->index)
		return;
	if (x->list_n == x->list_ids_cap) {
		size_t cap = x->list_ids_cap ? x->list_ids_cap * 2 : 1024;
		uint64_t *grown = cap <= OBJ_LIST_MAX_IDS ? realloc(x->list_ids, cap * sizeof(*grown))
							  : NULL;
		if (!grown) {
			x->list_whole = false; /* too big to compare: not compared */
			return;
		}
		x->list_ids = grown;
		x->list_ids_cap = cap;
	}
	x->list_ids[x->list_n++] = id;
}

/* Counts a listing page's keys; sets up the next page when there is one. */
static enum obj_outcome list_page(struct obj_xfer *x, const struct obj_client *cl,
				  enum op_error_class *ret_class)
{
	char token[1024], truncated[8];

	x->list_pages++;
	x->list_bytes += x->list_len;
	/* Whole, or not a page: a body cut short where the server closed
	 * the connection (no length given) comes back as a success, and
	 * its missing keys would be reported missing from the bucket. */
	const char *page = x->list_len ? x->list_buf : NULL;
	if (!page || !strstr(page, "<ListBucketResult")) {
		log_failure(cl, x, OP_ERR_TRANSFER, "the response is not a ListObjectsV2 result");
		*ret_class = OP_ERR_TRANSFER;
		return OBJ_ERROR;
	}
	if (!strstr(page, "</ListBucketResult>")) {
		log_failure(cl, x, OP_ERR_TRANSFER, "the ListObjectsV2 result is cut short");
		*ret_class = OP_ERR_TRANSFER;
		return OBJ_ERROR;
	}
	for (const char *p = page; (p = strstr(p, "<Key>")); p += 5) {
		const char *end = strstr(p + 5, "</Key>");
		x->list_keys++;
		if (end)
			list_key(x, cl, p + 5, end);
	}
	if (!xml_value(x->list_buf, "IsTruncated", truncated, sizeof(truncated)) ||
	    strcmp(truncated, "true") != 0)
		return OBJ_OK;
	if (x->list_pages >= OBJ_LIST_MAX_PAGES) {
		x->list_whole = false;
		return OBJ_OK; /* bounded: a listing op never runs forever */
	}
	if (!xml_value(x->list_buf, "NextContinuationToken", token, sizeof(token)) ||
	    obj_xfer_prepare_list(x, cl, x->key, token) < 0) {
		log_failure(cl, x, OP_ERR_TRANSFER, "a truncated listing without a usable "
						  "NextContinuationToken");
		*ret_class = OP_ERR_TRANSFER;
		return OBJ_ERROR;
	}
	return OBJ_MORE;
}

static enum obj_outcome finish_request(struct obj_xfer *x, const struct obj_client *cl,
				       CURLcode result, enum op_error_class *ret_class, bool *ret_gone);

enum obj_outcome obj_xfer_finish(struct obj_xfer *x, const struct obj_client *cl, CURLcode result,
				 enum op_error_class *ret_class, bool *ret_gone)
{
	enum obj_outcome outcome = finish_request(x, cl, result, ret_class, ret_gone);
	/* A multipart PUT's steps; its outcome is the last one's. */
	if (x->mp_step != OBJ_MP_NONE) {
		*ret_gone = false;
		return obj_mp_step_done(x, cl, outcome, ret_class);
	}
	return outcome;
}

static enum obj_outcome finish_request(struct obj_xfer *x, const struct obj_client *cl,
				       CURLcode result, enum op_error_class *ret_class, bool *ret_gone)
{
	char detail[OBJ_ERRBODY_MAX + 64], message[OBJ_ERRBODY_MAX];
	long status = 0;

	*ret_gone = false;
	if (result != CURLE_OK) {
		/* Timed out before libcurl sent a byte (on_send never ran):
		 * in connect, or its TLS handshake.  A connect error, and a
		 * request that did not happen. */
		*ret_class = result == CURLE_OPERATION_TIMEDOUT && x->sends == 0 ? OP_ERR_CONNECT
										 : class_of(result);
		log_clean(x->errbuf, sizeof(x->errbuf), LOG_REMOTE_MAX, message, sizeof(message));
		log_failure(cl, x, *ret_class, message[0] ? message : curl_easy_strerror(result));
		return OBJ_ERROR;
	}
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status <= 299) {
		switch (x->kind) {
		case OBJ_KIND_GET:
		case OBJ_KIND_AUDIT:
			return check_get(cl, x);
		case OBJ_KIND_STAT:
			/* The size an unanswered PUT gave it (obj_late.h). */
			if (x->verify && late_found(x) >= 0)
				return OBJ_LATE;
			return check_stat(cl, x) ? OBJ_OK : OBJ_CORRUPT;
		case OBJ_KIND_LIST:
			return list_page(x, cl, ret_class);
		default:
			return OBJ_OK;
		}
	}
	/* Cleaning up what is already gone leaves the state we wanted (a
	 * doubtful write may never have happened); in the mix, a 404 means
	 * an object the workload wrote was lost. */
	*ret_gone = status == 404;
	if (status == 404 && (x->kind == OBJ_KIND_CLEANUP || x->kind == OBJ_KIND_AUDIT_HEAD))
		return OBJ_OK;
	/* Sent again after a reused connection closed unanswered: the
	 * first send may have deleted it, or never reached the server.
	 * Gone is what a DELETE asks; whether it was there before is not
	 * known (obj_book_end counts it uncertain, not lost). */
	if (status == 404 && x->kind == OBJ_KIND_DELETE && x->sends > 1) {
		*ret_gone = false;
		x->resent_gone = true;
		return OBJ_OK;
	}
	*ret_class = status >= 400 && status <= 499 ? OP_ERR_HTTP_4XX
		     : status >= 500 && status <= 599 ? OP_ERR_HTTP_5XX : OP_ERR_TRANSFER;
	cl->proto->error_message(x->body, x->body_len, message, sizeof(message));
	snprintf(detail, sizeof(detail), "HTTP %ld%s%s", status, message[0] ? " " : "", message);
	log_failure(cl, x, *ret_class, detail);
	return OBJ_ERROR;
}
