/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_LEDGER_UTIL_H
#define SOAK_OBJ_LEDGER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the write ledger uses without touching its state (obj_ledger_util.c). */

/* The longest version id as text, with its NUL. */
#define OBJ_LEDGER_VID_MAX 64
/* A version id as a record keeps it: *ret_len its length, ORed with
 * OBJ_LEDGER_VID_UUID when it is a UUID packed in 16 bytes; -E2BIG when it
 * cannot be kept.  And back into text (buf of OBJ_LEDGER_VID_MAX bytes). */
#define OBJ_LEDGER_VID_BYTES 32
#define OBJ_LEDGER_VID_UUID 0x80
int obj_ledger_vid_pack(const char *vid, uint8_t bytes[OBJ_LEDGER_VID_BYTES], uint8_t *ret_len);
void obj_ledger_vid_format(uint8_t len, const uint8_t bytes[OBJ_LEDGER_VID_BYTES], char *buf,
			   size_t buflen);

#define OBJ_LEDGER_TAG_LEN 16

/* Hash of an ETag as the server sent it (quotes and all); never 0. */
uint64_t obj_ledger_etag_hash(const char *etag, size_t len);
uint64_t obj_ledger_mono_ns(void);
/* A run tag (OBJ_LEDGER_TAG_LEN hex digits) as a number. */
int obj_ledger_tag_parse(const char *text, uint64_t *ret);
/* All of buf, or a negative errno (-ENOSPC for a write of nothing). */
int obj_ledger_write_all(int fd, const void *buf, size_t len);

#endif
