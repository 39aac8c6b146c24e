/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_LOG_H
#define SOAK_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

/*
 * Messages go to journald when stderr is connected to it (systemd's
 * JOURNAL_STREAM names stderr's device and inode), otherwise to stderr as
 * plain lines.  Safe to call from any thread.
 */
void log_init(void);
bool log_to_journal(void);
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

#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_error_errno(error, ...) log_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_errno(LOG_WARNING, error, __VA_ARGS__)

#endif
