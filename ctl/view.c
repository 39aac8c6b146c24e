// SPDX-License-Identifier: GPL-2.0-only
#include "view.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "offline.h"
#include "parse.h"
#include "plot.h"
#include "proto.h"
#include "runfiles.h"

#define EXIT_REFUSED 1
#define EXIT_NO_REPLY 2
#define MAX_CSV_BYTES (1u << 30)
/* After the tick: soakd ticks 20 ms after each boundary, then merges. */
#define WATCH_AFTER_TICK_S 0.15

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Sleeps up to s seconds; false when a signal cut it short. */
static bool nap(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - floor(s)) * 1e9) };

	if (s <= 0)
		return !interrupted;
	return nanosleep(&ts, NULL) == 0 && !interrupted;
}

static double number(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* Until just after the run's next interval closes. */
static double until_next_interval(json_t *status)
{
	double interval = number(status, "interval_s"), elapsed = number(status, "elapsed_s");
	const char *state = json_string_value(json_object_get(status, "state"));

	if (interval <= 0)
		return 1;
	if (state && strcmp(state, "waiting") == 0) {
		double in = number(status, "starts_in_s");
		return in > 0 && in < interval ? in + interval + WATCH_AFTER_TICK_S : interval;
	}
	double next = (floor(elapsed / interval) + 1) * interval + WATCH_AFTER_TICK_S - elapsed;
	return next > interval ? next - interval : next;
}

int view_watch(const struct view_client *c, double interval_s)
{
	struct sigaction sa = { .sa_handler = on_signal };  /* no SA_RESTART: wake the nap */
	bool tty = isatty(STDOUT_FILENO), seen = false;
	char last_state[32] = "", last_run[128] = "";
	int r = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!interrupted) {
		json_t *req = proto_request_new(PROTO_STATUS), *reply = NULL;
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;

		if (!req) {
			fprintf(stderr, "soakctl: out of memory\n");
			return EXIT_FAILURE;
		}
		r = c->request(c->userdata, req, &reply);
		json_decref(req);
		if (interrupted) {
			json_decref(reply);
			break;
		}
		if (r == EXIT_NO_REPLY && seen) {
			fprintf(stderr, "soakctl: soakd went away (run %s was %s); watch ends\n",
				last_run, last_state);
			return EXIT_NO_REPLY;
		}
		if (r)
			return r;
		seen = true;
		snprintf(last_state, sizeof(last_state), "%s",
			 json_string_value(json_object_get(reply, "state")) ?: "?");
		snprintf(last_run, sizeof(last_run), "%s",
			 json_string_value(json_object_get(reply, "run")) ?: "?");

		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		/* A terminal shows one table in place; a pipe or file gets
		 * one table per interval, as aisloader prints its stats. */
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("--- %s ", stamp);
		if (interval_s > 0)
			printf("(every %gs; Ctrl-C ends)\n", interval_s);
		else
			printf("(every interval; Ctrl-C ends)\n");
		c->print_status(reply);
		if (!tty)
			putchar('\n');
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "soakctl: cannot write output: %s\n", strerror(errno));
			json_decref(reply);
			return EXIT_REFUSED;
		}
		double wait = interval_s > 0 ? interval_s : until_next_interval(reply);
		json_decref(reply);
		if (!nap(wait))
			break;
	}
	return 0;
}

/* --- plot ------------------------------------------------------------- */

static char *read_all(const char *path, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len + 65536 + 1 > cap) {
			char *grown;
			cap = cap ? cap * 2 : 1 << 20;
			if (cap > MAX_CSV_BYTES || !(grown = realloc(buf, cap))) {
				snprintf(err, errlen, "%s is too large (at most %u MiB)", path,
					 MAX_CSV_BYTES >> 20);
				goto fail;
			}
			buf = grown;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	if (f != stdin)
		fclose(f);
	buf[len] = '\0';
	return buf;
fail:
	if (f != stdin)
		fclose(f);
	free(buf);
	return NULL;
}

/* "dir/name.csv" -> "name" */
static void stem(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	if (!*base || strcmp(base, "-") == 0)
		base = "plot";
	n = strcspn(base, ".");
	snprintf(buf, len, "%.*s", (int)(n ? n : strlen(base)), base);
}

static void add_duration(json_t *req, const char *key, uint64_t ns)
{
	char buf[64];

	if (!ns)
		return;
	format_duration(ns, buf, sizeof(buf));
	json_object_set_new(req, key, json_string(buf));
}

/* The strings of a chunked text joined; NULL if it is not an array of
 * strings (or on ENOMEM). */
static char *join_chunks(json_t *chunks)
{
	size_t len = 0, i;
	json_t *c;

	if (!json_is_array(chunks))
		return NULL;
	json_array_foreach(chunks, i, c) {
		if (!json_is_string(c))
			return NULL;
		len += json_string_length(c);
	}
	char *text = malloc(len + 1), *p = text;
	if (!text)
		return NULL;
	json_array_foreach(chunks, i, c) {
		memcpy(p, json_string_value(c), json_string_length(c));
		p += json_string_length(c);
	}
	*p = '\0';
	return text;
}

/* The dump CSV from soakd, and the run's name for the title. */
static int csv_from_soakd(const struct view_client *c, const struct view_plot_options *o,
			  char **ret_csv, char *run, size_t runlen)
{
	json_t *req = proto_request_new(PROTO_STATUS), *reply = NULL;
	int r;

	if (!req)
		return EXIT_FAILURE;
	r = c->request(c->userdata, req, &reply);
	json_decref(req);
	if (r)
		return r;
	snprintf(run, runlen, "%s", json_string_value(json_object_get(reply, "run")) ?: "soakd");
	json_decref(reply);

	req = proto_request_new(PROTO_DUMP);
	if (!req)
		return EXIT_FAILURE;
	json_object_set_new(req, "format", json_string("csv"));
	/* In chunks: soakd's keep-alives between them hold the read timeout
	 * off while a long slice is read. */
	json_object_set_new(req, "chunks", json_true());
	add_duration(req, "since", o->since_ns);
	add_duration(req, "until", o->until_ns);
	add_duration(req, "slice", o->slice_ns);
	if (o->workload)
		json_object_set_new(req, "workload", json_string(o->workload));
	if (o->op)
		json_object_set_new(req, "op", json_string(o->op));
	r = c->request(c->userdata, req, &reply);
	json_decref(req);
	if (r)
		return r;
	*ret_csv = join_chunks(json_object_get(reply, "csv_chunks"));
	json_decref(reply);
	if (!*ret_csv) {
		fprintf(stderr, "soakctl: soakd's dump has no CSV text\n");
		return EXIT_NO_REPLY;
	}
	return 0;
}

static int csv_from_run_dir(const struct view_plot_options *o, char **ret_csv)
{
	struct rundump_filter f = { .since_ns = o->since_ns, .until_ns = o->until_ns,
				    .slice_ns = o->slice_ns, .workload = o->workload, .op = o->op };
	json_t *reply = NULL;
	char err[512] = "";

	if (offline_dump(o->run_dir, RUNDUMP_CSV, &f, &reply, err, sizeof(err)) < 0) {
		fprintf(stderr, "soakctl: %s\n", err);
		return EXIT_REFUSED;
	}
	const char *csv = json_string_value(json_object_get(reply, "csv"));
	*ret_csv = csv ? strdup(csv) : NULL;
	json_decref(reply);
	if (!*ret_csv) {
		fprintf(stderr, "soakctl: %s: no CSV to plot\n", o->run_dir);
		return EXIT_REFUSED;
	}
	return 0;
}

static int write_svg(const struct plot *p, const char *path)
{
	FILE *f = output_open(path);

	if (!f)
		return EXIT_REFUSED;
	int r = plot_write_svg(p, f);
	if (r < 0) {
		fprintf(stderr, "soakctl: cannot write %s: %s\n", path, strerror(-r));
		output_discard(f);
		return EXIT_REFUSED;
	}
	return output_close(f, path) != 0 ? EXIT_REFUSED : 0;
}

int view_plot(const struct view_client *c, const struct view_plot_options *o)
{
	struct plot_filter filter = { .workload = o->workload, .op = o->op };
	char name[128] = "plot", title[256], output[256], err[512] = "";
	char **csvs = NULL;
	int n = o->n_csv_files > 0 ? o->n_csv_files : 1, r = 0;
	struct plot *p = NULL;

	csvs = calloc((size_t)n, sizeof(char *));
	if (!csvs)
		return EXIT_FAILURE;
	if (o->n_csv_files > 0) {
		for (int i = 0; i < n && r == 0; i++) {
			csvs[i] = read_all(o->csv_files[i], err, sizeof(err));
			if (!csvs[i]) {
				fprintf(stderr, "soakctl: %s\n", err);
				r = EXIT_REFUSED;
			}
		}
		stem(o->csv_files[0], name, sizeof(name));
		snprintf(title, sizeof(title), "soakd: %s%s", o->csv_files[0], n > 1 ? " and more" : "");
	} else if (o->run_dir) {
		r = csv_from_run_dir(o, &csvs[0]);
		stem(o->run_dir, name, sizeof(name));
		snprintf(title, sizeof(title), "soakd run %s", name);
	} else {
		char host[64] = "";
		r = csv_from_soakd(c, o, &csvs[0], name, sizeof(name));
		gethostname(host, sizeof(host) - 1);
		snprintf(title, sizeof(title), "soakd run %s%s%s", name, host[0] ? " on " : "", host);
	}
	if (r)
		goto out;

	p = plot_new(title);
	if (!p) {
		r = EXIT_FAILURE;
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (plot_add_csv(p, csvs[i], &filter, err, sizeof(err)) < 0) {
			fprintf(stderr, "soakctl: %s: %s\n", o->n_csv_files > 0 ? o->csv_files[i] : "dump",
				err);
			r = EXIT_REFUSED;
			goto out;
		}
	if (plot_series_count(p) == 0) {
		fprintf(stderr, "soakctl: no intervals to plot%s%s%s%s (is the run past its first "
				"interval?)\n", o->workload ? " for workload " : "",
			o->workload ? o->workload : "", o->op ? " and op " : "", o->op ? o->op : "");
		r = EXIT_REFUSED;
		goto out;
	}
	snprintf(output, sizeof(output), "%s.svg", name);
	r = write_svg(p, o->output ? o->output : output);
	if (r == 0 && !(o->output && strcmp(o->output, "-") == 0))
		fprintf(stderr, "soakctl: wrote %s (%zu series)\n", o->output ? o->output : output,
			plot_series_count(p));
out:
	plot_free(p);
	for (int i = 0; i < n; i++)
		free(csvs[i]);
	free(csvs);
	return r;
}
