// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workloads built and prepared (set_up, before the run begins: a
 * verify fill or check, a prep, each on the main thread): their progress
 * kept for status, the control socket and signals served meanwhile, and
 * a stop that ends the preparation.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "base/log.h"
#include "base/loop.h"
#include "ctl/ctl_server.h"
#include "results/rundir.h"
#include "workload/workload.h"

#include "daemon_int.h"

/*
 * The workloads' progress while they are prepared, on this thread: kept
 * for status, and the loop is turned (without waiting) so the control
 * socket answers and signals are read.  Outside set_up's prepare (a
 * reload's new workload), only a pending SIGTERM or SIGINT stops it, and
 * during a reload the running workloads' intervals are recorded as they
 * end.
 */
bool prepare_progress(void *userdata, const struct workload_progress *p)
{
	struct daemon *d = userdata;
	typeof(d->preparing) *pr = &d->preparing;
	uint64_t now = mono_ns();

	if (!pr->active) {
		/* A reload records the running workloads' intervals (and
		 * pings); a new run's (soakctl start --new-run) has none
		 * running, but systemd's watchdog still waits on the loop. */
		if (d->reloading)
			tick_records(d);
		else
			daemon_watchdog(d, now);
		return !workload_stop_pending();
	}
	const char *target = p->target ? p->target : "", *what = p->what ? p->what : "";
	if (strcmp(pr->target, target) != 0 || strcmp(pr->what, what) != 0) {
		snprintf(pr->target, sizeof(pr->target), "%s", target);
		snprintf(pr->what, sizeof(pr->what), "%s", what);
		pr->since_ns = now;
		pr->since_done = p->done;
	}
	snprintf(pr->unit, sizeof(pr->unit), "%s", p->unit ? p->unit : "");
	pr->done = p->done;
	pr->total = p->total;
	if (now >= pr->next_poll_ns) {
		pr->next_poll_ns = now + 10 * 1000000u;
		int r = loop_run_once(d->loop, 0);
		if (r < 0)
			log_warning_errno(r, "event loop failed while preparing");
	}
	return !pr->interrupted;
}

/* set_up's: every workload built and prepared in turn, before the run
 * begins. */
int prepare_workloads(struct daemon *d)
{
	char err[512];

	d->n_workloads = d->cfg->n_workloads;
	d->workloads = calloc(CONFIG_MAX_WORKLOADS, sizeof(*d->workloads));
	d->pending_start_ns = calloc(CONFIG_MAX_WORKLOADS, sizeof(*d->pending_start_ns));
	if (!d->workloads || !d->pending_start_ns)
		return log_error_errno(-ENOMEM, "cannot set up workloads");
	for (size_t i = 0; i < d->n_workloads; i++) {
		const struct workload_config *wc = &d->cfg->workloads[i];
		int r = workload_new(wc, 0, d->cfg->interval_ns, &d->workloads[i], err, sizeof(err));
		if (r == 0) {
			d->workloads[i]->slot = i;
			d->workloads[i]->resuming = d->resuming;
			d->workloads[i]->run_dir = d->rundir ? rundir_path(d->rundir) : NULL;
			d->preparing.workload = wc->name;
			r = workload_prepare(d->workloads[i], err, sizeof(err));
		}
		if (r < 0 && d->preparing.interrupted) {
			log_notice("workload %s: %s; soakd stops before the run goes on", wc->name,
				   err);
			return r;
		}
		if (r < 0) {
			log_error("workload %s: %s", wc->name, err);
			return r;
		}
	}
	return 0;
}

json_t *preparing_status_json(const struct daemon *d)
{
	const typeof(d->preparing) *pr = &d->preparing;
	uint64_t now = mono_ns();
	double pct = pr->total ? 100.0 * (double)pr->done / (double)pr->total : 0;
	double secs = (double)(now - pr->since_ns) / 1e9;
	double rate = secs > 0 && pr->done > pr->since_done
			      ? (double)(pr->done - pr->since_done) / secs : 0;

	json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:f,s:f}",
			      "workload", pr->workload ? pr->workload : "", "target", pr->target,
			      "what", pr->what, "unit", pr->unit, "done", (json_int_t)pr->done,
			      "total", (json_int_t)pr->total, "percent", pct, "elapsed_s", secs);
	/* No estimate before anything was done. */
	if (p && rate > 0)
		json_object_set_new(p, "eta_s", json_real((double)(pr->total - pr->done) / rate));
	return json_pack("{s:b,s:s,s:s,s:f,s:[],s:o*}", "ok", 1, "run", d->cfg->name, "state",
			 "preparing", "elapsed_s", 0.0, "workloads", "preparing", p);
}

/* While the workloads are prepared there is no run yet: status shows the
 * preparation, stop ends it (and soakd), the rest waits. */
char *handle_preparing(struct daemon *d, const struct proto_request *req)
{
	switch (req->cmd) {
	case PROTO_STATUS:
		return reply(preparing_status_json(d));
	case PROTO_STOP:
		if (!d->preparing.interrupted)
			log_info("soakctl stop: stopping while the workloads are prepared");
		d->preparing.interrupted = true;
		return reply(json_pack("{s:b,s:s}", "ok", 1, "message",
				       "stopping: soakd was preparing the workloads, and exits"));
	default:
		return proto_error_line("soakd is preparing workload %s (%s %s): try again when "
					"it is done, or stop it",
					d->preparing.workload ? d->preparing.workload : "?",
					d->preparing.what, d->preparing.target);
	}
}

void preparing_signal(struct daemon *d, int signo)
{
	/* No run yet: the preparation stops, soakd with it. */
	if (signo != SIGTERM && signo != SIGINT)
		return;
	log_info("%s: stopping while the workloads are prepared",
		 signo == SIGTERM ? "SIGTERM" : "SIGINT");
	sd_notify(0, "STOPPING=1");
	d->stopping_sent = true;
	d->preparing.interrupted = true;
}
