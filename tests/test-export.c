// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/config/config_export.h"
#include "daemon/export/export.h"

static const char *const states[] = { "idle", "running", "stopping", "stopped", "finished",
				      "failed" };

static const struct export_workload workloads[] = {
	{ .name = "rand4k", .state = "running", .lag_s = 0.0125, .has_interval = true },
};

static struct export_op ops[] = {
	{ .workload = "rand4k", .op = "read", .ops_total = 7000, .errors_total = 2,
	  .bytes_total = 28672000, .missed_total = 5, .pending = 3,
	  .latency_sum_ns = 6998 * UINT64_C(250000),
	  .latency_count = 6998, .has_interval = true, .interval_end_ns = UINT64_C(10000000000), .interval_s = 1,
	  .count = 700, .errors = 1, .bytes = 2867200, .rate = 700, .rate_target = 700,
	  .min_ns = 100000, .p50_ns = 250000, .p90_ns = 400000, .p99_ns = 1200000, .p999_ns = 2500000,
	  .max_ns = 3000000, .issue_sum_ns = 7000 * UINT64_C(2000), .issue_count_total = 7000,
	  .issue_count = 700, .issue_p50_ns = 1500, .issue_p99_ns = 18000, .issue_max_ns = 250000 },
	{ .workload = "rand4k", .op = "write", .ops_total = 3000, .bytes_total = 12288000,
	  .has_interval = true, .interval_end_ns = UINT64_C(10000000000), .interval_s = 1,
	  .count = 0, .rate = 0, .rate_target = 300, .issue_sum_ns = 3000 * UINT64_C(1000),
	  .issue_count_total = 3000 },
	{ .workload = "rand4k", .op = "read", .target = "/dev/loop0 \"a\"\\b\nc",
	  .ops_total = 3500, .errors_total = 1, .bytes_total = 14336000 },
};

static struct export_snapshot snapshot(void)
{
	return (struct export_snapshot){
		.run = "demo", .start_time_s = 1748779200.5, .elapsed_s = 10,
		.workloads = workloads, .n_workloads = 1, .ops = ops, .n_ops = 3,
		.states = states, .n_states = 6,
	};
}

static char *prom_text(const struct export_snapshot *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(export_prom_format(s, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void expect_line(const char *text, const char *line)
{
	char *needle;
	assert_true(asprintf(&needle, "\n%s\n", line) > 0);
	if (!strstr(text, needle))
		fail_msg("missing line: %s\n--- in ---\n%s", line, text);
	free(needle);
}

static bool valid_metric_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
		      (i > 0 && c >= '0' && c <= '9')))
			return false;
	}
	return n > 0;
}

/* The exposition format as node_exporter's parser reads it: each family's
 * HELP and TYPE once, before its samples; a sample is name{labels} value,
 * no timestamp; counters end in _total; a summary's family also holds its
 * _sum and _count.  (The integration test runs promtool on a real file.) */
static void check_exposition(char *text)
{
	char typed[64][96], type_of[64][16];
	size_t n_typed = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0)
			continue;
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char name[96], type[16];
			assert_int_equal(sscanf(line, "# TYPE %95s %15s", name, type), 2);
			for (size_t i = 0; i < n_typed; i++)
				if (strcmp(typed[i], name) == 0)
					fail_msg("TYPE of %s given twice", name);
			assert_true(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
				    strcmp(type, "summary") == 0);
			if (strcmp(type, "counter") == 0 && !strstr(name, "_total"))
				fail_msg("counter %s does not end in _total", name);
			assert_true(n_typed < 64);
			strcpy(typed[n_typed], name);
			strcpy(type_of[n_typed++], type);
			continue;
		}
		assert_true(line[0] != '#');
		size_t n = strcspn(line, "{ ");
		assert_true(valid_metric_name(line, n));
		assert_true(n_typed > 0);
		/* A summary's samples are NAME{quantile}, NAME_sum and NAME_count. */
		size_t family = strlen(typed[n_typed - 1]);
		bool summary = strcmp(type_of[n_typed - 1], "summary") == 0;
		if (strncmp(line, typed[n_typed - 1], family) != 0 ||
		    !(n == family || (summary && ((n == family + 4 &&
						    strncmp(line + family, "_sum", 4) == 0) ||
						   (n == family + 6 &&
						    strncmp(line + family, "_count", 6) == 0)))))
			fail_msg("sample %s is not under its TYPE line", line);
		char *rest = line + n;
		if (*rest == '{') {
			/* Skip quoted label values, which may hold '}' or spaces. */
			bool quoted = false;
			for (rest++; *rest && (quoted || *rest != '}'); rest++) {
				if (*rest == '\\' && quoted)
					rest++;
				else if (*rest == '"')
					quoted = !quoted;
			}
			assert_int_equal(*rest, '}');
			rest++;
		}
		assert_int_equal(*rest, ' ');
		char *end;
		strtod(rest + 1, &end);
		if (end == rest + 1 || *end)
			fail_msg("sample value with a timestamp or not a number: %s", line);
	}
}

static void test_prom_lines(void **state)
{
	(void)state;
	struct export_snapshot s = snapshot();
	char *text = prom_text(&s);

	expect_line(text, "# TYPE soakd_ops_total counter");
	expect_line(text, "soakd_ops_total{run=\"demo\",workload=\"rand4k\",op=\"read\"} 7000");
	expect_line(text, "soakd_errors_total{run=\"demo\",workload=\"rand4k\",op=\"read\"} 2");
	expect_line(text, "soakd_missed_total{run=\"demo\",workload=\"rand4k\",op=\"read\"} 5");
	expect_line(text, "soakd_pending{run=\"demo\",workload=\"rand4k\",op=\"read\"} 3");
	expect_line(text, "soakd_bytes_total{run=\"demo\",workload=\"rand4k\",op=\"write\"} 12288000");
	expect_line(text, "# TYPE soakd_rate_ops_per_second gauge");
	expect_line(text, "soakd_rate_ops_per_second{run=\"demo\",workload=\"rand4k\",op=\"read\"} 700");
	expect_line(text, "soakd_rate_scheduled_ops_per_second{run=\"demo\",workload=\"rand4k\",op=\"write\"} 300");
	expect_line(text, "# TYPE soakd_latency_seconds summary");
	expect_line(text, "soakd_latency_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"0.5\"} 0.00025");
	expect_line(text, "soakd_latency_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"0.99\"} 0.0012");
	expect_line(text, "soakd_latency_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"0.999\"} 0.0025");
	expect_line(text, "soakd_latency_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"1\"} 0.003");
	expect_line(text, "soakd_lag_seconds{run=\"demo\",workload=\"rand4k\"} 0.0125");
	expect_line(text, "soakd_generator_late{run=\"demo\",workload=\"rand4k\"} 0");
	expect_line(text, "soakd_workload_state{run=\"demo\",workload=\"rand4k\",state=\"running\"} 1");
	expect_line(text, "soakd_workload_state{run=\"demo\",workload=\"rand4k\",state=\"failed\"} 0");
	expect_line(text, "soakd_run_start_time_seconds{run=\"demo\"} 1748779200.5");
	/* Label values escaped as the format says. */
	expect_line(text, "soakd_target_ops_total{run=\"demo\",workload=\"rand4k\",op=\"read\","
			  "target=\"/dev/loop0 \\\"a\\\"\\\\b\\nc\"} 3500");
	/* The summary's sum and count run from the start of the run. */
	expect_line(text, "soakd_latency_seconds_sum{run=\"demo\",workload=\"rand4k\",op=\"read\"} 1.7495");
	expect_line(text, "soakd_latency_seconds_count{run=\"demo\",workload=\"rand4k\",op=\"read\"} 6998");
	expect_line(text, "soakd_latency_seconds_count{run=\"demo\",workload=\"rand4k\",op=\"write\"} 0");
	/* soakd's own lateness: quantiles of the interval's issued ops, none
	 * for an op it issued none of; sum and count since the start. */
	expect_line(text, "# TYPE soakd_issue_delay_seconds summary");
	expect_line(text, "soakd_issue_delay_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"0.5\"} 1.5e-06");
	expect_line(text, "soakd_issue_delay_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"0.99\"} 1.8e-05");
	expect_line(text, "soakd_issue_delay_seconds{run=\"demo\",workload=\"rand4k\",op=\"read\",quantile=\"1\"} 0.00025");
	expect_line(text, "soakd_issue_delay_seconds_sum{run=\"demo\",workload=\"rand4k\",op=\"read\"} 0.014");
	expect_line(text, "soakd_issue_delay_seconds_count{run=\"demo\",workload=\"rand4k\",op=\"read\"} 7000");
	expect_line(text, "soakd_issue_delay_seconds_count{run=\"demo\",workload=\"rand4k\",op=\"write\"} 3000");
	assert_null(strstr(text, "soakd_issue_delay_seconds{run=\"demo\",workload=\"rand4k\",op=\"write\""));
	/* An interval without writes has no write quantiles. */
	assert_null(strstr(text, "op=\"write\",quantile"));
	/* Targets only in their own families, so sums do not count twice. */
	assert_null(strstr(text, "soakd_ops_total{run=\"demo\",workload=\"rand4k\",op=\"read\",target"));
	check_exposition(text);
	free(text);
}

/* The host's last record and the drift alarms as gauges (issue 18). */
static void test_prom_host_and_drift(void **state)
{
	(void)state;
	struct export_snapshot s = snapshot();
	s.host = json_loads("{\"type\": \"host\", \"cpu\": {\"user\": 12.5, \"system\": 3, "
			    "\"iowait\": 40, \"steal\": 0, \"soakd\": 1.25}, \"psi\": {\"io_some\": 25, "
			    "\"io_full\": 10}, \"mem\": {\"available_bytes\": 1024, \"used_bytes\": 2048}, "
			    "\"disks\": {\"loop3\": {\"util_pct\": 50, \"queue_depth\": 1.5, "
			    "\"read_Bps\": 4096, \"write_Bps\": 8192}}, \"net\": {\"lo\": {\"rx_Bps\": 10, "
			    "\"tx_Bps\": 20}}, \"tcp\": {\"retrans\": 7}, \"nvme\": {\"nvme0n1\": "
			    "{\"temp_c\": 40, \"media_errors\": 2, \"pct_used\": 3}}}", 0, NULL);
	s.drift = json_loads("{\"rand4k\": {\"read\": {\"p99\": 1, \"throughput\": 0}}}", 0, NULL);
	assert_non_null(s.host);
	assert_non_null(s.drift);
	char *text = prom_text(&s);

	expect_line(text, "# TYPE soakd_host_cpu_percent gauge");
	expect_line(text, "soakd_host_cpu_percent{run=\"demo\",mode=\"iowait\"} 40");
	expect_line(text, "soakd_host_cpu_percent{run=\"demo\",mode=\"soakd\"} 1.25");
	expect_line(text, "soakd_host_pressure_percent{run=\"demo\",resource=\"io\",kind=\"full\"} 10");
	expect_line(text, "soakd_host_memory_bytes{run=\"demo\",kind=\"used\"} 2048");
	expect_line(text, "soakd_host_disk_utilisation_percent{run=\"demo\",device=\"loop3\"} 50");
	expect_line(text, "soakd_host_disk_queue_depth{run=\"demo\",device=\"loop3\"} 1.5");
	expect_line(text, "soakd_host_disk_bytes_per_second{run=\"demo\",device=\"loop3\","
			  "direction=\"write\"} 8192");
	expect_line(text, "soakd_host_network_bytes_per_second{run=\"demo\",interface=\"lo\","
			  "direction=\"tx\"} 20");
	expect_line(text, "soakd_host_tcp_segments{run=\"demo\",kind=\"retransmitted\"} 7");
	expect_line(text, "soakd_host_nvme_temperature_celsius{run=\"demo\",device=\"nvme0n1\"} 40");
	expect_line(text, "soakd_drift{run=\"demo\",workload=\"rand4k\",op=\"read\",metric=\"p99\"} 1");
	expect_line(text, "soakd_drift{run=\"demo\",workload=\"rand4k\",op=\"read\","
			  "metric=\"throughput\"} 0");
	/* One HELP and TYPE per family, whatever the number of devices. */
	char *first = strstr(text, "# TYPE soakd_host_disk_bytes_per_second gauge");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# TYPE soakd_host_disk_bytes_per_second gauge"));
	check_exposition(text);
	free(text);
	json_decref(s.host);
	json_decref(s.drift);
}

static void test_prom_before_first_interval(void **state)
{
	(void)state;
	struct export_op fresh[] = { { .workload = "w", .op = "read" } };
	struct export_workload w = { .name = "w", .state = "idle" };
	struct export_snapshot s = { .run = "r", .workloads = &w, .n_workloads = 1, .ops = fresh,
				     .n_ops = 1, .states = states, .n_states = 6 };
	char *text = prom_text(&s);
	expect_line(text, "soakd_ops_total{run=\"r\",workload=\"w\",op=\"read\"} 0");
	assert_null(strstr(text, "soakd_rate_ops_per_second"));
	/* A summary with no observations yet: count 0, no quantiles. */
	expect_line(text, "soakd_latency_seconds_count{run=\"r\",workload=\"w\",op=\"read\"} 0");
	assert_null(strstr(text, "quantile="));
	assert_null(strstr(text, "soakd_lag_seconds"));
	assert_null(strstr(text, "soakd_target_"));
	check_exposition(text);
	free(text);
}

static size_t files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_prom_write_atomic(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-export.XXXXXX", path[256], why[512];
	struct export_snapshot s = snapshot();
	struct stat st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/soakd.prom", dir);
	umask(0077);
	assert_int_equal(export_prom_write(path, &s, why, sizeof(why)), 0);
	ops[0].ops_total = 7100;
	assert_int_equal(export_prom_write(path, &s, why, sizeof(why)), 0);
	ops[0].ops_total = 7000;
	assert_int_equal(stat(path, &st), 0);
	/* node_exporter runs as its own user. */
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(files_in(dir), 1);
	FILE *f = fopen(path, "r");
	char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "soakd_ops_total{run=\"demo\",workload=\"rand4k\",op=\"read\"} 7100\n"));
	unlink(path);

	/* A directory that is not there: an error saying where, nothing left. */
	snprintf(path, sizeof(path), "%s/missing/soakd.prom", dir);
	assert_int_equal(export_prom_write(path, &s, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, path));
	assert_int_equal(files_in(dir), 0);
	rmdir(dir);
}

/* The directory is held: swapped for a symlink after it was opened, the
 * writes still land in it, not where the link points. */
static void test_prom_dir_held(void **state)
{
	(void)state;
	char base[] = "/tmp/test-export.XXXXXX", dir[300], moved[300], other[300], path[400],
	     why[512];
	struct export_snapshot s = snapshot();
	struct stat st;

	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/textfiles", base);
	snprintf(moved, sizeof(moved), "%s/moved", base);
	snprintf(other, sizeof(other), "%s/elsewhere", base);
	snprintf(path, sizeof(path), "%s/soakd.prom", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	int fd = export_prom_dir_open(path, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(rename(dir, moved), 0);
	assert_int_equal(symlink(other, dir), 0);
	assert_int_equal(export_prom_write_at(fd, path, &s, why, sizeof(why)), 0);
	close(fd);
	assert_int_equal(files_in(other), 0);
	assert_int_equal(files_in(moved), 1);
	snprintf(path, sizeof(path), "%s/soakd.prom", moved);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(dir), 0);
	assert_int_equal(rmdir(moved), 0);
	assert_int_equal(rmdir(other), 0);
	assert_int_equal(rmdir(base), 0);
}

static void test_statsd_lines(void **state)
{
	(void)state;
	struct export_delta d = { .ops = 700, .errors = 1, .bytes = 2867200, .missed = 2,
				  .latency_sum_ns = 699 * UINT64_C(300000), .latency_count = 699 };
	char buf[2048];
	size_t n = export_statsd_format_op(buf, sizeof(buf), "soakd.host1", &ops[0], &d);
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf,
		"soakd.host1.rand4k.read.count:700|c\n"
		"soakd.host1.rand4k.read.error:1|c\n"
		"soakd.host1.rand4k.read.missed:2|c\n"
		"soakd.host1.rand4k.read.pending:3|g\n"
		"soakd.host1.rand4k.read.throughput:2867200|g\n"
		"soakd.host1.rand4k.read.rate:700.000|g\n"
		"soakd.host1.rand4k.read.rate_target:700.000|g\n"
		"soakd.host1.rand4k.read.issue_delay.p99:0.018000|g\n"
		"soakd.host1.rand4k.read.issue_delay.max:0.250000|g\n"
		"soakd.host1.rand4k.read.latency:0.300000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.minlatency:0.100000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.maxlatency:3.000000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.latency.p50:0.250000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.latency.p90:0.400000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.latency.p99:1.200000|ms|@0.001430615\n"
		"soakd.host1.rand4k.read.latency.p999:2.500000|ms|@0.001430615\n");

	/* One success: no sample rate (1 is the default). */
	d = (struct export_delta){ .ops = 1, .latency_sum_ns = 500000, .latency_count = 1 };
	export_statsd_format_op(buf, sizeof(buf), "s", &ops[0], &d);
	assert_non_null(strstr(buf, "\ns.rand4k.read.latency:0.500000|ms\n"));
	assert_null(strstr(buf, "|@"));

	/* Latencies to the ns: a 42.457 us minimum is not sent as 0.042 ms,
	 * under the minimum the run measured. */
	struct export_op fast = ops[0];
	fast.min_ns = 42457;
	fast.issue_p99_ns = 12345;
	export_statsd_format_op(buf, sizeof(buf), "s", &fast, &d);
	assert_non_null(strstr(buf, "\ns.rand4k.read.minlatency:0.042457|ms\n"));
	assert_non_null(strstr(buf, "\ns.rand4k.read.issue_delay.p99:0.012345|g\n"));

	/* Only failures since the last send: no timers. */
	d = (struct export_delta){ .ops = 3, .errors = 3 };
	export_statsd_format_op(buf, sizeof(buf), "s", &ops[0], &d);
	assert_null(strstr(buf, "|ms"));

	/* A stalled device: nothing completed, 5 ops missed after 2 s each.
	 * Their waits are the latency a dashboard must show. */
	struct export_op stalled = ops[0];
	stalled.count = 0;
	d = (struct export_delta){ .missed = 5, .latency_sum_ns = 5 * UINT64_C(2000000000),
				   .latency_count = 5 };
	export_statsd_format_op(buf, sizeof(buf), "s", &stalled, &d);
	assert_non_null(strstr(buf, "\ns.rand4k.read.latency:2000.000000|ms|@0.2\n"));

	/* A million ops: 1/S is a million to 10^-6. */
	d = (struct export_delta){ .ops = 1000003, .latency_sum_ns = 1000003, .latency_count = 1000003 };
	export_statsd_format_op(buf, sizeof(buf), "s", &ops[0], &d);
	const char *at = strstr(buf, "|@");
	assert_non_null(at);
	assert_true(fabs(1.0 / strtod(at + 2, NULL) - 1000003.0) < 1e-3);
	assert_int_equal(strspn(at + 2, "0123456789."), strcspn(at + 2, "\n"));

	/* The end of a workload: its gauges at 0. */
	export_statsd_format_op_end(buf, sizeof(buf), "s", &ops[0]);
	assert_string_equal(buf, "s.rand4k.read.throughput:0|g\n"
				 "s.rand4k.read.rate:0|g\n"
				 "s.rand4k.read.rate_target:0|g\n"
				 "s.rand4k.read.pending:0|g\n"
				 "s.rand4k.read.issue_delay.p99:0|g\n"
				 "s.rand4k.read.issue_delay.max:0|g\n");
	export_statsd_format_workload_end(buf, sizeof(buf), "s", &workloads[0]);
	assert_string_equal(buf, "s.rand4k.lag:0|g\ns.rand4k.generator_late:0|g\n");

	/* No ops in the interval: counters and rates, no latency. */
	d = (struct export_delta){ 0 };
	export_statsd_format_op(buf, sizeof(buf), "soakd", &ops[1], &d);
	assert_string_equal(buf,
		"soakd.rand4k.write.count:0|c\n"
		"soakd.rand4k.write.error:0|c\n"
		"soakd.rand4k.write.missed:0|c\n"
		"soakd.rand4k.write.pending:0|g\n"
		"soakd.rand4k.write.throughput:0|g\n"
		"soakd.rand4k.write.rate:0.000|g\n"
		"soakd.rand4k.write.rate_target:300.000|g\n");

	/* Too small a buffer: the length needed. */
	char small[16];
	d = (struct export_delta){ .ops = 1 };
	n = export_statsd_format_op(small, sizeof(small), "soakd", &ops[0], &d);
	assert_true(n > sizeof(small));

	export_statsd_format_workload(buf, sizeof(buf), "soakd", &workloads[0]);
	assert_string_equal(buf, "soakd.rand4k.lag:12.500|g\nsoakd.rand4k.generator_late:0|g\n");
}

/* Device workloads with "verify": a counter per class, per workload and
 * per target, in Prometheus and StatsD (issue 15). */
static void test_verify_counts(void **state)
{
	(void)state;
	struct export_op vops[2] = { ops[1], ops[2] };
	for (size_t i = 0; i < 2; i++) {
		vops[i].has_dev_verify = true;
		vops[i].dev_verify_total[OP_VERIFY_CHECKED] = 1000 + i;
		vops[i].dev_verify_total[OP_VERIFY_STALE] = 2 + i;
	}
	struct export_snapshot s = snapshot();
	s.ops = vops;
	s.n_ops = 2;
	char *text = prom_text(&s);
	expect_line(text, "# TYPE soakd_verify_total counter");
	expect_line(text, "soakd_verify_total{run=\"demo\",workload=\"rand4k\",op=\"write\","
			  "class=\"checked\"} 1000");
	expect_line(text, "soakd_verify_total{run=\"demo\",workload=\"rand4k\",op=\"write\","
			  "class=\"stale\"} 2");
	expect_line(text, "soakd_verify_total{run=\"demo\",workload=\"rand4k\",op=\"read\","
			  "target=\"/dev/loop0 \\\"a\\\"\\\\b\\nc\",class=\"stale\"} 3");
	free(text);
	/* Without "verify": no such series. */
	s = snapshot();
	text = prom_text(&s);
	assert_null(strstr(text, "soakd_verify_total"));
	free(text);

	struct export_delta d = { .ops = 10 };
	d.dev_verify[OP_VERIFY_CHECKED] = 12;
	d.dev_verify[OP_VERIFY_TORN] = 1;
	char buf[2048];
	export_statsd_format_op(buf, sizeof(buf), "s", &vops[0], &d);
	assert_non_null(strstr(buf, "s.rand4k.write.verify.checked:12|c\n"));
	assert_non_null(strstr(buf, "s.rand4k.write.verify.torn:1|c\n"));
	assert_non_null(strstr(buf, "s.rand4k.write.verify.unchecked:0|c\n"));
	export_statsd_format_op(buf, sizeof(buf), "s", &ops[0], &d);
	assert_null(strstr(buf, ".verify."));
}

static void test_statsd_names(void **state)
{
	(void)state;
	char out[64];
	export_statsd_name("GET", out, sizeof(out));
	assert_string_equal(out, "get");
	export_statsd_name("large_block.read:x|y@z", out, sizeof(out));
	assert_string_equal(out, "large_block_read_x_y_z");
	export_statsd_name("a-b", out, 3);
	assert_string_equal(out, "a-");
}

/* --- configuration ---------------------------------------------------- */

static int load(const char *run, struct run_config **ret, char **ret_errors)
{
	char *text, *errors = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&errors, &len);
	assert_true(asprintf(&text, "{\"run\": %s,\n\"workloads\": [{\"name\": \"w\", \"type\": "
				    "\"device\", \"targets\": [\"/tmp/x.dat\"]}]}", run) > 0);
	int r = config_load_string(text, "t.json", f, ret);
	fclose(f);
	free(text);
	*ret_errors = errors;
	return r;
}

static void expect_error(const char *run, const char *where, const char *needle)
{
	struct run_config *c = NULL;
	char *errors;
	int r = load(run, &c, &errors);
	if (r == 0 || !strstr(errors, where) || !strstr(errors, needle))
		fail_msg("expected '%s' ... '%s', got r=%d: %s", where, needle, r, errors);
	free(errors);
}

static void test_config(void **state)
{
	(void)state;
	struct run_config *c = NULL;
	char *errors;

	assert_int_equal(load("{\"exports\": {\"prometheus\": {\"textfile\": \"/var/lib/prometheus/"
			      "node-exporter/soakd.prom\"}, \"statsd\": {\"address\": \"127.0.0.1:8125\","
			      " \"prefix\": \"soakd.{host}\"}}, \"start_at\": \"2030-01-01T00:00:00Z\"}",
			      &c, &errors), 0);
	assert_string_equal(errors, "");
	assert_string_equal(c->exports.prom_textfile, "/var/lib/prometheus/node-exporter/soakd.prom");
	assert_string_equal(c->exports.statsd_address, "127.0.0.1:8125");
	assert_string_equal(c->exports.statsd_prefix, "soakd.{host}");
	assert_int_equal(c->start_at_ns, INT64_C(1893456000) * 1000000000);
	config_free(c);
	free(errors);

	assert_int_equal(load("{\"exports\": {}}", &c, &errors), 0);
	assert_null(c->exports.prom_textfile);
	assert_null(c->exports.statsd_address);
	assert_int_equal(c->start_at_ns, 0);
	config_free(c);
	free(errors);

	expect_error("{\"exports\": {\"prometheus\": {\"textfile\": \"/tmp/soakd.txt\"}}}",
		     "t.json:1:49:", "must end in .prom");
	expect_error("{\"exports\": {\"prometheus\": {}}}", "t.json:1:36:", "needs \"textfile\"");
	expect_error("{\"exports\": {\"statsd\": {\"address\": \"localhost\"}}}", "t.json:1:44:",
		     "HOST:PORT");
	expect_error("{\"exports\": {\"statsd\": {\"address\": \"h:99999\"}}}", "t.json:1:44:",
		     "port");
	expect_error("{\"exports\": {\"statsd\": {\"address\": \"h:1\", \"prefix\": \"a..b\"}}}",
		     "t.json:1:61:", "\"prefix\"");
	expect_error("{\"exports\": {\"graphite\": {}}}", "t.json:1:", "graphite");
	expect_error("{\"exports\": []}", "t.json:1:21:", "\"exports\" must be");
	expect_error("{\n  \"start_at\": \"2030-01-01T00:00:00\"}", "t.json:2:15:", "time zone");
	expect_error("{\"start_at\": \"2030-02-30T00:00:00Z\"}", "t.json:1:22:", "no such day");
	expect_error("{\"start_at\": 1893456000}", "t.json:1:22:", "string");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom_lines),
		cmocka_unit_test(test_prom_host_and_drift),
		cmocka_unit_test(test_prom_before_first_interval),
		cmocka_unit_test(test_prom_write_atomic),
		cmocka_unit_test(test_prom_dir_held),
		cmocka_unit_test(test_statsd_lines),
		cmocka_unit_test(test_statsd_names),
		cmocka_unit_test(test_verify_counts),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
