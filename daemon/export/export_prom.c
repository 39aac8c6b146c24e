// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus metrics through node_exporter's textfile collector.
 *
 * Names follow Prometheus' conventions: a soakd_ prefix, snake case, base
 * units (seconds, bytes), _total on counters, labels run, workload, op and
 * target.  Counters run from the start of the run; gauges hold the last
 * closed interval.  Latency is a summary (soakd_latency_seconds{quantile=
 * "0.99"}, _sum, _count) whose quantiles come from the last interval's
 * exact histogram: quantiles of different intervals or hosts cannot be
 * averaged, so a fleet is merged with soakctl merge, and Prometheus is for
 * watching.  "target" always means a device or file a workload drives (the
 * target label, soakd_target_*); the schedule's rate is "scheduled".
 *
 * node_exporter reads every *.prom file in its directory at each scrape, so
 * the file is written under another name in the same directory and renamed
 * over the target: a scrape sees the old file or the new one, never half.
 * No timestamps: the textfile collector refuses them.
 */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SOAK_VERSION
#define SOAK_VERSION "unknown"
#endif

static void put_label_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", out);
		else if (*v == '"')
			fputs("\\\"", out);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void put_double(FILE *out, double v)
{
	if (isnan(v))
		fputs("NaN", out);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", out);
	else {
		/* The shortest text that reads back as the same double. */
		char buf[40];
		for (int precision = 9; precision <= 17; precision++) {
			snprintf(buf, sizeof(buf), "%.*g", precision, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		fputs(buf, out);
	}
}

static void header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{run="..",workload="..",op=".."[,target=".."] */
static void labels(FILE *out, const char *name, const char *run, const struct export_op *op)
{
	fprintf(out, "%s{run=\"", name);
	put_label_value(out, run);
	fputs("\",workload=\"", out);
	put_label_value(out, op->workload);
	fputs("\",op=\"", out);
	put_label_value(out, op->op);
	if (op->target) {
		fputs("\",target=\"", out);
		put_label_value(out, op->target);
	}
	fputc('"', out);
}

enum counter { OPS, ERRORS, BYTES, MISSED };

static void counters(FILE *out, const struct export_snapshot *s, bool targets, enum counter which,
		     const char *name, const char *help)
{
	bool any = false;

	for (size_t i = 0; i < s->n_ops; i++) {
		const struct export_op *op = &s->ops[i];
		if ((op->target != NULL) != targets)
			continue;
		if (!any)
			header(out, name, "counter", help);
		any = true;
		labels(out, name, s->run, op);
		fprintf(out, "} %" PRIu64 "\n", which == OPS ? op->ops_total :
				which == ERRORS ? op->errors_total :
				which == MISSED ? op->missed_total : op->bytes_total);
	}
}

/* Checks of what was read back, one series per class: object ops against
 * the run's write ledger (per workload), device ops' 4 KiB blocks with
 * "verify" (per workload and per target). */
static void verify_counters(FILE *out, const struct export_snapshot *s)
{
	bool any = false;

	for (size_t i = 0; i < s->n_ops; i++) {
		const struct export_op *op = &s->ops[i];
		if (!(op->verify_total && !op->target) && !op->has_dev_verify)
			continue;
		if (!any)
			header(out, "soakd_verify_total", "counter",
			       "Object ops checked against the run's write ledger, or device blocks "
			       "read back and checked, since the run started (class=\"checked\"), "
			       "and what was found, by class; class=\"flush_failed\" counts a "
			       "verified device's failed cache flushes.");
		any = true;
		if (op->has_dev_verify) {
			for (size_t c = 0; c < OP_VERIFY_CLASSES; c++) {
				labels(out, "soakd_verify_total", s->run, op);
				fprintf(out, ",class=\"%s\"} %" PRIu64 "\n", op_verify_names[c],
					op->dev_verify_total[c]);
			}
			continue;
		}
		const struct obj_verify *v = op->verify_total;
		const struct { const char *name; uint64_t n; } classes[] = {
			{ "checked", v->checked }, { "corrupt", op->corrupt_total },
			{ "lost", v->lost }, { "resurrected", v->resurrected }, { "stale", v->stale },
			{ "list_missing", v->list_missing }, { "list_extra", v->list_extra },
			{ "uncertain", v->uncertain },
		};
		for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
			labels(out, "soakd_verify_total", s->run, op);
			fprintf(out, ",class=\"%s\"} %" PRIu64 "\n", classes[c].name, classes[c].n);
		}
	}
}

static void gauges_pending(FILE *out, const struct export_snapshot *s)
{
	bool any = false;

	for (size_t i = 0; i < s->n_ops; i++) {
		const struct export_op *op = &s->ops[i];
		if (op->target)
			continue;
		if (!any)
			header(out, "soakd_pending", "gauge",
			       "Ops due and not yet completed (waiting or in flight) at the end "
			       "of the last interval.");
		any = true;
		labels(out, "soakd_pending", s->run, op);
		fprintf(out, "} %" PRIu64 "\n", op->pending);
	}
}

static void rates(FILE *out, const struct export_snapshot *s, bool target_rate)
{
	const char *name = target_rate ? "soakd_rate_scheduled_ops_per_second"
				       : "soakd_rate_ops_per_second";
	bool any = false;

	for (size_t i = 0; i < s->n_ops; i++) {
		const struct export_op *op = &s->ops[i];
		if (op->target || !op->has_interval)
			continue;
		if (!any)
			header(out, name, "gauge", target_rate
			       ? "Ops per second the schedule asked for in the last interval."
			       : "Ops per second completed in the last interval.");
		any = true;
		labels(out, name, s->run, op);
		fputs("} ", out);
		put_double(out, target_rate ? op->rate_target : op->rate);
		fputc('\n', out);
	}
}

/* What one op gives a summary family. */
struct summary_values {
	uint64_t q_ns[5];             /* the family's quantiles, in its order */
	bool has_q;                   /* the last interval has values */
	uint64_t sum_ns, count;       /* since the run started */
};

/*
 * A Prometheus summary, as client libraries write one: the quantiles cover
 * a recent window (here the last closed interval, from its exact
 * histogram; "1" is the maximum), _sum and _count run from the start of the
 * run, so rate(_sum)/rate(_count) gives a mean over any range.  An interval
 * without values has no quantiles.
 */
static void summary(FILE *out, const struct export_snapshot *s, const char *name, const char *help,
		    const char *const *quantiles, size_t n_quantiles,
		    void (*values)(const struct export_op *, struct summary_values *))
{
	char sum_name[64], count_name[64];
	bool any = false;

	snprintf(sum_name, sizeof(sum_name), "%s_sum", name);
	snprintf(count_name, sizeof(count_name), "%s_count", name);
	for (size_t i = 0; i < s->n_ops; i++) {
		const struct export_op *op = &s->ops[i];
		struct summary_values v;
		if (op->target)
			continue;
		values(op, &v);
		if (!any)
			header(out, name, "summary", help);
		any = true;
		for (size_t q = 0; op->has_interval && v.has_q && q < n_quantiles; q++) {
			labels(out, name, s->run, op);
			fprintf(out, ",quantile=\"%s\"} ", quantiles[q]);
			put_double(out, v.q_ns[q] / 1e9);
			fputc('\n', out);
		}
		labels(out, sum_name, s->run, op);
		fputs("} ", out);
		put_double(out, v.sum_ns / 1e9);
		fputc('\n', out);
		labels(out, count_name, s->run, op);
		fprintf(out, "} %" PRIu64 "\n", v.count);
	}
}

/* Successful ops (the ones with a latency) and missed ones. */
static void latency_values(const struct export_op *op, struct summary_values *v)
{
	*v = (struct summary_values){
		.q_ns = { op->p50_ns, op->p90_ns, op->p99_ns, op->p999_ns, op->max_ns },
		.has_q = op->count > 0, .sum_ns = op->latency_sum_ns, .count = op->latency_count,
	};
}

/* soakd's own lateness: from each op's due time (or, with every slot busy,
 * the moment one freed) to its issue; every op issued. */
static void issue_delay_values(const struct export_op *op, struct summary_values *v)
{
	*v = (struct summary_values){
		.q_ns = { op->issue_p50_ns, op->issue_p99_ns, op->issue_max_ns },
		.has_q = op->issue_count > 0, .sum_ns = op->issue_sum_ns,
		.count = op->issue_count_total,
	};
}

static void latencies(FILE *out, const struct export_snapshot *s)
{
	static const char *const latency_q[] = { "0.5", "0.9", "0.99", "0.999", "1" };
	static const char *const issue_q[] = { "0.5", "0.99", "1" };

	summary(out, s, "soakd_latency_seconds",
		"Latency from each op's intended start (coordinated omission corrected): "
		"quantiles of the last interval (1 is the maximum), sum and count since the "
		"run started.",
		latency_q, sizeof(latency_q) / sizeof(*latency_q), latency_values);
	summary(out, s, "soakd_issue_delay_seconds",
		"soakd's own lateness: from each op's due time (or the moment a slot freed "
		"for it) to its issue. Quantiles of the last interval (1 is the maximum), "
		"sum and count since the run started.",
		issue_q, sizeof(issue_q) / sizeof(*issue_q), issue_delay_values);
}

static void workload_labels(FILE *out, const char *name, const char *run, const char *workload)
{
	fprintf(out, "%s{run=\"", name);
	put_label_value(out, run);
	fputs("\",workload=\"", out);
	put_label_value(out, workload);
	fputc('"', out);
}

int export_prom_format(const struct export_snapshot *s, FILE *out)
{
	header(out, "soakd_run_info", "gauge", "The soak run this soakd runs; always 1.");
	fputs("soakd_run_info{run=\"", out);
	put_label_value(out, s->run);
	fputs("\",version=\"" SOAK_VERSION "\"} 1\n", out);
	header(out, "soakd_run_start_time_seconds", "gauge",
	       "When the run started, in seconds since the Unix epoch.");
	fputs("soakd_run_start_time_seconds{run=\"", out);
	put_label_value(out, s->run);
	fputs("\"} ", out);
	put_double(out, s->start_time_s);
	fputc('\n', out);

	if (s->n_workloads) {
		header(out, "soakd_workload_state", "gauge",
		       "1 for the state each workload is in, 0 for the others.");
		for (size_t w = 0; w < s->n_workloads; w++)
			for (size_t k = 0; k < s->n_states; k++) {
				workload_labels(out, "soakd_workload_state", s->run,
						s->workloads[w].name);
				fputs(",state=\"", out);
				put_label_value(out, s->states[k]);
				fprintf(out, "\"} %d\n",
					strcmp(s->states[k], s->workloads[w].state) == 0);
			}
	}

	counters(out, s, false, OPS, "soakd_ops_total",
		 "Ops served since the run started (failed ones are in soakd_errors_total).");
	counters(out, s, false, ERRORS, "soakd_errors_total", "Ops that failed since the run started.");
	counters(out, s, false, BYTES, "soakd_bytes_total",
		 "Bytes moved by successful ops since the run started.");
	counters(out, s, false, MISSED, "soakd_missed_total",
		 "Ops due since the run started that never completed.");
	gauges_pending(out, s);
	verify_counters(out, s);
	rates(out, s, false);
	rates(out, s, true);
	latencies(out, s);

	bool any = false;
	for (size_t w = 0; w < s->n_workloads; w++) {
		if (!s->workloads[w].has_interval)
			continue;
		if (!any)
			header(out, "soakd_lag_seconds", "gauge",
			       "How far behind its schedule the workload fell in the last interval.");
		any = true;
		workload_labels(out, "soakd_lag_seconds", s->run, s->workloads[w].name);
		fputs("} ", out);
		put_double(out, s->workloads[w].lag_s);
		fputc('\n', out);
	}
	any = false;
	for (size_t w = 0; w < s->n_workloads; w++) {
		if (!s->workloads[w].has_interval)
			continue;
		if (!any)
			header(out, "soakd_generator_late", "gauge",
			       "1 when soakd itself, not the device, was late in the last interval "
			       "(stopped or starved of CPU).");
		any = true;
		workload_labels(out, "soakd_generator_late", s->run, s->workloads[w].name);
		fprintf(out, "} %d\n", s->workloads[w].generator_late ? 1 : 0);
	}

	counters(out, s, true, OPS, "soakd_target_ops_total",
		 "Ops completed on each target since the run started.");
	counters(out, s, true, ERRORS, "soakd_target_errors_total",
		 "Ops that failed on each target since the run started.");
	counters(out, s, true, BYTES, "soakd_target_bytes_total",
		 "Bytes moved by successful ops on each target since the run started.");
	export_prom_host(out, s->run, s->host);
	export_prom_drift(out, s->run, s->drift);
	export_prom_endpoints(out, s->run, s->endpoints);
	return ferror(out) ? -EIO : 0;
}

int export_prom_dir_open(const char *path, char *why, size_t whylen)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");

	if (!dir) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = fd < 0 ? -errno : fd;
	if (fd < 0)
		snprintf(why, whylen, "cannot open the directory of %s: %s", path, strerror(errno));
	free(dir);
	return r;
}

/* A temporary name beside the file: not *.prom (node_exporter must not
 * read it half-written), created exclusively, never through a link. */
static int create_temp(int dir_fd, const char *name, char *tmp, size_t len)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint32_t x;
		if (getrandom(&x, sizeof(x), 0) != sizeof(x))
			x = (uint32_t)getpid() ^ (uint32_t)attempt * 2654435761u;
		snprintf(tmp, len, ".%s.%08" PRIx32, name, x);
		int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0644);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int export_prom_write_at(int dir_fd, const char *path, const struct export_snapshot *s,
			 char *why, size_t whylen)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char tmp[NAME_MAX + 16];
	FILE *f = NULL;
	int fd, r;

	if (!*name || strlen(name) > NAME_MAX - 10) {
		snprintf(why, whylen, "%s: not a file name soakd can write beside", path);
		return -EINVAL;
	}
	fd = create_temp(dir_fd, name, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(why, whylen, "cannot create a file beside %s: %s", path, strerror(-fd));
		return fd;
	}
	/* node_exporter usually runs as another user; soakd's UMask is 0077. */
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
		r = -errno;
		snprintf(why, whylen, "cannot write %s beside %s: %s", tmp, path, strerror(errno));
		close(fd);
		goto fail;
	}
	errno = 0;
	r = export_prom_format(s, f);
	if (fflush(f) != 0 || r < 0) {
		r = errno ? -errno : -EIO;
		snprintf(why, whylen, "cannot write %s beside %s: %s", tmp, path, strerror(-r));
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		r = -errno;
		snprintf(why, whylen, "cannot write %s beside %s: %s", tmp, path, strerror(errno));
		goto fail;
	}
	if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
		r = -errno;
		snprintf(why, whylen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	unlinkat(dir_fd, tmp, 0);
	return r;
}

int export_prom_write(const char *path, const struct export_snapshot *s, char *why,
		      size_t whylen)
{
	int dir_fd = export_prom_dir_open(path, why, whylen);

	if (dir_fd < 0)
		return dir_fd;
	int r = export_prom_write_at(dir_fd, path, s, why, whylen);
	close(dir_fd);
	return r;
}
