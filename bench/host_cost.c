// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the host sampler costs the main thread: N samples (host_sample,
 * with the record framed for the log as rundir would frame it) of the real
 * /proc and /sys, watching the block devices named on the command line by
 * MAJ:MIN, timed on the thread's CPU clock.  Prints the CPU time of one
 * sample and that as a share of one core at a 1 s interval.  Run by
 * bench/host-cost.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "host/host.h"
#include "runlog.h"

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct host *h;
	int n = argc > 1 ? atoi(argv[1]) : 2000;

	if (n <= 0 || host_new("/proc", "/sys", &h) < 0)
		return 1;
	host_begin_run(h, UINT64_C(3600) * 1000000000);
	for (int i = 2; i < argc; i++) {
		unsigned maj, min;
		char name[64];
		if (sscanf(argv[i], "%u:%u:%63s", &maj, &min, name) != 3 ||
		    host_watch_device(h, makedev(maj, min), name) < 0) {
			fprintf(stderr, "cannot watch %s (MAJ:MIN:NAME)\n", argv[i]);
			return 1;
		}
	}
	json_decref(host_sample(h, mono(), 0, 0));
	uint64_t t0 = thread_ns();
	for (int i = 0; i < n; i++) {
		/* Samples 1 ms apart in time, so every rate is computed. */
		json_t *rec = host_sample(h, mono() + (uint64_t)(i + 1) * 1000000, 0, 0);
		char *line = rec ? runlog_frame(rec) : NULL;
		if (!line)
			return 1;
		free(line);
		json_decref(rec);
	}
	double per_us = (thread_ns() - t0) / 1e3 / n;
	printf("host sample: %.1f us of CPU each; at a 1 s interval %.4f%% of a core\n", per_us,
	       per_us / 1e6 * 100);
	host_free(h);
	return 0;
}
