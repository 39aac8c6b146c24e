// SPDX-License-Identifier: GPL-2.0-only
#include "runfiles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "transact.h"

static json_t *load_beside(const char *dir_or_log, const char *name)
{
	char path[4200];
	struct stat st;

	if (stat(dir_or_log, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/%s", dir_or_log, name);
	} else {
		const char *slash = strrchr(dir_or_log, '/');
		int n = slash ? (int)(slash - dir_or_log) : 1;
		snprintf(path, sizeof(path), "%.*s/%s", n, slash ? dir_or_log : ".", name);
	}
	return json_load_file(path, 0, NULL);
}

static uint64_t plan_slice_ns(json_t *plan)
{
	const char *text = json_string_value(json_object_get(json_object_get(plan, "run"), "slice"));
	const char *why;
	uint64_t ns = 0;

	if (text && parse_duration(text, &ns, &why) < 0)
		ns = 0;
	return ns;
}

int run_files_load(struct run_files *rf, const char *dir_or_log, uint64_t slice_ns)
{
	char err[4400] = "";

	memset(rf, 0, sizeof(*rf));
	snprintf(rf->source, sizeof(rf->source), "%s", dir_or_log);
	rf->plan = load_beside(dir_or_log, "plan.json");
	rf->devices = load_beside(dir_or_log, "devices.json");
	rf->m = runmodel_new(slice_ns ? slice_ns : plan_slice_ns(rf->plan));
	if (!rf->m) {
		fprintf(stderr, "soakctl: out of memory\n");
		return EXIT_FAILURE;
	}
	/* A dump (JSON) rather than a run directory or log. */
	FILE *f = fopen(dir_or_log, "re");
	int c = ' ';
	while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\n' || c == '\t'))
		;
	if (f)
		fclose(f);
	if (c == '{') {
		json_error_t je;
		json_t *dump = json_load_file(dir_or_log, 0, &je);
		int r = dump ? runmodel_add_dump(rf->m, dump) : -EINVAL;
		json_decref(dump);
		if (r < 0) {
			fprintf(stderr, "soakctl: %s: %s\n", dir_or_log,
				!dump ? je.text : r == -EINVAL ? "not a dump of soakd with its histograms "
								 "(soakctl dump or merge --format json)"
							       : strerror(-r));
			return EXIT_REFUSED;
		}
		return 0;
	}
	if (runmodel_load(rf->m, dir_or_log, err, sizeof(err)) < 0) {
		fprintf(stderr, "soakctl: %s\n", err);
		return EXIT_REFUSED;
	}
	return 0;
}

void run_files_done(struct run_files *rf)
{
	runmodel_free(rf->m);
	json_decref(rf->plan);
	json_decref(rf->devices);
	memset(rf, 0, sizeof(*rf));
}

FILE *output_open(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "we");

	if (!f)
		fprintf(stderr, "soakctl: cannot create %s: %s\n", path, strerror(errno));
	return f;
}

int output_close(FILE *f, const char *path)
{
	bool bad = fflush(f) != 0 || ferror(f);

	if (f != stdout && fclose(f) != 0)
		bad = true;
	if (bad) {
		fprintf(stderr, "soakctl: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
		return EXIT_REFUSED;
	}
	return 0;
}
