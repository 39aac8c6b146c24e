// SPDX-License-Identifier: GPL-2.0-only
#include "config_export.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_trace.h"

void export_config_free(struct export_config *e)
{
	free(e->prom_textfile);
	free(e->statsd_address);
	free(e->statsd_prefix);
	*e = (struct export_config){ 0 };
}

static void parse_prometheus(struct cfg_ctx *c, json_t *v, struct export_config *e)
{
	static const char *const keys[] = { "textfile", NULL };
	const char *path;
	size_t n;

	cfg_push_key(c, "prometheus");
	if (!json_is_object(v)) {
		cfg_report(c, "\"prometheus\" must be {\"textfile\": PATH}");
		goto out;
	}
	cfg_check_keys(c, v, "\"prometheus\" (expected textfile)", keys);
	if (!json_object_get(v, "textfile")) {
		cfg_report(c, "\"prometheus\" needs \"textfile\": the .prom file node_exporter's "
			      "textfile collector reads");
		goto out;
	}
	if (!cfg_get_string(c, v, "textfile", &path))
		goto out;
	cfg_push_key(c, "textfile");
	n = strlen(path);
	if (n == 0 || n >= PATH_MAX - 8 || path[n - 1] == '/')
		cfg_report(c, "\"textfile\" must be a file's path");
	else if (n < 6 || strcmp(path + n - 5, ".prom") != 0)
		cfg_report(c, "\"textfile\" must end in .prom: node_exporter's textfile collector "
			      "reads only *.prom files");
	else if (!(e->prom_textfile = cfg_absolute_path(path)))
		cfg_report(c, "cannot resolve \"%s\": %s", path, strerror(errno));
	cfg_pop(c);
out:
	cfg_pop(c);
}

static bool valid_prefix(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > EXPORT_MAX_PREFIX || s[0] == '.' || s[n - 1] == '.' || strstr(s, ".."))
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '{') {
			if (strncmp(p, "{host}", 6) != 0)
				return false;
			p += 5;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			return false;
	}
	return true;
}

static void parse_statsd(struct cfg_ctx *c, json_t *v, struct export_config *e)
{
	static const char *const keys[] = { "address", "prefix", NULL };
	const char *s;

	cfg_push_key(c, "statsd");
	if (!json_is_object(v)) {
		cfg_report(c, "\"statsd\" must be {\"address\": \"HOST:PORT\", \"prefix\": NAME}");
		goto out;
	}
	cfg_check_keys(c, v, "\"statsd\" (expected address, prefix)", keys);
	if (!json_object_get(v, "address"))
		cfg_report(c, "\"statsd\" needs \"address\": \"HOST:PORT\" (StatsD listens on UDP "
			      "port 8125)");
	if (cfg_get_string(c, v, "address", &s)) {
		char host[256], err[400];
		unsigned port;

		cfg_push_key(c, "address");
		if (trace_split_endpoint(s, host, sizeof(host), &port, err, sizeof(err)) < 0)
			cfg_report(c, "%s", err);
		else if (!(e->statsd_address = strdup(s)))
			cfg_report(c, "out of memory");
		cfg_pop(c);
	}
	if (cfg_get_string(c, v, "prefix", &s)) {
		cfg_push_key(c, "prefix");
		if (!valid_prefix(s))
			cfg_report(c, "\"prefix\" must be 1-%d letters, digits, '_', '-' or '.' "
				      "(not at either end), and may hold {host}", EXPORT_MAX_PREFIX);
		else if (!(e->statsd_prefix = strdup(s)))
			cfg_report(c, "out of memory");
		cfg_pop(c);
	}
out:
	cfg_pop(c);
}

void export_config_parse(struct cfg_ctx *c, json_t *v, struct export_config *e)
{
	static const char *const keys[] = { "prometheus", "statsd", NULL };

	cfg_push_key(c, "exports");
	if (!json_is_object(v)) {
		cfg_report(c, "\"exports\" must be {\"prometheus\": {...}, \"statsd\": {...}}");
		cfg_pop(c);
		return;
	}
	cfg_check_keys(c, v, "\"exports\" (expected prometheus, statsd)", keys);
	if (json_object_get(v, "prometheus"))
		parse_prometheus(c, json_object_get(v, "prometheus"), e);
	if (json_object_get(v, "statsd"))
		parse_statsd(c, json_object_get(v, "statsd"), e);
	cfg_pop(c);
}

static void print_string(FILE *out, const char *s)
{
	json_t *j = json_string(s);
	char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(q ? q : "\"?\"", out);
	free(q);
	json_decref(j);
}

void export_statsd_name(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in && n + 1 < len; in++) {
		char ch = *in;
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
			ch = '_';   /* '.' would add a level, ':' '|' '@' break the line */
		out[n++] = ch;
	}
	out[n] = '\0';
}

char *export_prefix_expand(const char *prefix)
{
	const char *at = strstr(prefix, "{host}");
	char host[256] = "", name[256];
	char *out;

	if (!at)
		return strdup(prefix);
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		strcpy(host, "localhost");
	host[strcspn(host, ".")] = '\0';
	export_statsd_name(host, name, sizeof(name));
	if (asprintf(&out, "%.*s%s%s", (int)(at - prefix), prefix, name, at + 6) < 0)
		return NULL;
	return out;
}

void export_config_print(const struct export_config *e, FILE *out)
{
	fputs("\"exports\": {", out);
	if (e->prom_textfile) {
		fputs("\"prometheus\": {\"textfile\": ", out);
		print_string(out, e->prom_textfile);
		fputs(e->statsd_address ? "}, " : "}", out);
	}
	if (e->statsd_address) {
		fputs("\"statsd\": {\"address\": ", out);
		print_string(out, e->statsd_address);
		const char *prefix = e->statsd_prefix ? e->statsd_prefix : "soakd";
		fputs(", \"prefix\": ", out);
		print_string(out, prefix);
		if (strstr(prefix, "{host}")) {
			char *expanded = export_prefix_expand(prefix);
			fputs(", \"prefix_on_this_host\": ", out);
			print_string(out, expanded ? expanded : "?");
			free(expanded);
		}
		fputs("}", out);
	}
	fputs("}", out);
}
