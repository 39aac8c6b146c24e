/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_FUZZ_H
#define SOAK_FUZZ_H

/*
 * What the libFuzzer targets in this directory share.  Each target feeds
 * its input to one parser and checks, beyond "no sanitizer report", the
 * promises the parser's header makes (round trips, bounds); a broken
 * promise aborts, which libFuzzer reports as a crash like any other.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                             \
		}                                                                            \
	} while (0)

/* The input as a C string; bytes after an embedded NUL are not seen. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	FUZZ_CHECK(text);
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/* Output that is formatted (so the printing code runs) and thrown away. */
static inline FILE *fuzz_devnull(void)
{
	static FILE *devnull;

	if (!devnull)
		devnull = fopen("/dev/null", "we");
	FUZZ_CHECK(devnull);
	return devnull;
}

#endif
