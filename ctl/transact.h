/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_TRANSACT_H
#define SOAK_CTL_TRANSACT_H

#include <jansson.h>

/* soakctl's exit statuses (soakctl(1)). */
#define EXIT_REFUSED 1
#define EXIT_NO_REPLY 2
#define EXIT_REPORT_FAIL 3
#define EXIT_USAGE 64

/*
 * Sends one request line to soakd at path and reads the reply line back
 * into *ret ("ok": true only).  With text_key ("csv", "hdr"), a dump whose
 * text soakd streams (proto.h) is written to stdout as it arrives and the
 * reply's text_key is left empty.  --timeout bounds each wait for the next
 * part of the reply.  Returns 0 or an exit status, having said why.
 */
int ctl_transact_stream(const char *path, double timeout_s, const char *line,
			const char *text_key, json_t **ret);
int ctl_transact(const char *path, double timeout_s, const char *line, json_t **ret);

#endif
