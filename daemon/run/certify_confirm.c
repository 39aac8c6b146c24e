// SPDX-License-Identifier: GPL-2.0-only
/*
 * A certification's "confirm": once its steps are over, the highest step
 * that passed runs again for the confirmation's hold, and is judged as a
 * step is.  The certified workloads are stopped (a step failed) or have
 * finished (every step passed); each starts again on a copy of its
 * definition whose schedule is that one step, so the load is as exact
 * and accounted as the steps' was.  The answer waits for the verdict.
 */
#include <string.h>

#include "base/log.h"
#include "config/config_certify.h"
#include "workload/workload.h"

#include "certify_int.h"

bool certify_best(const struct certify *c, size_t *ret)
{
	json_t *v;
	size_t i, n = 0;

	json_array_foreach(c->verdicts, i, v) {
		if (json_is_true(json_object_get(v, "confirm")) ||
		    strcmp(json_string_value(json_object_get(v, "verdict")), "pass") != 0)
			break;
		n++;
	}
	if (!n)
		return false;
	*ret = n - 1;
	return true;
}

bool certify_confirm_begin(struct daemon *d, struct certify *c, bool stop)
{
	char reason[160], load[32];

	if (!c->cfg->confirm_ns || !certify_best(c, &c->best))
		return false;
	c->confirming = true;
	c->confirm_started = false;
	certify_load_name(c->cfg->loads[c->best], load, sizeof(load));
	log_notice("certify: the steps are over; confirming step %zu (%s) next", c->best + 1, load);
	if (!stop)
		return true;
	snprintf(reason, sizeof(reason), "the certification's steps ended: step %zu failed, "
		 "step %zu (%s) is confirmed next", c->step + 1, c->best + 1, load);
	for (size_t i = 0; i < c->n_loads; i++)
		if (workload_is_active(d->workloads[c->loads[i].slot]))
			workload_request_stop(d->workloads[c->loads[i].slot], reason);
	return true;
}

/* The workloads on the confirmation's definitions: the best step, once. */
static void use_confirm_cfgs(struct daemon *d, struct certify *c)
{
	for (size_t i = 0; i < c->n_loads; i++) {
		struct certify_load *l = &c->loads[i];
		struct workload_config *wc = &c->confirm_cfg[i];
		*wc = *l->cfg;
		wc->steps[0] = (struct sched_step){ .scale = c->cfg->loads[c->best] * l->cfg->certify_unit,
						    .duration_ns = c->cfg->confirm_ns };
		wc->n_steps = 1;
		d->workloads[l->slot]->cfg = wc;
	}
}

static void start_confirmation(struct daemon *d, struct certify *c)
{
	char err[256], load[32];

	use_confirm_cfgs(d, c);
	c->confirm_run_ns = mono_since(d->run_start_ns, mono_ns());
	c->confirm_started = true;
	for (size_t i = 0; i < c->n_loads; i++) {
		certify_part_reset(&c->loads[i].part[0]);
		certify_part_reset(&c->loads[i].part[1]);
		c->loads[i].sched_ns = 0;
	}
	/* Where the confirmation's intervals begin, for a resumed run. */
	certify_load_name(c->cfg->loads[c->best], load, sizeof(load));
	json_t *rec = json_pack("{s:s,s:I,s:s,s:I}", "type", "certify", "confirm_start",
				(json_int_t)(c->best + 1), "load", load, "run_ns",
				(json_int_t)c->confirm_run_ns);
	if (rec)
		certify_publish(d, rec);
	json_decref(rec);
	for (size_t i = 0; i < c->n_loads; i++)
		if (start_workload(d, c->loads[i].slot, err, sizeof(err)) < 0)
			log_error("certify: cannot start workload %s to confirm: %s",
				  c->loads[i].cfg->name, err);
}

void certify_confirm_tick(struct daemon *d, struct certify *c)
{
	if (!c->confirm_started) {
		for (size_t i = 0; i < c->n_loads; i++)
			if (workload_is_active(d->workloads[c->loads[i].slot]))
				return;   /* still stopping */
		start_confirmation(d, c);
		return;
	}
	if (!certify_step_over(d, c))
		return;
	json_t *rec = certify_judge(d, c);
	if (!rec)
		return;
	json_array_append_new(c->verdicts, rec);
	certify_publish(d, rec);
	c->answer = certify_answer_record(c);
	if (c->answer)
		certify_publish(d, c->answer);
}

void certify_confirm_resume(struct daemon *d, struct certify *c)
{
	if (c->confirming && c->confirm_started && !c->answer)
		use_confirm_cfgs(d, c);
}

void certify_confirm_release(struct daemon *d, struct certify *c)
{
	for (size_t i = 0; i < c->n_loads; i++)
		if (d->workloads[c->loads[i].slot]->cfg == &c->confirm_cfg[i])
			d->workloads[c->loads[i].slot]->cfg = c->loads[i].cfg;
}
