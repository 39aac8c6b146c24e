/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RFC3339_H
#define SOAK_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/*
 * Absolute wall-clock times as RFC 3339 writes them, for "start_at":
 * "2025-06-01T12:00:00Z", "2025-06-01T14:00:00.250+02:00".  The offset is
 * required (a fleet in several time zones must agree on one instant);
 * 't', 'z' and a space instead of 'T' are accepted as RFC 3339 allows.
 * Years 1970-2200; second 60 (a leap second) reads as the next second.
 */

/* Returns 0 and sets *ret_ns (nanoseconds since the Unix epoch), or
 * -EINVAL with *ret_why saying what is wrong. ret_why may be NULL. */
int rfc3339_parse(const char *text, int64_t *ret_ns, const char **ret_why);

/* UTC, "2025-06-01T12:00:00Z", with milliseconds when there are any. */
void rfc3339_format(int64_t ns, char *buf, size_t len);

#endif
