// SPDX-License-Identifier: GPL-2.0-only
/*
 * One object transfer on a reusable libcurl easy handle: addressing, the
 * payload streamed out of and checked into the generator (never buffered),
 * and what the finished transfer means (success, error by class, corrupt).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

/* Larger receive and send buffers than libcurl's 16 KiB default move big
 * objects with fewer callbacks; memory stays bounded over all transfers. */
#define XFER_BUFFER_MAX (128 * 1024)
#define XFER_BUFFER_MIN (16 * 1024)
#define XFER_BUFFER_BUDGET (32u << 20)

/* Percent-encodes all but unreserved characters and those in keep, with
 * upper-case hex as SigV4's canonical form wants. */
static int escape(const char *text, const char *keep, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			     (*p >= '0' && *p <= '9') || strchr(keep, *p);
		if (o + (plain ? 1 : 3) >= len)
			return -ENAMETOOLONG;
		if (plain) {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 15];
		}
	}
	buf[o] = '\0';
	return 0;
}

int obj_escape_path(const char *key, char *buf, size_t len)
{
	return escape(key, "-._~/", buf, len);
}

int obj_escape_query(const char *value, char *buf, size_t len)
{
	return escape(value, "-._~", buf, len);
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* mix64's inverse: each step undone in reverse order. */
static uint64_t unshift(uint64_t z, unsigned s)
{
	uint64_t r = z;
	for (unsigned i = 0; i < 64 / s + 1; i++)
		r = z ^ (r >> s);
	return r;
}

static uint64_t unmix64(uint64_t z)
{
	z = unshift(z, 31) * UINT64_C(0x319642b2d24d8ec3);
	z = unshift(z, 27) * UINT64_C(0x96de1b173f119089);
	return unshift(z, 30);
}

unsigned obj_key_sub(const struct obj_client *cl, unsigned stream, uint64_t id)
{
	const struct object_config *o = cl->cfg;
	uint64_t unique = (uint64_t)stream << 40 | id;
	uint64_t scrambled = mix64(unique ^ obj_name_hash(cl->run_tag, strlen(cl->run_tag)));
	return (unsigned)((o->naming == OBJ_NAMES_RANDOM ? scrambled : id) % o->prefixes);
}

int obj_key_parse(const struct obj_client *cl, const char *key, unsigned *ret_stream,
		  uint64_t *ret_id)
{
	const struct object_config *o = cl->cfg;
	size_t root = strlen(cl->name_root);
	const char *p = key + root;
	char *end;
	unsigned stream;
	uint64_t id;

	if (strncmp(key, cl->name_root, root) != 0)
		return -ENOENT;
	if (o->prefixes > 1) {
		if (*p != 'p' || !(p = strchr(p, '/')))
			return -EINVAL;
		p++;
	}
	errno = 0;
	if (o->naming == OBJ_NAMES_SEQUENTIAL) {
		if (*p != 't')
			return -EINVAL;
		unsigned long s = strtoul(p + 1, &end, 10);
		if (errno || *end != '-' || s >= OBJ_MAX_THREADS)
			return -EINVAL;
		stream = (unsigned)s;
		id = strtoull(end + 1, &end, 10);
	} else {
		if (strlen(p) != 16)
			return -EINVAL;
		uint64_t v = strtoull(p, &end, 16);
		uint64_t unique = unmix64(v) ^ obj_name_hash(cl->run_tag, strlen(cl->run_tag));
		stream = (unsigned)(unique >> 40);
		id = unique & ((UINT64_C(1) << 40) - 1);
	}
	if (errno || *end || stream >= o->threads)
		return -EINVAL;
	*ret_stream = stream;
	*ret_id = id;
	return 0;
}

void obj_key(const struct obj_client *cl, unsigned stream, const struct obj_entry *e, char *buf,
	     size_t len)
{
	const struct object_config *o = cl->cfg;
	/* Ids stay below 2^40 and threads below 64: (stream, id) is unique,
	 * and so is its mix, a bijection. */
	uint64_t unique = (uint64_t)stream << 40 | e->id;
	uint64_t scrambled = mix64(unique ^ obj_name_hash(cl->run_tag, strlen(cl->run_tag)));
	char sub[24] = "";

	if (o->prefixes > 1)
		snprintf(sub, sizeof(sub), "p%u/",
			 (unsigned)((o->naming == OBJ_NAMES_RANDOM ? scrambled : e->id) % o->prefixes));
	if (o->naming == OBJ_NAMES_SEQUENTIAL)
		snprintf(buf, len, "%s%st%u-%012" PRIu64, cl->name_root, sub, stream, e->id);
	else
		snprintf(buf, len, "%s%s%016" PRIx64, cl->name_root, sub, scrambled);
}

static size_t on_upload(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct obj_xfer *x = userdata;
	size_t n = size * nitems;

	if (n > x->len - x->pos)
		n = (size_t)(x->len - x->pos);
	obj_payload_fill(&x->payload, x->off + x->pos, (uint8_t *)buf, n);
	x->pos += n;
	return n;
}

/* libcurl rewinds an upload when it resends on a fresh connection. */
static int on_seek(void *userdata, curl_off_t offset, int origin)
{
	struct obj_xfer *x = userdata;
	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->len)
		return CURL_SEEKFUNC_FAIL;
	x->pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static void keep_error_body(struct obj_xfer *x, const char *ptr, size_t n)
{
	size_t room = sizeof(x->body) - 1 - x->body_len;
	if (n > room)
		n = room;
	memcpy(x->body + x->body_len, ptr, n);
	x->body_len += n;
	x->body[x->body_len] = '\0';
}

static bool keep_list_page(struct obj_xfer *x, const char *ptr, size_t n)
{
	if (x->list_len + n + 1 > x->list_cap) {
		size_t cap = x->list_cap ? x->list_cap : 65536;
		while (cap < x->list_len + n + 1)
			cap *= 2;
		if (cap > OBJ_LIST_MAX_BYTES)
			return false;
		char *grown = realloc(x->list_buf, cap);
		if (!grown)
			return false;
		x->list_buf = grown;
		x->list_cap = cap;
	}
	memcpy(x->list_buf + x->list_len, ptr, n);
	x->list_len += n;
	x->list_buf[x->list_len] = '\0';
	return true;
}

/* How many versions back a range past the object's header (which names
 * its version) is looked for: a write or a few lost, not the object's
 * whole history. */
#define OLDER_VERSIONS 8

/* A range that differs from its first byte: one of the last few versions
 * of the object, from there on?  Then the rest of the body must be that
 * version's (x->alt), as for a body headed as another version. */
static void find_older(struct obj_xfer *x, const uint8_t *ptr, size_t n)
{
	uint64_t at;

	for (uint64_t k = 1; k <= OLDER_VERSIONS && k < x->payload.version; k++) {
		obj_payload_init(&x->alt, x->key, strlen(x->key), x->payload.version - k);
		if (obj_payload_check(&x->alt, x->off, ptr, n, &at)) {
			x->alt_on = true;
			x->alt_bad = false;
			return;
		}
	}
}

/* Checks a GET body as it arrives, against the range it should be. */
static void check_body(struct obj_xfer *x, const uint8_t *ptr, size_t n)
{
	if (x->off == 0 && x->pos < sizeof(x->head)) {
		size_t k = sizeof(x->head) - x->pos < n ? sizeof(x->head) - x->pos : n;
		memcpy(x->head + x->pos, ptr, k);
		x->head_len = x->pos + k;
	}
	uint64_t at;
	if (!x->verify)
		return;
	if (x->mismatch) {
		if (x->alt_on && !x->alt_bad &&
		    !obj_payload_check(&x->alt, x->off + x->pos, ptr, n, &at))
			x->alt_bad = true;
		return;
	}
	size_t in_range = x->pos >= x->len ? 0 : x->len - x->pos < n ? (size_t)(x->len - x->pos) : n;
	if (!obj_payload_check(&x->payload, x->off + x->pos, ptr, in_range, &at)) {
		x->mismatch = true;
		x->mismatch_at = at;
		size_t i = (size_t)(at - x->off - x->pos);
		x->got_len = n - i < sizeof(x->got) ? n - i : sizeof(x->got);
		memcpy(x->got, ptr + i, x->got_len);
		/* Another version of this object, by its header: the rest of
		 * the body must be that version's. */
		uint64_t name_hash, version;
		if (x->off == 0 && x->head_len == sizeof(x->head)) {
			obj_payload_header(x->head, &name_hash, &version);
			if (name_hash == x->payload.name_hash && version != x->payload.version) {
				obj_payload_init(&x->alt, x->key, strlen(x->key), version);
				x->alt_on = true;
				x->alt_bad = !obj_payload_check(&x->alt, at, ptr + i, n - i, &at);
			}
		} else if (x->off != 0 && at == x->off) {
			find_older(x, ptr + i, n - i);
		}
	}
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct obj_xfer *x = userdata;
	size_t n = size * nmemb;

	if (!x->status) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		/* A server may ignore Range and send the whole object:
		 * legal HTTP, so check it as the whole object. */
		if (x->ranged && x->status == 200) {
			x->off = 0;
			x->len = x->size;
		}
	}
	if (x->status < 200 || x->status > 299) {
		keep_error_body(x, ptr, n);
		return n;
	}
	if (x->kind == OBJ_KIND_LIST || x->mp_step == OBJ_MP_INIT || x->mp_step == OBJ_MP_COMPLETE)
		return keep_list_page(x, ptr, n) ? n : 0;
	/* Only a GET's body is the object: a PUT's position is what it
	 * sent, and the answer's body (a gateway saying what it stored) is
	 * no bytes of it. */
	if (x->kind != OBJ_KIND_GET && x->kind != OBJ_KIND_AUDIT)
		return n;
	check_body(x, (const uint8_t *)ptr, n);
	x->pos += n;
	return n;
}

/* Called by libcurl before each send of the request, its resends too. */
static int on_send(void *userdata, char *remote_ip, char *local_ip, int remote_port,
		   int local_port)
{
	struct obj_xfer *x = userdata;

	(void)remote_ip;
	(void)local_ip;
	(void)remote_port;
	(void)local_port;
	x->sends++;
	return CURL_PREREQFUNC_OK;
}

int obj_xfer_init(struct obj_xfer *x, const struct obj_client *cl, struct obj_stream *st)
{
	memset(x, 0, sizeof(*x));
	x->st = st;
	x->slot = OBJ_POOL_NONE;
	x->easy = curl_easy_init();
	if (!x->easy)
		return -ENOMEM;
	CURL *e = x->easy;
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_READFUNCTION, on_upload);
	curl_easy_setopt(e, CURLOPT_READDATA, x);
	curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
	curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_send);
	curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
	long buffer = (long)(XFER_BUFFER_BUDGET / cl->cfg->concurrency);
	if (buffer > XFER_BUFFER_MAX)
		buffer = XFER_BUFFER_MAX;
	if ((uint64_t)buffer > cl->cfg->size.max)
		buffer = (long)cl->cfg->size.max;
	if (buffer < XFER_BUFFER_MIN)
		buffer = XFER_BUFFER_MIN;
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, buffer);
	curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, buffer);
	return cl->proto->setup_handle(cl, e);
}

void obj_xfer_done(struct obj_xfer *x)
{
	if (x->easy)
		curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	free(x->list_buf);
	free(x->list_ids);
	free(x->mp_etags);
	obj_mp_free(x);
	memset(x, 0, sizeof(*x));
}

void obj_xfer_trim(struct obj_xfer *x)
{
	if (x->list_cap > OBJ_LIST_KEEP_BYTES) {
		free(x->list_buf);
		x->list_buf = NULL;
		x->list_len = x->list_cap = 0;
	}
	if (x->list_ids_cap > OBJ_LIST_KEEP_IDS) {
		free(x->list_ids);
		x->list_ids = NULL;
		x->list_n = x->list_ids_cap = 0;
	}
}

void obj_xfer_reset_response(struct obj_xfer *x)
{
	x->status = 0;
	x->sends = 0;
	x->resent_gone = false;
	x->pos = 0;
	x->body_len = 0;
	x->body[0] = '\0';
	/* An empty answer leaves no text: the last page's would be read
	 * as this one's. */
	x->list_len = 0;
	if (x->list_buf)
		x->list_buf[0] = '\0';
	x->mismatch = false;
	x->alt_on = x->alt_bad = false;
	x->got_len = x->head_len = 0;
	x->errbuf[0] = '\0';
	x->mp_step = OBJ_MP_NONE;
}

/* A PUT's own headers: the client's, Content-MD5 or x-amz-checksum-crc32c
 * (one more pass over the payload), and the SSE-S3 request (signed with
 * the rest: libcurl's SigV4 signs every x-amz- header). */
static int put_headers(struct obj_xfer *x, const struct obj_client *cl, bool whole)
{
	char line[96] = "", b64[32];
	struct curl_slist *list = NULL;

	if (cl->cfg->checksum == OBJ_CHECKSUM_NONE || !whole) {
		/* no checksum */
	} else if (cl->cfg->checksum == OBJ_CHECKSUM_MD5) {
		uint8_t digest[16];
		if (obj_payload_md5(&x->payload, x->size, digest) < 0)
			return -ENOMEM;
		obj_base64(digest, sizeof(digest), b64);
		snprintf(line, sizeof(line), "Content-MD5: %s", b64);
	} else {
		uint32_t crc = obj_payload_crc32c(&x->payload, x->size);
		uint8_t be[4] = { crc >> 24, crc >> 16, crc >> 8, crc };
		obj_base64(be, sizeof(be), b64);
		snprintf(line, sizeof(line), "x-amz-checksum-crc32c: %s", b64);
	}
	for (const struct curl_slist *h = cl->headers; h; h = h->next) {
		struct curl_slist *n = curl_slist_append(list, h->data);
		if (!n)
			goto oom;
		list = n;
	}
	const char *extra[] = { line, cl->cfg->sse_s3 ? "x-amz-server-side-encryption: AES256" : "" };
	for (size_t i = 0; i < 2; i++) {
		if (!extra[i][0])
			continue;
		struct curl_slist *n = curl_slist_append(list, extra[i]);
		if (!n)
			goto oom;
		list = n;
	}
	x->headers = list;
	return 0;
oom:
	curl_slist_free_all(list);
	return -ENOMEM;
}

int obj_xfer_prepare(struct obj_xfer *x, const struct obj_client *cl)
{
	CURL *e = x->easy;
	int r;

	obj_xfer_reset_response(x);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	r = cl->proto->object_url(cl, x->key, x->url, sizeof(x->url));
	if (r < 0)
		return r;
	if (x->version_id[0] && (x->kind == OBJ_KIND_GET || x->kind == OBJ_KIND_AUDIT)) {
		char esc[OBJ_LEDGER_VID_MAX * 3];
		size_t used = strlen(x->url);
		r = obj_escape_query(x->version_id, esc, sizeof(esc));
		if (r < 0)
			return r;
		if ((size_t)snprintf(x->url + used, sizeof(x->url) - used, "?versionId=%s", esc) >=
		    sizeof(x->url) - used)
			return -ENAMETOOLONG;
	}
	/* HTTPGET first: it clears what the previous op on this handle set
	 * (upload, no body). */
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(e, CURLOPT_RANGE, NULL);
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	switch (x->kind) {
	case OBJ_KIND_PUT:
	case OBJ_KIND_PREFILL:
		x->off = 0;
		x->len = x->size;
		/* Checksums cover a whole body: not a multipart upload's. */
		bool parts = obj_mp_wanted(cl, x);
		if ((cl->cfg->checksum != OBJ_CHECKSUM_NONE && !parts) || cl->cfg->sse_s3) {
			r = put_headers(x, cl, !parts);
			if (r < 0)
				return r;
		}
		if (parts)
			return obj_mp_prepare(x, cl);
		curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->size);
		break;
	case OBJ_KIND_GET:
	case OBJ_KIND_AUDIT:
		if (x->ranged) {
			snprintf(x->range, sizeof(x->range), "%" PRIu64 "-%" PRIu64, x->off,
				 x->off + x->len - 1);
			curl_easy_setopt(e, CURLOPT_RANGE, x->range);
		}
		break;
	case OBJ_KIND_STAT:
	case OBJ_KIND_AUDIT_HEAD:
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		break;
	case OBJ_KIND_DELETE:
	case OBJ_KIND_CLEANUP:
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		break;
	default:
		return -EINVAL;
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers ? x->headers : cl->headers);
	return 0;
}

int obj_xfer_prepare_list(struct obj_xfer *x, const struct obj_client *cl, const char *prefix,
			  const char *token)
{
	CURL *e = x->easy;
	int r;

	obj_xfer_reset_response(x);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	if (!token) {
		x->list_pages = 0;
		x->list_keys = x->list_bytes = 0;
		x->list_n = x->list_strange = 0;
		x->list_whole = true;
		snprintf(x->key, sizeof(x->key), "%s", prefix);
	}
	r = cl->proto->list_url(cl, x->list_bucket, prefix, token, x->url, sizeof(x->url));
	if (r < 0)
		return r;
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(e, CURLOPT_RANGE, NULL);
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cl->headers);
	return 0;
}
