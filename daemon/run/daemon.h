/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DAEMON_H
#define SOAK_DAEMON_H

#include <stdbool.h>

#include "config/config.h"

struct daemon_options {
	const char *socket_path;   /* NULL: config's, else $RUNTIME_DIRECTORY/soakd.sock */
	const char *state_dir;     /* NULL: $STATE_DIRECTORY, else /var/lib/soakd */
	bool live_table;           /* print a table per interval on stderr */
	bool new_run;              /* do not resume a run of the same name and plan */
};

/* Runs the configuration to its end or until SIGTERM/SIGINT.  Returns the
 * process exit status. */
int daemon_run(const struct run_config *cfg, const struct daemon_options *opts);

#endif
