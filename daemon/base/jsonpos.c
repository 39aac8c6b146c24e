// SPDX-License-Identifier: GPL-2.0-only
#include "jsonpos.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct scanner {
	const char *text;
	size_t len;
	size_t pos;
};

static void skip_ws(struct scanner *s)
{
	while (s->pos < s->len && strchr(" \t\r\n", s->text[s->pos]) && s->text[s->pos])
		s->pos++;
}

static bool peek(struct scanner *s, char c)
{
	skip_ws(s);
	return s->pos < s->len && s->text[s->pos] == c;
}

/* Skips a string starting at its opening quote; ret_start/ret_len give its
 * raw (still escaped) contents. */
static int skip_string(struct scanner *s, size_t *ret_start, size_t *ret_len)
{
	if (s->pos >= s->len || s->text[s->pos] != '"')
		return -EINVAL;
	size_t start = ++s->pos;
	while (s->pos < s->len && s->text[s->pos] != '"') {
		if (s->text[s->pos] == '\\')
			s->pos++;
		s->pos++;
	}
	if (s->pos >= s->len)
		return -EINVAL;
	if (ret_start)
		*ret_start = start;
	if (ret_len)
		*ret_len = s->pos - start;
	s->pos++;
	return 0;
}

static int skip_value(struct scanner *s, unsigned depth)
{
	if (depth > 512)
		return -ELOOP;
	skip_ws(s);
	if (s->pos >= s->len)
		return -EINVAL;
	char c = s->text[s->pos];
	if (c == '"')
		return skip_string(s, NULL, NULL);
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		s->pos++;
		if (peek(s, close)) {
			s->pos++;
			return 0;
		}
		for (;;) {
			if (c == '{') {
				skip_ws(s);
				if (skip_string(s, NULL, NULL) < 0 || !peek(s, ':'))
					return -EINVAL;
				s->pos++;
			}
			if (skip_value(s, depth + 1) < 0)
				return -EINVAL;
			if (peek(s, ',')) {
				s->pos++;
				continue;
			}
			if (peek(s, close)) {
				s->pos++;
				return 0;
			}
			return -EINVAL;
		}
	}
	/* number, true, false, null */
	while (s->pos < s->len && !strchr(",]} \t\r\n", s->text[s->pos]))
		s->pos++;
	return 0;
}

/* Compares a raw JSON string body with a plain key; keys with escapes are
 * compared without decoding, which only matters for keys we never ask for. */
static bool key_equals(const struct scanner *s, size_t start, size_t len, const char *key)
{
	return strlen(key) == len && memcmp(s->text + start, key, len) == 0;
}

static void position_of(const char *text, size_t pos, int *ret_line, int *ret_column)
{
	int line = 1, column = 1;
	for (size_t i = 0; i < pos; i++) {
		if (text[i] == '\n') {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	*ret_line = line;
	*ret_column = column;
}

int jsonpos_locate(const char *text, size_t len, const struct jsonpos_step *path,
		   size_t depth, int at_key, int *ret_line, int *ret_column)
{
	struct scanner s = { .text = text, .len = len, .pos = 0 };
	size_t key_pos = 0;

	skip_ws(&s);
	for (size_t d = 0; d < depth; d++) {
		const struct jsonpos_step *step = &path[d];
		bool found = false;

		if (step->key) {
			if (!peek(&s, '{'))
				return -ENOENT;
			s.pos++;
			while (!peek(&s, '}')) {
				size_t kstart, klen;
				skip_ws(&s);
				key_pos = s.pos;
				if (skip_string(&s, &kstart, &klen) < 0 || !peek(&s, ':'))
					return -ENOENT;
				s.pos++;
				skip_ws(&s);
				/* jansson keeps the last of duplicate keys, but we
				 * load with JSON_REJECT_DUPLICATES, so the first
				 * match is the only one. */
				if (key_equals(&s, kstart, klen, step->key)) {
					found = true;
					break;
				}
				if (skip_value(&s, 0) < 0)
					return -ENOENT;
				if (peek(&s, ','))
					s.pos++;
			}
		} else {
			if (!peek(&s, '['))
				return -ENOENT;
			s.pos++;
			for (size_t i = 0; !peek(&s, ']'); i++) {
				skip_ws(&s);
				if (i == step->index) {
					found = true;
					break;
				}
				if (skip_value(&s, 0) < 0)
					return -ENOENT;
				if (peek(&s, ','))
					s.pos++;
			}
		}
		if (!found)
			return -ENOENT;
	}
	skip_ws(&s);
	position_of(text, at_key && depth > 0 && path[depth - 1].key ? key_pos : s.pos,
		    ret_line, ret_column);
	return 0;
}
