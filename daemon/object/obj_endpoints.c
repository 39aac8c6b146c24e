// SPDX-License-Identifier: GPL-2.0-only
/*
 * "endpoints": a pool of gateways that all reach the same store.
 *
 * Requests name the first endpoint (URL, Host, signature, TLS name), as
 * requests to gateways behind one name do, and connect to the endpoint
 * chosen for them (CURLOPT_CONNECT_TO).  Each thread picks, per request,
 * the endpoint with the fewest of its requests in flight, ties in turn, so
 * a slow endpoint's share shrinks by itself.  One that refuses or drops
 * connections answers at once and would look idle: after such a failure it
 * is held back for a while, doubling up to a second, as the whole workload
 * is when its single endpoint fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "obj_engine.h"
#include "workload/workload.h"

int obj_eps_client_init(struct obj_client *cl, char *err, size_t errlen)
{
	const struct object_config *o = cl->cfg;

	if (!o->n_endpoints)
		return 0;
	cl->ep_iv = calloc(o->n_endpoints, sizeof(*cl->ep_iv));
	if (!cl->ep_iv || pthread_mutex_init(&cl->ep_lock, NULL) != 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cl->ep_lock_ready = true;
	for (size_t i = 0; i < o->n_endpoints; i++)
		hist_init(&cl->ep_iv[i].latency);
	for (size_t i = 1; i < o->n_endpoints; i++) {
		const char *authority = strstr(o->endpoints[i], "://") + 3;
		int n = (int)strcspn(authority, "/");
		const char *colon = authority[0] == '[' ? strstr(authority, "]:")
							: memchr(authority, ':', (size_t)n);
		char entry[OBJ_MAX_URL_LEN];
		/* any host, any port -> this endpoint's host[:port] */
		snprintf(entry, sizeof(entry), "::%.*s%s", n, authority,
			 colon && colon < authority + n ? "" : ":");
		cl->ep_connect[i] = curl_slist_append(NULL, entry);
		if (!cl->ep_connect[i]) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The pool's other endpoints, before the workload starts: each must take a
 * connection (and its TLS).  What they serve is the first's store, which
 * the protocol's probe has checked, so the answer's status is not.  A
 * failure that trying again will not cure (a certificate refused) fails
 * the workload with the endpoint named, as it would for the first; one
 * that does not answer now is said at once, rather than found by the
 * first errors on it, and is tried again as requests go to it.  All are
 * tried at once, so that a pool of unanswering gateways holds the start
 * (and a reload, under systemd's watchdog) no longer than one.
 */
int obj_eps_probe_rest(const struct obj_client *cl, char *err, size_t errlen)
{
	const struct object_config *o = cl->cfg;
	char url[OBJ_MAX_URL_LEN + 2], why[1024];
	struct obj_response *resp;

	if (o->n_endpoints < 2)
		return 0;
	resp = calloc(o->n_endpoints, sizeof(*resp));
	if (!resp) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(url, sizeof(url), "%s/", cl->base_url);
	int r = obj_request_heads(cl, url, resp, o->n_endpoints);
	if (r < 0)
		obj_request_failed(r, err, errlen);
	for (size_t i = 1; r == 0 && i < o->n_endpoints; i++) {
		if (resp[i].result == CURLE_OK)
			continue;
		obj_response_describe(cl, &resp[i], why, sizeof(why));
		if (obj_result_is_lasting(resp[i].result)) {
			snprintf(err, errlen, "endpoint %s: %s", o->endpoints[i], why);
			r = -EPERM;
			break;
		}
		log_warning("%s: endpoint %s cannot be reached now (%s); requests go to the "
			    "others while it fails, and it is tried again", cl->wcfg->name,
			    o->endpoints[i], why);
	}
	free(resp);
	return r;
}

void obj_eps_client_free(struct obj_client *cl)
{
	for (size_t i = 0; i < OBJ_MAX_ENDPOINTS; i++) {
		curl_slist_free_all(cl->ep_connect[i]);
		cl->ep_connect[i] = NULL;
	}
	if (cl->ep_lock_ready)
		pthread_mutex_destroy(&cl->ep_lock);
	cl->ep_lock_ready = false;
	for (size_t i = 0; cl->ep_iv && i < cl->cfg->n_endpoints; i++)
		hist_free(&cl->ep_iv[i].latency);
	free(cl->ep_iv);
	cl->ep_iv = NULL;
}

void obj_eps_init(struct obj_stream *st)
{
	memset(&st->eps, 0, sizeof(st->eps));
	st->eps.n = (unsigned)st->cl->cfg->n_endpoints;
	/* Threads start on different endpoints. */
	st->eps.next = st->eps.n ? st->index % st->eps.n : 0;
}

void obj_eps_apply(const struct obj_client *cl, CURL *easy, unsigned endpoint)
{
	if (cl->cfg->n_endpoints)
		curl_easy_setopt(easy, CURLOPT_CONNECT_TO, cl->ep_connect[endpoint]);
}

void obj_eps_pick(struct obj_stream *st, struct obj_xfer *x, uint64_t now)
{
	struct obj_eps *eps = &st->eps;
	unsigned best = UINT32_MAX;
	bool best_held = true;

	x->endpoint = 0;
	if (eps->n == 0)
		return;
	/* From the one after the last pick: the first of the least loaded
	 * in that order wins, so ties go round. */
	for (unsigned k = 0; k < eps->n; k++) {
		unsigned i = (eps->next + k) % eps->n;
		const struct obj_ep_state *e = &eps->ep[i];
		bool held = e->hold_until_ns > now;
		if (best == UINT32_MAX || (best_held && !held) ||
		    (held == best_held && e->outstanding < eps->ep[best].outstanding)) {
			best = i;
			best_held = held;
		}
	}
	x->endpoint = best;
	eps->next = (best + 1) % eps->n;
	eps->ep[best].outstanding++;
	obj_eps_apply(st->cl, x->easy, best);
}

bool obj_eps_done(struct obj_stream *st, struct obj_xfer *x, bool finished, bool error,
		  enum op_error_class c, uint64_t now)
{
	struct obj_eps *eps = &st->eps;
	struct obj_client *cl = st->cl;

	if (eps->n == 0)
		return true;
	struct obj_ep_state *e = &eps->ep[x->endpoint];
	struct obj_ep_count *n = &cl->ep_count[x->endpoint];
	const char *url = cl->cfg->endpoints[x->endpoint];
	if (e->outstanding)
		e->outstanding--;
	if (!finished)
		return false;
	uint64_t lat = now > x->submit_ns ? now - x->submit_ns : 0;
	atomic_fetch_add_explicit(&n->ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->latency_sum_ns, lat, memory_order_relaxed);
	uint64_t max = atomic_load_explicit(&n->latency_max_ns, memory_order_relaxed);
	while (lat > max && !atomic_compare_exchange_weak(&n->latency_max_ns, &max, lat))
		;
	struct obj_ep_interval *iv = &cl->ep_iv[x->endpoint];
	pthread_mutex_lock(&cl->ep_lock);
	iv->ops++;
	iv->errors += error;
	hist_record(&iv->latency, lat);
	pthread_mutex_unlock(&cl->ep_lock);
	if (!error || c == OP_ERR_HTTP_4XX) {
		/* It answered: not failing (a 4xx is the request's fault). */
		atomic_fetch_add_explicit(&n->errors, error, memory_order_relaxed);
		if (e->failing_since_ns)
			log_notice("%s: endpoint %s answers again after %.1f s (%" PRIu64
				   " ops failed there meanwhile)", cl->wcfg->name, url,
				   (now - e->failing_since_ns) / 1e9, e->failed_ops);
		e->failing_since_ns = e->failed_ops = 0;
		e->backoff_ns = e->hold_until_ns = 0;
		return false;
	}
	atomic_fetch_add_explicit(&n->errors, 1, memory_order_relaxed);
	if (!e->failing_since_ns) {
		e->failing_since_ns = now;
		log_warning("%s: endpoint %s fails (%s); its share goes to the others while it "
			    "does", cl->wcfg->name, url, c == OP_ERR_CONNECT ? "no connection"
			    : c == OP_ERR_TIMEOUT ? "timeout" : c == OP_ERR_HTTP_5XX ? "5xx"
			    : "transfer");
	}
	e->failed_ops++;
	e->backoff_ns = e->backoff_ns ? e->backoff_ns * 2 : OBJ_BACKOFF_MIN_NS;
	if (e->backoff_ns > OBJ_BACKOFF_MAX_NS)
		e->backoff_ns = OBJ_BACKOFF_MAX_NS;
	e->hold_until_ns = now + e->backoff_ns;
	for (unsigned i = 0; i < eps->n; i++)
		if (eps->ep[i].hold_until_ns <= now)
			return false; /* another endpoint still takes requests */
	return true;
}

void obj_eps_report(const struct obj_client *cl)
{
	for (size_t i = 0; i < cl->cfg->n_endpoints; i++) {
		const struct obj_ep_count *n = &cl->ep_count[i];
		uint64_t ops = atomic_load(&n->ops);
		log_info("%s: endpoint %s: %" PRIu64 " ops, %" PRIu64 " errors, latency mean %"
			 PRIu64 " us, max %" PRIu64 " us", cl->wcfg->name, cl->cfg->endpoints[i], ops,
			 atomic_load(&n->errors),
			 ops ? atomic_load(&n->latency_sum_ns) / ops / 1000 : 0,
			 atomic_load(&n->latency_max_ns) / 1000);
	}
}

void obj_eps_record(struct workload *w, json_t *rec)
{
	struct obj_client *cl = w->engine_data;
	json_t *eps;

	if (!cl || !cl->ep_iv || !(eps = json_object()))
		return;
	for (size_t i = 0; i < cl->cfg->n_endpoints; i++) {
		struct obj_ep_interval *iv = &cl->ep_iv[i];
		uint64_t ops, errors, p50, p99, max;
		pthread_mutex_lock(&cl->ep_lock);
		ops = iv->ops;
		errors = iv->errors;
		p50 = hist_percentile(&iv->latency, 50);
		p99 = hist_percentile(&iv->latency, 99);
		max = hist_max(&iv->latency);
		iv->ops = iv->errors = 0;
		hist_reset(&iv->latency);
		pthread_mutex_unlock(&cl->ep_lock);
		json_object_set_new(
			eps, cl->cfg->endpoints[i],
			json_pack("{s:I,s:I,s:{s:f,s:f,s:f},s:I,s:I,s:I}", "ops", (json_int_t)ops,
				  "errors", (json_int_t)errors, "latency_us", "p50", p50 / 1e3,
				  "p99", p99 / 1e3, "max", max / 1e3, "total_ops",
				  (json_int_t)atomic_load(&cl->ep_count[i].ops), "total_errors",
				  (json_int_t)atomic_load(&cl->ep_count[i].errors),
				  "total_latency_us",
				  (json_int_t)(atomic_load(&cl->ep_count[i].latency_sum_ns) / 1000)));
	}
	json_object_set_new(rec, "endpoints", eps);
}
