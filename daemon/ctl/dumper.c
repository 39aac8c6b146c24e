// SPDX-License-Identifier: GPL-2.0-only
#include "dumper.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "runlog.h"
#include "workload/workload.h"

/* Text is sent once this much is waiting: bounded memory per dump. */
#define DRAIN_BYTES (256u * 1024)
/* Records read between looks at the text and the cancel flag. */
#define CHECK_EVERY 256
/* Intervals are appended in order of their end; one that starts this long
 * after --until ends the reading (longer records than this are not
 * written). */
#define UNTIL_SLACK_NS (UINT64_C(3600) * 1000000000)
/* How long a cancelled dump may take to say it was cut short. */
#define CANCEL_GRACE_NS (UINT64_C(1000) * 1000000)
/* A JSON dump says nothing until the whole log is read (a month's takes
 * a minute), a CSV or HDR one nothing between two slices' rows (a day's
 * slice of 64 workloads takes minutes): a space this often before the
 * reply, or between the chunks of the text (JSON allows both), tells a
 * client with a read timeout, soakctl's --timeout among them, that soakd
 * is at work.  Text already produced goes out at the same pace. */
#define KEEPALIVE_NS (UINT64_C(1000) * 1000000)

struct slot {
	pthread_t thread;
	bool used;
	atomic_bool finished;
	atomic_bool cancel;
	struct dump_job *job;
	struct ctl_stream *stream;
};

struct dumper {
	struct slot slots[DUMPER_MAX_JOBS];
};

void dump_job_free(struct dump_job *job)
{
	if (!job)
		return;
	free((char *)job->filter.workload);
	free((char *)job->filter.op);
	free(job->log_path);
	json_decref(job->states);
	json_decref(job->reply);
	json_decref(job->sections);
	free(job);
}

int dumper_new(struct dumper **ret)
{
	struct dumper *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

static void reap(struct dumper *p)
{
	for (size_t i = 0; i < DUMPER_MAX_JOBS; i++) {
		struct slot *s = &p->slots[i];
		if (s->used && atomic_load(&s->finished)) {
			pthread_join(s->thread, NULL);
			s->used = false;
		}
	}
}

bool dumper_has_room(struct dumper *p)
{
	reap(p);
	for (size_t i = 0; i < DUMPER_MAX_JOBS; i++)
		if (!p->slots[i].used)
			return true;
	return false;
}

/* --- writing the reply ------------------------------------------------ */

struct writer {
	struct ctl_stream *stream;
	int error;                 /* the first write error: the rest is dropped */
	uint64_t sent_ns;          /* when the last bytes went out (or the job began) */
	bool chunks;               /* the text is an array of strings */
	bool chunk_sent;           /* one is: the next comes after a comma */
};

static int put(struct writer *w, const char *buf, size_t len)
{
	if (w->error == 0)
		w->error = ctl_stream_write(w->stream, buf, len);
	w->sent_ns = mono_ns();
	return w->error;
}

/* Text as the inside of a JSON string. */
static int put_escaped(void *userdata, const char *text, size_t len)
{
	struct writer *w = userdata;
	char buf[16384 + 8];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (n > sizeof(buf) - 8) {
			put(w, buf, n);
			n = 0;
		}
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else if (c < 0x20) {
			n += (size_t)snprintf(buf + n, 8, "\\u%04x", c);
		} else {
			buf[n++] = (char)c;
		}
	}
	if (n)
		put(w, buf, n);
	return w->error;
}

/* Text of the dump: inside its one string, or as the array's next one. */
static int put_text(void *userdata, const char *text, size_t len)
{
	struct writer *w = userdata;

	if (!w->chunks)
		return put_escaped(w, text, len);
	if (len == 0)
		return w->error;
	put(w, w->chunk_sent ? ",\"" : "\"", w->chunk_sent ? 2 : 1);
	w->chunk_sent = true;
	put_escaped(w, text, len);
	return put(w, "\"", 1);
}

/* --- the job ---------------------------------------------------------- */

static void add_reason(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_reason(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(why + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

/* What the run's writer could not put on disk, said before reading. */
static void check_writer(struct dump_job *job, char *why, size_t len)
{
	if (!job->rundir)
		return;
	int r = rundir_sync(job->rundir);
	json_t *st = rundir_status_json(job->rundir);
	json_int_t pending = json_integer_value(json_object_get(st, "pending_bytes"));
	json_int_t dropped = json_integer_value(json_object_get(st, "records_dropped"));
	const char *error = json_string_value(json_object_get(st, "error"));

	if (pending > 0 || (r < 0 && r != -ESRCH))
		add_reason(why, len, "the newest records (%" JSON_INTEGER_FORMAT " bytes) could not "
			   "be written to %s (%s), so this dump lacks them",
			   pending, job->log_path, error ? error : strerror(-r));
	if (dropped > 0)
		add_reason(why, len, "%" JSON_INTEGER_FORMAT " record(s) were dropped while the "
			   "state disk failed and are in no dump", dropped);
	json_decref(st);
}

static bool cancelled(struct slot *s)
{
	return atomic_load(&s->cancel);
}

static bool text_format(enum rundump_format f)
{
	return f == RUNDUMP_CSV || f == RUNDUMP_HDR;
}

/* Reads the log into d, draining text to w as it grows.  0 or -errno;
 * a cut short dump says why in why. */
static int read_log(struct slot *s, struct rundump *d, struct runlog_reader *rd,
		    struct writer *w, char *why, size_t len)
{
	const struct rundump_filter *f = &s->job->filter;
	json_t *rec;
	uint64_t n = 0;
	int r;

	/* The first records (the run's start) before seeking. */
	while (f->since_ns && (r = runlog_next(rd, &rec)) > 0) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		bool interval = type && strcmp(type, "interval") == 0;
		rundump_add(d, rec);
		json_decref(rec);
		if (interval)
			break;
	}
	if (f->since_ns && (r = runlog_seek_run_time(rd, f->since_ns)) < 0)
		add_reason(why, len, "cannot seek in %s: %s", s->job->log_path, strerror(-r));
	while ((r = runlog_next(rd, &rec)) > 0) {
		json_t *start = json_object_get(rec, "start_ns");
		bool past = f->until_ns && json_is_integer(start) &&
			    (uint64_t)json_integer_value(start) >= f->until_ns + UNTIL_SLACK_NS;
		rundump_add(d, rec);
		json_decref(rec);
		if (past)
			break;
		if (++n % CHECK_EVERY)
			continue;
		if (cancelled(s)) {
			add_reason(why, len, "cut short: soakd is stopping or starting a new run");
			return 0;
		}
		bool quiet = mono_ns() - w->sent_ns >= KEEPALIVE_NS;
		if (text_format(s->job->format)) {
			size_t pending = rundump_text_pending(d);
			if ((pending >= DRAIN_BYTES || (quiet && pending)) &&
			    rundump_drain_text(d, put_text, w) < 0)
				return w->error ? w->error : -ENOMEM;
			/* Inside the one string of an old-style reply nothing
			 * can be sent that is not text. */
			if (quiet && !pending && w->chunks && put(w, " ", 1) < 0)
				return w->error;
		} else if (quiet && put(w, " ", 1) < 0) {
			return w->error;
		}
	}
	if (r < 0)
		add_reason(why, len, "reading %s failed after %" PRIu64 " records: %s",
			   s->job->log_path, n, strerror(-r));
	return 0;
}

static void *job_main(void *arg)
{
	struct slot *s = arg;
	struct dump_job *job = s->job;
	struct writer w = { .stream = s->stream, .sent_ns = mono_ns(), .chunks = job->chunks };
	struct runlog_reader *rd = NULL;
	struct rundump *d = NULL;
	char why[1024] = "";
	char *notes = NULL;
	bool text = text_format(job->format);
	int r;

	/* Behind the workloads and the main loop for the CPU. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	if (job->reply) {
		char *line = proto_encode_line(job->reply);
		if (line)
			put(&w, line, strlen(line));
		else
			w.error = -ENOMEM;
		free(line);
		goto out;
	}
	check_writer(job, why, sizeof(why));
	r = runlog_open(job->log_path, &rd);
	d = r == 0 ? rundump_new(job->format, &job->filter) : NULL;
	if (!d) {
		char *line = proto_error_line("cannot read the run's log %s: %s", job->log_path,
					      strerror(r < 0 ? -r : ENOMEM));
		if (line)
			put(&w, line, strlen(line));
		free(line);
		goto out;
	}
	if (text) {
		const char *name = job->format == RUNDUMP_CSV ? "csv" : "hdr";
		char head[64];
		snprintf(head, sizeof(head), "{\"ok\":true,\"format\":\"%s\",\"%s%s\":%s", name,
			 name, job->chunks ? "_chunks" : "", job->chunks ? "[" : "\"");
		put(&w, head, strlen(head));
	}
	/* Out of memory mid-reply: the reply is broken off, not ended as whole. */
	r = read_log(s, d, rd, &w, why, sizeof(why));
	if (r < 0 && !w.error)
		w.error = r;
	if (w.error)
		goto out;
	if (text && rundump_drain_text(d, put_text, &w) < 0) {
		if (!w.error)
			w.error = -ENOMEM;
		goto out;
	}
	if (runlog_corrupt(rd) || runlog_torn(rd))
		if (asprintf(&notes, "%s: %" PRIu64 " damaged record(s) skipped%s", job->log_path,
			     runlog_corrupt(rd),
			     runlog_torn(rd) ? ", a torn last record dropped" : "") < 0)
			notes = NULL;

	size_t k;
	json_t *st;
	json_array_foreach(job->states, k, st) {
		const char *name = json_string_value(json_object_get(st, "name"));
		const char *state = json_string_value(json_object_get(st, "state"));
		if (name && state)
			rundump_set_state(d, name, state,
					  json_string_value(json_object_get(st, "reason")));
	}
	json_t *v = rundump_finish(d);
	if (!v) {
		w.error = -ENOMEM;
		goto out;
	}
	if (notes)
		json_object_set_new(v, "notes", json_string(notes));
	if (!text && job->sections)
		json_object_update(v, job->sections);
	if (why[0]) {
		json_object_set_new(v, "incomplete", json_true());
		json_object_set_new(v, "incomplete_reason", json_string(why));
		log_warning("a dump is incomplete: %s", why);
	}
	if (text) {
		/* What rundump_finish still produced (the last slice, closed
		 * only by the end of the log) follows what was streamed. */
		const char *rest = json_string_value(
			json_object_get(v, job->format == RUNDUMP_CSV ? "csv" : "hdr"));
		if (rest && *rest)
			put_text(&w, rest, strlen(rest));  /* an error stays in w.error */
		json_object_del(v, "ok");
		json_object_del(v, "csv");
		json_object_del(v, "hdr");
		char *tail = json_dumps(v, JSON_COMPACT);
		/* tail is "{...}": its members follow the text's. */
		const char *close = job->chunks ? "]" : "\"";
		if (!tail)
			w.error = -ENOMEM;
		else {
			put(&w, close, 1);
			if (strcmp(tail, "{}") != 0) {
				put(&w, ",", 1);
				put(&w, tail + 1, strlen(tail + 1));
			} else {
				put(&w, "}", 1);
			}
			put(&w, "\n", 1);
		}
		free(tail);
	} else {
		char *line = proto_encode_line(v);
		if (line)
			put(&w, line, strlen(line));
		else
			w.error = -ENOMEM;
		free(line);
	}
	json_decref(v);
out:
	if (w.error && w.error != -EPIPE && w.error != -ECANCELED)
		log_warning_errno(w.error, "a dump could not be sent");
	free(notes);
	rundump_free(d);
	runlog_close(rd);
	ctl_stream_done(s->stream, w.error == 0);
	dump_job_free(job);
	s->job = NULL;
	atomic_store(&s->finished, true);
	return NULL;
}

int dumper_start(struct dumper *p, struct dump_job *job, struct ctl_stream *st)
{
	struct slot *s = NULL;

	reap(p);
	for (size_t i = 0; i < DUMPER_MAX_JOBS && !s; i++)
		if (!p->slots[i].used)
			s = &p->slots[i];
	if (!s) {
		dump_job_free(job);
		return -EBUSY;
	}
	s->job = job;
	s->stream = st;
	atomic_store(&s->finished, false);
	atomic_store(&s->cancel, false);
	int r = -pthread_create(&s->thread, NULL, job_main, s);
	if (r < 0) {
		dump_job_free(job);
		s->job = NULL;
		return r;
	}
	s->used = true;
	return 0;
}

int dumper_send(struct dumper *p, json_t *reply, struct ctl_stream *st)
{
	struct dump_job *job = calloc(1, sizeof(*job));
	if (!job) {
		json_decref(reply);
		return -ENOMEM;
	}
	job->reply = reply;
	return dumper_start(p, job, st);
}

void dumper_cancel_all(struct dumper *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < DUMPER_MAX_JOBS; i++)
		if (p->slots[i].used)
			atomic_store(&p->slots[i].cancel, true);
	for (size_t i = 0; i < DUMPER_MAX_JOBS; i++) {
		struct slot *s = &p->slots[i];
		if (!s->used)
			continue;
		/* A while to say it was cut short, then its client is given
		 * up on. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += CANCEL_GRACE_NS;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		if (pthread_timedjoin_np(s->thread, NULL, &ts) != 0) {
			if (!atomic_load(&s->finished))
				ctl_stream_cancel(s->stream);
			pthread_join(s->thread, NULL);
		}
		s->used = false;
	}
}

void dumper_free(struct dumper *p)
{
	dumper_cancel_all(p);
	free(p);
}
