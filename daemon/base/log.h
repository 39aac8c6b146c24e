/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_LOG_H
#define SOAK_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>
#include <syslog.h>

/*
 * Messages go to journald when stderr is connected to it (systemd's
 * JOURNAL_STREAM names stderr's device and inode), otherwise to stderr as
 * plain lines.  Safe to call from any thread.
 */
void log_init(void);
bool log_to_journal(void);

/*
 * From log_start on, messages and journal entries (log_fields) go through
 * queues to threads of their own, one for journald and one for stderr,
 * so that a journald or a stderr reader that takes nothing for a while (a
 * stall, a full pipe, a terminal held with Ctrl-S) holds no thread of
 * soakd's and neither holds the other: the workloads' and the loop's
 * timing is never the log's.  Past LOG_QUEUE_BYTES waiting in one, more
 * are dropped, counted, and said when it takes them again.  log_stop
 * (also at exit) writes what waits and ends the threads; before log_start
 * and after log_stop each caller writes its own.  What waits when soakd is
 * killed or crashes is lost.
 */
#define LOG_QUEUE_BYTES (8u << 20)
int log_start(void);
void log_stop(void);
/* Text for stderr as it is (the live table, the summary), through its
 * queue: log_raw formats up to 2.5 KiB, log_text takes any length. */
void log_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_text(const char *text, size_t len);
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs with ": <strerror(-error)>" appended and returns error (negative). */
int log_errno(int priority, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A string from elsewhere (a server's error message, reason phrase or
 * header, libcurl's error text that quotes the server) made fit for one
 * log line: control characters (newlines, ESC, DEL) and bytes outside
 * ASCII become ' ' or '?', and at most max bytes of it are kept ("..."
 * marks a cut).  out gets at most outlen - 1 bytes and a NUL; in need
 * not be NUL-terminated (inlen bytes, or up to its NUL).  Returns out.
 */
#define LOG_REMOTE_MAX 300
char *log_clean(const char *in, size_t inlen, size_t max, char *out, size_t outlen);

/* A structured journal entry, built one "FIELD=value" at a time (at most
 * LOG_FIELDS_MAX; more are left out) and sent through the queue above by
 * log_fields_send, which frees the fields. */
#define LOG_FIELDS_MAX 96
struct log_fields {
	struct iovec iov[LOG_FIELDS_MAX];
	char *text[LOG_FIELDS_MAX];
	size_t n;
};
void log_fields_add(struct log_fields *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_fields_send(struct log_fields *f, int priority);

#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_error_errno(error, ...) log_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_errno(LOG_WARNING, error, __VA_ARGS__)

#endif
