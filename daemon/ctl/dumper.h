/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DUMPER_H
#define SOAK_DUMPER_H

#include <stdbool.h>

#include <jansson.h>

#include "ctl_server.h"
#include "results/rundir.h"
#include "rundump.h"

/*
 * Dumps read from the run's log, built off the main loop: each on a thread
 * of its own (niced, so workloads and the loop come first), at most
 * DUMPER_MAX_JOBS at once, streaming its reply to the client as the log is
 * read (ctl_server_defer).  The main loop only hands the request over, so
 * status and the interval ticks go on however long the log is.
 *
 * The reply is one JSON line, as every reply is, but CSV and HDR text comes
 * first and is written as it is produced:
 *   {"ok":true,"format":"csv","csv":"...text...","run":...,"workloads":[...]}
 * so a client may print the text while it reads and one that reads the
 * whole line first still can.  Asked with "chunks" (soakctl does), the text
 * is an array of strings, "csv_chunks":["...","..."], with a space between
 * two every KEEPALIVE_NS that the log gives no text (proto.h).  A dump that
 * may lack records says
 * "incomplete": true and why in "incomplete_reason" (records still in
 * memory because the state disk is full, records dropped, a read error, a
 * dump cut short because soakd stops).
 */

#define DUMPER_MAX_JOBS 4

struct dump_job {
	enum rundump_format format;
	bool chunks;                   /* CSV, HDR: the text as an array of strings */
	struct rundump_filter filter;  /* workload and op strings owned by the job */
	char *log_path;
	struct rundir *rundir;         /* synced first; valid until dumper_cancel_all */
	json_t *states;                /* [{name, state, reason}]: the run's view now */
	json_t *reply;                 /* set: only encode and send this (report, totals) */
	json_t *sections;              /* JSON dump: keys set into its reply as they are
				        * (the run's certify, search, drift) */
};

struct dumper;

int dumper_new(struct dumper **ret);
bool dumper_has_room(struct dumper *p);
/* Takes job (and frees it, also on failure) and answers on st; 0 or -errno. */
int dumper_start(struct dumper *p, struct dump_job *job, struct ctl_stream *st);
/* A reply built on the loop but large (a month's report): encoded and
 * sent by a dumper thread.  Takes reply; 0 or -errno (-EBUSY: no room). */
int dumper_send(struct dumper *p, json_t *reply, struct ctl_stream *st);
/* Cuts the dumps under way short (they say so) and waits for them. */
void dumper_cancel_all(struct dumper *p);
void dumper_free(struct dumper *p);

void dump_job_free(struct dump_job *job);

#endif
