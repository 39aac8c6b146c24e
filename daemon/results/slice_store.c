// SPDX-License-Identifier: GPL-2.0-only
#include "slice_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

void slice_store_init(struct slice_store *s)
{
	*s = (struct slice_store){ .fd = -1 };
}

void slice_store_open(struct slice_store *s, const char *dir)
{
	struct stat st;
	int fd;

	s->tried = true;
	if (!dir)
		return;
	/* Unnamed: nothing can be put in its place or read by name, and it
	 * is gone when soakd is.  The directory itself is not followed. */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		log_notice("%s: no unnamed file for the closed slices (%s): they stay in memory",
			   dir, strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0) {
		log_notice("%s: the file for the closed slices is not a new regular file: they "
			   "stay in memory", dir);
		close(fd);
		return;
	}
	s->fd = fd;
}

void slice_store_close(struct slice_store *s)
{
	if (s->fd >= 0)
		close(s->fd);
	slice_store_init(s);
}

int slice_text_put(struct slice_store *s, struct slice_text *t, const char *text)
{
	size_t len = strlen(text), done = 0;

	*t = (struct slice_text){ 0 };
	if (s->fd >= 0 && len <= UINT32_MAX) {
		while (done < len) {
			ssize_t n = pwrite(s->fd, text + done, len - done, (off_t)(s->end + done));
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		if (done == len) {
			t->off = s->end;
			t->len = (uint32_t)len;
			s->end += len;
			return 0;
		}
		if (!s->warned)
			log_warning("could not put a closed slice aside in its file (%s): slices "
				    "stay in memory while it fails", strerror(errno ? errno : EIO));
		s->warned = true;
	}
	t->mem = strdup(text);
	return t->mem ? 0 : -ENOMEM;
}

char *slice_text_get(const struct slice_store *s, const struct slice_text *t)
{
	char *text;
	size_t done = 0;

	if (t->mem)
		return strdup(t->mem);
	text = malloc((size_t)t->len + 1);
	if (!text)
		return NULL;
	while (done < t->len) {
		ssize_t n = pread(s->fd, text + done, t->len - done, (off_t)(t->off + done));
		if (n <= 0) {
			log_error("could not read a closed slice back from its file (%s)",
				  n < 0 ? strerror(errno) : "short file");
			free(text);
			return NULL;
		}
		done += (size_t)n;
	}
	text[t->len] = '\0';
	return text;
}

void slice_text_free(struct slice_text *t)
{
	free(t->mem);
	*t = (struct slice_text){ 0 };
}
