/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reloading the configuration while a run goes on: reload_plan.c works
 * out what changes and prepares it, reload.c swaps it in (or rolls it
 * back) and answers the "reload" command.  The run's command handlers
 * (run/commands.c) call handle_reload; the plan types are for these files.
 * Reload depends on the run (run/daemon_int.h), never the other way round.
 */
#ifndef SOAK_RELOAD_H
#define SOAK_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config/config.h"

struct daemon;
struct exports;
struct workload;

enum reload_change { RELOAD_KEPT, RELOAD_REPLACED, RELOAD_ADDED, RELOAD_REMOVED };
struct reload_plan {
	struct run_config *cfg;
	/* Per new workload j: its slot, and its new workload object unless kept. */
	size_t slot[CONFIG_MAX_WORKLOADS];
	enum reload_change change[CONFIG_MAX_WORKLOADS];
	struct workload *fresh[CONFIG_MAX_WORKLOADS];
	struct workload *old[CONFIG_MAX_WORKLOADS];  /* replaced, released, freed once swapped */
	bool remove[CONFIG_MAX_WORKLOADS];   /* per slot */
	bool exports_changed;
	/* A replaced workload's old definition could not be put back because
	 * soakd is stopping (its preparation ended by the SIGTERM): stopped. */
	bool stopped_with_soakd;
	struct exports *exports;             /* the new ones, when changed */
	size_t n_slots;                      /* slots after the reload */
};

/* Frees the configurations earlier reloads read that nothing uses now. */
void drop_unused_configs(struct daemon *d);

void print_trace(const struct run_config *cfg, FILE *out);

void reload_plan_free(struct reload_plan *p);

/*
 * Reads the configuration again and works out what changes, preparing
 * every added workload (safety checks, files, connections) before anything
 * runs differently; replacements are built here and prepared by
 * swap_replaced, which can still undo them, so a reload either happens
 * whole or not at all.
 */
int plan_reload(struct daemon *d, struct reload_plan *p, char **ret_err);

/*
 * Stops the workloads a reload replaces (their last intervals are
 * recorded), lets go of their devices and prepares their replacements.
 * If one cannot be prepared, every replaced workload goes on under its
 * old definition where it left off, and the error is returned; one that
 * cannot (its device stalls now) is failed, and *ret_lost set.
 */
int swap_replaced(struct daemon *d, struct reload_plan *p, bool *was_running,
		  bool *was_pending, bool *ret_lost, char **ret_err);

/* soakctl reload (systemctl reload): see soakctl(1). */
char *handle_reload(struct daemon *d);

#endif
