// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the write ledger (obj_ledger.c) uses without touching its state:
 * full writes, the clock, run tags and ETags as numbers, and version ids
 * as a record keeps them ("versioning": true): a record holds 32 bytes,
 * MinIO's ids are 36-character UUIDs (16 bytes packed) and AWS's 32
 * characters (kept as they are).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "obj_ledger_util.h"
#include "obj_payload.h"

uint64_t obj_ledger_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t obj_ledger_etag_hash(const char *etag, size_t len)
{
	uint64_t h = obj_name_hash(etag, len);
	return h ? h : 1;
}

int obj_ledger_tag_parse(const char *text, uint64_t *ret)
{
	char *end;
	if (strlen(text) != OBJ_LEDGER_TAG_LEN)
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 16);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int obj_ledger_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}


static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A lowercase 8-4-4-4-12 UUID as 16 bytes. */
static bool uuid_pack(const char *text, uint8_t out[16])
{
	size_t o = 0;
	if (strlen(text) != 36)
		return false;
	for (size_t i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i++] != '-')
				return false;
			continue;
		}
		int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[o++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return true;
}

int obj_ledger_vid_pack(const char *vid, uint8_t bytes[OBJ_LEDGER_VID_BYTES], uint8_t *ret_len)
{
	size_t len = strlen(vid);
	memset(bytes, 0, OBJ_LEDGER_VID_BYTES);
	if (uuid_pack(vid, bytes)) {
		*ret_len = OBJ_LEDGER_VID_UUID | 16;
		return 0;
	}
	if (len == 0 || len > OBJ_LEDGER_VID_BYTES || strpbrk(vid, "\r\n"))
		return -E2BIG;
	memcpy(bytes, vid, len);
	*ret_len = (uint8_t)len;
	return 0;
}

void obj_ledger_vid_format(uint8_t len, const uint8_t bytes[OBJ_LEDGER_VID_BYTES], char *buf,
			   size_t buflen)
{
	const uint8_t *v = bytes;
	if (buflen < OBJ_LEDGER_VID_MAX) {
		if (buflen)
			buf[0] = '\0';
		return;
	}
	if (len & OBJ_LEDGER_VID_UUID)
		snprintf(buf, buflen, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x%02x%02x%02x%02x", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
			 v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]);
	else
		snprintf(buf, buflen, "%.*s", (int)(len & ~OBJ_LEDGER_VID_UUID),
			 (const char *)v);
}
