/* SPDX-License-Identifier: GPL-2.0-only */
/* Histograms as base64url text (hist.h), for JSON: logs, checkpoints, ctl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define VARINT_MAX_BYTES 10
/*
 * Largest valid encoding: version, five header varints, and a (gap, count)
 * pair for every bucket, where a gap is below HIST_BUCKETS and so takes at
 * most two bytes.  Text longer than this encodes cannot be a histogram, so
 * hist_from_base64 refuses it before allocating anything.
 */
#define HIST_ENCODED_MAX (1 + 5 * VARINT_MAX_BYTES + (size_t)HIST_BUCKETS * (2 + VARINT_MAX_BYTES))
#define HIST_BASE64_MAX ((HIST_ENCODED_MAX + 2) / 3 * 4)

static const char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *hist_to_base64(const struct hist *h)
{
	size_t len = hist_serialize(h, NULL, 0), i, o = 0;
	uint8_t *bytes;
	char *text;

	bytes = malloc(len);
	text = malloc((len + 2) / 3 * 4 + 1);
	if (!bytes || !text) {
		free(bytes);
		free(text);
		return NULL;
	}
	hist_serialize(h, bytes, len);

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)bytes[i] << 16 | (uint32_t)bytes[i + 1] << 8 | bytes[i + 2];

		text[o++] = base64url[v >> 18];
		text[o++] = base64url[(v >> 12) & 63];
		text[o++] = base64url[(v >> 6) & 63];
		text[o++] = base64url[v & 63];
	}
	if (len - i == 1) {
		text[o++] = base64url[bytes[i] >> 2];
		text[o++] = base64url[(bytes[i] & 3) << 4];
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)bytes[i] << 8 | bytes[i + 1];

		text[o++] = base64url[v >> 10];
		text[o++] = base64url[(v >> 4) & 63];
		text[o++] = base64url[(v & 15) << 2];
	}
	text[o] = '\0';
	free(bytes);
	return text;
}

static int base64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/* The bytes text encodes, in *ret_bytes (to free) and *ret_len. */
static int base64_bytes(const char *text, uint8_t **ret_bytes, size_t *ret_len)
{
	size_t tlen, i, o = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	uint8_t *bytes;

	if (!text)
		return -EINVAL;
	tlen = strnlen(text, HIST_BASE64_MAX + 1);
	/* A lone sixth of a byte in the last group cannot come from an encoder. */
	if (tlen == 0 || tlen > HIST_BASE64_MAX || tlen % 4 == 1)
		return -EINVAL;

	bytes = malloc(tlen / 4 * 3 + 2);
	if (!bytes)
		return -ENOMEM;
	for (i = 0; i < tlen; i++) {
		int v = base64url_value(text[i]);

		if (v < 0) {
			free(bytes);
			return -EINVAL;
		}
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			bytes[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Leftover bits must be zero: one encoding per buffer, as for varints. */
	if (acc & ((1u << bits) - 1)) {
		free(bytes);
		return -EINVAL;
	}
	*ret_bytes = bytes;
	*ret_len = o;
	return 0;
}

int hist_from_base64(struct hist *ret, const char *text)
{
	uint8_t *bytes;
	size_t len;
	int r = base64_bytes(text, &bytes, &len);

	if (r < 0)
		return r;
	r = hist_deserialize(ret, bytes, len);
	free(bytes);
	return r;
}

/* Checked whole first, then added bucket by bucket: no histogram in
 * between, to fill and to free, for each of the millions a long run's log
 * replays. */
int hist_merge_base64(struct hist *dst, const char *text)
{
	uint8_t *bytes;
	size_t len;
	int r = base64_bytes(text, &bytes, &len);

	if (r < 0)
		return r;
	r = hist_merge_bytes(dst, bytes, len);
	free(bytes);
	return r;
}
