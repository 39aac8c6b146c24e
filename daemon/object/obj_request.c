// SPDX-License-Identifier: GPL-2.0-only
/*
 * Synchronous requests outside the measured load: probing the endpoint and
 * creating the bucket before a workload starts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

#define PROBE_TIMEOUT_MS 10000L

struct request_body {
	const char *data;
	size_t len, pos;
};

static size_t on_send(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct request_body *b = userdata;
	size_t n = size * nitems;
	if (n > b->len - b->pos)
		n = b->len - b->pos;
	memcpy(buf, b->data + b->pos, n);
	b->pos += n;
	return n;
}

static size_t on_receive(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct obj_response *r = userdata;
	size_t n = size * nmemb, room = sizeof(r->body) - 1 - r->body_len;
	memcpy(r->body + r->body_len, ptr, n < room ? n : room);
	r->body_len += n < room ? n : room;
	r->body[r->body_len] = '\0';
	return n;
}

int obj_request(const struct obj_client *cl, const char *method, const char *url,
		const char *body, struct obj_response *ret)
{
	return obj_request_via(cl, 0, method, url, body, ret);
}

int obj_request_via(const struct obj_client *cl, size_t endpoint, const char *method,
		    const char *url, const char *body, struct obj_response *ret)
{
	struct request_body send = { .data = body, .len = body ? strlen(body) : 0 };
	CURL *e = curl_easy_init();
	long timeout_ms = (long)(cl->cfg->timeout_ns / 1000000);
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!e)
		return -ENOMEM;
	r = cl->proto->setup_handle(cl, e);
	if (r < 0) {
		curl_easy_cleanup(e);
		return r;
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	if (endpoint > 0)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, cl->ep_connect[endpoint]);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cl->headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ret->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_receive);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, ret);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms < PROBE_TIMEOUT_MS ? timeout_ms
									 : PROBE_TIMEOUT_MS);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	} else if (strcmp(method, "PUT") == 0) {
		curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(e, CURLOPT_READFUNCTION, on_send);
		curl_easy_setopt(e, CURLOPT_READDATA, &send);
		curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)send.len);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	}
	ret->result = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &ret->status);
	curl_easy_cleanup(e);
	return 0;
}

void obj_response_describe(const struct obj_client *cl, const struct obj_response *r, char *buf,
			   size_t len)
{
	char message[OBJ_ERRBODY_MAX], curl_text[LOG_REMOTE_MAX + 1];

	if (r->result != CURLE_OK) {
		/* libcurl's text can quote the server (a certificate's names,
		 * a status line). */
		log_clean(r->errbuf, sizeof(r->errbuf), LOG_REMOTE_MAX, curl_text, sizeof(curl_text));
		snprintf(buf, len, "%s%s", curl_text[0] ? curl_text : curl_easy_strerror(r->result),
			 r->result == CURLE_PEER_FAILED_VERIFICATION
				 ? " (give the CA as \"ca_file\", or set \"tls_verify\": false)" : "");
		return;
	}
	cl->proto->error_message(r->body, r->body_len, message, sizeof(message));
	snprintf(buf, len, "HTTP %ld%s%s", r->status, message[0] ? " " : "", message);
}

bool obj_result_is_lasting(CURLcode result)
{
	switch (result) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return true;
	default:
		return false;
	}
}
