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
	uint64_t dropped_before; /* items dropped since the one queued before it */
	size_t n;
	struct iovec iov[];
};

/* The writer's queue (log.h): its lock guards everything below it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queued_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t empty_cond = PTHREAD_COND_INITIALIZER;
static struct item *head, **tail = &head;
static size_t n_queued;
static uint64_t dropped;
static bool running, stopping, writing;
static pthread_t writer;

static struct item *item_new(bool to_journal, const struct iovec *iov, size_t n)
{
	size_t bytes = 0;

	for (size_t i = 0; i < n; i++)
		bytes += iov[i].iov_len;
	struct item *it = malloc(sizeof(*it) + n * sizeof(it->iov[0]) + bytes);
	if (!it)
		return NULL;
	char *p = (char *)&it->iov[n];
	*it = (struct item){ .to_journal = to_journal, .n = n };
	for (size_t i = 0; i < n; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		it->iov[i] = (struct iovec){ .iov_base = p, .iov_len = iov[i].iov_len };
		p += iov[i].iov_len;
	}
	return it;
}

static void emit_dropped(uint64_t n)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%" PRIu64 " log message(s) and journal entries were dropped: "
		 "the log (journald or stderr) took nothing for a while and %d waited already "
		 "(the run's results and dumps keep every interval)", n, LOG_QUEUE_MAX);
	if (journal)
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%i", LOG_WARNING,
				"SYSLOG_IDENTIFIER=soakd", NULL);
	else
		fprintf(stderr, "soakd: warning: %s\n", msg);
}

static void emit(const struct item *it)
{
	if (it->dropped_before)
		emit_dropped(it->dropped_before);
	if (it->to_journal)
		sd_journal_sendv(it->iov, (int)it->n);
	else
		fwrite(it->iov[0].iov_base, 1, it->iov[0].iov_len, stderr);
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!head && !stopping)
			pthread_cond_wait(&queued_cond, &lock);
		struct item *it = head;
		if (!it)
			break;
		head = it->next;
		if (!head)
			tail = &head;
		n_queued--;
		writing = true;
		pthread_mutex_unlock(&lock);
		emit(it);
		free(it);
		pthread_mutex_lock(&lock);
		writing = false;
		if (!head)
			pthread_cond_broadcast(&empty_cond);
	}
	if (dropped)
		emit_dropped(dropped);
	dropped = 0;
	pthread_cond_broadcast(&empty_cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

void log_stop(void)
{
	pthread_mutex_lock(&lock);
	bool was = running && !stopping;
	stopping = true;
	pthread_cond_signal(&queued_cond);
	pthread_mutex_unlock(&lock);
	if (!was)
		return;
	pthread_join(writer, NULL);
	pthread_mutex_lock(&lock);
	running = false;
	pthread_mutex_unlock(&lock);
}

int log_start(void)
{
	sigset_t all, old;
	int r;

	/* Signals are for the loop that waits for them, never for this. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&lock);
	stopping = false;
	r = running ? 0 : pthread_create(&writer, NULL, writer_main, NULL);
	if (r == 0 && !running) {
		running = true;
		static bool registered;
		if (!registered && atexit(log_stop) == 0)
			registered = true;
	}
	pthread_mutex_unlock(&lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		pthread_setname_np(writer, "soakd-log");
	return -r;
}

/* Queues it, or writes it here when no writer runs; it is freed.  A
 * message of LOG_CRIT or worse waits until it is written. */
static void submit(struct item *it, int priority)
{
	pthread_mutex_lock(&lock);
	if (!running || stopping) {
		pthread_mutex_unlock(&lock);
		emit(it);
		free(it);
		return;
	}
	if (n_queued >= LOG_QUEUE_MAX && priority > LOG_CRIT) {
		dropped++;
		pthread_mutex_unlock(&lock);
		free(it);
		return;
	}
	it->dropped_before = dropped;
	dropped = 0;
	*tail = it;
	tail = &it->next;
	n_queued++;
	pthread_cond_signal(&queued_cond);
	while (priority <= LOG_CRIT && (head || writing) && !stopping)
		pthread_cond_wait(&empty_cond, &lock);
	pthread_mutex_unlock(&lock);
}

void log_flush(void)
{
	pthread_mutex_lock(&lock);
	while (running && !stopping && (head || writing))
		pthread_cond_wait(&empty_cond, &lock);
	pthread_mutex_unlock(&lock);
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
		submit(it, priority);
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
	if (n < 0)
		return;
	struct iovec iov = { text, n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1 };
	struct item *it = item_new(false, &iov, 1);
	if (it)
		submit(it, LOG_INFO);
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
		submit(it, priority);
}
