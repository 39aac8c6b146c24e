// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a dump writes: CSV rows, HdrHistogram interval-log lines (their
 * histograms encoded as HdrHistogram's compressed V2 form) and the final
 * JSON report.
 */
#include "rundump.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "hist.h"

#include "rundump_int.h"

/* A name as soakd makes them: letters, digits, '-', '_' and '.'. */
static bool plain_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* A name from the log as a CSV field: soakd's own as they are; any other
 * (a log from elsewhere, damaged) quoted, its quotes doubled, its control
 * characters as '_' (a row per line, for line tools too), and one that a
 * spreadsheet would take for a formula made text with a leading '. */
static void csv_name(FILE *out, const char *s)
{
	if (plain_name(s)) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	if (*s && strchr("=+-@\t\r", *s))
		fputc('\'', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s, out);
	}
	fputc('"', out);
}

/* A name in an HdrHistogram log's Tag=, which ends at a comma or space:
 * anything but a plain name's characters as '_'. */
static void tag_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(isalnum((unsigned char)*s) || *s == '-' || *s == '_' || *s == '.' ? *s : '_',
		      out);
}

void rd_csv_row(struct rundump *d, const char *workload, const struct rd_op *o,
		uint64_t start_ns, uint64_t end_ns, uint64_t lag_ns, uint64_t late_ns)
{
	double secs = end_ns > start_ns ? (end_ns - start_ns) / 1e9 : 0;
	csv_name(d->text, workload);
	fputc(',', d->text);
	csv_name(d->text, o->name);
	fprintf(d->text, ",%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,"
			 "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			 ",%.3f,%.3f,%.3f,%.3f",
		start_ns / 1e9, end_ns / 1e9, o->count, o->errors, o->bytes,
		secs > 0 ? o->target_ops / secs : 0, secs > 0 ? o->count / secs : 0,
		hist_percentile(o->lat, 50) / 1e3, hist_percentile(o->lat, 90) / 1e3,
		hist_percentile(o->lat, 99) / 1e3, hist_percentile(o->lat, 99.9) / 1e3,
		hist_max(o->lat) / 1e3, hist_percentile(o->svc, 50) / 1e3,
		hist_percentile(o->svc, 99) / 1e3, lag_ns / 1e6, o->corrupt, o->missed, o->pending,
		hist_percentile(o->iss, 50) / 1e3, hist_percentile(o->iss, 99) / 1e3,
		hist_max(o->iss) / 1e3, late_ns / 1e6);
	for (size_t i = 0; i < RD_VERIFY_CLASSES; i++)
		fprintf(d->text, ",%" PRIu64, o->verify[i]);
	rd_host_csv(d, workload, o->name);
	fputc('\n', d->text);
}

/* --- HdrHistogram log ------------------------------------------------- */

static size_t put_zigzag(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;
	/* HdrHistogram's LEB128 stops at 9 bytes: the 9th carries 8 bits. */
	while (n < 8 && z >= 0x80) {
		p[n++] = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	p[n++] = (uint8_t)z;
	return n;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

char *rd_base64(const uint8_t *data, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1), *p = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		*p++ = tab[v >> 18];
		*p++ = tab[(v >> 12) & 63];
		*p++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		*p++ = i + 2 < len ? tab[v & 63] : '=';
	}
	*p = '\0';
	return out;
}

/*
 * soakd's histogram is laid out exactly as an HdrHistogram with a lowest
 * discernible value of 1 (ns) and 2 significant digits: 256 unit buckets,
 * then 128 sub-buckets per power of two.  So its counts array is
 * HdrHistogram's, and the V2 encoding (ZigZag LEB128 counts, runs of zeros
 * as negative lengths), deflated, is what HdrHistogram's log readers take.
 */
char *rundump_hdr_encode(const struct hist *h)
{
	size_t last = 0;
	for (size_t i = 0; i < HIST_BUCKETS; i++)
		if (hist_bucket(h, i))
			last = i + 1;
	uint8_t *raw = malloc(40 + 9 * (last + 1));
	if (!raw)
		return NULL;
	size_t n = 40;
	for (size_t i = 0; i < last;) {
		if (hist_bucket(h, i)) {
			n += put_zigzag(raw + n, (int64_t)hist_bucket(h, i));
			i++;
			continue;
		}
		size_t zeros = 0;
		while (i < last && !hist_bucket(h, i)) {
			zeros++;
			i++;
		}
		n += put_zigzag(raw + n, zeros > 1 ? -(int64_t)zeros : 0);
	}
	put_be32(raw, 0x1c849303 | 0x10);
	put_be32(raw + 4, (uint32_t)(n - 40));
	put_be32(raw + 8, 0);                   /* normalizing index offset */
	put_be32(raw + 12, 2);                  /* significant value digits */
	put_be64(raw + 16, 1);                  /* lowest discernible value */
	put_be64(raw + 24, HIST_MAX_VALUE);     /* highest trackable value */
	double ratio = 1.0;
	uint64_t bits;
	memcpy(&bits, &ratio, sizeof(bits));
	put_be64(raw + 32, bits);

	uLongf zlen = compressBound((uLong)n);
	uint8_t *z = malloc(8 + zlen);
	char *out = NULL;
	if (z && compress2(z + 8, &zlen, raw, (uLong)n, Z_DEFAULT_COMPRESSION) == Z_OK) {
		put_be32(z, 0x1c849304 | 0x10);
		put_be32(z + 4, (uint32_t)zlen);
		out = rd_base64(z, 8 + zlen);
	}
	free(z);
	free(raw);
	return out;
}

void rd_hdr_line(struct rundump *d, const char *workload, const struct rd_op *o,
		 uint64_t wall_start_ns, uint64_t start_ns, uint64_t end_ns)
{
	const struct hist *h = d->f.service ? o->svc : o->lat;
	if (!d->hdr_header_done) {
		/* The run's start (or a merge's first instant) when the log
		 * said it: slices are written as each workload leaves one, not
		 * in time order, so the first line may not be the earliest. */
		if (!d->hdr_base_wall_ns || wall_start_ns < d->hdr_base_wall_ns)
			d->hdr_base_wall_ns = wall_start_ns;
		fprintf(d->text, "#[Histogram log format version 1.3]\n"
				 "#[StartTime: %.3f (seconds since epoch)]\n"
				 "#[BaseTime: %.3f (seconds since epoch)]\n"
				 "#[soakd: %s in nanoseconds; Interval_Max in milliseconds]\n"
				 "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
				 "\"Interval_Compressed_Histogram\"\n",
			d->hdr_base_wall_ns / 1e9, d->hdr_base_wall_ns / 1e9,
			d->f.service ? "service times" : "latencies from the intended time");
		d->hdr_header_done = true;
	}
	char *enc = rundump_hdr_encode(h);
	if (!enc)
		return;
	double rel = wall_start_ns >= d->hdr_base_wall_ns ? (wall_start_ns - d->hdr_base_wall_ns) / 1e9
							   : 0;
	fputs("Tag=", d->text);
	tag_name(d->text, workload);
	fputc('.', d->text);
	tag_name(d->text, o->name);
	fprintf(d->text, ",%.3f,%.3f,%.3f,%s\n", rel, (end_ns - start_ns) / 1e9, hist_max(h) / 1e6,
		enc);
	free(enc);
}

/* --- slices ----------------------------------------------------------- */

json_t *rd_latency_json(const struct hist *h)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
			 "p50", hist_percentile(h, 50) / 1e3, "p90", hist_percentile(h, 90) / 1e3,
			 "p99", hist_percentile(h, 99) / 1e3, "p999", hist_percentile(h, 99.9) / 1e3,
			 "max", hist_max(h) / 1e3, "min", hist_min(h) / 1e3, "mean", hist_mean(h) / 1e3);
}

/* rate_target over the time ops were scheduled (sched_ns), not the drain
 * after it; rate_achieved over the whole active time. */
static json_t *ops_json(const struct rd_ops *ops, uint64_t active_ns, uint64_t sched_ns)
{
	json_t *j = json_object();
	double secs = active_ns / 1e9, sched_secs = (sched_ns ? sched_ns : active_ns) / 1e9;
	for (size_t i = 0; i < ops->n; i++) {
		const struct rd_op *o = &ops->op[i];
		char *text = hist_to_base64(o->lat);
		json_object_set_new(j, o->name, json_pack(
			"{s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:s?}", "count", (json_int_t)o->count,
			"errors", (json_int_t)o->errors, "bytes", (json_int_t)o->bytes,
			"corrupt", (json_int_t)o->corrupt, "missed", (json_int_t)o->missed,
			"pending", (json_int_t)o->pending,
			"rate_target", sched_secs > 0 ? o->target_ops / sched_secs : 0.0,
			"rate_achieved", secs > 0 ? o->count / secs : 0.0,
			"latency_us", rd_latency_json(o->lat), "service_us", rd_latency_json(o->svc),
			"latency_hist", text));
		if (o->iss && o->iss->count)
			json_object_set_new(json_object_get(j, o->name), "issue_delay_us",
					    rd_latency_json(o->iss));
		bool checked = false;
		for (size_t k = 0; k < RD_VERIFY_CLASSES; k++)
			checked |= o->verify[k] != 0;
		if (checked) {
			/* An object op's corrupt is its op's; a device op's is a
			 * class of its own (the op's is the sum of its failures). */
			json_t *v = json_pack("{s:I}", "corrupt", (json_int_t)o->corrupt);
			for (size_t k = 0; k < RD_VERIFY_CLASSES; k++)
				if (o->dev_verify || strcmp(rd_verify_names[k], "corrupt") != 0)
					json_object_set_new(v, rd_verify_names[k],
							    json_integer((json_int_t)o->verify[k]));
			json_object_set_new(json_object_get(j, o->name), "verify", v);
		}
		free(text);
	}
	return j;
}

json_t *rundump_finish(struct rundump *d)
{
	json_t *workloads = json_array();

	for (size_t i = 0; i < d->n; i++)
		rd_flush_slice(d, d->w[i]);
	for (size_t i = 0; i < d->n; i++) {
		struct rd_workload *w = d->w[i];
		json_t *jw;
		/* Merged hosts ran side by side: their rates add up, so the
		 * time is what each ran within the overlap, not the sum; of
		 * the hosts that ran this workload, not of all merged. */
		if (d->f.wall_to_ns && w->sources > 1) {
			w->active_ns /= w->sources;
			w->sched_ns /= w->sources;
		}
		if (d->format == RUNDUMP_REPORT) {
			jw = json_pack("{s:s,s:s,s:o}", "name", w->name, "state", w->state, "ops",
				       w->report_ops ? json_incref(w->report_ops) : json_object());
			if (jw && w->reason[0])
				json_object_set_new(jw, "reason", json_string(w->reason));
			if (jw && w->late_intervals)
				json_object_set_new(jw, "generator_late", json_pack(
					"{s:I,s:f}", "intervals", (json_int_t)w->late_intervals,
					"max_ms", w->late_max_ns / 1e6));
		} else {
			json_t *targets = json_array();
			for (size_t t = 0; t < w->n_targets; t++)
				json_array_append_new(targets, json_pack("{s:s,s:o}", "path",
							w->target_path[t],
							"ops", ops_json(&w->targets[t], w->active_ns, w->sched_ns)));
			jw = json_pack("{s:s,s:s,s:f,s:f,s:I,s:o,s:o}", "name", w->name,
				       "state", w->state, "active_s", w->active_ns / 1e9,
				       "lag_max_ms", w->lag_max_ns / 1e6,
				       "intervals", (json_int_t)w->intervals,
				       "ops", ops_json(&w->totals, w->active_ns, w->sched_ns), "targets", targets);
			if (w->reason[0])
				json_object_set_new(jw, "reason", json_string(w->reason));
			json_t *kernel = rd_kernel_json(&w->kernel);
			if (kernel)
				json_object_set_new(jw, "kernel", kernel);
			if (jw && w->late_intervals)
				json_object_set_new(jw, "generator_late", json_pack(
					"{s:I,s:f}", "intervals", (json_int_t)w->late_intervals,
					"max_ms", w->late_max_ns / 1e6));
		}
		json_array_append_new(workloads, jw);
	}
	json_t *out = json_pack("{s:b,s:s,s:o}", "ok", 1, "run", d->run[0] ? d->run : "unknown",
				"workloads", workloads);
	if (d->format == RUNDUMP_REPORT)
		json_object_set_new(out, "slice_s", json_real(d->f.slice_ns / 1e9));
	if (d->format == RUNDUMP_JSON)
		json_object_set_new(out, "kernel", json_pack("{s:{},s:{}}", "blk", "tcp"));
	json_t *host = rundump_host(d);
	if (host)
		json_object_set_new(out, "host", host);
	if (d->text) {
		fflush(d->text);
		json_object_set_new(out, d->format == RUNDUMP_CSV ? "csv" : "hdr",
				    json_stringn(d->text_buf, d->text_len));
	}
	if (d->skipped)
		json_object_set_new(out, "records_skipped", json_integer((json_int_t)d->skipped));
	return out;
}

