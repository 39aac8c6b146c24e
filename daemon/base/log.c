// SPDX-License-Identifier: GPL-2.0-only
#include "log.h"

#include <inttypes.h>
#include <stdarg.h>
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

static void vlog(int priority, const char *suffix, const char *fmt, va_list ap)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error",
					     "warning", "notice", "info", "debug" };
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One message, one line: whatever reached the text (a remote
	 * string that was not cleaned) cannot start a line of its own or
	 * drive a terminal. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = ' ';
	if (journal) {
		sd_journal_send("MESSAGE=%s%s", msg, suffix, "PRIORITY=%i", priority,
				"SYSLOG_IDENTIFIER=soakd", NULL);
		return;
	}
	/* One fprintf per line keeps lines from different threads whole. */
	if (priority <= LOG_WARNING)
		fprintf(stderr, "soakd: %s: %s%s\n", names[priority & 7], msg, suffix);
	else
		fprintf(stderr, "soakd: %s%s\n", msg, suffix);
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
