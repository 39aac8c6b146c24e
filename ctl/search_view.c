// SPDX-License-Identifier: GPL-2.0-only
/*
 * soakctl plot's second picture: a run with a capacity search gets
 * NAME-search.svg beside NAME.svg, the search's curve (certify_print.h),
 * from soakd's status or from the run directory's log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify_print.h"
#include "proto.h"
#include "runfiles.h"
#include "search_view.h"
#include "verdicts.h"

/* The "search" of a recorded run: its probes and answer from the log. */
static json_t *search_from_log(const char *run_dir)
{
	json_t *all = json_object(), *search;

	if (!all || verdicts_from_log(run_dir, all) < 0) {
		json_decref(all);
		return NULL;
	}
	search = json_incref(json_object_get(all, "search"));
	json_decref(all);
	return search;
}

static json_t *search_from_soakd(const struct view_client *c, char *name, size_t len)
{
	json_t *req = proto_request_new(PROTO_STATUS), *reply = NULL, *search;

	if (!req || c->request(c->userdata, req, &reply)) {
		json_decref(req);
		return NULL;
	}
	json_decref(req);
	snprintf(name, len, "%s", json_string_value(json_object_get(reply, "run")) ?: "soakd");
	search = json_incref(json_object_get(reply, "search"));
	json_decref(reply);
	return search;
}

/* A run directory's name, as view.c names its plot. */
static void dir_name(const char *dir, char *name, size_t len)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	const char *start = dir;
	for (size_t i = 0; i < n; i++)
		if (dir[i] == '/')
			start = dir + i + 1;
	snprintf(name, len, "%.*s", (int)(dir + n - start), start);
}

int search_view_plot(const struct view_client *c, const struct view_plot_options *o)
{
	char path[300], name[128] = "plot", title[160];
	json_t *search = NULL;
	int r = 0;

	if (o->n_csv_files > 0)
		return 0;   /* CSV files carry no search */
	if (o->run_dir) {
		search = search_from_log(o->run_dir);
		dir_name(o->run_dir, name, sizeof(name));
	} else {
		search = search_from_soakd(c, name, sizeof(name));
	}
	snprintf(title, sizeof(title), "soakd run %s", name);

	if (!search)
		return 0;
	/* Beside the main plot; not on stdout, where that one goes. */
	if (o->output && strcmp(o->output, "-") != 0) {
		const char *dot = strrchr(o->output, '.');
		int stem = dot ? (int)(dot - o->output) : (int)strlen(o->output);
		snprintf(path, sizeof(path), "%.*s-search.svg", stem, o->output);
	} else {
		snprintf(path, sizeof(path), "%s-search.svg", name);
	}
	FILE *f = output_open(path);
	if (!f) {
		json_decref(search);
		return EXIT_FAILURE;
	}
	r = search_plot_svg(search, title, f);
	if (r == 0 && output_close(f, path) != 0) {
		json_decref(search);
		return EXIT_FAILURE;
	}
	if (r != 0)
		output_discard(f);      /* no curve (ENOENT), or it failed */
	if (r == 0)
		fprintf(stderr, "soakctl: wrote %s (the search's curve, %zu probes)\n", path,
			json_array_size(json_object_get(search, "curve")));
	else if (r != -ENOENT)
		fprintf(stderr, "soakctl: cannot write %s: %s\n", path, strerror(-r));
	json_decref(search);
	return r == 0 || r == -ENOENT ? 0 : EXIT_FAILURE;
}
