// SPDX-License-Identifier: GPL-2.0-only
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "runlog.h"

#define NS_PER_MS UINT64_C(1000000)

void report_default_options(struct report_options *o)
{
	/* ACT's standard: fewer than 5%, 1% and 0.1% of ops over 1, 8 and
	 * 64 ms in any hour. */
	*o = (struct report_options){
		.thresholds_ns = { 1 * NS_PER_MS, 8 * NS_PER_MS, 64 * NS_PER_MS },
		.limits_pct = { 5, 1, 0.1 },
		.n_thresholds = 3,
	};
}

/* Splits a comma-separated list into at most REPORT_MAX_THRESHOLDS items. */
static int split(const char *text, char items[][32], size_t *ret_n, const char **ret_why)
{
	size_t n = 0;
	const char *p = text;

	if (!text || !*text) {
		*ret_why = "empty list";
		return -EINVAL;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= 32) {
			*ret_why = len ? "list item too long" : "empty item in list";
			return -EINVAL;
		}
		if (n == REPORT_MAX_THRESHOLDS) {
			*ret_why = "more than 16 items";
			return -EINVAL;
		}
		memcpy(items[n], p, len);
		items[n++][len] = '\0';
		if (!p[len])
			break;
		p += len + 1;
	}
	*ret_n = n;
	return 0;
}

int report_parse_thresholds(const char *text, struct report_options *o, const char **ret_why)
{
	char items[REPORT_MAX_THRESHOLDS][32];
	uint64_t values[REPORT_MAX_THRESHOLDS];
	size_t n;
	int r = split(text, items, &n, ret_why);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		/* A bare number is milliseconds, as in ACT's tables. */
		char buf[40];
		size_t len = strlen(items[i]);
		bool bare = len && strspn(items[i], "0123456789.") == len;
		snprintf(buf, sizeof(buf), "%s%s", items[i], bare ? "ms" : "");
		r = parse_duration(buf, &values[i], ret_why);
		if (r < 0)
			return r;
		if (values[i] == 0) {
			*ret_why = "a threshold must be above 0";
			return -EINVAL;
		}
		if (i && values[i] <= values[i - 1]) {
			*ret_why = "thresholds must increase";
			return -EINVAL;
		}
	}
	memcpy(o->thresholds_ns, values, n * sizeof(values[0]));
	/* Limits belong to thresholds: ACT's only to ACT's. */
	bool standard = n == 3 && values[0] == NS_PER_MS && values[1] == 8 * NS_PER_MS &&
			values[2] == 64 * NS_PER_MS;
	for (size_t i = 0; i < n; i++)
		o->limits_pct[i] = standard ? (double[]){ 5, 1, 0.1 }[i] : -1;
	o->n_thresholds = n;
	return 0;
}

int report_parse_limits(const char *text, struct report_options *o, const char **ret_why)
{
	char items[REPORT_MAX_THRESHOLDS][32];
	double limits[REPORT_MAX_THRESHOLDS];
	size_t n;
	int r = split(text, items, &n, ret_why);

	if (r < 0)
		return r;
	if (n != o->n_thresholds) {
		*ret_why = "give one limit per threshold";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		char *end;
		size_t len = strlen(items[i]);
		if (items[i][len - 1] == '%')
			items[i][--len] = '\0';
		if (strcmp(items[i], "-") == 0) {
			limits[i] = -1;
			continue;
		}
		if (strspn(items[i], "0123456789.") != len || !len) {
			*ret_why = "a limit is a percentage such as 5 or 0.1, or - for none";
			return -EINVAL;
		}
		limits[i] = strtod(items[i], &end);
		if (*end || limits[i] > 100) {
			*ret_why = "a limit is a percentage between 0 and 100";
			return -EINVAL;
		}
	}
	memcpy(o->limits_pct, limits, n * sizeof(limits[0]));
	return 0;
}

double report_pct_above(const struct hist *h, uint64_t threshold_ns)
{
	if (!h->count)
		return 0;
	if (threshold_ns >= h->max)
		return 0;
	if (threshold_ns < hist_min(h))
		return 100;
	size_t b = hist_bucket_of(threshold_ns);
	uint64_t lo, hi;
	hist_bucket_range(b, &lo, &hi);
	/* Whole buckets above the one holding the threshold, plus that
	 * bucket's share above it, as if its values were spread evenly. */
	double above = (double)hist_count_above(h, hi);
	if (hist_bucket(h, b))
		above += (double)hist_bucket(h, b) * (double)(hi - threshold_ns) / (double)(hi - lo + 1);
	return 100.0 * above / (double)h->count;
}

static bool all_whole_ms(const struct report_options *o)
{
	for (size_t j = 0; j < o->n_thresholds; j++)
		if (o->thresholds_ns[j] % NS_PER_MS)
			return false;
	return true;
}

static void threshold_label(uint64_t ns, bool ms, char *buf, size_t len)
{
	if (ms)
		snprintf(buf, len, "%llu", (unsigned long long)(ns / NS_PER_MS));
	else
		snprintf(buf, len, "%g", ns / 1e3);
}

struct op_table {
	const char *name;
	bool judged;
	size_t n_slices;
	struct hist *slices;        /* merged to the report's slice length */
	double *pct;                /* [n_slices * n_thresholds] */
	double avg[REPORT_MAX_THRESHOLDS], max[REPORT_MAX_THRESHOLDS];
	/* Over the report's span: failed ops and wrong data read back
	 * (corrupt, stale, lost, ...). */
	uint64_t errors, wrong;
	/* Missed ops: judged by their wait in the latency histograms; under
	 * --service, which they have no time in, they are not judged, and
	 * no PASS is given over them (an object pool's prefill holds ops
	 * back as missed too, which is no failure of the device). */
	uint64_t missed;
	bool service;
	bool over;                  /* a slice is over a limit */
	bool pass;
};

/* A count of the reply's, 0 when absent or not a count. */
static uint64_t count_of(json_t *op, const char *key)
{
	json_t *v = json_object_get(op, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/*
 * Merges the recorded slices of one op into report slices by time: report
 * slice g holds the recorded slices that start in [g * slice_ns, (g + 1) *
 * slice_ns) of the run.  Only slices with intervals are recorded, so
 * merging by position would join hours a stopped workload or a soakd that
 * was down had left apart; a report slice nothing was recorded in stays
 * empty.  A reply without start_s (older soakd) is merged by position.
 */
static int load_op(json_t *op, const char *key, uint64_t recorded_ns, uint64_t slice_ns,
		   struct op_table *t, FILE *out)
{
	json_t *slices = json_object_get(op, "slices");
	size_t per = slice_ns && recorded_ns ? slice_ns / recorded_ns : 1;
	size_t n = json_array_size(slices), groups = 0;

	if (!json_is_array(slices) || n > REPORT_MAX_SLICES) {
		fprintf(out, "report: malformed reply: no slices for %s\n", t->name);
		return -EINVAL;
	}
	size_t *group = calloc(n ? n : 1, sizeof(*group));
	if (!group)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_t *start = json_object_get(json_array_get(slices, i), "start_s");
		double at = json_number_value(start);
		/* Under 9 * 10^9 s (three centuries), at * 1e9 fits in a long. */
		group[i] = json_is_number(start) && at >= 0 && at < 9e9 && slice_ns
			   ? (size_t)((uint64_t)llround(at * 1e9) / slice_ns) : i / per;
		if (group[i] + 1 > groups)
			groups = group[i] + 1;
	}
	if (groups > REPORT_MAX_SLICES) {
		fprintf(out, "report: malformed reply: slices of %s start too late\n", t->name);
		free(group);
		return -EINVAL;
	}
	t->n_slices = groups;
	t->slices = calloc(t->n_slices ? t->n_slices : 1, sizeof(*t->slices));
	if (!t->slices) {
		free(group);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_slices; i++)
		hist_init(&t->slices[i]);
	for (size_t i = 0; i < n; i++) {
		const char *text = json_string_value(json_object_get(json_array_get(slices, i), key));
		int r = text ? hist_merge_base64(&t->slices[group[i]], text) : -EINVAL;
		if (r < 0) {
			if (r != -ENOMEM)
				fprintf(out, "report: malformed histogram in slice %zu of %s\n", i + 1,
					t->name);
			free(group);
			return r == -ENOMEM ? r : -EINVAL;
		}
	}
	free(group);
	return 0;
}

static void judge(struct op_table *t, const struct report_options *o)
{
	size_t k = o->n_thresholds;

	t->pct = calloc(t->n_slices * k + 1, sizeof(double));
	t->pass = true;
	for (size_t j = 0; j < k; j++)
		t->avg[j] = t->max[j] = 0;
	size_t filled = 0;
	for (size_t i = 0; i < t->n_slices; i++)
		filled += t->slices[i].count > 0;
	/* The average is over the slices that hold ops: one nothing ran in
	 * says nothing of the device. */
	for (size_t i = 0; t->pct && i < t->n_slices; i++)
		for (size_t j = 0; j < k && t->slices[i].count; j++) {
			double p = report_pct_above(&t->slices[i], o->thresholds_ns[j]);
			t->pct[i * k + j] = p;
			t->avg[j] += p / (double)filled;
			if (p > t->max[j])
				t->max[j] = p;
		}
	t->over = false;
	for (size_t j = 0; j < k; j++)
		if (t->judged && report_over_limit(o, j, t->max[j]))
			t->over = true;
	/* Without the table (out of memory) nothing is shown kept. */
	if (!t->pct && t->judged)
		t->over = true;
	/* ACT stops at a device's first I/O error, and certifies nothing:
	 * failed ops of a judged op fail it, as wrong data read back by any
	 * op does.  A missed op is judged by its wait, which its latency
	 * histogram holds (ops held back by an object pool's prefill are
	 * missed too, and are no failure of the device). */
	t->pass = !(t->judged && (t->over || t->errors)) && !t->wrong;
}

size_t report_reply_slices(json_t *reply)
{
	double slice_s = json_number_value(json_object_get(reply, "slice_s"));
	size_t i, most = 0;
	json_t *w;

	json_array_foreach(json_object_get(reply, "workloads"), i, w) {
		const char *name;
		json_t *op;
		json_object_foreach(json_object_get(w, "ops"), name, op) {
			json_t *slices = json_object_get(op, "slices");
			size_t n = json_array_size(slices);
			/* By time, as load_op places them: a gap (a workload
			 * stopped for days) takes its slices too. */
			double last = json_number_value(json_object_get(json_array_get(slices,
									      n ? n - 1 : 0),
							"start_s"));
			size_t span = slice_s > 0 && last > 0 && last < 9e9
				      ? (size_t)(last / slice_s) + 1 : n;
			span = span > n ? span : n;
			most = span > most ? span : most;
		}
	}
	return most;
}

bool report_over_limit(const struct report_options *o, size_t j, double max_pct)
{
	return o->limits_pct[j] >= 0 && max_pct >= o->limits_pct[j] && max_pct > 0;
}

/* The phases around an object workload's schedule: filling its pool,
 * auditing its ledger, deleting its objects.  Their latencies are shown;
 * the schedule's ops are what a verdict is about. */
static bool setup_phase(const char *op)
{
	return strcmp(op, "prefill") == 0 || strcmp(op, "cleanup") == 0 ||
	       strcmp(op, "audit") == 0;
}

bool report_op_judged(const struct report_options *o, bool has_read, const char *op)
{
	if (o->op)
		return true;
	if (has_read)
		return strcmp(op, "read") == 0;
	return !setup_phase(op);
}

static void print_table(const char *workload, struct op_table *tables, size_t n,
			const struct report_options *o, uint64_t slice_ns, FILE *out)
{
	size_t k = o->n_thresholds;
	size_t rows = 0;
	char label[32];
	int width = (int)(k * 7);

	char slice_text[32];
	format_duration(slice_ns, slice_text, sizeof(slice_text));
	fprintf(out, "%s: %s, %s slices\n", workload,
		o->service ? "service time (from submit)" : "latency (from the intended time)",
		slice_ns ? slice_text : "recorded");
	fprintf(out, "%6s", "");
	for (size_t t = 0; t < n; t++) {
		fprintf(out, "   %-*.*s", width, width, tables[t].name);
		rows = tables[t].n_slices > rows ? tables[t].n_slices : rows;
	}
	fprintf(out, "\n%6s", "");
	for (size_t t = 0; t < n; t++)
		fprintf(out, "   %-*s", width, all_whole_ms(o) ? "%>(ms)" : "%>(us)");
	fprintf(out, "\n%6s", "slice");
	for (size_t t = 0; t < n; t++) {
		fprintf(out, "  ");
		for (size_t j = 0; j < k; j++) {
			threshold_label(o->thresholds_ns[j], all_whole_ms(o), label, sizeof(label));
			fprintf(out, " %6s", label);
		}
	}
	fprintf(out, "\n%6s", "-----");
	for (size_t t = 0; t < n; t++) {
		fprintf(out, "  ");
		for (size_t j = 0; j < k; j++)
			fprintf(out, " %6s", "------");
	}
	fputc('\n', out);
	for (size_t i = 0; i < rows; i++) {
		fprintf(out, "%6zu", i + 1);
		for (size_t t = 0; t < n; t++) {
			fprintf(out, "  ");
			for (size_t j = 0; j < k; j++)
				if (i < tables[t].n_slices && tables[t].pct && tables[t].slices[i].count)
					fprintf(out, " %6.2f", tables[t].pct[i * k + j]);
				else
					fprintf(out, " %6s", "");
		}
		fputc('\n', out);
	}
	const char *names[] = { "avg", "max" };
	for (int line = -1; line < 2; line++) {
		fprintf(out, "%6s", line < 0 ? "-----" : names[line]);
		for (size_t t = 0; t < n; t++) {
			fprintf(out, "  ");
			for (size_t j = 0; j < k; j++)
				if (line < 0)
					fprintf(out, " %6s", "------");
				else
					fprintf(out, " %6.2f", line ? tables[t].max[j] : tables[t].avg[j]);
		}
		fputc('\n', out);
	}
	fprintf(out, "%6s", "limit");
	for (size_t t = 0; t < n; t++) {
		fprintf(out, "  ");
		for (size_t j = 0; j < k; j++)
			if (tables[t].judged && o->limits_pct[j] >= 0)
				fprintf(out, " %6.2f", o->limits_pct[j]);
			else
				fprintf(out, " %6s", "-");
	}
	fputc('\n', out);
	for (size_t t = 0; t < n; t++) {
		const struct op_table *tb = &tables[t];
		if (!tb->judged && !tb->wrong)
			continue;
		fprintf(out, "%s %s: %s", workload, tb->name, tb->pass ? "PASS\n" : "FAIL (");
		if (tb->pass)
			continue;
		const char *sep = "";
		if (tb->over)
			fprintf(out, "a slice is over its limit"), sep = "; ";
		if (tb->judged && tb->errors)
			fprintf(out, "%s%" PRIu64 " failed op%s", sep, tb->errors,
				tb->errors == 1 ? "" : "s"), sep = "; ";

		if (tb->wrong)
			fprintf(out, "%swrong data read back %" PRIu64 " time%s", sep, tb->wrong,
				tb->wrong == 1 ? "" : "s");
		fputs(")\n", out);
	}
	fputc('\n', out);
}

static void free_tables(struct op_table *tables, size_t n)
{
	for (size_t t = 0; t < n; t++) {
		for (size_t i = 0; tables[t].slices && i < tables[t].n_slices; i++)
			hist_free(&tables[t].slices[i]);
		free(tables[t].slices);
		free(tables[t].pct);
	}
}

/* The intervals where soakd itself, not the device, was late (generator_late
 * in the log): flagged, and counted so the verdict cannot pass over them. */
static uint64_t flag_generator_late(const char *workload, json_t *late, FILE *out)
{
	json_int_t n = json_integer_value(json_object_get(late, "intervals"));

	if (n <= 0)
		return 0;
	fprintf(out, "%s: generator_late in %lld interval%s (soakd itself was stopped or starved, "
		"up to %.1f ms): its latencies there are not the device's\n", workload,
		(long long)n, n == 1 ? "" : "s",
		json_number_value(json_object_get(late, "max_ms")));
	return (uint64_t)n;
}

int report_print(json_t *reply, const struct report_options *o, FILE *out)
{
	json_t *workloads = json_object_get(reply, "workloads");
	double recorded_s = json_number_value(json_object_get(reply, "slice_s"));
	uint64_t recorded_ns = (uint64_t)llround(recorded_s * 1e9);
	uint64_t slice_ns = o->slice_ns ? o->slice_ns : recorded_ns;
	bool all_pass = true, any = false;
	uint64_t late = 0, unserved = 0, soakd_failed = 0;
	size_t wi;
	json_t *w;

	if (!json_is_array(workloads) || recorded_ns == 0) {
		fprintf(out, "report: malformed reply (no workloads or slice length)\n");
		return -EINVAL;
	}
	if (slice_ns % recorded_ns) {
		char a[32], b[32];
		format_duration(slice_ns, a, sizeof(a));
		format_duration(recorded_ns, b, sizeof(b));
		fprintf(out, "report: --slice %s is not a multiple of the recorded slices of %s\n",
			a, b);
		return -EDOM;
	}
	json_array_foreach(workloads, wi, w) {
		const char *name = json_string_value(json_object_get(w, "name"));
		json_t *ops = json_object_get(w, "ops");
		struct op_table tables[REPORT_MAX_OPS];
		size_t n = 0;
		const char *op_name;
		json_t *op;

		if (!name || !json_is_object(ops))
			return -EINVAL;
		if (o->workload && strcmp(o->workload, name) != 0)
			continue;
		bool has_read = json_object_get(ops, "read") != NULL;
		memset(tables, 0, sizeof(tables));
		int r = 0;
		json_object_foreach(ops, op_name, op) {
			if (n == REPORT_MAX_OPS)
				break;
			if (o->op && strcmp(o->op, op_name) != 0)
				continue;
			struct op_table *t = &tables[n++];
			t->name = op_name;
			/* ACT certifies on reads; an op asked for by name is
			 * judged whatever it is. */
			t->judged = report_op_judged(o, has_read, op_name);
			r = load_op(op, o->service ? "service" : "latency", recorded_ns, slice_ns, t,
				    out);
			if (r < 0)
				break;
			t->errors = count_of(op, "errors");
			t->wrong = count_of(op, "wrong_data");
			t->missed = count_of(op, "missed");
			t->service = o->service;
			judge(t, o);
			all_pass = all_pass && t->pass;
			if (t->pass && t->judged && t->service)
				unserved += t->missed;
		}
		/* Failed cache flushes of a verified device, of whichever op
		 * (they are the writes'): what it acknowledged may not last. */
		uint64_t flushes = 0;
		json_object_foreach(ops, op_name, op)
			flushes += count_of(op, "flush_failed");
		if (r == 0 && n) {
			print_table(name, tables, n, o, slice_ns, out);
			any = true;
			for (size_t t = 0; t < n; t++)
				report_host_flags(out, name, tables[t].name, tables[t].slices,
						  tables[t].n_slices, slice_ns / recorded_ns,
						  json_object_get(json_object_get(reply, "host"), "slices"));
		}
		free_tables(tables, n);
		if (r < 0)
			return r;
		late += flag_generator_late(name, json_object_get(w, "generator_late"), out);
		if (flushes && n) {
			fprintf(out, "%s: FAIL (%" PRIu64 " failed cache flush%s: the writes may not be "
				     "durable)\n\n", name, flushes, flushes == 1 ? "" : "es");
			all_pass = false;
		}
		/* Whatever it measured before, a workload that failed (its
		 * target gone, its prefill refused, its lag past max_lag) did
		 * not run what was asked of it; unless it failed for soakd's
		 * own lateness (this host, not the device), which its reason
		 * says: no verdict on the device then. */
		const char *state = json_string_value(json_object_get(w, "state"));
		const char *why = json_string_value(json_object_get(w, "reason"));
		if (state && strcmp(state, "failed") == 0 && n) {
			bool soakds = why && strstr(why, RUNLOG_REASON_SOAKD_LATE);
			fprintf(out, "%s: %s (%s)\n\n", name, soakds ? "failed for soakd, not the device"
							     : "FAILED", why ? why : "the workload failed");
			if (soakds)
				soakd_failed++;
			else
				all_pass = false;
		}
	}
	if (!any) {
		fprintf(out, "report: nothing to report%s%s%s%s\n", o->workload ? " for workload " : "",
			o->workload ? o->workload : "", o->op ? " and op " : "", o->op ? o->op : "");
		return -ENOENT;
	}
	/* soakd's own lateness is no measure of the device: no PASS over it. */
	if (soakd_failed && all_pass) {
		fprintf(out, "verdict: INCONCLUSIVE (a workload failed because soakd itself was "
			     "late)\n");
		return 1;
	}
	if (late && all_pass) {
		fprintf(out, "verdict: INCONCLUSIVE (soakd itself was late in %" PRIu64
			" interval%s)\n", late, late == 1 ? "" : "s");
		return 1;
	}
	if (unserved && all_pass) {
		fprintf(out, "verdict: INCONCLUSIVE (%" PRIu64 " missed op%s of the judged ops "
			     "have no service time: judge them by latency, without --service)\n",
			unserved, unserved == 1 ? "" : "s");
		return 1;
	}
	fprintf(out, "verdict: %s\n", all_pass ? "PASS" : "FAIL");
	return all_pass ? 0 : 1;
}
