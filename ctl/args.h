/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_ARGS_H
#define SOAK_CTL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "report.h"

/* soakctl's command line: the options, the help, and the request they make. */

#define MAX_ARGS 256

struct options {
	const char *socket;
	double timeout_s;
	const char *format;
	bool json;
	bool report_options_given;
	bool window_given, new_run;
	uint64_t since_ns, until_ns;
	const char *run_dir;          /* dump/report a recorded run, without soakd */
	const char *output;           /* plot */
	const char *html;             /* report --html, cmp --html */
	double min_change_pct;        /* cmp; < 0: not given */
	double watch_interval_s;      /* watch; 0: the run's interval */
	const char *thresholds, *limits;  /* parsed once all options are read */
	struct report_options report;
	const char *args[MAX_ARGS];   /* args[0] is the command */
	int n_args;
};

/* Prints why the command line is wrong, and the usage line; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_args(int argc, char **argv, struct options *o);
/* The control socket: --socket, $SOAKD_SOCKET, systemd's runtime directory, or the default. */
const char *socket_path(const struct options *o, char *buf, size_t buflen);
/* Build the request; returns 0 or an exit code after saying why. */
int build_request(const struct options *o, json_t **ret);

#endif
