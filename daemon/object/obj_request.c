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
#include "workload/workload.h"

#define PROBE_TIMEOUT_MS 10000L
/* How often a request soakd's main thread waits for reports its progress. */
#define WATCH_EVERY_MS 50

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

/* How long a synchronous request may take. */
static long request_timeout_ms(const struct obj_client *cl)
{
	long timeout_ms = (long)(cl->cfg->timeout_ns / 1000000);

	return timeout_ms < PROBE_TIMEOUT_MS ? timeout_ms : PROBE_TIMEOUT_MS;
}

/* A handle for a synchronous request connected to the endpoint'th endpoint
 * of a pool (0: the first, or the only one); ret takes what it answers. */
static CURL *request_handle(const struct obj_client *cl, size_t endpoint, const char *url,
			    struct obj_response *ret, int *ret_err)
{
	CURL *e = curl_easy_init();

	memset(ret, 0, sizeof(*ret));
	/* Until its end is read: a request whose end is never seen did not
	 * get an answer. */
	ret->result = CURLE_GOT_NOTHING;
	*ret_err = -ENOMEM;
	if (!e)
		return NULL;
	*ret_err = cl->proto->setup_handle(cl, e);
	if (*ret_err < 0) {
		curl_easy_cleanup(e);
		return NULL;
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	if (endpoint > 0)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, cl->ep_connect[endpoint]);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cl->headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ret->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_receive);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, ret);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, request_timeout_ms(cl));
	return e;
}

/* This request's wait, reported to soakd (status, a stop; in a reload,
 * the running workloads' intervals recorded).  False: stop it. */
static bool report_wait(const char *url, uint64_t began_ns, long timeout_ms)
{
	struct workload_progress wp = {
		.target = url, .what = "waiting for the endpoint", .unit = "ms",
		.done = (mono_ns() - began_ns) / 1000000, .total = (uint64_t)timeout_ms,
	};

	return workload_progress(&wp);
}

/* The requests on m to their end.  On soakd's main thread, preparing a
 * workload, the wait (up to a slow endpoint's timeout) is reported every
 * WATCH_EVERY_MS, and a stop ends it: -ECANCELED. */
static int run_multi(CURLM *m, const char *url, long timeout_ms)
{
	bool watched = workload_progress_here();
	uint64_t began = mono_ns();
	int running = 0;

	for (;;) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			return -EIO;
		if (!running)
			return 0;
		if (watched && !report_wait(url, began, timeout_ms))
			return -ECANCELED;
		if (curl_multi_poll(m, NULL, 0, watched ? WATCH_EVERY_MS : 1000, NULL) != CURLM_OK)
			return -EIO;
	}
}

/* The result of each request on m that has ended, into its response. */
static void take_results(CURLM *m)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(m, &left))) {
		char *priv = NULL;
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		struct obj_response *resp = (struct obj_response *)priv;
		resp->result = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &resp->status);
	}
}

/* One request to its end: on soakd's main thread through run_multi, so
 * the wait is reported; elsewhere as it is. */
static int perform(const struct obj_client *cl, CURL *e, const char *url,
		   struct obj_response *ret)
{
	CURLM *m;
	int r;

	if (!workload_progress_here() || !(m = curl_multi_init())) {
		ret->result = curl_easy_perform(e);
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &ret->status);
		return 0;
	}
	curl_easy_setopt(e, CURLOPT_PRIVATE, ret);
	r = curl_multi_add_handle(m, e) == CURLM_OK ? 0 : -ENOMEM;
	if (r == 0)
		r = run_multi(m, url, request_timeout_ms(cl));
	if (r == 0)
		take_results(m);
	curl_multi_remove_handle(m, e);
	curl_multi_cleanup(m);
	return r;
}

void obj_request_failed(int r, char *err, size_t errlen)
{
	if (r == -ECANCELED)
		snprintf(err, errlen, "stopped while waiting for the endpoint");
	else
		snprintf(err, errlen, "cannot run a request: %s", strerror(-r));
}

int obj_request(const struct obj_client *cl, const char *method, const char *url,
		const char *body, struct obj_response *ret)
{
	struct request_body send = { .data = body, .len = body ? strlen(body) : 0 };
	int r;
	CURL *e = request_handle(cl, 0, url, ret, &r);

	if (!e)
		return r;
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
	r = perform(cl, e, url, ret);
	curl_easy_cleanup(e);
	return r;
}

int obj_request_heads(const struct obj_client *cl, const char *url, struct obj_response *ret,
		      size_t n)
{
	CURL *easy[OBJ_MAX_ENDPOINTS] = { 0 };
	CURLM *m = curl_multi_init();
	int r = m ? 0 : -ENOMEM;

	for (size_t i = 1; i < n && r == 0; i++) {
		easy[i] = request_handle(cl, i, url, &ret[i], &r);
		if (easy[i]) {
			curl_easy_setopt(easy[i], CURLOPT_NOBODY, 1L);
			curl_easy_setopt(easy[i], CURLOPT_PRIVATE, &ret[i]);
			if (curl_multi_add_handle(m, easy[i]) != CURLM_OK)
				r = -ENOMEM;
		}
	}
	/* All at once: each is bounded by its own timeout, so the wait is
	 * one probe's at most, however many endpoints do not answer. */
	if (r == 0)
		r = run_multi(m, url, request_timeout_ms(cl));
	if (r == 0)
		take_results(m);
	for (size_t i = 1; i < n; i++) {
		if (!easy[i])
			continue;
		curl_multi_remove_handle(m, easy[i]);
		curl_easy_cleanup(easy[i]);
	}
	curl_multi_cleanup(m);
	return r;
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

bool obj_status_is_lasting(long status)
{
	switch (status) {
	case 408: /* Request Timeout */
	case 409: /* Conflict: S3's OperationAborted, a concurrent change */
	case 425: /* Too Early */
	case 429: /* Too Many Requests */
		return false;
	case 501: /* Not Implemented */
	case 505: /* HTTP Version Not Supported */
	case 507: /* Insufficient Storage */
	case 508: /* Loop Detected */
		return true;
	default:
		/* Other 5xx (500, 502, 503 Slow Down, 504) ask to try again. */
		return status >= 400 && status <= 499;
	}
}
