// SPDX-License-Identifier: GPL-2.0-only
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <systemd/sd-journal.h>

static bool journal;

void log_init(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	struct stat st;
	uintmax_t dev, ino;

	journal = js && sscanf(js, "%ju:%ju", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
		  (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

bool log_to_journal(void)
{
	return journal;
}

char *log_clean(const char *in, size_t inlen, size_t max, char *out, size_t outlen)
{
	size_t o = 0, i = 0;

	if (!outlen)
		return out;
	if (max > outlen - 1)
		max = outlen - 1;
	for (; i < inlen && in[i] && o < max; i++) {
		unsigned char c = (unsigned char)in[i];
		out[o++] = c < ' ' || c == 0x7f ? ' ' : c >= 0x80 ? '?' : (char)c;
	}
	if (i < inlen && in[i] && max >= 3) {
		o = o > max - 3 ? max - 3 : o;
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

/*
 * One message or journal entry on its way: a line for stderr, or the
 * fields of a journal entry, in one allocation (iov points into it).
 */
struct item {
	struct item *next;
	bool to_journal;
	size_t size;             /* of the allocation */
	uint64_t dropped_before; /* items dropped since the one queued before it */
	size_t n;
	struct iovec iov[];
};

/*
 * A writer's queue (log.h): journal entries and stderr text have one each,
 * so that a stderr nobody reads holds no journal entry back, nor the
 * reverse.  Its lock guards the rest.
 */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t queued_cond;
	struct item *head, **tail;
	size_t bytes;            /* of the items queued */
	uint64_t dropped;
	bool running, stopping;
	pthread_t writer;
	const char *thread_name;
};

#define QUEUE_INIT(q, name)                                                                 \
	{ .lock = PTHREAD_MUTEX_INITIALIZER, .queued_cond = PTHREAD_COND_INITIALIZER,       \
	  .tail = &(q).head, .thread_name = (name) }

static struct queue queues[2] = {
	QUEUE_INIT(queues[0], "soakd-journal"),
	QUEUE_INIT(queues[1], "soakd-stderr"),
};

static struct queue *queue_of(const struct item *it)
{
	return &queues[it->to_journal ? 0 : 1];
}

static struct item *item_new(bool to_journal, const struct iovec *iov, size_t n)
{
	size_t bytes = 0;

	for (size_t i = 0; i < n; i++)
		bytes += iov[i].iov_len;
	size_t size = sizeof(struct item) + n * sizeof(struct iovec) + bytes;
	struct item *it = malloc(size);
	if (!it)
		return NULL;
	char *p = (char *)&it->iov[n];
	*it = (struct item){ .to_journal = to_journal, .size = size, .n = n };
	for (size_t i = 0; i < n; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		it->iov[i] = (struct iovec){ .iov_base = p, .iov_len = iov[i].iov_len };
		p += iov[i].iov_len;
	}
	return it;
}

static void emit_dropped(bool to_journal, uint64_t n)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%" PRIu64 " %s dropped: %s took nothing for a while and %d MiB "
		 "of them waited already (the run's results and dumps keep every interval)", n,
		 to_journal ? "log messages or journal entries were" : "lines of stderr were",
		 to_journal ? "journald" : "stderr's reader", LOG_QUEUE_BYTES >> 20);
	if (to_journal)
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%i", LOG_WARNING,
				"SYSLOG_IDENTIFIER=soakd", NULL);
	else
		fprintf(stderr, "soakd: warning: %s\n", msg);
}

static void emit(const struct item *it)
{
	if (it->dropped_before)
		emit_dropped(it->to_journal, it->dropped_before);
	if (it->to_journal) {
		sd_journal_sendv(it->iov, (int)it->n);
	} else {
		for (size_t i = 0; i < it->n; i++)
			fwrite(it->iov[i].iov_base, 1, it->iov[i].iov_len, stderr);
	}
}

static void *writer_main(void *arg)
{
	struct queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->head && !q->stopping)
			pthread_cond_wait(&q->queued_cond, &q->lock);
		struct item *it = q->head;
		if (!it)
			break;
		q->head = it->next;
		if (!q->head)
			q->tail = &q->head;
		q->bytes -= it->size;
		pthread_mutex_unlock(&q->lock);
		emit(it);
		free(it);
		pthread_mutex_lock(&q->lock);
	}
	if (q->dropped)
		emit_dropped(q == &queues[0], q->dropped);
	q->dropped = 0;
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

void log_stop(void)
{
	for (size_t i = 0; i < 2; i++) {
		struct queue *q = &queues[i];
		pthread_mutex_lock(&q->lock);
		bool was = q->running && !q->stopping;
		q->stopping = true;
		pthread_cond_signal(&q->queued_cond);
		pthread_mutex_unlock(&q->lock);
		if (!was)
			continue;
		pthread_join(q->writer, NULL);
		pthread_mutex_lock(&q->lock);
		q->running = false;
		pthread_mutex_unlock(&q->lock);
	}
}

int log_start(void)
{
	static bool registered;
	sigset_t all, old;
	int r = 0;

	/* Signals are for the loop that waits for them, never for these. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (size_t i = 0; i < 2 && r == 0; i++) {
		struct queue *q = &queues[i];
		pthread_mutex_lock(&q->lock);
		q->stopping = false;
		if (!q->running) {
			r = pthread_create(&q->writer, NULL, writer_main, q);
			q->running = r == 0;
			if (r == 0)
				pthread_setname_np(q->writer, q->thread_name);
		}
		pthread_mutex_unlock(&q->lock);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0 && !registered && atexit(log_stop) == 0)
		registered = true;
	return -r;
}

/* Queues it, or writes it here when its writer does not run; it is freed. */
static void submit(struct item *it)
{
	struct queue *q = queue_of(it);

	pthread_mutex_lock(&q->lock);
	if (!q->running || q->stopping) {
		pthread_mutex_unlock(&q->lock);
		emit(it);
		free(it);
		return;
	}
	if (q->bytes + it->size > LOG_QUEUE_BYTES) {
		q->dropped++;
		pthread_mutex_unlock(&q->lock);
		free(it);
		return;
	}
	it->dropped_before = q->dropped;
	q->dropped = 0;
	*q->tail = it;
	q->tail = &it->next;
	q->bytes += it->size;
	pthread_cond_signal(&q->queued_cond);
	pthread_mutex_unlock(&q->lock);
}

static void vlog(int priority, const char *suffix, const char *fmt, va_list ap)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };
	char msg[2048], text[2560], prio[32];
	struct item *it;
	int n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One message, one line: whatever reached the text (a remote
	 * string that was not cleaned) cannot start a line of its own or
	 * drive a terminal. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = ' ';
	if (journal) {
		static const char ident[] = "SYSLOG_IDENTIFIER=soakd";
		n = snprintf(text, sizeof(text), "MESSAGE=%s%s", msg, suffix);
		int np = snprintf(prio, sizeof(prio), "PRIORITY=%i", priority);
		struct iovec iov[3] = {
			{ text, n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1 },
			{ prio, (size_t)np },
			{ (char *)ident, sizeof(ident) - 1 },
		};
		it = item_new(true, iov, 3);
	} else {
		/* One write per line keeps lines from different threads whole. */
		if (priority <= LOG_WARNING)
			n = snprintf(text, sizeof(text), "soakd: %s: %s%s\n", names[priority & 7], msg,
				     suffix);
		else
			n = snprintf(text, sizeof(text), "soakd: %s%s\n", msg, suffix);
		if (n >= (int)sizeof(text)) {
			n = (int)sizeof(text) - 1;
			text[n - 1] = '\n';
		}
		struct iovec iov = { text, (size_t)n };
		it = item_new(false, &iov, 1);
	}
	if (it)
		submit(it);
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(priority, "", fmt, ap);
	va_end(ap);
}

int log_errno(int priority, int error, const char *fmt, ...)
{
	char suffix[256];
	va_list ap;

	snprintf(suffix, sizeof(suffix), ": %s", strerror(error < 0 ? -error : error));
	va_start(ap, fmt);
	vlog(priority, suffix, fmt, ap);
	va_end(ap);
	return error < 0 ? error : -error;
}

void log_raw(const char *fmt, ...)
{
	char text[2560];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n >= 0)
		log_text(text, n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

void log_text(const char *text, size_t len)
{
	struct iovec iov = { (void *)text, len };
	struct item *it = len ? item_new(false, &iov, 1) : NULL;

	if (it)
		submit(it);
}

void log_fields_add(struct log_fields *f, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	if (f->n == LOG_FIELDS_MAX)
		return;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	f->text[f->n] = text;
	f->iov[f->n++] = (struct iovec){ .iov_base = text, .iov_len = (size_t)n };
}

void log_fields_send(struct log_fields *f, int priority)
{
	struct item *it = f->n ? item_new(true, f->iov, f->n) : NULL;

	for (size_t i = 0; i < f->n; i++)
		free(f->text[i]);
	f->n = 0;
	if (it)
		submit(it);
}
