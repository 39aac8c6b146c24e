// SPDX-License-Identifier: GPL-2.0-only
/*
 * For the integration tests, loaded with LD_PRELOAD into soakd: its calls
 * of liburing's io_uring_queue_init refuse the setup flags named in
 * SOAKD_TEST_RING_REFUSE (a number, e.g. 0x2000) with -EINVAL, as a kernel
 * that lacks them does, so that the device engine's fallback rings run on
 * this one (dev-ring-fallback.sh).  Every call is logged to stderr
 * ("ring-refuse: ..."), for the test to see which ring soakd ended with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <liburing.h>

typedef int (*queue_init_fn)(unsigned entries, struct io_uring *ring, unsigned flags);

int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	const char *env = getenv("SOAKD_TEST_RING_REFUSE");
	unsigned long refuse = env ? strtoul(env, NULL, 0) : 0;
	queue_init_fn real;
	void *sym = dlsym(RTLD_NEXT, "io_uring_queue_init");

	if (!sym) {
		fprintf(stderr, "ring-refuse: no io_uring_queue_init after this one\n");
		return -ENOSYS;
	}
	if (flags & refuse) {
		fprintf(stderr, "ring-refuse: refused flags %#x\n", flags);
		return -EINVAL;
	}
	*(void **)&real = sym;
	int r = real(entries, ring, flags);
	fprintf(stderr, "ring-refuse: set up with flags %#x: %d\n", flags, r);
	return r;
}
