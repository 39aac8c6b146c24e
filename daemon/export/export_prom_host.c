// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's last interval (daemon/host's record) as Prometheus gauges:
 * soakd_host_cpu_percent{mode}, soakd_host_pressure_percent{resource,kind},
 * soakd_host_memory_bytes{kind}, soakd_host_disk_*{device},
 * soakd_host_network_bytes_per_second{interface,direction},
 * soakd_host_tcp_retransmits (segments in the interval) and
 * soakd_host_nvme_*{device}.  Percentages stay percentages, as the run log
 * and the report give them, and say so in their names.  Drift alarms'
 * soakd_drift{workload,op,metric} (daemon/drift) are here too: like the
 * host's, a gauge of a JSON object the run keeps.
 */
#include "export.h"

#include <errno.h>
#include <string.h>

static void put_escaped(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void gauge_header(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void sample(FILE *out, const char *name, const char *run, const char *label,
		   const char *value, const char *label2, const char *value2, json_t *v)
{
	fprintf(out, "%s{run=\"", name);
	put_escaped(out, run);
	fprintf(out, "\",%s=\"", label);
	put_escaped(out, value);
	if (label2) {
		fprintf(out, "\",%s=\"", label2);
		put_escaped(out, value2);
	}
	fprintf(out, "\"} %.17g\n", json_number_value(v));
}

/* One gauge over the fields of a section, labelled by field (map gives
 * each field's label value, NULL-terminated pairs). */
static void section(FILE *out, const char *run, json_t *sec, const char *name, const char *help,
		    const char *label, const char *const *map, const char *label2)
{
	bool any = false;

	for (size_t i = 0; map[i]; i += label2 ? 3 : 2) {
		json_t *v = json_object_get(sec, map[i]);
		if (!json_is_number(v))
			continue;
		if (!any)
			gauge_header(out, name, help);
		any = true;
		sample(out, name, run, label, map[i + 1], label2, label2 ? map[i + 2] : NULL, v);
	}
}

/* One gauge of a field of every device (or interface) of a section. */
static void per_name(FILE *out, const char *run, json_t *sec, const char *field, const char *name,
		     const char *help, const char *label, const char *label2, const char *value2)
{
	const char *key;
	json_t *dev;
	bool any = false;

	json_object_foreach(sec, key, dev) {
		json_t *v = json_object_get(dev, field);
		if (!json_is_number(v))
			continue;
		if (!any && (!label2 || strcmp(value2, "read") == 0 || strcmp(value2, "rx") == 0 ||
			     !json_object_size(sec)))
			gauge_header(out, name, help);
		any = true;
		sample(out, name, run, label, key, label2, value2, v);
	}
}

int export_prom_host(FILE *out, const char *run, json_t *host)
{
	static const char *const cpu[] = { "user", "user", "system", "system", "iowait", "iowait",
					   "steal", "steal", "soakd", "soakd", NULL };
	static const char *const psi[] = { "cpu_some", "cpu", "some", "mem_some", "memory", "some",
					   "mem_full", "memory", "full", "io_some", "io", "some",
					   "io_full", "io", "full", NULL };
	static const char *const mem[] = { "available_bytes", "available", "used_bytes", "used",
					   NULL };
	static const char *const tcp[] = { "retrans", "retransmitted", NULL };

	if (!json_is_object(host))
		return 0;
	section(out, run, json_object_get(host, "cpu"), "soakd_host_cpu_percent",
		"Share of all CPUs' time in the last host interval, by mode; soakd is soakd's own.",
		"mode", cpu, NULL);
	section(out, run, json_object_get(host, "psi"), "soakd_host_pressure_percent",
		"Share of the last host interval that tasks stalled on the resource (PSI).",
		"resource", psi, "kind");
	section(out, run, json_object_get(host, "mem"), "soakd_host_memory_bytes",
		"Memory available, and used (total less available), at the last host interval.",
		"kind", mem, NULL);
	section(out, run, json_object_get(host, "tcp"), "soakd_host_tcp_segments",
		"TCP segments retransmitted by the host in the last host interval.", "kind", tcp,
		NULL);
	json_t *disks = json_object_get(host, "disks");
	per_name(out, run, disks, "util_pct", "soakd_host_disk_utilisation_percent",
		 "Share of the last host interval a target's device had I/O in flight.", "device",
		 NULL, NULL);
	per_name(out, run, disks, "queue_depth", "soakd_host_disk_queue_depth",
		 "Average I/O in flight on a target's device in the last host interval.", "device",
		 NULL, NULL);
	per_name(out, run, disks, "read_Bps", "soakd_host_disk_bytes_per_second",
		 "Bytes per second a target's device read or wrote in the last host interval.",
		 "device", "direction", "read");
	per_name(out, run, disks, "write_Bps", "soakd_host_disk_bytes_per_second", NULL, "device",
		 "direction", "write");
	json_t *net = json_object_get(host, "net");
	per_name(out, run, net, "rx_Bps", "soakd_host_network_bytes_per_second",
		 "Bytes per second an interface received or sent in the last host interval.",
		 "interface", "direction", "rx");
	per_name(out, run, net, "tx_Bps", "soakd_host_network_bytes_per_second", NULL,
		 "interface", "direction", "tx");
	json_t *nvme = json_object_get(host, "nvme");
	per_name(out, run, nvme, "temp_c", "soakd_host_nvme_temperature_celsius",
		 "An NVMe drive's composite temperature (SMART log).", "device", NULL, NULL);
	per_name(out, run, nvme, "media_errors", "soakd_host_nvme_media_errors",
		 "An NVMe drive's media and data integrity errors (SMART log).", "device", NULL,
		 NULL);
	per_name(out, run, nvme, "pct_used", "soakd_host_nvme_used_percent",
		 "An NVMe drive's estimate of its life used (SMART log).", "device", NULL, NULL);
	return ferror(out) ? -EIO : 0;
}

int export_prom_drift(FILE *out, const char *run, json_t *drift)
{
	const char *wname, *oname, *mname;
	json_t *ops, *metrics, *v;
	bool any = false;

	json_object_foreach(drift, wname, ops)
		json_object_foreach(ops, oname, metrics)
			json_object_foreach(metrics, mname, v) {
				if (!any)
					gauge_header(out, "soakd_drift",
						     "1 while a drift alarm is on: the metric of the "
						     "op changed from its reference window.");
				any = true;
				fputs("soakd_drift{run=\"", out);
				put_escaped(out, run);
				fputs("\",workload=\"", out);
				put_escaped(out, wname);
				fputs("\",op=\"", out);
				put_escaped(out, oname);
				fputs("\",metric=\"", out);
				put_escaped(out, mname);
				fprintf(out, "\"} %d\n", json_integer_value(v) ? 1 : 0);
			}
	return ferror(out) ? -EIO : 0;
}

/* One counter for every endpoint of every workload's pool: what is at key
 * in its last "endpoints" entry. */
static void endpoint_counter(FILE *out, const char *run, json_t *eps, const char *name,
			     const char *help, const char *key)
{
	const char *wname, *url;
	json_t *pool, *e;
	bool any = false;

	json_object_foreach(eps, wname, pool)
		json_object_foreach(pool, url, e) {
			json_t *v = json_object_get(e, key);
			if (!json_is_number(v))
				continue;
			if (!any)
				fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
			any = true;
			fprintf(out, "%s{run=\"", name);
			put_escaped(out, run);
			fputs("\",workload=\"", out);
			put_escaped(out, wname);
			fputs("\",endpoint=\"", out);
			put_escaped(out, url);
			fprintf(out, "\"} %.17g\n", json_number_value(v));
		}
}

/* One sample of soakd_endpoint_latency_seconds: name, its labels, then
 * extra (a quantile's) and the value. */
static void endpoint_sample(FILE *out, const char *name, const char *run, const char *wname,
			    const char *url, const char *extra, double v)
{
	fprintf(out, "%s{run=\"", name);
	put_escaped(out, run);
	fputs("\",workload=\"", out);
	put_escaped(out, wname);
	fputs("\",endpoint=\"", out);
	put_escaped(out, url);
	fprintf(out, "\"%s} %.17g\n", extra, v);
}

/*
 * An endpoint's latency as soakd_latency_seconds is exposed: a summary
 * whose quantiles (0.5, 0.99, 1 = max) are the last interval's, with _sum
 * and _count since the run started (every request completed at the
 * endpoint, failed or not), so rate(_sum)/rate(_count) is a mean.  An
 * interval without requests has no quantiles; a record from before
 * total_latency_us has no _sum.
 */
static void endpoint_latency(FILE *out, const char *run, json_t *eps)
{
	static const char *const name = "soakd_endpoint_latency_seconds";
	static const struct { const char *key, *q; } quantiles[] = {
		{ "p50", "0.5" }, { "p99", "0.99" }, { "max", "1" },
	};
	const char *wname, *url;
	json_t *pool, *e;
	bool any = false;

	json_object_foreach(eps, wname, pool)
		json_object_foreach(pool, url, e) {
			json_t *lat = json_object_get(e, "latency_us");
			json_t *sum = json_object_get(e, "total_latency_us");
			json_t *count = json_object_get(e, "total_ops");
			json_t *ops = json_object_get(e, "ops");
			bool has_q = json_is_integer(ops) && json_integer_value(ops) > 0 &&
				     json_is_object(lat);
			if (!has_q && !json_is_integer(sum) && !json_is_integer(count))
				continue;
			if (!any)
				fprintf(out, "# HELP %s Submit-to-completion time of an endpoint's "
					"requests: quantiles of the last interval (1 is the maximum), "
					"sum and count since the run started.\n# TYPE %s summary\n",
					name, name);
			any = true;
			for (size_t q = 0; has_q && q < sizeof(quantiles) / sizeof(quantiles[0]); q++) {
				json_t *v = json_object_get(lat, quantiles[q].key);
				char extra[32];
				if (!json_is_number(v))
					continue;
				snprintf(extra, sizeof(extra), ",quantile=\"%s\"", quantiles[q].q);
				endpoint_sample(out, name, run, wname, url, extra,
						json_number_value(v) * 1e-6);
			}
			if (json_is_integer(sum))
				endpoint_sample(out, "soakd_endpoint_latency_seconds_sum", run, wname,
						url, "", json_integer_value(sum) * 1e-6);
			if (json_is_integer(count))
				endpoint_sample(out, "soakd_endpoint_latency_seconds_count", run, wname,
						url, "", (double)json_integer_value(count));
		}
}

int export_prom_endpoints(FILE *out, const char *run, json_t *eps)
{
	if (!json_is_object(eps))
		return 0;
	endpoint_counter(out, run, eps, "soakd_endpoint_ops_total",
			 "Requests an endpoint of a pool completed since the run started.",
			 "total_ops");
	endpoint_counter(out, run, eps, "soakd_endpoint_errors_total",
			 "Requests that failed at an endpoint of a pool since the run started.",
			 "total_errors");
	endpoint_latency(out, run, eps);
	return ferror(out) ? -EIO : 0;
}
