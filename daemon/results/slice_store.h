/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_SLICE_STORE_H
#define SOAK_SLICE_STORE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Where the closed slices' histograms wait for a dump or a checkpoint.  A
 * run keeps one slice per hour for every op of every workload, each with
 * two histograms of a few KiB as text: over days and tens of workloads,
 * megabytes that are read only when asked for.  They go to an unnamed file
 * (O_TMPFILE) in the run's directory, which no path names and which goes
 * with the process; memory holds where each text is.  Without a directory
 * (no state kept), or where the file cannot be made or written (a full
 * disk), a text stays in memory instead: nothing measured is lost for the
 * lack of a place to put it aside.
 */
struct slice_text {
	char *mem;          /* the text, if kept in memory; else NULL */
	uint64_t off;       /* else: where it is in the store's file */
	uint32_t len;
};

struct slice_store {
	int fd;             /* -1: none (yet) */
	uint64_t end;       /* the file's length */
	bool tried;         /* an open was attempted */
	bool warned;        /* a write failed and was logged */
};

/* A store with no file yet (slice_store_open makes one). */
void slice_store_init(struct slice_store *s);
/* Makes the file in directory dir (NULL: keep texts in memory). */
void slice_store_open(struct slice_store *s, const char *dir);
void slice_store_close(struct slice_store *s);

/* Puts text aside in t: 0, or -ENOMEM (t empty). */
int slice_text_put(struct slice_store *s, struct slice_text *t, const char *text);
/* The text of t, malloc'd, or NULL (out of memory, or the file could not
 * be read: the error is logged). */
char *slice_text_get(const struct slice_store *s, const struct slice_text *t);
void slice_text_free(struct slice_text *t);

#endif
