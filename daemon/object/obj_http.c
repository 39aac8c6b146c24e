// SPDX-License-Identifier: GPL-2.0-only
/*
 * Plain HTTP objects: PUT, GET, HEAD and DELETE of endpoint + "/" + key, as
 * nginx's WebDAV module and AIStore's native API serve them.  Also the
 * handle options both protocols share.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "obj_engine.h"

int obj_setup_common(const struct obj_client *cl, CURL *e)
{
	const struct object_config *o = cl->cfg;

	/* Threads: no signals for DNS timeouts. */
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	/* Idle connections of a slow schedule stay alive, or are found dead
	 * by the kernel rather than by the next request. */
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_ns / 1000000));
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(o->timeout_ns / 1000000));
	/* HTTP/2 when the server offers it over TLS, HTTP/1.1 otherwise. */
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	if (o->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_file);
	if (!o->tls_verify) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cl->connect_to_list)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, cl->connect_to_list);
	return 0;
}

void obj_text_message(const char *body, size_t len, char *out, size_t outlen)
{
	const char *s = body, *end = body + len;
	const char *title = len ? strstr(body, "<title>") : NULL;

	if (title) {
		s = title + 7;
		const char *close = strstr(s, "</title>");
		if (close)
			end = close;
	}
	while (s < end && isspace((unsigned char)*s))
		s++;
	size_t n = 0;
	while (s + n < end && s[n] != '\n' && s[n] != '\r')
		n++;
	log_clean(s, n, LOG_REMOTE_MAX, out, outlen);
}

static int http_setup_handle(const struct obj_client *cl, CURL *e)
{
	return obj_setup_common(cl, e);
}

static int http_object_url(const struct obj_client *cl, const char *key, char *buf, size_t len)
{
	char escaped[OBJ_KEY_MAX * 3];
	int r = obj_escape_path(key, escaped, sizeof(escaped));
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, len, "%s/%s", cl->base_url, escaped) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Reachable or not: a plain HTTP server has nothing else to agree on. */
static int http_probe(const struct obj_client *cl, enum op_error_class *ret_class, char *err,
		      size_t errlen)
{
	struct obj_response resp;
	char url[OBJ_MAX_URL_LEN + 2];

	snprintf(url, sizeof(url), "%s/", cl->base_url);
	int r = obj_request(cl, "HEAD", url, NULL, &resp);
	if (r < 0) {
		obj_request_failed(r, err, errlen);
		return r;
	}
	if (resp.result != CURLE_OK) {
		obj_response_describe(cl, &resp, err, errlen);
		*ret_class = obj_response_class(&resp);
		return obj_result_is_lasting(resp.result) ? -EPERM : -EAGAIN;
	}
	return 0;
}

const struct obj_proto obj_proto_http = {
	.name = "http",
	.setup_handle = http_setup_handle,
	.object_url = http_object_url,
	.list_url = NULL,
	.error_message = obj_text_message,
	.probe = http_probe,
};
