// SPDX-License-Identifier: GPL-2.0-only
/*
 * A reload's plan: the probes' view of the run, what may not change
 * while a run goes on, and which workloads are kept, replaced, added or
 * removed, prepared before anything runs differently.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "base/loop.h"
#include "config/config_trace.h"
#include "config/obj_config.h"
#include "export/export.h"
#include "results/results.h"
#include "results/rundir.h"
#include "rundump.h"
#include "workload/workload.h"

#include "reload.h"
#include "run/daemon_int.h"

static bool config_owns(const struct run_config *c, const struct workload_config *wc)
{
	return wc >= c->workloads && wc < c->workloads + c->n_workloads;
}

/* Frees the configurations earlier reloads read that nothing uses now. */
void drop_unused_configs(struct daemon *d)
{
	size_t k = 0;
	for (size_t j = 0; j < d->n_reloaded; j++) {
		struct run_config *c = d->reloaded[j];
		bool used = c == d->cfg;
		for (size_t i = 0; !used && i < d->n_workloads; i++)
			used = config_owns(c, d->workloads[i]->cfg);
		if (used)
			d->reloaded[k++] = c;
		else
			config_free(c);
	}
	d->n_reloaded = k;
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The path of scheme://host[:port][/path] ("" without one). */
static const char *url_path(const char *url)
{
	const char *p = url ? strstr(url, "://") : NULL;

	p = p ? strchr(p + 3, '/') : NULL;
	return p ? p : "";
}

/*
 * What moved the objects of a workload redefined by a reload: its ledgers
 * (one a thread) describe the objects where they are, and the replacement
 * goes on with them.  The gateways it goes through may change, the place
 * (bucket, or an HTTP endpoint's path, prefix) and the threads may not.
 */
static const char *objects_moved(const struct workload_config *a,
				 const struct workload_config *b)
{
	if (a->type != WORKLOAD_OBJECT)
		return NULL;
	if (b->type != WORKLOAD_OBJECT)
		return "\"type\"";
	const struct object_config *x = a->object, *y = b->object;
	if (x->protocol != y->protocol)
		return "\"protocol\"";
	if (x->protocol == OBJ_PROTO_S3 && (!same_string(x->bucket, y->bucket) ||
					    x->buckets != y->buckets))
		return "\"bucket\" or \"buckets\"";
	if (x->protocol == OBJ_PROTO_HTTP && strcmp(url_path(x->endpoint), url_path(y->endpoint)))
		return "the endpoint's path";
	if (!same_string(x->prefix, y->prefix) || x->prefixes != y->prefixes)
		return "\"prefix\" or \"prefixes\"";
	if (x->threads != y->threads)
		return "\"threads\"";
	return NULL;
}

void print_trace(const struct run_config *cfg, FILE *out)
{
	trace_config_print(&cfg->trace, out);
}

/* What a reload cannot change: the run itself.  NULL when nothing of it
 * changed, else the setting's name. */
static const char *run_setting_changed(const struct run_config *a, const struct run_config *b)
{
	if (strcmp(a->name, b->name) != 0)
		return "\"run\": \"name\"";
	if (a->duration_ns != b->duration_ns)
		return "\"run\": \"duration\"";
	if (a->interval_ns != b->interval_ns)
		return "\"run\": \"interval\"";
	if (a->slice_ns != b->slice_ns)
		return "\"run\": \"slice\"";
	if (a->exit_on_finish != b->exit_on_finish)
		return "\"run\": \"on_finish\"";
	if (a->start_at_ns != b->start_at_ns)
		return "\"run\": \"start_at\"";
	if (!same_string(a->socket_path, b->socket_path))
		return "\"run\": \"socket\"";
	return NULL;
}

void reload_plan_free(struct reload_plan *p)
{
	for (size_t j = 0; p->cfg && j < p->cfg->n_workloads; j++)
		workload_free(p->fresh[j]);
	exports_free(p->exports);
	config_free(p->cfg);
}

/*
 * Reads the configuration again and works out what changes, preparing
 * every added workload (safety checks, files, connections) before anything
 * runs differently; replacements are built here and prepared by
 * swap_replaced, which can still undo them, so a reload either happens
 * whole or not at all.
 */
/* The targets of `to` (bit k: to->targets[k]) that `from` does not name,
 * by path (the same device under another name is not recognised); the
 * device engine keeps, of these, those new to the run. */
static uint64_t targets_not_in(const struct workload_config *to, const struct workload_config *from)
{
	uint64_t fresh = 0;

	for (size_t k = 0; k < to->n_targets && k < 64; k++) {
		bool known = false;
		for (size_t m = 0; m < from->n_targets && !known; m++)
			known = strcmp(to->targets[k].path, from->targets[m].path) == 0;
		if (!known)
			fresh |= UINT64_C(1) << k;
	}
	return fresh;
}

int plan_reload(struct daemon *d, struct reload_plan *p, char **ret_err)
{
	char *errs = NULL;
	size_t errs_len = 0;
	FILE *ef = open_memstream(&errs, &errs_len);
	int r;

	if (!ef)
		return -ENOMEM;
	r = config_load(d->cfg->path, ef, &p->cfg);
	fclose(ef);
	if (r < 0) {
		/* One located error per line; the last newline is noise. */
		if (errs && errs_len && errs[errs_len - 1] == '\n')
			errs[errs_len - 1] = '\0';
		*ret_err = errs;
		return r;
	}
	free(errs);
	const char *fixed = run_setting_changed(d->cfg, p->cfg);
	if (fixed)
		return asprintf(ret_err, "%s: %s differs from the running configuration; a reload "
				"changes workloads, \"trace\", \"exports\" and \"ctl\", while a new "
				"%s needs a restart (systemctl restart soakd), which starts a new run",
				d->cfg->path, fixed, fixed + 9) < 0 ? -ENOMEM : -EINVAL;

	bool seen[CONFIG_MAX_WORKLOADS] = { false };
	p->n_slots = d->n_workloads;
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		const struct workload_config *wc = &p->cfg->workloads[j];
		size_t i;
		for (i = 0; i < d->n_workloads; i++)
			if (strcmp(d->workloads[i]->cfg->name, wc->name) == 0)
				break;
		if (i < d->n_workloads) {
			seen[i] = true;
			char *was = config_workload_text(d->workloads[i]->cfg);
			char *now = config_workload_text(wc);
			if (!was || !now) {
				free(was);
				free(now);
				return -ENOMEM;
			}
			p->change[j] = !d->removed[i] && strcmp(was, now) == 0 ? RELOAD_KEPT
											: RELOAD_REPLACED;
			free(was);
			free(now);
			p->slot[j] = i;
			const char *moved = p->change[j] == RELOAD_REPLACED
						    ? objects_moved(d->workloads[i]->cfg, wc) : NULL;
			if (moved)
				return asprintf(ret_err, "%s: workload \"%s\": %s changed, but its "
						"objects, which its ledgers describe, stay where they "
						"are: a run keeps a workload's objects in one place. To "
						"move it, stop it (its cleanup deletes them), then reload "
						"it under another name, or start a new run",
						d->cfg->path, wc->name, moved) < 0 ? -ENOMEM : -EINVAL;
		} else if (p->n_slots == CONFIG_MAX_WORKLOADS) {
			return asprintf(ret_err, "%s: workload \"%s\" would be the %dth this soakd has "
					"run (removed ones count until it restarts); restart soakd "
					"to start it", d->cfg->path, wc->name,
					CONFIG_MAX_WORKLOADS + 1) < 0 ? -ENOMEM : -ENOSPC;
		} else {
			p->change[j] = RELOAD_ADDED;
			p->slot[j] = p->n_slots++;
		}
		if (p->change[j] == RELOAD_KEPT)
			continue;
		char err[512];
		r = workload_new(wc, 0, p->cfg->interval_ns, &p->fresh[j], err, sizeof(err));
		/* Before anything stops: a target still held by ops a stream
		 * gave up in flight refuses the whole reload, naming them (a
		 * replacement would otherwise be refused after the workload it
		 * replaces had stopped, and that one not restored either). */
		if (r == 0)
			r = workload_targets_free(p->fresh[j], err, sizeof(err));
		if (r == 0) {
			p->fresh[j]->slot = p->slot[j];
			p->fresh[j]->run_dir = d->rundir ? rundir_path(d->rundir) : NULL;
			/* A replacement opens its devices once the workload it
			 * replaces has let go of them (swap_replaced); it does
			 * not prep devices the run has already aged, only
			 * those it brings in. */
			if (p->change[j] == RELOAD_REPLACED) {
				p->fresh[j]->resuming = true;
				p->fresh[j]->new_targets = targets_not_in(wc, d->workloads[p->slot[j]]->cfg);
			} else
				r = workload_prepare(p->fresh[j], err, sizeof(err));
		}
		if (r < 0)
			return asprintf(ret_err, "%s: workload \"%s\": %s", d->cfg->path, wc->name,
					err) < 0 ? -ENOMEM : r;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		p->remove[i] = !seen[i] && !d->removed[i];

	/* New exports are set up now, so a bad one refuses the reload. */
	const struct export_config *a = &d->cfg->exports, *b = &p->cfg->exports;
	p->exports_changed = !same_string(a->prom_textfile, b->prom_textfile) ||
			     !same_string(a->statsd_address, b->statsd_address) ||
			     !same_string(a->statsd_prefix, b->statsd_prefix);
	if (p->exports_changed && exports_new(b, &p->exports) < 0)
		return asprintf(ret_err, "%s: \"exports\" cannot be set up (see the log above)",
				d->cfg->path) < 0 ? -ENOMEM : -EINVAL;
	return 0;
}

