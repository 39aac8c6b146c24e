// SPDX-License-Identifier: GPL-2.0-only
/* The AWS shared-credentials format (see obj_creds.h). */
#include "obj_creds.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regfile.h"

static const char *trim(const char *s, const char *end, const char **ret_end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*ret_end = end;
	return s;
}

static bool span_equals(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - s) == n && strncasecmp(s, word, n) == 0;
}

/* A value: printable ASCII without spaces, so it can go into a header. */
static bool value_ok(const char *s, const char *end)
{
	for (; s < end; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return false;
	return true;
}

static int set_value(char **slot, const char *s, const char *end)
{
	char *v = strndup(s, (size_t)(end - s));
	if (!v)
		return -ENOMEM;
	if (*slot) {
		explicit_bzero(*slot, strlen(*slot));
		free(*slot);
	}
	*slot = v;
	return 0;
}

int obj_creds_parse(const char *text, size_t len, const char *profile, const char *what,
		    struct obj_creds *ret, char *err, size_t errlen)
{
	struct obj_creds c = { 0 };
	const char *p = text, *text_end = text + len;
	bool in_profile = false, found = false;
	char seen[256] = "";
	unsigned line = 0;
	int r = 0;

	while (p < text_end && r == 0) {
		const char *nl = memchr(p, '\n', (size_t)(text_end - p));
		const char *eol = nl ? nl : text_end, *end;
		const char *s = trim(p, eol, &end);

		line++;
		p = nl ? nl + 1 : text_end;
		if (s == end || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			if (end[-1] != ']') {
				snprintf(err, errlen, "%s:%u: a section header must end with ']'", what,
					 line);
				r = -EINVAL;
				break;
			}
			const char *name_end;
			const char *name = trim(s + 1, end - 1, &name_end);
			/* The AWS config file spells sections "[profile NAME]". */
			if (name_end - name > 8 && strncmp(name, "profile", 7) == 0 &&
			    isspace((unsigned char)name[7]))
				name = trim(name + 8, name_end, &name_end);
			in_profile = strlen(profile) == (size_t)(name_end - name) &&
				     strncmp(name, profile, strlen(profile)) == 0;
			found |= in_profile;
			if (strlen(seen) + (size_t)(name_end - name) + 3 < sizeof(seen))
				snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%.*s",
					 seen[0] ? ", " : "", (int)(name_end - name), name);
			continue;
		}
		const char *eq = memchr(s, '=', (size_t)(end - s));
		if (!eq) {
			/* Never echo the line: it may hold a secret. */
			snprintf(err, errlen, "%s:%u: expected \"[profile]\" or \"key = value\"", what,
				 line);
			r = -EINVAL;
			break;
		}
		if (!in_profile)
			continue;
		const char *key_end, *val_end;
		const char *key = trim(s, eq, &key_end);
		const char *val = trim(eq + 1, end, &val_end);
		char **slot = NULL;
		if (span_equals(key, key_end, "aws_access_key_id"))
			slot = &c.access_key;
		else if (span_equals(key, key_end, "aws_secret_access_key"))
			slot = &c.secret_key;
		else if (span_equals(key, key_end, "aws_session_token"))
			slot = &c.session_token;
		if (!slot)
			continue; /* region, output, ...: not ours */
		if (val == val_end || val_end - val > OBJ_CREDS_MAX_VALUE || !value_ok(val, val_end)) {
			snprintf(err, errlen, "%s:%u: %.*s must be 1-%d printable characters without "
					      "spaces", what, line, (int)(key_end - key), key,
				 OBJ_CREDS_MAX_VALUE);
			r = -EINVAL;
			break;
		}
		r = set_value(slot, val, val_end);
		if (r < 0)
			snprintf(err, errlen, "out of memory");
	}
	if (r == 0 && !found) {
		snprintf(err, errlen, "%s has no profile \"%s\"%s%s%s", what, profile,
			 seen[0] ? " (it has: " : "", seen, seen[0] ? ")" : "");
		r = -EINVAL;
	} else if (r == 0 && (!c.access_key || !c.secret_key)) {
		snprintf(err, errlen, "profile \"%s\" in %s has no %s", profile, what,
			 !c.access_key ? "aws_access_key_id" : "aws_secret_access_key");
		r = -EINVAL;
	} else if (r == 0 && strchr(c.access_key, ':')) {
		snprintf(err, errlen, "profile \"%s\" in %s: aws_access_key_id must not contain ':'",
			 profile, what);
		r = -EINVAL;
	}
	if (r < 0) {
		obj_creds_clear(&c);
		return r;
	}
	*ret = c;
	return 0;
}

int obj_creds_load(const char *path, const char *profile, struct obj_creds *ret, char *err,
		   size_t errlen)
{
	char *text;
	struct stat st;
	ssize_t n;
	int fd, r;

	fd = regfile_open(path, "credentials file", err, errlen);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size > OBJ_CREDS_MAX_FILE) {
		snprintf(err, errlen, "credentials file %s must be a regular file of at most %d bytes",
			 path, OBJ_CREDS_MAX_FILE);
		close(fd);
		return -EINVAL;
	}
	text = malloc(OBJ_CREDS_MAX_FILE + 1);
	if (!text) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t len = 0;
	while (len <= OBJ_CREDS_MAX_FILE) {
		n = read(fd, text + len, OBJ_CREDS_MAX_FILE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		snprintf(err, errlen, "cannot read credentials file %s: %s", path, strerror(-r));
	else if (len > OBJ_CREDS_MAX_FILE) {
		snprintf(err, errlen, "credentials file %s is larger than %d bytes", path,
			 OBJ_CREDS_MAX_FILE);
		r = -EFBIG;
	} else
		r = obj_creds_parse(text, len, profile, path, ret, err, errlen);
	explicit_bzero(text, len);
	free(text);
	return r;
}

int obj_creds_systemd_path(const char *name, char *buf, size_t len, char *err, size_t errlen)
{
	const char *dir = getenv("CREDENTIALS_DIRECTORY");

	if (!dir || !*dir) {
		snprintf(err, errlen, "systemd credential \"%s\": $CREDENTIALS_DIRECTORY is not set "
				      "(give soakd.service \"LoadCredential=%s:/path/to/file\")", name,
			 name);
		return -ENOENT;
	}
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len) {
		snprintf(err, errlen, "systemd credential \"%s\": path too long", name);
		return -ENAMETOOLONG;
	}
	return 0;
}

void obj_creds_clear(struct obj_creds *c)
{
	char **fields[] = { &c->access_key, &c->secret_key, &c->session_token };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (*fields[i]) {
			explicit_bzero(*fields[i], strlen(*fields[i]));
			free(*fields[i]);
			*fields[i] = NULL;
		}
	}
}
