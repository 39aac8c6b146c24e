/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_PARSE_H
#define SOAK_PARSE_H

#include <stdint.h>

/*
 * Parsers for the units users type in configs and on the command line.
 * Each returns 0 and sets *ret_* only on success; on failure returns
 * -EINVAL (malformed) or -ERANGE (too large) and points *ret_why at a
 * static message saying what is wrong ("empty", "negative value", "unknown
 * unit 'q'", "trailing characters after number", "value too large", ...).
 * ret_why may be NULL.
 */

/*
 * Durations: a sequence of <number><unit> terms, units ns, us (or µs), ms,
 * s, m, h, d; e.g. "500ms", "90s", "1h30m", "2d", "1.5s". A bare number is
 * seconds.  Whitespace is not allowed inside.  Result in nanoseconds.
 */
int parse_duration(const char *text, uint64_t *ret_ns, const char **ret_why);

/*
 * Sizes: <number>[unit]; a bare number is bytes.  Binary units as aisloader
 * reads them: K, M, G, T (also KiB, MiB, GiB, TiB, and Ki/Mi/...) are powers
 * of 1024; decimal units KB, MB, GB, TB are powers of 1000; B is bytes.
 * Units are case-insensitive except that "b" alone is bytes.  A fraction
 * ("1.5GiB") is allowed if the result is a whole number of bytes.
 */
int parse_size(const char *text, uint64_t *ret_bytes, const char **ret_why);

/* Load multiple for ACT-style loads: "30x", "1.5x" or a plain number. */
int parse_multiple(const char *text, double *ret_multiple, const char **ret_why);

/* Format a duration or size for people: "1h30m", "1.5s", "4KiB". */
void format_duration(uint64_t ns, char *buf, unsigned buflen);
void format_size(uint64_t bytes, char *buf, unsigned buflen);

#endif
