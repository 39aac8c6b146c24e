// SPDX-License-Identifier: GPL-2.0-only
#include "rundump.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "hist.h"
#include "runlog.h"

#define RD_MAX_OPS 16
#define RD_MAX_WORKLOADS 256
#define RD_MAX_TARGETS 64

struct rd_op {
	char name[64];
	uint64_t count, errors, bytes, corrupt;
	double target_ops;
	struct hist *lat, *svc;
};

struct rd_ops {
	struct rd_op op[RD_MAX_OPS];
	size_t n;
};

struct rd_workload {
	char name[64];
	char state[16];
	char reason[256];
	uint64_t active_ns, lag_max_ns, intervals;
	uint64_t wall_first_ns, wall_last_ns;  /* merge: the time the intervals cover */
	struct rd_ops totals;
	char *target_path[RD_MAX_TARGETS];
	struct rd_ops *targets;            /* [RD_MAX_TARGETS], allocated on first use */
	size_t n_targets;
	/* The slice being folded (CSV/HDR with a slice length, report). */
	bool slice_open;
	uint64_t slice_index, slice_start_ns, slice_end_ns, slice_wall_start_ns, slice_lag_ns;
	struct rd_ops slice;
	json_t *report_ops;                /* report: OP -> {"slices": [...]} */
};

struct rundump {
	enum rundump_format format;
	struct rundump_filter f;
	char run[64];
	struct rd_workload *w[RD_MAX_WORKLOADS];
	size_t n;
	FILE *text;                        /* CSV or HDR being written */
	char *text_buf;
	size_t text_len;
	uint64_t hdr_base_wall_ns;
	bool hdr_header_done;
	uint64_t skipped;
	unsigned sources;                  /* logs added */
	struct rd_op scratch;              /* one interval's op, for its row */
};

static void op_free(struct rd_op *o)
{
	free(o->lat);
	free(o->svc);
	o->lat = o->svc = NULL;
}

static void ops_reset(struct rd_ops *ops)
{
	for (size_t i = 0; i < ops->n; i++) {
		struct rd_op *o = &ops->op[i];
		o->count = o->errors = o->bytes = o->corrupt = 0;
		o->target_ops = 0;
		if (o->lat)
			hist_init(o->lat);
		if (o->svc)
			hist_init(o->svc);
	}
}

static struct rd_op *op_get(struct rd_ops *ops, const char *name)
{
	for (size_t i = 0; i < ops->n; i++)
		if (strcmp(ops->op[i].name, name) == 0)
			return &ops->op[i];
	if (ops->n == RD_MAX_OPS || strlen(name) >= sizeof(ops->op[0].name))
		return NULL;
	struct rd_op *o = &ops->op[ops->n];
	memset(o, 0, sizeof(*o));
	o->lat = malloc(sizeof(*o->lat));
	o->svc = malloc(sizeof(*o->svc));
	if (!o->lat || !o->svc) {
		op_free(o);
		return NULL;
	}
	hist_init(o->lat);
	hist_init(o->svc);
	strcpy(o->name, name);
	ops->n++;
	return o;
}

static uint64_t u64(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static int merge_b64(struct hist *dst, json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (!v)
		return 0;
	return json_is_string(v) ? hist_merge_base64(dst, json_string_value(v)) : -EINVAL;
}

/* Adds a recorded op (count, errors, ..., base64 histograms) to o. */
static int op_add(struct rd_op *o, json_t *rec, double target_ops)
{
	o->count += u64(rec, "count");
	o->errors += u64(rec, "errors");
	o->bytes += u64(rec, "bytes");
	o->corrupt += u64(rec, "corrupt");
	o->target_ops += target_ops;
	int r = merge_b64(o->lat, rec, "latency");
	return r < 0 ? r : merge_b64(o->svc, rec, "service");
}

/* An interval's op as recorded, into the scratch op o (its histograms
 * decoded in place: no merge into an emptied one). */
static int op_load(struct rd_op *o, const char *name, json_t *rec, double target_ops)
{
	const char *keys[] = { "latency", "service" };
	struct hist *hists[] = { o->lat, o->svc };

	snprintf(o->name, sizeof(o->name), "%s", name);
	o->count = u64(rec, "count");
	o->errors = u64(rec, "errors");
	o->bytes = u64(rec, "bytes");
	o->corrupt = u64(rec, "corrupt");
	o->target_ops = target_ops;
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(rec, keys[i]);
		if (!v) {
			hist_init(hists[i]);
			continue;
		}
		if (!json_is_string(v))
			return -EINVAL;
		int r = hist_from_base64(hists[i], json_string_value(v));
		if (r < 0)
			return r;
	}
	return 0;
}

struct rundump *rundump_new(enum rundump_format format, const struct rundump_filter *filter)
{
	struct rundump *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->format = format;
	if (filter)
		d->f = *filter;
	if (format == RUNDUMP_CSV || format == RUNDUMP_HDR) {
		d->text = open_memstream(&d->text_buf, &d->text_len);
		if (!d->text) {
			free(d);
			return NULL;
		}
	}
	if (format == RUNDUMP_CSV)
		fprintf(d->text, "workload,op,start_s,end_s,count,errors,bytes,rate_target,"
				 "rate_achieved,latency_p50_us,latency_p90_us,latency_p99_us,"
				 "latency_p999_us,latency_max_us,service_p50_us,service_p99_us,"
				 "lag_max_ms,corrupt\n");
	if (format == RUNDUMP_REPORT && !d->f.slice_ns)
		d->f.slice_ns = UINT64_C(3600) * 1000000000;
	return d;
}

static struct rd_workload *workload_get(struct rundump *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->w[i]->name, name) == 0)
			return d->w[i];
	if (d->n == RD_MAX_WORKLOADS || strlen(name) >= sizeof(d->w[0]->name))
		return NULL;
	struct rd_workload *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	strcpy(w->name, name);
	strcpy(w->state, "unknown");
	d->w[d->n++] = w;
	return w;
}

/* --- CSV ------------------------------------------------------------- */

static void csv_row(struct rundump *d, const char *workload, const struct rd_op *o,
		    uint64_t start_ns, uint64_t end_ns, uint64_t lag_ns)
{
	double secs = end_ns > start_ns ? (end_ns - start_ns) / 1e9 : 0;
	fprintf(d->text, "%s,%s,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,"
			 "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 "\n",
		workload, o->name, start_ns / 1e9, end_ns / 1e9, o->count, o->errors, o->bytes,
		secs > 0 ? o->target_ops / secs : 0, secs > 0 ? o->count / secs : 0,
		hist_percentile(o->lat, 50) / 1e3, hist_percentile(o->lat, 90) / 1e3,
		hist_percentile(o->lat, 99) / 1e3, hist_percentile(o->lat, 99.9) / 1e3,
		hist_max(o->lat) / 1e3, hist_percentile(o->svc, 50) / 1e3,
		hist_percentile(o->svc, 99) / 1e3, lag_ns / 1e6, o->corrupt);
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

static char *base64(const uint8_t *data, size_t len)
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
		if (h->buckets[i])
			last = i + 1;
	uint8_t *raw = malloc(40 + 9 * (last + 1));
	if (!raw)
		return NULL;
	size_t n = 40;
	for (size_t i = 0; i < last;) {
		if (h->buckets[i]) {
			n += put_zigzag(raw + n, (int64_t)h->buckets[i]);
			i++;
			continue;
		}
		size_t zeros = 0;
		while (i < last && !h->buckets[i]) {
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
		out = base64(z, 8 + zlen);
	}
	free(z);
	free(raw);
	return out;
}

static void hdr_line(struct rundump *d, const char *workload, const struct rd_op *o,
		     uint64_t wall_start_ns, uint64_t start_ns, uint64_t end_ns)
{
	const struct hist *h = d->f.service ? o->svc : o->lat;
	if (!d->hdr_header_done) {
		d->hdr_base_wall_ns = wall_start_ns;
		fprintf(d->text, "#[Histogram log format version 1.3]\n"
				 "#[StartTime: %.3f (seconds since epoch)]\n"
				 "#[BaseTime: %.3f (seconds since epoch)]\n"
				 "#[soakd: %s in nanoseconds; Interval_Max in milliseconds]\n"
				 "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
				 "\"Interval_Compressed_Histogram\"\n",
			wall_start_ns / 1e9, wall_start_ns / 1e9,
			d->f.service ? "service times" : "latencies from the intended time");
		d->hdr_header_done = true;
	}
	char *enc = rundump_hdr_encode(h);
	if (!enc)
		return;
	double rel = wall_start_ns >= d->hdr_base_wall_ns ? (wall_start_ns - d->hdr_base_wall_ns) / 1e9
							   : 0;
	fprintf(d->text, "Tag=%s.%s,%.3f,%.3f,%.3f,%s\n", workload, o->name, rel,
		(end_ns - start_ns) / 1e9, hist_max(h) / 1e6, enc);
	free(enc);
}

/* --- slices ----------------------------------------------------------- */

static json_t *slice_report_json(const struct rd_workload *w, const struct rd_op *o)
{
	char *lat = hist_to_base64(o->lat), *svc = hist_to_base64(o->svc);
	json_t *j = json_pack("{s:f,s:f,s:I,s:s?,s:s?}", "start_s", w->slice_start_ns / 1e9,
			      "end_s", w->slice_end_ns / 1e9, "count", (json_int_t)o->count,
			      "latency", lat, "service", svc);
	free(lat);
	free(svc);
	return j;
}

static void flush_slice(struct rundump *d, struct rd_workload *w)
{
	if (!w->slice_open)
		return;
	for (size_t i = 0; i < w->slice.n; i++) {
		struct rd_op *o = &w->slice.op[i];
		if (d->format == RUNDUMP_CSV)
			csv_row(d, w->name, o, w->slice_start_ns, w->slice_end_ns, w->slice_lag_ns);
		else if (d->format == RUNDUMP_HDR)
			hdr_line(d, w->name, o, w->slice_wall_start_ns, w->slice_start_ns,
				 w->slice_end_ns);
		else if (d->format == RUNDUMP_REPORT) {
			if (!w->report_ops)
				w->report_ops = json_object();
			json_t *op = json_object_get(w->report_ops, o->name);
			if (!op) {
				op = json_pack("{s:[]}", "slices");
				json_object_set_new(w->report_ops, o->name, op);
			}
			json_array_append_new(json_object_get(op, "slices"), slice_report_json(w, o));
		}
	}
	ops_reset(&w->slice);
	w->slice_open = false;
	w->slice_lag_ns = 0;
}

/* --- records ---------------------------------------------------------- */

static bool wanted_op(const struct rundump *d, const char *op)
{
	return !d->f.op || strcmp(d->f.op, op) == 0;
}

static int add_interval(struct rundump *d, json_t *rec)
{
	const char *name = json_string_value(json_object_get(rec, "workload"));
	json_t *ops = json_object_get(rec, "ops");
	uint64_t start = u64(rec, "start_ns"), end = u64(rec, "end_ns");
	uint64_t wall_start = u64(rec, "wall_start_ns"), wall_end = u64(rec, "wall_end_ns");
	uint64_t lag = u64(rec, "lag_max_ns");
	double target = json_number_value(json_object_get(rec, "target_ops"));
	const char *op_name;
	json_t *op;
	int r = 0;

	if (!name || !json_is_object(ops) || end < start)
		return -EINVAL;
	if (d->f.workload && strcmp(d->f.workload, name) != 0)
		return 0;
	if (start < d->f.since_ns || (d->f.until_ns && start >= d->f.until_ns))
		return 0;
	if (d->f.wall_to_ns && (wall_start < d->f.wall_from_ns || wall_end > d->f.wall_to_ns))
		return 0;
	struct rd_workload *w = workload_get(d, name);
	if (!w)
		return -ENOMEM;
	w->active_ns += end - start;
	w->intervals++;
	if (!w->wall_first_ns || wall_start < w->wall_first_ns)
		w->wall_first_ns = wall_start;
	if (wall_end > w->wall_last_ns)
		w->wall_last_ns = wall_end;
	if (lag > w->lag_max_ns)
		w->lag_max_ns = lag;

	bool sliced = d->f.slice_ns && d->format != RUNDUMP_JSON;
	if (sliced) {
		uint64_t index = start / d->f.slice_ns;
		if (w->slice_open && index != w->slice_index)
			flush_slice(d, w);
		if (!w->slice_open) {
			w->slice_open = true;
			w->slice_index = index;
			w->slice_start_ns = start;
			w->slice_wall_start_ns = wall_start;
		}
		w->slice_end_ns = end;
		if (lag > w->slice_lag_ns)
			w->slice_lag_ns = lag;
	}
	json_object_foreach(ops, op_name, op) {
		if (!wanted_op(d, op_name))
			continue;
		double share = json_number_value(json_object_get(op, "share"));
		double op_target = target * share;
		struct rd_op *t = op_get(&w->totals, op_name);
		if (!t)
			return -ENOMEM;
		if (d->format == RUNDUMP_JSON) {
			r = op_add(t, op, op_target);
		} else if (sliced) {
			struct rd_op *s = op_get(&w->slice, op_name);
			r = s ? op_add(s, op, op_target) : -ENOMEM;
		} else {
			/* One row per interval: the scratch op, emitted now. */
			struct rd_op *s = &d->scratch;
			if (!s->lat && !(s->lat = malloc(sizeof(*s->lat))))
				return -ENOMEM;
			if (!s->svc && !(s->svc = malloc(sizeof(*s->svc))))
				return -ENOMEM;
			r = op_load(s, op_name, op, op_target);
			if (r == 0 && d->format == RUNDUMP_CSV)
				csv_row(d, name, s, start, end, lag);
			else if (r == 0 && d->format == RUNDUMP_HDR)
				hdr_line(d, name, s, wall_start, start, end);
		}
		if (r < 0)
			return r;
	}
	json_t *targets = json_object_get(rec, "targets");
	if (d->format == RUNDUMP_JSON && json_is_array(targets)) {
		size_t ti;
		json_t *target_rec;
		if (!w->targets && !(w->targets = calloc(RD_MAX_TARGETS, sizeof(*w->targets))))
			return -ENOMEM;
		json_array_foreach(targets, ti, target_rec) {
			if (ti >= RD_MAX_TARGETS)
				break;
			const char *path = json_string_value(json_object_get(target_rec, "path"));
			if (ti >= w->n_targets) {
				w->target_path[ti] = strdup(path ? path : "?");
				w->n_targets = ti + 1;
			}
			json_object_foreach(json_object_get(target_rec, "ops"), op_name, op) {
				if (!wanted_op(d, op_name))
					continue;
				struct rd_op *t = op_get(&w->targets[ti], op_name);
				if (!t || (r = op_add(t, op, 0)) < 0)
					return t ? r : -ENOMEM;
			}
		}
	}
	return 0;
}

/* Forgets what the named workloads measured: ops, targets and all. */
static void reset_listed(struct rundump *d, json_t *names)
{
	size_t k;
	json_t *v;

	json_array_foreach(names, k, v)
		for (size_t i = 0; json_is_string(v) && i < d->n; i++) {
			struct rd_workload *w = d->w[i];
			if (strcmp(w->name, json_string_value(v)) != 0)
				continue;
			for (size_t o = 0; o < w->totals.n; o++)
				op_free(&w->totals.op[o]);
			w->totals.n = 0;
			for (size_t t = 0; t < w->n_targets; t++) {
				for (size_t o = 0; w->targets && o < w->targets[t].n; o++)
					op_free(&w->targets[t].op[o]);
				if (w->targets)
					w->targets[t].n = 0;
				free(w->target_path[t]);
				w->target_path[t] = NULL;
			}
			w->n_targets = 0;
			w->active_ns = w->lag_max_ns = w->intervals = 0;
			w->wall_first_ns = w->wall_last_ns = 0;
		}
}

int rundump_add(struct rundump *d, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	int r = 0;

	if (!type)
		r = -EINVAL;
	else if (strcmp(type, "interval") == 0)
		r = add_interval(d, rec);
	else if (strcmp(type, "start") == 0) {
		const char *run = json_string_value(json_object_get(rec, "run"));
		if (run && !d->run[0])
			snprintf(d->run, sizeof(d->run), "%s", run);
	} else if (strcmp(type, "reload") == 0 && d->format == RUNDUMP_JSON && !d->f.wall_to_ns) {
		/* A workload a reload replaced (or added back after removing
		 * it) started over: its totals are the new definition's, as
		 * soakd's own are.  (Not when merging hosts: one host's
		 * reload is not all's.) */
		uint64_t at = u64(rec, "run_ns");
		if (at >= d->f.since_ns && (!d->f.until_ns || at < d->f.until_ns)) {
			reset_listed(d, json_object_get(rec, "replaced"));
			reset_listed(d, json_object_get(rec, "added"));
		}
	} else if (strcmp(type, "state") == 0) {
		const char *name = json_string_value(json_object_get(rec, "workload"));
		const char *state = json_string_value(json_object_get(rec, "state"));
		const char *reason = json_string_value(json_object_get(rec, "reason"));
		struct rd_workload *w = name && (!d->f.workload || strcmp(d->f.workload, name) == 0)
						? workload_get(d, name) : NULL;
		if (w && state) {
			snprintf(w->state, sizeof(w->state), "%s", state);
			snprintf(w->reason, sizeof(w->reason), "%s", reason ? reason : "");
		}
	}
	if (r < 0)
		d->skipped++;
	return r;
}

int rundump_add_log(struct rundump *d, const char *path, char **ret_notes)
{
	struct runlog_reader *rd;
	json_t *rec;
	int r = runlog_open(path, &rd);

	if (r < 0)
		return r;
	d->sources++;
	while ((r = runlog_next(rd, &rec)) > 0) {
		rundump_add(d, rec);
		json_decref(rec);
	}
	if (ret_notes && (runlog_corrupt(rd) || runlog_torn(rd))) {
		if (asprintf(ret_notes, "%s: %" PRIu64 " damaged record(s) skipped%s", path,
			     runlog_corrupt(rd),
			     runlog_torn(rd) ? ", a torn last record dropped" : "") < 0)
			*ret_notes = NULL;
	}
	runlog_close(rd);
	return r;
}

int rundump_log_span(const char *path, uint64_t *ret_from_ns, uint64_t *ret_to_ns)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t from = UINT64_MAX, to = 0;
	int r = runlog_open(path, &rd);

	if (r < 0)
		return r;
	while ((r = runlog_next(rd, &rec)) > 0) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		if (type && strcmp(type, "interval") == 0) {
			uint64_t a = u64(rec, "wall_start_ns"), b = u64(rec, "wall_end_ns");
			from = a < from ? a : from;
			to = b > to ? b : to;
		}
		json_decref(rec);
	}
	runlog_close(rd);
	if (r < 0)
		return r;
	if (to == 0)
		return -ENODATA;
	*ret_from_ns = from;
	*ret_to_ns = to;
	return 0;
}

size_t rundump_text_pending(struct rundump *d)
{
	if (!d->text)
		return 0;
	fflush(d->text);
	return d->text_len;
}

int rundump_drain_text(struct rundump *d, int (*sink)(void *userdata, const char *text, size_t len),
		       void *userdata)
{
	if (!d->text || fflush(d->text) != 0)
		return d->text ? -ENOMEM : 0;
	if (d->text_len == 0)
		return 0;
	int r = sink(userdata, d->text_buf, d->text_len);
	/* A fresh stream: a memstream cannot be emptied in place. */
	fclose(d->text);
	free(d->text_buf);
	d->text_buf = NULL;
	d->text_len = 0;
	d->text = open_memstream(&d->text_buf, &d->text_len);
	if (!d->text)
		return -ENOMEM;
	return r;
}

void rundump_set_state(struct rundump *d, const char *workload, const char *state,
		       const char *reason)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->w[i]->name, workload) == 0) {
			snprintf(d->w[i]->state, sizeof(d->w[i]->state), "%s", state);
			snprintf(d->w[i]->reason, sizeof(d->w[i]->reason), "%s", reason ? reason : "");
		}
}

/* --- results ---------------------------------------------------------- */

static json_t *latency_json(const struct hist *h)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
			 "p50", hist_percentile(h, 50) / 1e3, "p90", hist_percentile(h, 90) / 1e3,
			 "p99", hist_percentile(h, 99) / 1e3, "p999", hist_percentile(h, 99.9) / 1e3,
			 "max", hist_max(h) / 1e3, "min", hist_min(h) / 1e3, "mean", hist_mean(h) / 1e3);
}

static json_t *ops_json(const struct rd_ops *ops, uint64_t active_ns)
{
	json_t *j = json_object();
	double secs = active_ns / 1e9;
	for (size_t i = 0; i < ops->n; i++) {
		const struct rd_op *o = &ops->op[i];
		char *text = hist_to_base64(o->lat);
		json_object_set_new(j, o->name, json_pack(
			"{s:I,s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:s?}", "count", (json_int_t)o->count,
			"errors", (json_int_t)o->errors, "bytes", (json_int_t)o->bytes,
			"corrupt", (json_int_t)o->corrupt,
			"rate_target", secs > 0 ? o->target_ops / secs : 0.0,
			"rate_achieved", secs > 0 ? o->count / secs : 0.0,
			"latency_us", latency_json(o->lat), "service_us", latency_json(o->svc),
			"latency_hist", text));
		free(text);
	}
	return j;
}

json_t *rundump_finish(struct rundump *d)
{
	json_t *workloads = json_array();

	for (size_t i = 0; i < d->n; i++)
		flush_slice(d, d->w[i]);
	for (size_t i = 0; i < d->n; i++) {
		struct rd_workload *w = d->w[i];
		json_t *jw;
		/* Merged hosts ran side by side: their rates add up, so the
		 * time is what each ran within the overlap, not the sum. */
		if (d->f.wall_to_ns && d->sources > 1)
			w->active_ns /= d->sources;
		if (d->format == RUNDUMP_REPORT) {
			jw = json_pack("{s:s,s:s,s:o}", "name", w->name, "state", w->state, "ops",
				       w->report_ops ? json_incref(w->report_ops) : json_object());
		} else {
			json_t *targets = json_array();
			for (size_t t = 0; t < w->n_targets; t++)
				json_array_append_new(targets, json_pack("{s:s,s:o}", "path",
							w->target_path[t],
							"ops", ops_json(&w->targets[t], w->active_ns)));
			jw = json_pack("{s:s,s:s,s:f,s:f,s:I,s:o,s:o}", "name", w->name,
				       "state", w->state, "active_s", w->active_ns / 1e9,
				       "lag_max_ms", w->lag_max_ns / 1e6,
				       "intervals", (json_int_t)w->intervals,
				       "ops", ops_json(&w->totals, w->active_ns), "targets", targets);
			if (w->reason[0])
				json_object_set_new(jw, "reason", json_string(w->reason));
		}
		json_array_append_new(workloads, jw);
	}
	json_t *out = json_pack("{s:b,s:s,s:o}", "ok", 1, "run", d->run[0] ? d->run : "unknown",
				"workloads", workloads);
	if (d->format == RUNDUMP_REPORT)
		json_object_set_new(out, "slice_s", json_real(d->f.slice_ns / 1e9));
	if (d->format == RUNDUMP_JSON)
		json_object_set_new(out, "kernel", json_pack("{s:{},s:{}}", "blk", "tcp"));
	if (d->text) {
		fflush(d->text);
		json_object_set_new(out, d->format == RUNDUMP_CSV ? "csv" : "hdr",
				    json_stringn(d->text_buf, d->text_len));
	}
	if (d->skipped)
		json_object_set_new(out, "records_skipped", json_integer((json_int_t)d->skipped));
	return out;
}

void rundump_free(struct rundump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		struct rd_workload *w = d->w[i];
		for (size_t k = 0; k < w->totals.n; k++)
			op_free(&w->totals.op[k]);
		for (size_t k = 0; k < w->slice.n; k++)
			op_free(&w->slice.op[k]);
		for (size_t t = 0; t < w->n_targets; t++) {
			for (size_t k = 0; k < w->targets[t].n; k++)
				op_free(&w->targets[t].op[k]);
			free(w->target_path[t]);
		}
		free(w->targets);
		json_decref(w->report_ops);
		free(w);
	}
	op_free(&d->scratch);
	if (d->text)
		fclose(d->text);
	free(d->text_buf);
	free(d);
}
