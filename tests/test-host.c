// SPDX-License-Identifier: GPL-2.0-only
/* The host's counters: the parsers on text recorded from a kernel 6.18
 * machine, the NVMe SMART log on a recorded page, and the sampler's
 * arithmetic over a fake /proc and /sys tree that the test rewrites
 * between two samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/host/host.h"
#include "daemon/host/host_parse.h"

static const char proc_stat[] =
	"cpu  483447 136674 341976 743031 470760 0 8334 288 0 0\n"
	"cpu0 242829 73603 161769 460915 152182 0 2152 142 0 0\n"
	"cpu1 240617 63070 180207 282115 318577 0 6181 146 0 0\n"
	"intr 130913011 0 9 0 0 0 0 0 0 0 0\n"
	"ctxt 330212118\nbtime 1795510000\nprocesses 1100321\n";

static const char meminfo[] =
	"MemTotal:       25276502 kB\n"
	"MemFree:        20017716 kB\n"
	"MemAvailable:   24105296 kB\n"
	"Buffers:          201240 kB\n"
	"Cached:          3987340 kB\n";

/* Recorded from this machine (kernel 6.18), trimmed. */
static const char psi_io[] =
	"some avg10=1.20 avg60=1.25 avg300=13.98 total=4476546933\n"
	"full avg10=0.00 avg60=0.43 avg300=12.14 total=2871733763\n";

static const char psi_cpu_old[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\n";

static const char net_dev[] =
	"Inter-|   Receive                                                |  Transmit\n"
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
	"drop fifo colls carrier compressed\n"
	"    lo: 8817173958 3101932    0    0    0     0          0         0 8817173958 3101932"
	"    0    0    0     0       0          0\n"
	"  eth0: 623350965   28751    0    0    0     0          0         0  2201007   22189    0"
	"    0    0     0       0          0\n";

static const char snmp[] =
	"Ip: Forwarding DefaultTTL InReceives\nIp: 1 64 3200000\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails "
	"EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
	"Tcp: 1 200 120000 -1 11735 6359 5013 6849 0 3128911 3118124 4463 0 8738 0\n"
	"Udp: InDatagrams NoPorts\nUdp: 537998 71\n";

static const char blk_stat[] =
	"  320916       69  2326668    16703    51117     1175  1020378     3542        0     6456"
	"    20335       24        0   983064        0      478       88\n";

static void test_stat(void **state)
{
	struct host_cpu_ticks t;

	(void)state;
	assert_int_equal(host_parse_stat(proc_stat, &t), 0);
	assert_int_equal(t.user, 483447);
	assert_int_equal(t.nice, 136674);
	assert_int_equal(t.iowait, 470760);
	assert_int_equal(t.steal, 288);
	assert_int_equal(host_cpu_total(&t), 483447 + 136674 + 341976 + 743031 + 470760 + 8334 + 288);
	assert_int_equal(host_parse_stat("cpu0 1 2 3\n", &t), -EINVAL);
	assert_int_equal(host_parse_stat("cpu  1 2 3\n", &t), -EINVAL);
}

static void test_meminfo(void **state)
{
	struct host_mem m;

	(void)state;
	assert_int_equal(host_parse_meminfo(meminfo, &m), 0);
	assert_int_equal(m.total, UINT64_C(25276502) * 1024);
	assert_int_equal(m.available, UINT64_C(24105296) * 1024);
	assert_int_equal(host_parse_meminfo("MemTotal: 5 kB\n", &m), -EINVAL);
}

static void test_psi(void **state)
{
	struct host_psi p;

	(void)state;
	assert_int_equal(host_parse_psi(psi_io, &p), 0);
	assert_int_equal(p.some_us, 4476546933);
	assert_int_equal(p.full_us, 2871733763);
	assert_true(p.has_full);
	assert_int_equal(host_parse_psi(psi_cpu_old, &p), 0);
	assert_false(p.has_full);
	assert_int_equal(p.some_us, 123);
	assert_int_equal(host_parse_psi("some avg10=1.0\n", &p), -EINVAL);
}

static void test_netdev(void **state)
{
	struct host_netdev n[4];
	size_t count;

	(void)state;
	assert_int_equal(host_parse_netdev(net_dev, n, 4, &count), 0);
	assert_int_equal(count, 2);
	assert_string_equal(n[0].name, "lo");
	assert_int_equal(n[0].rx_bytes, 8817173958);
	assert_string_equal(n[1].name, "eth0");
	assert_int_equal(n[1].rx_bytes, 623350965);
	assert_int_equal(n[1].tx_bytes, 2201007);
	/* Bounded: the first max interfaces. */
	assert_int_equal(host_parse_netdev(net_dev, n, 1, &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(host_parse_netdev("  eth0: 1 2 3\n", n, 4, &count), -EINVAL);
}

static void test_snmp(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(host_parse_snmp_retrans(snmp, &v), 0);
	assert_int_equal(v, 4463);
	assert_int_equal(host_parse_snmp_retrans("Tcp: A B\nTcp: 1 2\n", &v), -EINVAL);
	assert_int_equal(host_parse_snmp_retrans("Ip: 1\n", &v), -EINVAL);
}

static void test_blkstat(void **state)
{
	struct host_blkstat b;

	(void)state;
	assert_int_equal(host_parse_blkstat(blk_stat, &b), 0);
	assert_int_equal(b.read_sectors, 2326668);
	assert_int_equal(b.write_sectors, 1020378);
	assert_int_equal(b.io_ticks_ms, 6456);
	assert_int_equal(b.time_in_queue_ms, 20335);
	assert_int_equal(host_parse_blkstat("1 2 3\n", &b), -EINVAL);
}

/* A SMART / Health Information page laid out as the NVMe base
 * specification says a drive returns it (no NVMe drive here to record one
 * from; the values are a plausible drive's): composite temperature
 * 0x0139 K (40 C), 100% spare, threshold 10%, 3% used, data units read
 * and written, power cycles, hours, 2 media errors, 5 error log entries. */
static void smart_page(uint8_t *page)
{
	static const struct { unsigned off; uint8_t v; } bytes[] = {
		{ 1, 0x39 }, { 2, 0x01 }, { 3, 100 }, { 4, 10 }, { 5, 3 },
		{ 32, 0x4e }, { 33, 0x61 }, { 34, 0xbc }, { 35, 0x00 },     /* data units read */
		{ 48, 0x1f }, { 49, 0x85 }, { 50, 0x2b },                   /* data units written */
		{ 112, 0x2d },                                              /* power cycles */
		{ 128, 0x10 }, { 129, 0x27 },                               /* power on hours */
		{ 144, 0x0c },                                              /* unsafe shutdowns */
		{ 160, 0x02 },                                              /* media errors */
		{ 176, 0x05 },                                              /* error log entries */
		{ 200, 0x3a }, { 201, 0x01 },                               /* temperature sensor 1 */
	};

	memset(page, 0, HOST_NVME_SMART_LEN);
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++)
		page[bytes[i].off] = bytes[i].v;
}

static void test_nvme_smart(void **state)
{
	uint8_t page[HOST_NVME_SMART_LEN];
	struct host_nvme_smart s;

	(void)state;
	smart_page(page);
	assert_int_equal(host_parse_nvme_smart(page, sizeof(page), &s), 0);
	assert_int_equal(s.temp_c, 0x139 - 273);
	assert_int_equal(s.pct_used, 3);
	assert_int_equal(s.media_errors, 2);
	assert_int_equal(s.critical_warning, 0);
	/* Short, or no temperature reported: not a reading. */
	assert_int_equal(host_parse_nvme_smart(page, 511, &s), -EINVAL);
	page[1] = page[2] = 0;
	assert_int_equal(host_parse_nvme_smart(page, sizeof(page), &s), -EINVAL);
	/* A media error count past 2^64 saturates. */
	smart_page(page);
	page[170] = 1;
	assert_int_equal(host_parse_nvme_smart(page, sizeof(page), &s), 0);
	assert_true(s.media_errors == UINT64_MAX);
}

/* --- the sampler over a fake tree --------------------------------------- */

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static double num(json_t *rec, const char *a, const char *b)
{
	json_t *v = json_object_get(json_object_get(rec, a), b);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_sampler(void **state)
{
	char root[] = "/tmp/test-host.XXXXXX", proc[300], sys[300], dir[400];
	struct host *h;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(dir, sizeof(dir), "%s/proc/pressure", root);
	assert_int_equal(mkdir(proc, 0700), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/proc/net", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put(proc, "stat", "cpu  100 0 100 700 100 0 0 0 0 0\n");
	put(proc, "meminfo", meminfo);
	put(proc, "pressure/io", "some total=1000000\nfull total=500000\n");
	put(proc, "pressure/cpu", "some total=0\n");
	put(proc, "net/dev", net_dev);
	put(proc, "net/snmp", snmp);
	/* sysfs: dev/block/7:3 -> ../../devices/virtual/block/loop3 */
	snprintf(dir, sizeof(dir), "%s/sys/devices/virtual/block/loop3", root);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s/dev/block && ln -s ../../devices/virtual/block/loop3 "
		 "%s/dev/block/7:3", dir, sys, sys);
	assert_int_equal(system(cmd), 0);
	put(dir, "stat", "0 0 1000 0 0 0 2000 0 0 100 300 0 0 0 0 0 0\n");

	assert_int_equal(host_new(proc, sys, &h), 0);
	assert_int_equal(host_watch_device(h, makedev(7, 3), "loop3"), 0);
	assert_int_equal(host_watch_device(h, makedev(7, 3), "loop3"), 0);
	assert_int_equal(host_watch_device(h, makedev(7, 9), "loop9"), -ENOENT);
	uint64_t t0 = UINT64_C(50) * 1000000000;
	assert_null(host_sample(h, t0, (int64_t)t0 - 1000000000, 7));

	/* One second later: 1000 ticks of which 300 user (incl. nice), 100
	 * system, 400 iowait, 50 steal; io stalled 250 ms (some), 100 ms
	 * (full); the device busy 500 of 1000 ms, 1.5 in flight on average,
	 * 2048 sectors read and 4096 written; lo moved 1000 bytes each way;
	 * 7 retransmits. */
	put(proc, "stat", "cpu  300 100 200 850 500 0 0 50 0 0\n");
	put(proc, "pressure/io", "some total=1250000\nfull total=600000\n");
	put(proc, "net/dev",
	    "Inter-| Receive | Transmit\n face |bytes|bytes\n"
	    "    lo: 8817174958 0 0 0 0 0 0 0 8817174958 0 0 0 0 0 0 0\n");
	put(proc, "net/snmp",
	    "Tcp: RtoAlgorithm RetransSegs\nTcp: 1 4470\n");
	put(dir, "stat", "0 0 3048 0 0 0 6096 0 0 600 1800 0 0 0 0 0 0\n");
	json_t *rec = host_sample(h, t0 + 1000000000, (int64_t)t0 - 1000000000, 7);
	assert_non_null(rec);
	assert_string_equal(json_string_value(json_object_get(rec, "type")), "host");
	assert_int_equal(json_integer_value(json_object_get(rec, "start_ns")), 1000000000);
	assert_int_equal(json_integer_value(json_object_get(rec, "end_ns")), 2000000000);
	assert_int_equal(json_integer_value(json_object_get(rec, "wall_end_ns")), t0 + 1000000007);
	assert_float_equal(num(rec, "cpu", "user"), 30.0, 1e-9);
	assert_float_equal(num(rec, "cpu", "system"), 10.0, 1e-9);
	assert_float_equal(num(rec, "cpu", "iowait"), 40.0, 1e-9);
	assert_float_equal(num(rec, "cpu", "steal"), 5.0, 1e-9);
	assert_float_equal(num(rec, "psi", "io_some"), 25.0, 1e-9);
	assert_float_equal(num(rec, "psi", "io_full"), 10.0, 1e-9);
	assert_float_equal(num(rec, "psi", "cpu_some"), 0.0, 1e-9);
	assert_null(json_object_get(json_object_get(rec, "psi"), "mem_some")); /* no file */
	assert_float_equal(num(rec, "mem", "available_bytes"), 24105296.0 * 1024, 1);
	json_t *loop3 = json_object_get(json_object_get(rec, "disks"), "loop3");
	assert_float_equal(num(json_object_get(rec, "disks"), "loop3", "util_pct"), 50.0, 1e-9);
	assert_float_equal(json_number_value(json_object_get(loop3, "queue_depth")), 1.5, 1e-9);
	assert_float_equal(json_number_value(json_object_get(loop3, "read_Bps")), 2048 * 512.0, 1e-6);
	assert_float_equal(json_number_value(json_object_get(loop3, "write_Bps")), 4096 * 512.0, 1e-6);
	assert_float_equal(num(json_object_get(rec, "net"), "lo", "rx_Bps"), 1000.0, 1e-9);
	assert_null(json_object_get(json_object_get(rec, "net"), "eth0")); /* gone */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "tcp"), "retrans")), 7);
	assert_int_equal(json_object_size(json_object_get(rec, "nvme")), 0);
	json_decref(rec);

	/* io_ticks and time_in_queue are 32-bit counters in the kernel's
	 * text: one that wraps is time spent, not a counter going back. */
	put(dir, "stat", "0 0 3048 0 0 0 6096 0 0 4294967000 4294967000 0 0 0 0 0 0\n");
	json_decref(host_sample(h, t0 + 2000000000, (int64_t)t0 - 1000000000, 7));
	put(dir, "stat", "0 0 3048 0 0 0 6096 0 0 204 1704 0 0 0 0 0 0\n");
	rec = host_sample(h, t0 + 3000000000, (int64_t)t0 - 1000000000, 7);
	loop3 = json_object_get(json_object_get(rec, "disks"), "loop3");
	assert_float_equal(json_number_value(json_object_get(loop3, "util_pct")), 50.0, 1e-9);
	assert_float_equal(json_number_value(json_object_get(loop3, "queue_depth")), 2.0, 1e-9);
	json_decref(rec);
	/* A step back of a few ms is a reset, not a wrap: nothing counted. */
	put(dir, "stat", "0 0 3048 0 0 0 6096 0 0 200 1700 0 0 0 0 0 0\n");
	rec = host_sample(h, t0 + UINT64_C(3500000000), (int64_t)t0 - 1000000000, 7);
	loop3 = json_object_get(json_object_get(rec, "disks"), "loop3");
	assert_float_equal(json_number_value(json_object_get(loop3, "util_pct")), 0.0, 1e-9);
	assert_float_equal(json_number_value(json_object_get(loop3, "queue_depth")), 0.0, 1e-9);
	json_decref(rec);

	/* A device that cannot be read any more (removed) leaves the
	 * records; watched again, it starts from a new first reading, not
	 * from the one before it was gone. */
	put(dir, "stat", "gone\n");
	rec = host_sample(h, t0 + UINT64_C(4000000000), (int64_t)t0 - 1000000000, 7);
	assert_null(json_object_get(json_object_get(rec, "disks"), "loop3"));
	json_decref(rec);
	put(dir, "stat", "0 0 9048 0 0 0 9096 0 0 304 1804 0 0 0 0 0 0\n");
	assert_int_equal(host_watch_device(h, makedev(7, 3), "loop3"), 0);
	rec = host_sample(h, t0 + UINT64_C(5000000000), (int64_t)t0 - 1000000000, 7);
	assert_null(json_object_get(json_object_get(rec, "disks"), "loop3"));
	json_decref(rec);
	put(dir, "stat", "0 0 9048 0 0 0 9096 0 0 404 1904 0 0 0 0 0 0\n");
	rec = host_sample(h, t0 + UINT64_C(6000000000), (int64_t)t0 - 1000000000, 7);
	loop3 = json_object_get(json_object_get(rec, "disks"), "loop3");
	assert_float_equal(json_number_value(json_object_get(loop3, "util_pct")), 10.0, 1e-9);
	json_decref(rec);

	/* Paused (no workload ran, a new run began): the next sample is a
	 * first one, and no record spans the pause. */
	host_pause(h);
	assert_null(host_sample(h, t0 + UINT64_C(60000000000), (int64_t)t0 - 1000000000, 7));
	rec = host_sample(h, t0 + UINT64_C(61000000000), (int64_t)t0 - 1000000000, 7);
	assert_non_null(rec);
	assert_int_equal(json_integer_value(json_object_get(rec, "start_ns")), 61000000000);
	assert_non_null(json_object_get(json_object_get(rec, "disks"), "loop3"));
	json_decref(rec);
	host_free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* A host record of run time [start, start + 1 s) with the CPU's steal. */
static json_t *host_record(uint64_t start_s, double steal)
{
	return json_pack("{s:s,s:I,s:I,s:{s:f,s:f}}", "type", "host", "start_ns",
			 (json_int_t)(start_s * 1000000000), "end_ns",
			 (json_int_t)((start_s + 1) * 1000000000), "cpu", "steal", steal, "iowait",
			 1.0);
}

/* What a checkpoint keeps of the host's records, put back into another
 * host (a resumed soakd), gives the same summary and report slices once
 * the records after it are folded. */
static void test_checkpoint(void **state)
{
	struct host *live, *resumed;
	(void)state;

	assert_int_equal(host_new("/nonexistent", "/nonexistent", &live), 0);
	assert_int_equal(host_new("/nonexistent", "/nonexistent", &resumed), 0);
	host_begin_run(live, UINT64_C(2) * 1000000000);
	host_begin_run(resumed, UINT64_C(2) * 1000000000);
	for (uint64_t t = 0; t < 3; t++) {
		json_t *rec = host_record(t, (double)t * 10);
		host_fold(live, rec);
		json_decref(rec);
	}
	json_t *ck = host_checkpoint(live);
	assert_non_null(ck);
	assert_int_equal(host_restore(resumed, ck), 0);
	json_decref(ck);
	assert_int_equal(host_folded_through(resumed), UINT64_C(3) * 1000000000);
	json_t *rec = host_record(3, 50);
	host_fold(live, rec);
	host_fold(resumed, rec);
	json_decref(rec);
	for (int report = 0; report < 2; report++) {
		json_t *a = json_object(), *b = json_object();
		host_add_to_reply(live, a, report);
		host_add_to_reply(resumed, b, report);
		assert_non_null(json_object_get(a, "host"));
		assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
	}
	json_t *bad = json_pack("{s:s}", "through_ns", "x");
	assert_int_equal(host_restore(resumed, bad), -EINVAL);
	json_decref(bad);
	host_free(live);
	host_free(resumed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_netdev),
		cmocka_unit_test(test_snmp),
		cmocka_unit_test(test_blkstat),
		cmocka_unit_test(test_nvme_smart),
		cmocka_unit_test(test_sampler),
		cmocka_unit_test(test_checkpoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
