// SPDX-License-Identifier: GPL-2.0-only
/* soakd: arguments, wiring and exit codes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: soakd --config FILE [--socket PATH] [--state-dir DIR] [--no-table]\n"
		"       soakd --check-config FILE\n"
		"       soakd --version\n"
		"\n"
		"Runs the storage soak workloads of FILE in the foreground (systemd Type=notify)\n"
		"and serves soakctl on a Unix socket.\n"
		"\n"
		"  --config FILE        run this configuration\n"
		"  --check-config FILE  validate FILE, print the resolved plan, exit 0 or 1\n"
		"  --socket PATH        control socket (default: $RUNTIME_DIRECTORY/soakd.sock,\n"
		"                       else /run/soakd/soakd.sock; systemd may pass one)\n"
		"  --state-dir DIR      where runs are kept (default: $STATE_DIRECTORY, else\n"
		"                       /var/lib/soakd)\n"
		"  --no-table           no live table on stderr (it is off under journald)\n"
		"  --version            print the version\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "no-table", no_argument, NULL, 'T' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config_path = NULL, *check_path = NULL;
	struct daemon_options opts = { .live_table = true };
	struct run_config *cfg = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:C:s:S:TVh", options, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'C': check_path = optarg; break;
		case 's': opts.socket_path = optarg; break;
		case 'S': opts.state_dir = optarg; break;
		case 'T': opts.live_table = false; break;
		case 'V': printf("soakd %s\n", SOAK_VERSION); return EXIT_SUCCESS;
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return 64;
		}
	}
	if (optind < argc || !!config_path == !!check_path) {
		if (optind < argc)
			fprintf(stderr, "soakd: unexpected argument '%s'\n", argv[optind]);
		else
			fprintf(stderr, "soakd: give exactly one of --config and --check-config\n");
		usage(stderr);
		return 64;
	}

	if (check_path) {
		r = config_load(check_path, stderr, &cfg);
		if (r < 0)
			return EXIT_FAILURE;
		config_print_plan(cfg, stdout);
		config_free(cfg);
		return EXIT_SUCCESS;
	}

	log_init();
	if (log_to_journal())
		opts.live_table = false;
	r = config_load(config_path, stderr, &cfg);
	if (r < 0)
		return EXIT_FAILURE;
	r = daemon_run(cfg, &opts);
	config_free(cfg);
	return r;
}
