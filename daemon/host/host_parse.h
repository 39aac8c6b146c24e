/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_HOST_PARSE_H
#define SOAK_HOST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The host's counters as the kernel prints them, parsed from text already
 * read (no I/O here, so tests feed recorded files).  Every parser returns 0
 * or -EINVAL when the text is not what the kernel writes.  The counters are
 * cumulative; host.c turns two readings into rates.
 */

/* The "cpu " line of /proc/stat, in USER_HZ ticks summed over all CPUs. */
struct host_cpu_ticks {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};
int host_parse_stat(const char *text, struct host_cpu_ticks *ret);
uint64_t host_cpu_total(const struct host_cpu_ticks *t);

/* /proc/meminfo, in bytes. */
struct host_mem {
	uint64_t total, available;
};
int host_parse_meminfo(const char *text, struct host_mem *ret);

/* /proc/pressure/{cpu,memory,io}: the "total" stall time in microseconds
 * (the avg10 fields are the kernel's own moving average over another
 * window than the interval, so the interval's share comes from these).
 * A kernel without "full" for cpu (before 5.13) gives has_full false. */
struct host_psi {
	uint64_t some_us, full_us;
	bool has_full;
};
int host_parse_psi(const char *text, struct host_psi *ret);

/* /proc/net/dev: one interface's byte counters. */
#define HOST_IFNAME 16
struct host_netdev {
	char name[HOST_IFNAME];
	uint64_t rx_bytes, tx_bytes;
};
/* Up to max interfaces into ret; the number found in *ret_n. */
int host_parse_netdev(const char *text, struct host_netdev *ret, size_t max, size_t *ret_n);

/* /proc/net/snmp: Tcp RetransSegs. */
int host_parse_snmp_retrans(const char *text, uint64_t *ret);

/* /sys/block/DEV/stat (Documentation/block/stat.rst). */
struct host_blkstat {
	uint64_t read_sectors, write_sectors;  /* 512-byte units, whatever the block size */
	uint64_t io_ticks_ms;                  /* time the device had I/O in flight */
	uint64_t time_in_queue_ms;             /* the same weighted by the I/O in flight */
};
int host_parse_blkstat(const char *text, struct host_blkstat *ret);

/* The NVMe SMART / Health Information log page (log identifier 02h, NVM
 * Express Base Specification, "SMART / Health Information"), 512 bytes. */
#define HOST_NVME_SMART_LEN 512
struct host_nvme_smart {
	int temp_c;                  /* composite temperature */
	unsigned pct_used;           /* percentage used (may exceed 100) */
	uint64_t media_errors;       /* media and data integrity errors (low 64 bits) */
	unsigned critical_warning;
};
int host_parse_nvme_smart(const uint8_t *log, size_t len, struct host_nvme_smart *ret);

#endif
