/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define HIST_FORMAT_VERSION 1
#define VARINT_MAX_BYTES 10
/*
 * Largest valid encoding: version, five header varints, and a (gap, count)
 * pair for every bucket, where a gap is below HIST_BUCKETS and so takes at
 * most two bytes.  Text longer than this encodes cannot be a histogram, so
 * hist_from_base64 refuses it before allocating anything.
 */
#define HIST_ENCODED_MAX (1 + 5 * VARINT_MAX_BYTES + (size_t)HIST_BUCKETS * (2 + VARINT_MAX_BYTES))
#define HIST_BASE64_MAX ((HIST_ENCODED_MAX + 2) / 3 * 4)

/*
 * The sum saturates rather than wraps: a wrapped sum would silently report
 * a small mean, a stuck one is visibly wrong.  Saturating addition is still
 * associative, so merging in any order gives the same result.
 */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline size_t bucket_of(uint64_t value_ns)
{
	unsigned shift;

	if (value_ns < HIST_LINEAR_LIMIT)
		return value_ns;
	/*
	 * With the top bit at 2^k (k >= 8), value >> (k - 7) keeps the top
	 * eight bits, 128..255; each octave above the exact range adds 128
	 * buckets, which puts [256, 512) at 256..383 and so on.
	 */
	shift = 63 - __builtin_clzll(value_ns) - HIST_SUB_BITS;
	return (size_t)shift * HIST_SUB_COUNT + (size_t)(value_ns >> shift);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_init_zeroed(struct hist *h)
{
	h->min = UINT64_MAX;
}

void hist_reset(struct hist *h)
{
	if (h->count) {
		size_t lo = bucket_of(h->min), hi = bucket_of(h->max);
		memset(&h->buckets[lo], 0, (hi - lo + 1) * sizeof(h->buckets[0]));
	}
	h->count = h->sum = h->max = h->clamped = 0;
	h->min = UINT64_MAX;
}

size_t hist_bucket_of(uint64_t value_ns)
{
	return bucket_of(value_ns > HIST_MAX_VALUE ? HIST_MAX_VALUE : value_ns);
}

void hist_bucket_range(size_t bucket, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo, width;
	unsigned shift;

	if (bucket >= HIST_BUCKETS)
		bucket = HIST_BUCKETS - 1;
	if (bucket < HIST_LINEAR_LIMIT) {
		lo = bucket;
		width = 1;
	} else {
		shift = bucket / HIST_SUB_COUNT - 1;
		lo = (uint64_t)(bucket % HIST_SUB_COUNT + HIST_SUB_COUNT) << shift;
		width = UINT64_C(1) << shift;
	}
	if (ret_lo)
		*ret_lo = lo;
	if (ret_hi)
		*ret_hi = lo + width - 1;
}

void hist_record(struct hist *h, uint64_t value_ns)
{
	if (value_ns > HIST_MAX_VALUE) {
		value_ns = HIST_MAX_VALUE;
		h->clamped++;
	}
	h->buckets[bucket_of(value_ns)]++;
	h->count++;
	h->sum = add_sat(h->sum, value_ns);
	if (value_ns < h->min)
		h->min = value_ns;
	if (value_ns > h->max)
		h->max = value_ns;
}

void hist_record_n(struct hist *h, uint64_t value_ns, uint64_t n)
{
	if (!n)
		return;
	if (value_ns > HIST_MAX_VALUE) {
		value_ns = HIST_MAX_VALUE;
		h->clamped += n;
	}
	h->buckets[bucket_of(value_ns)] += n;
	h->count += n;
	h->sum = add_sat(h->sum, mul_sat(value_ns, n));
	if (value_ns < h->min)
		h->min = value_ns;
	if (value_ns > h->max)
		h->max = value_ns;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	size_t b;

	if (!src->count)
		return;
	/* Only src's buckets from min's to max's can hold counts; dst's
	 * other pages stay untouched. */
	for (b = bucket_of(src->min); b <= bucket_of(src->max); b++)
		dst->buckets[b] += src->buckets[b];
	dst->count += src->count;
	dst->sum = add_sat(dst->sum, src->sum);
	dst->clamped += src->clamped;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi, mid;
	double exact;
	size_t b, last;

	if (!h->count)
		return 0;
	if (p >= 100.0)
		return h->max;
	if (!(p > 0.0))
		return h->min;

	/*
	 * p = 99.9 is not exact in binary, so 99.9% of 200000 comes out a
	 * hair above 199800; without the slack ceil() would step one rank
	 * past the one the definition asks for.
	 */
	exact = p / 100.0 * (double)h->count;
	rank = (uint64_t)ceil(exact - exact * 1e-12);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	last = hist_bucket_of(h->max);
	for (b = hist_bucket_of(h->min); b < last; b++) {
		seen += h->buckets[b];
		if (seen >= rank)
			break;
	}
	hist_bucket_range(b, &lo, &hi);
	mid = lo + (hi - lo) / 2;
	if (mid < h->min)
		return h->min;
	if (mid > h->max)
		return h->max;
	return mid;
}

uint64_t hist_count_above(const struct hist *h, uint64_t threshold_ns)
{
	uint64_t above = 0;
	size_t b, last;

	/* min and max are exact, so these two answers are too, wherever the
	 * threshold falls inside a bucket. */
	if (!h->count || threshold_ns >= h->max)
		return 0;
	if (threshold_ns < h->min)
		return h->count;

	last = hist_bucket_of(h->max);
	for (b = bucket_of(threshold_ns) + 1; b <= last; b++)
		above += h->buckets[b];
	return above;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

/* Writes nothing when out is NULL, so the same code measures and encodes. */
static size_t put_varint(uint8_t *out, uint64_t value)
{
	size_t n = 0;

	do {
		uint8_t byte = value & 0x7f;

		value >>= 7;
		if (value)
			byte |= 0x80;
		if (out)
			out[n] = byte;
		n++;
	} while (value);
	return n;
}

static size_t encode(const struct hist *h, uint8_t *out)
{
	const uint64_t header[] = { h->count, h->sum, h->min, h->max, h->clamped };
	size_t n = 1, next = 0, b, i;

	if (out)
		out[0] = HIST_FORMAT_VERSION;
	for (i = 0; i < sizeof(header) / sizeof(header[0]); i++)
		n += put_varint(out ? out + n : NULL, header[i]);
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		n += put_varint(out ? out + n : NULL, b - next);
		n += put_varint(out ? out + n : NULL, h->buckets[b]);
		next = b + 1;
	}
	return n;
}

size_t hist_serialize(const struct hist *h, uint8_t *buf, size_t buflen)
{
	size_t need = encode(h, NULL);

	if (!buf || buflen < need)
		return need;
	return encode(h, buf);
}

struct reader {
	const uint8_t *pos;
	const uint8_t *end;
};

static int get_varint(struct reader *r, uint64_t *ret_value)
{
	uint64_t value = 0;
	unsigned shift = 0;
	uint8_t byte;

	for (;;) {
		if (r->pos == r->end)
			return -EINVAL;
		byte = *r->pos++;
		/* The tenth byte holds bit 63 only. */
		if (shift == 63 && byte > 1)
			return -EINVAL;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			break;
		shift += 7;
	}
	/*
	 * An overlong encoding (a zero last byte after others) is refused so
	 * that every value has one encoding and an accepted buffer re-encodes
	 * to the same bytes; the fuzz tests rely on that.
	 */
	if (byte == 0 && shift)
		return -EINVAL;
	*ret_value = value;
	return 0;
}

/*
 * Validates everything before anything is stored: with out == NULL it only
 * checks, so hist_deserialize can leave *ret alone on failure without a
 * 40 KiB temporary on the stack.
 */
/* Checks buf (out NULL), or decodes checked buf into out: as all of it, or
 * (add) added to what out holds. */
static int decode(const uint8_t *buf, size_t len, struct hist *out, bool add)
{
	struct reader r;
	uint64_t count, sum, min, max, clamped, gap, n, seen = 0, last_n = 0;
	size_t next = 0, b = 0, first = HIST_BUCKETS;

	if (len < 1 || buf[0] != HIST_FORMAT_VERSION)
		return -EINVAL;
	r.pos = buf + 1;
	r.end = buf + len;
	if (get_varint(&r, &count) < 0 || get_varint(&r, &sum) < 0 || get_varint(&r, &min) < 0 ||
	    get_varint(&r, &max) < 0 || get_varint(&r, &clamped) < 0)
		return -EINVAL;

	if (!count) {
		if (sum || min != UINT64_MAX || max || clamped)
			return -EINVAL;
	} else {
		if (min > max || max > HIST_MAX_VALUE || clamped > count)
			return -EINVAL;
		if (clamped && max != HIST_MAX_VALUE)
			return -EINVAL;
		/* The other count - 2 values lie in [min, max]. */
		if (count == 1 && (sum != min || min != max))
			return -EINVAL;
		if (count > 1 && (sum < add_sat(min + max, mul_sat(count - 2, min)) ||
				  sum > add_sat(min + max, mul_sat(count - 2, max))))
			return -EINVAL;
	}

	while (seen < count) {
		if (get_varint(&r, &gap) < 0 || get_varint(&r, &n) < 0)
			return -EINVAL;
		if (gap >= HIST_BUCKETS - next)
			return -EINVAL;
		if (!n || n > count - seen)
			return -EINVAL;
		b = next + gap;
		if (first == HIST_BUCKETS)
			first = b;
		if (out && add)
			out->buckets[b] += n;
		else if (out)
			out->buckets[b] = n;
		seen += n;
		last_n = n;
		next = b + 1;
	}
	if (r.pos != r.end)
		return -EINVAL;

	if (count) {
		if (first != bucket_of(min) || b != bucket_of(max))
			return -EINVAL;
		/* Clamped values were all recorded as HIST_MAX_VALUE. */
		if (clamped > last_n)
			return -EINVAL;
	}
	if (out && add) {
		out->count += count;
		out->sum = add_sat(out->sum, sum);
		out->clamped += clamped;
		if (count && min < out->min)
			out->min = min;
		if (count && max > out->max)
			out->max = max;
	} else if (out) {
		out->count = count;
		out->sum = sum;
		out->min = min;
		out->max = max;
		out->clamped = clamped;
	}
	return 0;
}

int hist_deserialize(struct hist *ret, const uint8_t *buf, size_t len)
{
	int r;

	if (!buf)
		return -EINVAL;
	r = decode(buf, len, NULL, false);
	if (r < 0)
		return r;
	hist_init(ret);
	return decode(buf, len, ret, false);
}

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

/* Checked whole first, then added bucket by bucket: no 40 KB histogram in
 * between, to clear and to merge, for each of the millions a long run's
 * log replays. */
int hist_merge_base64(struct hist *dst, const char *text)
{
	uint8_t *bytes;
	size_t len;
	int r = base64_bytes(text, &bytes, &len);

	if (r < 0)
		return r;
	r = decode(bytes, len, NULL, false);
	if (r == 0)
		r = decode(bytes, len, dst, true);
	free(bytes);
	return r;
}
