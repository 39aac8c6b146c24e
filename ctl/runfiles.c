// SPDX-License-Identifier: GPL-2.0-only
#include "runfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"
#include "transact.h"

#define RUN_FILE_MAX (4 << 20)

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
	/* soakd writes a few KiB; one of 100 MB (a directory from elsewhere)
	 * took 4.6 GB to read and went whole into the report.  Left out. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	json_t *j = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= RUN_FILE_MAX)
		j = json_loadfd(fd, 0, NULL);
	else if (fd >= 0)
		fprintf(stderr, "soakctl: %s left out: not a regular file of at most %d KiB\n", path,
			RUN_FILE_MAX / 1024);
	if (fd >= 0)
		close(fd);
	return j;
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

uint64_t run_files_plan_slice(const char *dir_or_log)
{
	json_t *plan = load_beside(dir_or_log, "plan.json");
	uint64_t ns = plan_slice_ns(plan);

	json_decref(plan);
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

/*
 * An output is written beside its path under a hidden name, then renamed
 * over it: a write that fails leaves the old file as it was.  A symlink at
 * the path (planted in /tmp, say) is refused, not written through; a
 * device or a pipe (/dev/null, a FIFO) is written as it is.  The files
 * open at once: few (a plot and its search's curve).
 */
static struct {
	FILE *f;
	char *tmp;
} outputs[4];

FILE *output_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return stdout;
	/* Opened once, not following a link, and judged on the descriptor:
	 * a check of the path before an open can be raced by a symlink. */
	struct stat st;
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		fprintf(stderr, "soakctl: %s is a symbolic link: not written through (write to "
				"where it points, or remove it)\n", path);
		return NULL;
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		FILE *f = fdopen(fd, "w");
		if (!f) {
			fprintf(stderr, "soakctl: cannot open %s: %s\n", path, strerror(errno));
			close(fd);
		}
		return f;
	}
	if (fd >= 0) {
		close(fd);
	} else if (errno != ENOENT && errno != EISDIR && lstat(path, &st) == 0 &&
		   !S_ISREG(st.st_mode)) {
		/* A device we may not open is not replaced by a file. */
		fprintf(stderr, "soakctl: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t slot = 0;
	while (slot < sizeof(outputs) / sizeof(outputs[0]) && outputs[slot].f)
		slot++;
	const char *base = strrchr(path, '/');
	int dir = base ? (int)(base - path) + 1 : 0;
	char *tmp = NULL;
	fd = -1;
	if (slot == sizeof(outputs) / sizeof(outputs[0]) ||
	    asprintf(&tmp, "%.*s.%s.XXXXXX", dir, path, path + dir) < 0) {
		tmp = NULL;
		errno = ENOMEM;
	} else if ((fd = mkostemp(tmp, O_CLOEXEC)) >= 0) {
		mode_t mask = umask(0);
		umask(mask);
		if (fchmod(fd, 0666 & ~mask) == 0 && (outputs[slot].f = fdopen(fd, "w"))) {
			outputs[slot].tmp = tmp;
			return outputs[slot].f;
		}
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
	}
	fprintf(stderr, "soakctl: cannot create %s: %s\n", path, strerror(errno));
	free(tmp);
	return NULL;
}

/* Its slot's temporary name, the slot emptied; NULL for stdout. */
static char *output_forget(FILE *f)
{
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		if (outputs[i].f == f && f) {
			char *tmp = outputs[i].tmp;
			outputs[i].f = NULL;
			outputs[i].tmp = NULL;
			return tmp;
		}
	return NULL;
}

int output_close(FILE *f, const char *path)
{
	bool bad = fflush(f) != 0 || ferror(f);
	char *tmp = output_forget(f);

	if (f != stdout && fclose(f) != 0)
		bad = true;
	if (!bad && tmp && rename(tmp, path) != 0)
		bad = true;
	if (bad) {
		fprintf(stderr, "soakctl: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
		if (tmp)
			unlink(tmp);
	}
	free(tmp);
	return bad ? EXIT_REFUSED : 0;
}

void output_discard(FILE *f)
{
	char *tmp = output_forget(f);

	if (f != stdout)
		fclose(f);
	if (tmp)
		unlink(tmp);
	free(tmp);
}
