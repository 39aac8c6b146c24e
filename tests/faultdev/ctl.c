// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultdev's control channel: commands written to the "ctl" file, one per
 * line, and the text of the read-only files (ctl's statistics, "lost",
 * "doomed").  The commands are listed in README.md; a bad one fails the
 * write with EINVAL and says why in last_error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "faultdev.h"
#include "parse.h"

#define MAX_WORDS 8

static int bad(struct fdev *fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fd->last_error, sizeof(fd->last_error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "faultdev: %s\n", fd->last_error);
	return -EINVAL;
}

static int word_size(struct fdev *fd, const char *word, const char *what, uint64_t *ret)
{
	const char *why = NULL;

	if (parse_size(word, ret, &why) < 0)
		return bad(fd, "%s '%s': %s", what, word, why ? why : "not a size");
	return 0;
}

static int word_count(struct fdev *fd, const char *word, const char *what, uint64_t *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(word, &end, 10);
	if (errno || end == word || *end || word[0] == '-')
		return bad(fd, "%s '%s': not a whole number", what, word);
	return 0;
}

static int parse_kinds(struct fdev *fd, const char *word, unsigned *ret)
{
	unsigned kinds = 0;
	char buf[64], *save = NULL, *tok;

	if (strlen(word) >= sizeof(buf))
		return bad(fd, "op kinds '%s': too long", word);
	strcpy(buf, word);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "read"))
			kinds |= FDEV_OP_READ;
		else if (!strcmp(tok, "write"))
			kinds |= FDEV_OP_WRITE;
		else if (!strcmp(tok, "rw"))
			kinds |= FDEV_OP_READ | FDEV_OP_WRITE;
		else if (!strcmp(tok, "flush"))
			kinds |= FDEV_OP_FLUSH;
		else if (!strcmp(tok, "all"))
			kinds |= FDEV_OP_READ | FDEV_OP_WRITE | FDEV_OP_FLUSH;
		else
			return bad(fd, "op kind '%s': expected read, write, rw, flush or all", tok);
	}
	if (!kinds)
		return bad(fd, "no op kind in '%s'", word);
	*ret = kinds;
	return 0;
}

static int parse_range(struct fdev *fd, char **w, struct fdev_range *ret)
{
	struct fdev_range range;

	if (word_size(fd, w[0], "offset", &range.offset) < 0 ||
	    word_size(fd, w[1], "length", &range.length) < 0)
		return -EINVAL;
	if (range.length == 0)
		return bad(fd, "length 0: give a length of at least one byte");
	if (range.offset >= fd->size)
		return bad(fd, "offset %" PRIu64 " is past the device's end (%" PRIu64 ")",
			   range.offset, fd->size);
	*ret = range;
	return 0;
}

static int block_offset(struct fdev *fd, const char *word, const char *what, uint64_t *ret)
{
	uint64_t offset;

	if (word_size(fd, word, what, &offset) < 0)
		return -EINVAL;
	if (offset % fd->block_size || offset >= fd->size)
		return bad(fd, "%s %" PRIu64 ": not a block (%" PRIu64 " B) of the device", what,
			   offset, fd->block_size);
	*ret = offset / fd->block_size;
	return 0;
}

static int on_off(struct fdev *fd, int n, char **w, bool *ret)
{
	if (n == 2 && !strcmp(w[1], "on"))
		*ret = true;
	else if (n == 2 && !strcmp(w[1], "off"))
		*ret = false;
	else
		return bad(fd, "usage: %s on|off", w[0]);
	return 0;
}

static int cmd_lie(struct fdev *fd, int n, char **w)
{
	uint64_t count;

	if (n == 2 && !strcmp(w[1], "off")) {
		fd->lies_left = 0;
		return 0;
	}
	if (n < 2 || n > 3)
		return bad(fd, "usage: lie N [all|one] | lie off");
	if (word_count(fd, w[1], "lie count", &count) < 0)
		return -EINVAL;
	if (n == 3 && strcmp(w[2], "all") && strcmp(w[2], "one"))
		return bad(fd, "lie '%s': expected all or one", w[2]);
	fd->lies_left = count;
	fd->lie_one = n == 3 && !strcmp(w[2], "one");
	return 0;
}

static int cmd_errors(struct fdev *fd, int n, char **w)
{
	unsigned kinds = 0;

	if (n == 2 && !strcmp(w[1], "off")) {
		fd->error_kinds = 0;
		return 0;
	}
	if (n >= 3 && parse_kinds(fd, w[1], &kinds) < 0)
		return -EINVAL;
	if (n == 5 && !strcmp(w[2], "range")) {
		if (parse_range(fd, w + 3, &fd->error_range) < 0)
			return -EINVAL;
		fd->error_by_range = true;
	} else if (n == 4 && !strcmp(w[2], "every")) {
		if (word_count(fd, w[3], "every", &fd->error_every) < 0)
			return -EINVAL;
		if (fd->error_every == 0)
			return bad(fd, "every 0: give N >= 1");
		fd->error_by_range = false;
		memset(fd->op_count, 0, sizeof(fd->op_count));
	} else {
		return bad(fd, "usage: errors KINDS range OFFSET LENGTH | errors KINDS every N | "
			       "errors off");
	}
	fd->error_kinds = kinds;
	return 0;
}

static int cmd_delay(struct fdev *fd, int n, char **w)
{
	uint64_t ns;
	const char *why = NULL;

	if (n == 2 && !strcmp(w[1], "off")) {
		fd->delay_ms = 0;
		pthread_cond_broadcast(&fd->wakeup);
		return 0;
	}
	bool flush_only = n == 3 && !strcmp(w[2], "flush");
	if (n != 2 && n != 4 && !flush_only)
		return bad(fd, "usage: delay DURATION [OFFSET LENGTH | flush] | delay off");
	if (parse_duration(w[1], &ns, &why) < 0)
		return bad(fd, "delay '%s': %s", w[1], why ? why : "not a duration");
	fd->delay_range = (struct fdev_range){0, 0};
	if (n == 4 && parse_range(fd, w + 2, &fd->delay_range) < 0)
		return -EINVAL;
	fd->delay_flush_only = flush_only;
	fd->delay_ms = ns / 1000000;
	return 0;
}

static int cmd_misdirect(struct fdev *fd, int n, char **w)
{
	if (n == 2 && !strcmp(w[1], "off")) {
		fd->misdirect_on = false;
		return 0;
	}
	if (n != 3 && n != 4)
		return bad(fd, "usage: misdirect FROM TO [once|always] | misdirect off");
	if (block_offset(fd, w[1], "from", &fd->misdirect_from) < 0 ||
	    block_offset(fd, w[2], "to", &fd->misdirect_to) < 0)
		return -EINVAL;
	if (n == 4 && strcmp(w[3], "once") && strcmp(w[3], "always"))
		return bad(fd, "misdirect '%s': expected once or always", w[3]);
	fd->misdirect_once = n == 3 || !strcmp(w[3], "once");
	fd->misdirect_on = true;
	return 0;
}

static int run_line(struct fdev *fd, char *line)
{
	char *w[MAX_WORDS + 1], *save = NULL, *tok;
	int n = 0;
	bool on;

	for (tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_WORDS)
			return bad(fd, "too many words in command '%s'", w[0]);
		w[n++] = tok;
	}
	if (n == 0 || w[0][0] == '#')
		return 0;
	if (!strcmp(w[0], "cache")) {
		if (on_off(fd, n, w, &on) < 0)
			return -EINVAL;
		fd->cache_on = on;
		/* Switching the cache off writes back what it holds, as a drive does. */
		return on ? 0 : fdev_writeback(fd);
	}
	if (!strcmp(w[0], "flush") && n == 1)
		return fdev_writeback(fd);
	if (!strcmp(w[0], "drop") && n == 1) {
		fdev_drop(fd);
		return 0;
	}
	if (!strcmp(w[0], "power")) {
		if (on_off(fd, n, w, &on) < 0)
			return -EINVAL;
		if (!on)
			fdev_drop(fd);
		fd->power_off = !on;
		return 0;
	}
	if (!strcmp(w[0], "lie"))
		return cmd_lie(fd, n, w);
	if (!strcmp(w[0], "errors"))
		return cmd_errors(fd, n, w);
	if (!strcmp(w[0], "delay"))
		return cmd_delay(fd, n, w);
	if (!strcmp(w[0], "stall") && n == 1) {
		fd->stalled = true;
		return 0;
	}
	if (!strcmp(w[0], "unstall") && n == 1) {
		fd->stalled = false;
		pthread_cond_broadcast(&fd->wakeup);
		return 0;
	}
	if (!strcmp(w[0], "misdirect"))
		return cmd_misdirect(fd, n, w);
	if (!strcmp(w[0], "trace")) {
		if (on_off(fd, n, w, &on) < 0)
			return -EINVAL;
		fd->trace = on;
		return 0;
	}
	if (!strcmp(w[0], "reset-stats") && n == 1) {
		memset(&fd->stats, 0, sizeof(fd->stats));
		fd->nlost = 0;
		return 0;
	}
	return bad(fd, "unknown command '%s' (or wrong number of words; see README.md)", w[0]);
}

int fdev_command(struct fdev *fd, const char *text, size_t len)
{
	char *copy = strndup(text, len), *line, *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	if (strlen(copy) != len)
		r = bad(fd, "a NUL byte in a command");
	for (line = strtok_r(copy, "\n", &save); line && r == 0;
	     line = strtok_r(NULL, "\n", &save))
		r = run_line(fd, line);
	free(copy);
	return r;
}

/* A growing text buffer for the rendered files. */
struct text {
	char *buf;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t)n < t->cap - t->len)
			break;
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *grown = realloc(t->buf, cap);
		if (!grown) {
			t->failed = true;
			return;
		}
		t->buf = grown;
		t->cap = cap;
	}
	t->len += (size_t)n;
}

static void text_init(struct text *t)
{
	*t = (struct text){.buf = malloc(1024), .cap = 1024};
	if (t->buf)
		t->buf[0] = 0;
	else
		t->failed = true;
}

static char *text_done(struct text *t, size_t *ret_len)
{
	if (t->failed) {
		free(t->buf);
		t->buf = strdup("");
		t->len = 0;
	}
	*ret_len = t->len;
	return t->buf;
}

static void kinds_text(unsigned kinds, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", kinds & FDEV_OP_READ ? "r" : "",
		 kinds & FDEV_OP_WRITE ? "w" : "", kinds & FDEV_OP_FLUSH ? "f" : "");
	if (!kinds)
		snprintf(buf, len, "off");
}

char *fdev_render_stats(struct fdev *fd, size_t *ret_len)
{
	const struct fdev_stats *s = &fd->stats;
	struct text t;
	char kinds[8];

	text_init(&t);
	kinds_text(fd->error_kinds, kinds, sizeof(kinds));
	text_add(&t, "size=%" PRIu64 "\nblock_size=%" PRIu64 "\n", fd->size, fd->block_size);
	text_add(&t, "cache=%s\npower=%s\n", fd->cache_on ? "on" : "off",
		 fd->power_off ? "off" : "on");
	text_add(&t, "dirty_blocks=%" PRIu64 "\ndoomed_blocks=%" PRIu64 "\n", fd->dirty_blocks,
		 fd->doomed_blocks);
	text_add(&t, "lies_armed=%" PRIu64 "\nlie_mode=%s\n", fd->lies_left,
		 fd->lie_one ? "one" : "all");
	text_add(&t, "errors=%s\n", kinds);
	if (fd->error_kinds && fd->error_by_range)
		text_add(&t, "errors_range=%" PRIu64 "+%" PRIu64 "\n", fd->error_range.offset,
			 fd->error_range.length);
	else if (fd->error_kinds)
		text_add(&t, "errors_every=%" PRIu64 "\n", fd->error_every);
	text_add(&t, "delay_ms=%" PRIu64 "\nstalled=%d\nstalled_now=%" PRIu64 "\n", fd->delay_ms,
		 fd->stalled, fd->stalled_now);
	text_add(&t, "misdirect=%s\n",
		 fd->misdirect_on ? (fd->misdirect_once ? "once" : "always") : "off");
	text_add(&t, "reads=%" PRIu64 "\nwrites=%" PRIu64 "\nflushes=%" PRIu64 "\n", s->reads,
		 s->writes, s->flushes);
	text_add(&t, "bytes_read=%" PRIu64 "\nbytes_written=%" PRIu64 "\n", s->bytes_read,
		 s->bytes_written);
	text_add(&t, "blocks_cached=%" PRIu64 "\nblocks_persisted=%" PRIu64 "\n", s->blocks_cached,
		 s->blocks_persisted);
	text_add(&t, "drops=%" PRIu64 "\nblocks_dropped=%" PRIu64 "\n", s->drops,
		 s->blocks_dropped);
	text_add(&t, "lies=%" PRIu64 "\nblocks_lied=%" PRIu64 "\nblocks_healed=%" PRIu64 "\n",
		 s->lies, s->blocks_lied, s->blocks_healed);
	text_add(&t, "blocks_lost_acked=%" PRIu64 "\n", s->blocks_lost_acked);
	text_add(&t, "read_errors=%" PRIu64 "\nwrite_errors=%" PRIu64 "\nflush_errors=%" PRIu64 "\n",
		 s->read_errors, s->write_errors, s->flush_errors);
	text_add(&t, "delayed_ops=%" PRIu64 "\nstalled_ops=%" PRIu64 "\n", s->delayed_ops,
		 s->stalled_ops);
	text_add(&t, "misdirected_blocks=%" PRIu64 "\nops_while_off=%" PRIu64 "\n",
		 s->misdirected_blocks, s->ops_while_off);
	text_add(&t, "last_error=%s\n", fd->last_error);
	return text_done(&t, ret_len);
}

/* "OFFSET LENGTH" in bytes, one line per block. */
char *fdev_render_lost(struct fdev *fd, size_t *ret_len)
{
	struct text t;
	size_t i;

	text_init(&t);
	for (i = 0; i < fd->nlost; i++)
		text_add(&t, "%" PRIu64 " %" PRIu64 "\n", fd->lost[i] * fd->block_size,
			 fd->block_size);
	return text_done(&t, ret_len);
}

char *fdev_render_doomed(struct fdev *fd, size_t *ret_len)
{
	struct text t;
	struct fdev_block *b;

	text_init(&t);
	for (b = fd->head; b; b = b->next)
		if (b->doomed)
			text_add(&t, "%" PRIu64 " %" PRIu64 "\n", b->index * fd->block_size,
				 fd->block_size);
	return text_done(&t, ret_len);
}
