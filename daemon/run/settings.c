// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's settings as others see them: the configuration as text (the
 * plan), the probes' view of the workloads by slot, the state directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "workload/workload.h"

#include "daemon.h"

#include "daemon_int.h"

/* What print writes of cfg, malloc'd; NULL: out of memory. */
char *config_text(void (*print)(const struct run_config *cfg, FILE *out),
		  const struct run_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	print(cfg, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The probes' view of the run: cfg's settings, the workloads by slot. */
struct run_config *make_view(const struct daemon *d)
{
	struct run_config *v = malloc(sizeof(*v));
	if (!v)
		return NULL;
	*v = *d->cfg;
	v->n_workloads = d->n_workloads;
	v->workloads = calloc(d->n_workloads ? d->n_workloads : 1, sizeof(*v->workloads));
	if (!v->workloads) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < d->n_workloads; i++)
		v->workloads[i] = *d->workloads[i]->cfg;
	return v;
}

void free_view(struct run_config *v)
{
	if (v)
		free(v->workloads);
	free(v);
}

const char *state_directory(const struct daemon_options *opts, char *buf, size_t len)
{
	const char *dir = getenv("STATE_DIRECTORY");
	if (opts->state_dir)
		return opts->state_dir;
	if (dir && *dir) {
		snprintf(buf, len, "%.*s", (int)strcspn(dir, ":"), dir);
		return buf;
	}
	return "/var/lib/soakd";
}
