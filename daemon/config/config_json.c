// SPDX-License-Identifier: GPL-2.0-only
#include "config_json.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "run_config.h"


/* Paths deeper than CFG_MAX_DEPTH are reported at their deepest known
 * ancestor. */
void cfg_push_key(struct cfg_ctx *c, const char *key)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth++] = (struct jsonpos_step){ .key = key };
	else
		c->overflow++;
}

void cfg_push_index(struct cfg_ctx *c, size_t index)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth++] = (struct jsonpos_step){ .index = index };
	else
		c->overflow++;
}

void cfg_pop(struct cfg_ctx *c)
{
	if (c->overflow)
		c->overflow--;
	else if (c->depth)
		c->depth--;
}

void cfg_print_clean(FILE *out, const char *text)
{
	/* Under systemd stderr is a journal stream: a newline would start an
	 * entry of the config's making ("<0>..." at emergency priority), an
	 * escape would reach a terminal. */
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

static void vreport(struct cfg_ctx *c, int at_key, const char *fmt, va_list ap)
{
	int line = 1, column = 1;
	char text[PATH_MAX + 1024];   /* a path quoted whole, and why */

	/* Each position is found from the start of the text: past the cap a
	 * hostile file of many errors would take minutes (a reload, the
	 * watchdog's time). */
	if (c->errors++ >= CFG_MAX_REPORTED)
		return;
	/* A path that is not in the text (a missing key) points at its parent. */
	for (size_t d = c->depth + 1; d-- > 0;)
		if (jsonpos_locate(c->text, c->len, c->path, d, at_key && d == c->depth,
				   &line, &column) == 0)
			break;
	vsnprintf(text, sizeof(text), fmt, ap);
	fprintf(c->errout, "%s:%d:%d: ", c->name, line, column);
	cfg_print_clean(c->errout, text);
	fputc('\n', c->errout);
}

void cfg_report(struct cfg_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, 0, fmt, ap);
	va_end(ap);
}

void cfg_report_key(struct cfg_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, 1, fmt, ap);
	va_end(ap);
}

/* Reports keys of obj not in the NULL-terminated list allowed. */
static bool listed(const char *const *list, const char *key)
{
	for (const char *const *a = list; a && *a; a++)
		if (strcmp(*a, key) == 0)
			return true;
	return false;
}

void cfg_check_keys(struct cfg_ctx *c, json_t *obj, const char *what, const char *const *allowed)
{
	cfg_check_keys2(c, obj, what, allowed, NULL);
}

void cfg_check_keys2(struct cfg_ctx *c, json_t *obj, const char *what, const char *const *allowed,
		     const char *const *more)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		(void)v;
		if (!listed(allowed, key) && !listed(more, key)) {
			cfg_push_key(c, key);
			cfg_report_key(c, "unknown key \"%s\" in %s", key, what);
			cfg_pop(c);
		}
	}
}

/* Each get_* reads obj[key] when present, reports problems, and leaves
 * *ret untouched when the key is absent or wrong. */

bool cfg_get_string(struct cfg_ctx *c, json_t *obj, const char *key, const char **ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	cfg_push_key(c, key);
	bool ok = json_is_string(v);
	if (!ok)
		cfg_report(c, "\"%s\" must be a string", key);
	else
		*ret = json_string_value(v);
	cfg_pop(c);
	return ok;
}

void cfg_get_bool(struct cfg_ctx *c, json_t *obj, const char *key, bool *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	cfg_push_key(c, key);
	if (!json_is_boolean(v))
		cfg_report(c, "\"%s\" must be true or false", key);
	else
		*ret = json_is_true(v);
	cfg_pop(c);
}

void cfg_get_number(struct cfg_ctx *c, json_t *obj, const char *key, double min, double max,
		       double *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	cfg_push_key(c, key);
	if (!json_is_number(v)) {
		cfg_report(c, "\"%s\" must be a number", key);
	} else {
		double d = json_number_value(v);
		if (!(d >= min && d <= max))
			cfg_report(c, "\"%s\" is %g, must be between %g and %g", key, d, min, max);
		else
			*ret = d;
	}
	cfg_pop(c);
}

void cfg_get_uint(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		     uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return;
	cfg_push_key(c, key);
	if (!json_is_integer(v)) {
		cfg_report(c, "\"%s\" must be a whole number", key);
	} else {
		json_int_t i = json_integer_value(v);
		if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
			cfg_report(c, "\"%s\" is %" JSON_INTEGER_FORMAT ", must be between %" PRIu64
				  " and %" PRIu64, key, i, min, max);
		else
			*ret = (uint64_t)i;
	}
	cfg_pop(c);
}

/* Durations are strings ("90s") or a number of seconds. */
bool cfg_parse_duration_value(struct cfg_ctx *c, json_t *v, const char *what, uint64_t *ret)
{
	const char *why = NULL;
	uint64_t ns;

	if (json_is_string(v)) {
		if (parse_duration(json_string_value(v), &ns, &why) < 0) {
			cfg_report(c, "%s: bad duration \"%s\": %s", what, json_string_value(v), why);
			return false;
		}
	} else if (json_is_number(v)) {
		double s = json_number_value(v);
		if (!(s >= 0 && s < 1e9)) {
			cfg_report(c, "%s: duration %g s is out of range", what, s);
			return false;
		}
		ns = (uint64_t)llround(s * 1e9);
	} else {
		cfg_report(c, "%s must be a duration such as \"90s\" or \"1h30m\"", what);
		return false;
	}
	*ret = ns;
	return true;
}

bool cfg_get_duration(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	cfg_push_key(c, key);
	char what[80];
	snprintf(what, sizeof(what), "\"%s\"", key);
	bool ok = cfg_parse_duration_value(c, v, what, ret);
	cfg_pop(c);
	return ok;
}

/* Sizes are strings ("4KiB") or a number of bytes. */
bool cfg_parse_size_value(struct cfg_ctx *c, json_t *v, const char *what, uint64_t *ret)
{
	const char *why = NULL;
	uint64_t bytes;

	if (json_is_string(v)) {
		if (parse_size(json_string_value(v), &bytes, &why) < 0) {
			cfg_report(c, "%s: bad size \"%s\": %s", what, json_string_value(v), why);
			return false;
		}
	} else if (json_is_integer(v) && json_integer_value(v) >= 0) {
		bytes = (uint64_t)json_integer_value(v);
	} else {
		cfg_report(c, "%s must be a size such as 4096 or \"4KiB\"", what);
		return false;
	}
	*ret = bytes;
	return true;
}

bool cfg_get_size(struct cfg_ctx *c, json_t *obj, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return false;
	cfg_push_key(c, key);
	char what[80];
	snprintf(what, sizeof(what), "\"%s\"", key);
	bool ok = cfg_parse_size_value(c, v, what, ret);
	cfg_pop(c);
	return ok;
}

const char *cfg_name_problem(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return "is empty";
	if (n >= CONFIG_MAX_NAME)
		return "is longer than 63 bytes";
	/* "." and ".." would name the state directory or its parent. */
	if (s[0] == '.')
		return "may not start with '.'";
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_.", *p)))
			return "may hold only letters, digits, '-', '_' and '.'";
	return NULL;
}

bool cfg_valid_name(const char *s)
{
	return cfg_name_problem(s) == NULL;
}

char *cfg_absolute_path(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	char *abs = NULL;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		return NULL;
	return abs;
}

