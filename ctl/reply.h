/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_REPLY_H
#define SOAK_CTL_REPLY_H

#include <jansson.h>

#include "args.h"

/* soakd's replies printed for people (status as a table, text as it is), or
 * as JSON for scripts with --json. */

/* obj[key] as a string, or fallback. */
const char *field_str(json_t *obj, const char *key, const char *fallback);
/* A status reply as a table (soakctl status, and each turn of watch). */
void print_status(json_t *reply);
/* Prints the reply to o's command; returns soakctl's exit status. */
int print_reply(const struct options *o, json_t *reply);

#endif
