// SPDX-License-Identifier: GPL-2.0-only
/*
 * StatsD over UDP, with aisloader's names so its Graphite/Grafana
 * dashboards read soakd too: <prefix>.<workload>.<op>.<metric>, where
 * aisloader writes <prefix>.<op>.<metric>:
 *
 *   count:N|c          ops completed since the last send (aisloader: get.count)
 *   error:N|c          ops failed since the last send (get.error)
 *   throughput:B|g     bytes per second in the last interval (get.throughput)
 *   latency:MS|ms|@S   mean latency of the ops that succeeded since the last send
 *                      and of those missed (their wait, a lower bound: a
 *                      stalled device's ops are missed, and must show)
 *                      (get.latency); MS, here and below, in ms to the ns
 *                      (six decimals: a 12.345 us read is not sent as 0.012)
 *   minlatency:MS|ms|@S, maxlatency:MS|ms|@S  the interval's minimum and
 *                      maximum (get.minlatency, get.maxlatency)
 *   latency.p50:MS|ms|@S  and p90, p99, p999: the interval's exact quantiles
 *   rate:R|g           ops per second completed in the last interval
 *   rate_target:R|g    ops per second the schedule asked for
 *   issue_delay.p99:MS|g, issue_delay.max:MS|g  soakd's own lateness at
 *                      issue, of the ops the last interval issued (gauges:
 *                      these are not ops' latencies; aisloader has none)
 * and per workload <prefix>.<workload>.lag:MS|g.
 *
 * A timer line stands for the N ops that succeeded or were missed since the
 * last send, so it carries the sample rate @S = 1/N, as aisloader's do: a
 * StatsD server then counts N samples (its .count and .count_ps), not one.
 * When a workload has ended and its last interval is out, its gauges are
 * sent once more as 0, as aisloader does at its end, so a dashboard does
 * not show the last rate of a run that is over.
 *
 * Counters carry differences of the run's totals, so what a StatsD server
 * adds up equals soakd's own totals even when a tick was skipped.  Lines
 * are packed into datagrams of at most STATSD_MAX_DATAGRAM bytes (the size
 * StatsD recommends inside one network), sent without blocking; a failed
 * send is counted and the run goes on.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "config/config_export.h"
#include "config/config_trace.h"

#define STATSD_MAX_DATAGRAM 1432
#define STATSD_RECOVERED 10

struct statsd_sender {
	char *address;
	int fd;
	char buf[STATSD_MAX_DATAGRAM];
	size_t used;
	uint64_t datagrams, send_errors;
	bool failing;
	unsigned sent_since_error;
	char error[256];
};

/* snprintf that keeps counting past the end of buf. */
static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*off < len ? buf + *off : NULL, *off < len ? len - *off : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/*
 * "|@S" for a timer line standing for n samples: S = 1/n in plain decimals
 * (StatsD servers read [0-9.] after '@', not exponents), with enough
 * digits that 1/S gives n back to within 10^-6.  Empty for n <= 1.
 */
static void sample_rate(char *buf, size_t len, uint64_t n)
{
	int digits = 6;

	buf[0] = '\0';
	if (n <= 1)
		return;
	for (uint64_t v = n; v; v /= 10)
		digits++;
	int k = snprintf(buf, len, "|@%.*f", digits, 1.0 / (double)n);
	if (k <= 0 || (size_t)k >= len)
		return;
	while (k > 3 && buf[k - 1] == '0')
		buf[--k] = '\0';
}

size_t export_statsd_format_op(char *buf, size_t len, const char *prefix,
			       const struct export_op *op, const struct export_delta *delta)
{
	char w[CONFIG_MAX_NAME * 2], o[CONFIG_MAX_NAME * 2], at[40];
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	export_statsd_name(op->workload, w, sizeof(w));
	export_statsd_name(op->op, o, sizeof(o));
	append(buf, len, &off, "%s.%s.%s.count:%" PRIu64 "|c\n", prefix, w, o, delta->ops);
	append(buf, len, &off, "%s.%s.%s.error:%" PRIu64 "|c\n", prefix, w, o, delta->errors);
	append(buf, len, &off, "%s.%s.%s.missed:%" PRIu64 "|c\n", prefix, w, o, delta->missed);
	if (op->verify_total) {
		/* Object ops: their checks against the write ledger. */
		const struct obj_verify *v = &delta->verify;
		const struct { const char *name; uint64_t n; } classes[] = {
			{ "checked", v->checked }, { "lost", v->lost },
			{ "resurrected", v->resurrected }, { "stale", v->stale },
			{ "list_missing", v->list_missing }, { "list_extra", v->list_extra },
			{ "uncertain", v->uncertain },
		};
		for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
			append(buf, len, &off, "%s.%s.%s.verify.%s:%" PRIu64 "|c\n", prefix, w, o,
			       classes[i].name, classes[i].n);
	}
	/* Device ops with "verify": their blocks read back, by class. */
	for (size_t c = 0; op->has_dev_verify && c < OP_VERIFY_CLASSES; c++)
		append(buf, len, &off, "%s.%s.%s.verify.%s:%" PRIu64 "|c\n", prefix, w, o,
		       op_verify_names[c], delta->dev_verify[c]);
	if (!op->has_interval)
		return off;
	/* aisloader's gauge: ops due and not yet completed. */
	append(buf, len, &off, "%s.%s.%s.pending:%" PRIu64 "|g\n", prefix, w, o, op->pending);
	append(buf, len, &off, "%s.%s.%s.throughput:%.0f|g\n", prefix, w, o,
	       op->interval_s > 0 ? op->bytes / op->interval_s : 0.0);
	append(buf, len, &off, "%s.%s.%s.rate:%.3f|g\n", prefix, w, o, op->rate);
	append(buf, len, &off, "%s.%s.%s.rate_target:%.3f|g\n", prefix, w, o, op->rate_target);
	if (op->issue_count) {
		append(buf, len, &off, "%s.%s.%s.issue_delay.p99:%.6f|g\n", prefix, w, o,
		       op->issue_p99_ns / 1e6);
		append(buf, len, &off, "%s.%s.%s.issue_delay.max:%.6f|g\n", prefix, w, o,
		       op->issue_max_ns / 1e6);
	}
	/* Failed ops have no latency: no timers without a success or a
	 * missed op's wait (an interval in which a stalled device completed
	 * nothing still has the waits of the ops it missed). */
	if (delta->latency_count == 0)
		return off;
	sample_rate(at, sizeof(at), delta->latency_count);
	/* Timers in ms, to the ns the histograms hold. */
	const struct { const char *name; double ms; } timers[] = {
		{ "latency", delta->latency_sum_ns / 1e6 / (double)delta->latency_count },
		{ "minlatency", op->min_ns / 1e6 },
		{ "maxlatency", op->max_ns / 1e6 },
		{ "latency.p50", op->p50_ns / 1e6 },
		{ "latency.p90", op->p90_ns / 1e6 },
		{ "latency.p99", op->p99_ns / 1e6 },
		{ "latency.p999", op->p999_ns / 1e6 },
	};
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
		append(buf, len, &off, "%s.%s.%s.%s:%.6f|ms%s\n", prefix, w, o, timers[i].name,
		       timers[i].ms, at);
	return off;
}

size_t export_statsd_format_op_end(char *buf, size_t len, const char *prefix,
				   const struct export_op *op)
{
	char w[CONFIG_MAX_NAME * 2], o[CONFIG_MAX_NAME * 2];
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	export_statsd_name(op->workload, w, sizeof(w));
	export_statsd_name(op->op, o, sizeof(o));
	append(buf, len, &off, "%s.%s.%s.throughput:0|g\n", prefix, w, o);
	append(buf, len, &off, "%s.%s.%s.rate:0|g\n", prefix, w, o);
	append(buf, len, &off, "%s.%s.%s.rate_target:0|g\n", prefix, w, o);
	append(buf, len, &off, "%s.%s.%s.pending:0|g\n", prefix, w, o);
	append(buf, len, &off, "%s.%s.%s.issue_delay.p99:0|g\n", prefix, w, o);
	append(buf, len, &off, "%s.%s.%s.issue_delay.max:0|g\n", prefix, w, o);
	return off;
}

size_t export_statsd_format_workload(char *buf, size_t len, const char *prefix,
				     const struct export_workload *wl)
{
	char w[CONFIG_MAX_NAME * 2];
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	export_statsd_name(wl->name, w, sizeof(w));
	append(buf, len, &off, "%s.%s.lag:%.3f|g\n", prefix, w, wl->lag_s * 1e3);
	append(buf, len, &off, "%s.%s.generator_late:%d|g\n", prefix, w, wl->generator_late ? 1 : 0);
	return off;
}

size_t export_statsd_format_workload_end(char *buf, size_t len, const char *prefix,
					 const struct export_workload *wl)
{
	char w[CONFIG_MAX_NAME * 2];
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	export_statsd_name(wl->name, w, sizeof(w));
	append(buf, len, &off, "%s.%s.lag:0|g\n", prefix, w);
	append(buf, len, &off, "%s.%s.generator_late:0|g\n", prefix, w);
	return off;
}

int export_statsd_open(const char *address, struct statsd_sender **ret, char *why,
		       size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[256], port[16];
	unsigned portnum;
	int r, fd;

	if (trace_split_endpoint(address, host, sizeof(host), &portnum, why, whylen) < 0)
		return -EINVAL;
	snprintf(port, sizeof(port), "%u", portnum);
	/* Resolved once, at start: the loop never waits for DNS. */
	r = getaddrinfo(host, port, &hints, &ai);
	if (r != 0) {
		snprintf(why, whylen, "cannot resolve StatsD address %s: %s", address,
			 gai_strerror(r));
		return -EHOSTUNREACH;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		r = -errno;
		snprintf(why, whylen, "cannot set up a UDP socket to StatsD at %s: %s", address,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return r;
	}
	freeaddrinfo(ai);

	struct statsd_sender *s = calloc(1, sizeof(*s));
	if (!s || !(s->address = strdup(address))) {
		free(s);
		close(fd);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	s->fd = fd;
	*ret = s;
	return 0;
}

void export_statsd_close(struct statsd_sender *s)
{
	if (!s)
		return;
	export_statsd_flush(s);
	close(s->fd);
	free(s->address);
	free(s);
}

void export_statsd_flush(struct statsd_sender *s)
{
	ssize_t n;

	if (!s || s->used == 0)
		return;
	/* Without the last '\n': one metric per line, none empty. */
	n = send(s->fd, s->buf, s->used - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	s->used = 0;
	if (n >= 0) {
		s->datagrams++;
		/* Nobody listening alternates success and ECONNREFUSED: only a
		 * run of successes means StatsD is back. */
		if (s->failing && ++s->sent_since_error >= STATSD_RECOVERED) {
			log_notice("StatsD at %s: sending again", s->address);
			s->failing = false;
		}
		return;
	}
	/* ECONNREFUSED: an earlier datagram found nobody listening (ICMP);
	 * EAGAIN: the socket buffer is full.  Either way this one is lost. */
	s->send_errors++;
	snprintf(s->error, sizeof(s->error), "%s", strerror(errno));
	if (!s->failing)
		log_warning("StatsD at %s: cannot send: %s; counting lost datagrams in status",
			    s->address, s->error);
	s->failing = true;
	s->sent_since_error = 0;
}

void export_statsd_add(struct statsd_sender *s, const char *lines, size_t len)
{
	while (len > 0) {
		const char *nl = memchr(lines, '\n', len);
		size_t n = nl ? (size_t)(nl - lines) + 1 : len;
		size_t need = nl ? n : n + 1;

		/* A line longer than a datagram cannot be sent; names are
		 * bounded well below that. */
		if (need <= sizeof(s->buf)) {
			if (s->used + need > sizeof(s->buf))
				export_statsd_flush(s);
			memcpy(s->buf + s->used, lines, n);
			s->used += n;
			if (!nl)
				s->buf[s->used++] = '\n';
		}
		lines += n;
		len -= n;
	}
}

json_t *export_statsd_status_json(const struct statsd_sender *s)
{
	json_t *j = json_pack("{s:s,s:I,s:I}", "address", s->address,
			      "datagrams", (json_int_t)s->datagrams,
			      "send_errors", (json_int_t)s->send_errors);
	if (j && s->failing)
		json_object_set_new(j, "error", json_string(s->error));
	return j;
}
