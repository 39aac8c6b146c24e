// SPDX-License-Identifier: GPL-2.0-only
/*
 * A reload swapped in: replacements prepared and started, or everything
 * restored as it was when one fails, so a reload happens whole or not at
 * all; and the "reload" command's reply.
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

#include "base/log.h"
#include "base/loop.h"
#include "ctl/ctl_server.h"
#include "device/dev_safety.h"
#include "export/export.h"
#include "probes/probes.h"
#include "results/results.h"
#include "results/rundir.h"
#include "rundump.h"
#include "workload/workload.h"

#include "reload.h"
#include "run/daemon_int.h"

static const char *const reload_change_names[] = {
	[RELOAD_KEPT] = "kept",
	[RELOAD_REPLACED] = "replaced",
	[RELOAD_ADDED] = "added",
	[RELOAD_REMOVED] = "removed",
};

/* Starts a new or replacing workload as the configuration says: now, or
 * at its start offset into the run. */
static void start_reloaded(struct daemon *d, size_t i, bool was_running, bool was_pending)
{
	const struct workload_config *wc = d->workloads[i]->cfg;
	uint64_t at = mono_at(d->run_start_ns, wc->start_offset_ns);
	char err[256];

	/* A workload waiting for its start (offset, start_at) waits for the
	 * new definition's; one that ran goes on at once. */
	if (d->state == RUN_STOPPING || (!was_running && !was_pending && !wc->autostart))
		return;
	if (!was_running && (at > mono_ns() || waiting_for_start_at(d, mono_ns()))) {
		d->pending_start_ns[i] = at;
		return;
	}
	if (start_workload(d, i, err, sizeof(err)) < 0)
		log_error("reload: cannot start workload %s: %s", wc->name, err);
}

/* What a replaced workload was, to put it back if its replacement
 * cannot start. */
struct replaced_state {
	const struct workload_config *cfg;
	bool running, stopping;
	uint64_t pending_start_ns;
	uint64_t sched_ns;
	enum workload_state state;
	char reason[WORKLOAD_REASON_MAX];
};

/* Builds the old definition again in slot i, where it left off; old is
 * the released workload itself.  False when it could not be, and the
 * workload is failed (stopped, when soakd is stopping). */
static bool restore_replaced(struct daemon *d, struct reload_plan *p, size_t i,
			     const struct replaced_state *was, struct workload *old)
{
	struct workload *w = NULL;
	char err[512];
	int r;

	if (d->removed[i]) {
		/* An earlier reload removed it; it stays as it was, closed. */
		results_rebind_workload(d->results, i, old);
		d->workloads[i] = old;
		return true;
	}
	d->pending_start_ns[i] = was->pending_start_ns;
	r = workload_new(was->cfg, 0, d->cfg->interval_ns, &w, err, sizeof(err));
	if (r == 0) {
		w->slot = i;
		w->resuming = true;
		w->run_dir = d->rundir ? rundir_path(d->rundir) : NULL;
		w->run_start_ns = d->run_start_ns;
		r = workload_prepare(w, err, sizeof(err));
	}
	if (r == 0) {
		results_rebind_workload(d->results, i, w);
		d->workloads[i] = w;
		workload_free(old);
		if (was->running) {
			r = workload_resume(w, mono_ns(), was->sched_ns, err, sizeof(err));
			if (r == 0) {
				probes_workload_active(d->probes, i, true);
				results_record_state(d->results, i);
				return true;
			}
		} else {
			w->state = was->state;
			snprintf(w->reason, sizeof(w->reason), "%s", was->reason);
			return true;
		}
	}
	/* A SIGTERM or SIGINT during the reload ends the preparations,
	 * the old definition's too: soakd is stopping, and the workload
	 * with it, which is no failure of the workload's (one that failed
	 * for another reason meanwhile still did). */
	bool stopping = (r == -ECANCELED || r == -EINTR) && workload_stop_pending();
	p->stopped_with_soakd |= stopping;
	if (stopping)
		log_notice("reload: workload %s stops with soakd, before its old definition was "
			   "back: %s", was->cfg->name, err);
	else
		log_error("reload: workload %s cannot go on under its old definition either: %s",
			  was->cfg->name, err);
	/* Nor is it to start by itself at its start offset. */
	d->pending_start_ns[i] = 0;
	if (!w || d->workloads[i] != w) {
		/* The old one stays in its slot with its results, ended. */
		workload_free(w);
		results_rebind_workload(d->results, i, old);
		d->workloads[i] = old;
		w = old;
	}
	/* Else built and rebound, but could not resume. */
	w->state = stopping ? WORKLOAD_STOPPED : WORKLOAD_FAILED;
	if (stopping)
		snprintf(w->reason, sizeof(w->reason), "soakd stopped while a reload replaced it");
	else
		snprintf(w->reason, sizeof(w->reason), "a reload could not replace it nor restore "
			 "it: %.180s", err);
	results_record_state(d->results, i);
	return false;
}

/*
 * Stops the workloads a reload replaces (their last intervals are
 * recorded), lets go of their devices and prepares their replacements.
 * If one cannot be prepared, every replaced workload goes on under its
 * old definition where it left off, and the error is returned.
 */
int swap_replaced(struct daemon *d, struct reload_plan *p, bool *was_running,
		  bool *was_pending, bool *ret_lost, char **ret_err)
{
	struct replaced_state *was = calloc(CONFIG_MAX_WORKLOADS, sizeof(*was));
	bool any = false;
	int r = 0;

	if (!was)
		return -ENOMEM;
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		struct workload *old = d->workloads[i];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		any = true;
		was[i].cfg = old->cfg;
		/* Not one stopping (soakctl stop, on_drift, a failure): put
		 * back, it must not run again. */
		was[i].running = !d->removed[i] && old->state == WORKLOAD_RUNNING;
		was[i].stopping = !d->removed[i] && old->state == WORKLOAD_STOPPING;
		was[i].pending_start_ns = d->removed[i] ? 0 : d->pending_start_ns[i];
		was_running[i] = was[i].running;
		was_pending[i] = was[i].pending_start_ns != 0;
		d->pending_start_ns[i] = 0;
		atomic_store(&old->suspend, true);
		workload_request_stop(old, "replaced by a reload");
	}
	uint64_t until = mono_ns() + STOP_TIMEOUT_NS;
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		struct workload *old = d->workloads[i];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		results_wait(d->results, i, until);
		/* Closes its devices (the replacement opens them exclusively),
		 * once a stream past the deadline has ended and been counted. */
		results_release(d->results, i);
		if (was[i].running) {
			/* Its schedule was cut at the stop: the old definition,
			 * if put back, goes on from there. */
			was[i].sched_ns = mono_since(old->started_ns, workload_cut_at(old, mono_ns()));
			results_record_state(d->results, i);
		} else {
			/* One that was stopping has ended meanwhile: its
			 * state, as the main loop would have recorded it. */
			if (was[i].stopping)
				results_record_state(d->results, i);
			was[i].state = old->state;
			snprintf(was[i].reason, sizeof(was[i].reason), "%s", old->reason);
		}
		probes_workload_active(d->probes, i, false);
	}
	for (size_t j = 0; any && j < p->cfg->n_workloads && r == 0; j++) {
		char err[512];
		if (p->change[j] != RELOAD_REPLACED)
			continue;
		r = workload_prepare(p->fresh[j], err, sizeof(err));
		if (r < 0 && asprintf(ret_err, "%s: workload \"%s\": %s", d->cfg->path,
				      p->cfg->workloads[j].name, err) < 0)
			*ret_err = NULL;
	}
	if (r < 0) {
		/* Every replacement lets go of its targets before any old
		 * definition opens them again (two may have swapped devices). */
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED) {
				workload_free(p->fresh[j]);
				p->fresh[j] = NULL;
			}
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED &&
			    !restore_replaced(d, p, p->slot[j], &was[p->slot[j]],
					      d->workloads[p->slot[j]]))
				*ret_lost = true;
	} else {
		for (size_t j = 0; j < p->cfg->n_workloads; j++)
			if (p->change[j] == RELOAD_REPLACED)
				p->old[j] = d->workloads[p->slot[j]];
	}
	free(was);
	return r;
}

/* soakctl reload (systemctl reload): see soakctl(1). */
char *handle_reload(struct daemon *d)
{
	struct reload_plan *p = calloc(1, sizeof(*p));
	char *err = NULL;
	int r;

	if (!p)
		return proto_error_line("out of memory");
	if (d->state == RUN_STOPPING) {
		free(p);
		return proto_error_line("soakd is shutting down");
	}
	/* Its steps or probes are the workload's schedule, judged as they
	 * end: a definition changed under them would judge something else. */
	if (d->certify || d->search) {
		free(p);
		log_error("reload refused: the run %s; restart soakd with --new-run to change it",
			  d->certify ? "certifies" : "searches");
		return proto_error_line("a run that %s cannot be reloaded: its %s are its workload's "
					"schedule; restart soakd with --new-run to change it",
					d->certify ? "certifies" : "searches",
					d->certify ? "steps" : "probes");
	}
	sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
	/* Whatever devices it opens (added, replacements, old definitions
	 * restored), a reload waits for stalled ones about as long as for
	 * one: soakd's loop, and systemd's watchdog, wait with it. */
	dev_safety_share_probe_wait(true);
	d->reloading = true;
	r = plan_reload(d, p, &err);
	if (r < 0) {
		dev_safety_share_probe_wait(false);
		d->reloading = false;
	}
	if (r < 0) {
		char *line;
		if (!err && r == -ENOMEM)
			err = strdup("out of memory");
		/* Every line of it in the journal, where systemctl reload
		 * points. */
		for (char *l = err, *next; l && *l; l = next) {
			next = strchr(l, '\n');
			if (next)
				*next++ = '\0';
			log_error("reload refused: %s", l);
			if (next)
				next[-1] = '\n';
		}
		log_notice("the configuration was not reloaded; soakd runs on with the one it had");
		line = proto_error_line("the configuration was not reloaded (soakd runs on with the "
					"one it had): %s", err ? err : strerror(-r));
		free(err);
		reload_plan_free(p);
		free(p);
		sd_notify(0, "READY=1");
		return line;
	}

	/* Replacements first: they are the part that can still fail. */
	bool was_running[CONFIG_MAX_WORKLOADS] = { false }, was_pending[CONFIG_MAX_WORKLOADS] = { false };
	bool lost = false;
	r = swap_replaced(d, p, was_running, was_pending, &lost, &err);
	dev_safety_share_probe_wait(false);
	d->reloading = false;
	if (r < 0) {
		log_error("reload refused: %s", err ? err : strerror(-r));
		const char *after = "stopped for a moment and go on under their old definitions";
		if (lost && p->stopped_with_soakd)
			after = "stopped, and stay stopped: soakd is stopping";
		else if (lost)
			after = "stopped; one or more could not go on under its old definition "
				"either and failed (status says why)";
		log_notice("the configuration was not reloaded; the workloads it would have "
			   "replaced %s", after);
		char *line = proto_error_line("the configuration was not reloaded (the workloads it "
					      "would have replaced %s): %s", after,
					      err ? err : strerror(-r));
		free(err);
		reload_plan_free(p);
		free(p);
		sd_notify(0, "READY=1");
		return line;
	}

	/* Removed workloads stop; their last intervals are recorded as they
	 * end. */
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i]) {
			d->pending_start_ns[i] = 0;
			workload_request_stop(d->workloads[i], "removed from the configuration by a reload");
		}
	uint64_t until = mono_ns() + STOP_TIMEOUT_NS;
	for (size_t i = 0; i < d->n_workloads; i++) {
		if (!p->remove[i])
			continue;
		bool was_active = workload_is_active(d->workloads[i]);
		results_wait(d->results, i, until);
		/* Still cleaning up its objects: the reload, and every other
		 * workload's record meanwhile, does not wait for that. */
		if (workload_is_active(d->workloads[i])) {
			log_warning("%s: removed by a reload and still ending %.0f s after its stop "
				    "(its cleanup): cut short, as a second soakctl stop would; stop a "
				    "workload before a reload removes it to let its cleanup finish",
				    d->workloads[i]->cfg->name, STOP_TIMEOUT_NS / 1e9);
			workload_request_stop(d->workloads[i], NULL);
		}
		/* Its devices are free for a later reload's workloads; its
		 * results stay, with the last ops of a stream that ended late. */
		results_release(d->results, i);
		if (was_active)
			results_record_state(d->results, i);
		probes_workload_active(d->probes, i, false);
		d->removed[i] = true;
	}

	/* The new definitions take their slots. */
	json_t *names[4] = { json_array(), json_array(), json_array(), json_array() };
	json_t *arr = json_array();
	for (size_t j = 0; j < p->cfg->n_workloads; j++) {
		size_t i = p->slot[j];
		json_array_append_new(names[p->change[j]], json_string(p->cfg->workloads[j].name));
		if (p->change[j] == RELOAD_KEPT)
			continue;
		p->fresh[j]->run_start_ns = d->run_start_ns;
		if (results_set_workload(d->results, i, p->fresh[j]) < 0) {
			/* Only memory can fail here; the slot keeps what it had. */
			log_error("reload: out of memory setting up workload %s; it is left out",
				  p->cfg->workloads[j].name);
			continue;
		}
		d->workloads[i] = p->fresh[j];
		p->fresh[j] = NULL;
		exports_forget(d->exports, i);
		workload_free(p->old[j]);
		p->old[j] = NULL;
		d->removed[i] = false;
		if (i == d->n_workloads)
			d->n_workloads++;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i])
			json_array_append_new(names[RELOAD_REMOVED],
					      json_string(d->workloads[i]->cfg->name));

	/* The run goes on under the new configuration. */
	bool workloads_changed = json_array_size(names[RELOAD_REPLACED]) ||
				 json_array_size(names[RELOAD_ADDED]) ||
				 json_array_size(names[RELOAD_REMOVED]);
	char *was_trace = config_text(print_trace, d->cfg), *now_trace = config_text(print_trace, p->cfg);
	bool trace_changed = !was_trace || !now_trace || strcmp(was_trace, now_trace) != 0;
	free(was_trace);
	free(now_trace);

	struct run_config **grown = realloc(d->reloaded, (d->n_reloaded + 1) * sizeof(*grown));
	if (grown) {
		d->reloaded = grown;
		d->reloaded[d->n_reloaded++] = p->cfg;
	} else {
		log_error("reload: out of memory keeping the configuration; it leaks");
	}
	d->cfg = p->cfg;
	p->cfg = NULL;
	/* The run's settings are the same; the old file may be freed below. */
	d->results->cfg = d->cfg;
	struct ctl_policy policy = { .read_only_for_all = d->cfg->ctl.read_only_for_all };
	ctl_server_set_policy(d->ctl, &policy);

	struct run_config *view = make_view(d);
	if (view && (workloads_changed || trace_changed)) {
		/* New programs watch the new set of devices and endpoints;
		 * unless "trace" changed, each family keeps its state. */
		enum probe_state was[PROBE_FAMILIES];
		for (int f = 0; f < PROBE_FAMILIES; f++)
			was[f] = probes_state(d->probes, (enum probe_family)f);
		struct probes *old = d->probes;
		d->probes = NULL;
		if (probes_new(view, &d->probes) < 0)
			log_warning("reload: kernel tracing is unavailable (out of memory)");
		for (int f = 0; f < PROBE_FAMILIES && !trace_changed; f++) {
			char why[PROBE_REASON_LEN];
			if (was[f] != PROBE_UNAVAILABLE &&
			    probes_state(d->probes, (enum probe_family)f) != was[f] &&
			    probes_set(d->probes, (enum probe_family)f, was[f] == PROBE_ON, why,
				       sizeof(why)) < 0)
				log_warning("reload: %s", why);
		}
		for (size_t i = 0; i < d->n_workloads; i++)
			probes_workload_active(d->probes, i, workload_is_active(d->workloads[i]));
		/* The new programs count now: the old ones' counts end here. */
		probes_carry(d->probes, old);
		probes_free(old);
		d->results->probes = d->probes;
		d->results->record_extra_userdata = d->probes;
	}
	if (view && d->view && !(workloads_changed || trace_changed)) {
		/* The probes keep the view they have: the same workloads, and
		 * the same trace settings, now read from the new configuration
		 * (the old one may be freed below). */
		struct workload_config *entries = d->view->workloads;
		*d->view = *view;
		free(view->workloads);
		free(view);
		d->view->workloads = entries;
	} else if (view) {
		free_view(d->view);
		d->view = view;
	}
	if (p->exports_changed) {
		exports_carry_sent(p->exports, d->exports);
		exports_free(d->exports);
		d->exports = p->exports;
		p->exports = NULL;
	}

	/* The log says what changed before plan.json does: a crash between
	 * the two starts a new run rather than mixing definitions. */
	uint64_t now = mono_ns();
	json_t *rec = json_pack("{s:s,s:I,s:I,s:O,s:O,s:O,s:O}", "type", "reload",
				"run_ns", (json_int_t)mono_since(d->run_start_ns, now),
				"wall_ns", (json_int_t)wall_ns(), "kept", names[RELOAD_KEPT],
				"replaced", names[RELOAD_REPLACED], "added", names[RELOAD_ADDED],
				"removed", names[RELOAD_REMOVED]);
	if (d->rundir && rec) {
		rundir_append(d->rundir, rec);
		rundir_sync(d->rundir);
	}
	json_decref(rec);
	char *plan = config_text(config_print_plan, d->cfg);
	if (plan) {
		free(d->plan);
		d->plan = plan;
		if (d->rundir && (r = rundir_set_plan(d->rundir, plan)) < 0)
			log_warning_errno(r, "reload: cannot record the new plan in %s/plan.json; "
					  "the run's records wait until it is written (a restart "
					  "before that starts a new run)", rundir_path(d->rundir));
	}

	/* Start what the new configuration runs. */
	for (size_t j = 0; j < d->cfg->n_workloads; j++)
		if (p->change[j] != RELOAD_KEPT)
			start_reloaded(d, p->slot[j], was_running[p->slot[j]], was_pending[p->slot[j]]);
	drop_unused_configs(d);

	char *list[4];
	for (int c = 0; c < 4; c++) {
		list[c] = json_dumps(names[c], JSON_COMPACT);
		json_decref(names[c]);
	}
	log_notice("configuration reloaded: kept %s, replaced %s, added %s, removed %s",
		   list[0] ? list[0] : "?", list[1] ? list[1] : "?", list[2] ? list[2] : "?",
		   list[3] ? list[3] : "?");
	for (int c = 0; c < 4; c++)
		free(list[c]);
	sd_notify(0, "READY=1");

	for (size_t j = 0; j < d->cfg->n_workloads; j++) {
		struct workload *w = d->workloads[p->slot[j]];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", w->cfg->name, "state",
						     workload_state_name(w->state), "reason",
						     reload_change_names[p->change[j]]));
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		if (p->remove[i])
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name",
				d->workloads[i]->cfg->name, "state",
				workload_state_name(d->workloads[i]->state), "reason", "removed"));
	reload_plan_free(p);
	free(p);
	return reply(json_pack("{s:b,s:o}", "ok", 1, "workloads", arr));
}

