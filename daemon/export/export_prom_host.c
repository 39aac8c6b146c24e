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

/* One metric for every endpoint of every workload's pool: what is at key
 * (and under key2 if given) in its last "endpoints" entry. */
static void endpoint_metric(FILE *out, const char *run, json_t *eps, const char *name,
			    const char *type, const char *help, const char *key, const char *key2,
			    const char *quantile, double scale)
{
	const char *wname, *url;
	json_t *pool, *e;
	bool any = false;

	json_object_foreach(eps, wname, pool)
		json_object_foreach(pool, url, e) {
			json_t *v = json_object_get(e, key);
			if (key2)
				v = json_object_get(v, key2);
			if (!json_is_number(v))
				continue;
			if (!any && help)
				fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
			any = true;
			fprintf(out, "%s{run=\"", name);
			put_escaped(out, run);
			fputs("\",workload=\"", out);
			put_escaped(out, wname);
			fputs("\",endpoint=\"", out);
			put_escaped(out, url);
			if (quantile)
				fprintf(out, "\",quantile=\"%s", quantile);
			fprintf(out, "\"} %.17g\n", json_number_value(v) * scale);
		}
}

int export_prom_endpoints(FILE *out, const char *run, json_t *eps)
{
	if (!json_is_object(eps))
		return 0;
	endpoint_metric(out, run, eps, "soakd_endpoint_ops_total", "counter",
			"Requests an endpoint of a pool completed since the run started.", "total_ops",
			NULL, NULL, 1);
	endpoint_metric(out, run, eps, "soakd_endpoint_errors_total", "counter",
			"Requests that failed at an endpoint of a pool since the run started.",
			"total_errors", NULL, NULL, 1);
	endpoint_metric(out, run, eps, "soakd_endpoint_latency_seconds", "gauge",
			"Submit-to-completion time of an endpoint's requests in the last interval.",
			"latency_us", "p50", "0.5", 1e-6);
	endpoint_metric(out, run, eps, "soakd_endpoint_latency_seconds", "gauge", NULL,
			"latency_us", "p99", "0.99", 1e-6);
	endpoint_metric(out, run, eps, "soakd_endpoint_latency_seconds", "gauge", NULL,
			"latency_us", "max", "1", 1e-6);
	return ferror(out) ? -EIO : 0;
}
