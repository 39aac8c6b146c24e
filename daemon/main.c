// SPDX-License-Identifier: GPL-2.0-only
/* soakd: arguments, wiring and exit codes. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "config/config.h"
#include "device/dev_model.h"
#include "device/dev_prep.h"
#include "device/dev_target.h"
#include "run/cpu_prio.h"
#include "run/daemon.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: soakd --config FILE [--socket PATH] [--state-dir DIR] [--no-table]\n"
		"       soakd --check-config FILE [--no-targets]\n"
		"       soakd --prep DEVICE [--prep DEVICE...] [--destroy-data]\n"
		"       soakd --version\n"
		"\n"
		"Runs the storage soak workloads of FILE in the foreground (systemd Type=notify)\n"
		"and serves soakctl on a Unix socket.\n"
		"\n"
		"  --config FILE        run this configuration\n"
		"  --check-config FILE  validate FILE, print the resolved plan and run every\n"
		"                       check of the targets a start makes short of writing\n"
		"                       (unsafe paths, root disk, mounted, held, data on it,\n"
		"                       free space); exit 0 or 1\n"
		"  --no-targets         with --check-config: the file alone, targets not looked\n"
		"                       at (a configuration written for another machine)\n"
		"  --socket PATH        control socket (default: $RUNTIME_DIRECTORY/soakd.sock,\n"
		"                       else /run/soakd/soakd.sock; systemd may pass one)\n"
		"  --state-dir DIR      where runs are kept (default: $STATE_DIRECTORY, else\n"
		"                       /var/lib/soakd)\n"
		"  --no-table           no live table on stderr (it is off under journald)\n"
		"  --new-run            start the run afresh even if its directory holds a run\n"
		"                       of the same name and configuration (default: resume it)\n"
		"  --prep DEVICE        zero, then salt with random data, the whole DEVICE (as\n"
		"                       ACT's act_prep), then exit; refused for a device that\n"
		"                       is mounted, in use or the root disk\n"
		"  --destroy-data       let --prep write over a partition table or a filesystem,\n"
		"                       RAID or LVM signature\n"
		"  --version            print the version\n");
}

/* --check-config: what a start would refuse in the device workloads'
 * targets, found without writing; each problem printed. */
static int check_targets(const struct run_config *cfg)
{
	int failed = 0;

	for (size_t i = 0; i < cfg->n_workloads; i++) {
		const struct workload_config *w = &cfg->workloads[i];
		struct dev_model model;
		char err[1024];

		if (w->type != WORKLOAD_DEVICE)
			continue;
		if (dev_model_build(w, &model, err, sizeof(err)) < 0 ||
		    dev_targets_check(w, model.writes, err, sizeof(err)) < 0) {
			fprintf(stderr, "soakd: workload %s: %s\n", w->name, err);
			failed = -EPERM;
		}
	}
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "no-table", no_argument, NULL, 'T' },
		{ "new-run", no_argument, NULL, 'N' },
		{ "prep", required_argument, NULL, 'P' },
		{ "destroy-data", no_argument, NULL, 'D' },
		{ "no-targets", no_argument, NULL, 'n' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config_path = NULL, *check_path = NULL;
	struct daemon_options opts = { .live_table = true };
	struct run_config *cfg = NULL;
	struct target_config prep[CONFIG_MAX_TARGETS];
	size_t n_prep = 0;
	bool destroy_data = false, no_targets = false;
	int c, r;

	/*
	 * Blocks of 32 KiB and more (I/O buffers, a replayed log's lines, a
	 * dump's reply) get mappings of their own, which go back to the
	 * system when freed instead of staying in a heap a multi-day run
	 * fragments.  Setting the threshold also stops glibc from raising it
	 * after frees.  Histograms are made of 1 KiB chunks (hist.h), below it.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024);

	while ((c = getopt_long(argc, argv, "c:C:s:S:TNVh", options, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'C': check_path = optarg; break;
		case 's': opts.socket_path = optarg; break;
		case 'S': opts.state_dir = optarg; break;
		case 'T': opts.live_table = false; break;
		case 'N': opts.new_run = true; break;
		case 'P':
			if (n_prep == CONFIG_MAX_TARGETS) {
				fprintf(stderr, "soakd: at most %d devices for --prep\n", CONFIG_MAX_TARGETS);
				return 64;
			}
			if (strcspn(optarg, "\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f"
					    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c"
					    "\x1d\x1e\x1f\x7f") != strlen(optarg)) {
				fprintf(stderr, "soakd: --prep: the path holds a control character\n");
				return 64;
			}
			prep[n_prep++] = (struct target_config){ .path = optarg };
			break;
		case 'D': destroy_data = true; break;
		case 'n': no_targets = true; break;
		case 'V': printf("soakd %s\n", SOAK_VERSION); return EXIT_SUCCESS;
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return 64;
		}
	}
	if (optind < argc || !!config_path + !!check_path + !!n_prep != 1 ||
	    (destroy_data && !n_prep) || (no_targets && !check_path)) {
		if (optind < argc)
			fprintf(stderr, "soakd: unexpected argument '%s'\n", argv[optind]);
		else if (no_targets && !check_path)
			fprintf(stderr, "soakd: --no-targets goes with --check-config\n");
		else if (destroy_data && !n_prep)
			fprintf(stderr, "soakd: --destroy-data goes with --prep; in a configuration, "
					"a target says \"destroy_data\": true\n");
		else
			fprintf(stderr, "soakd: give exactly one of --config, --check-config and "
					"--prep\n");
		usage(stderr);
		return 64;
	}

	if (check_path) {
		r = config_load(check_path, stderr, &cfg);
		if (r < 0)
			return EXIT_FAILURE;
		config_print_plan(cfg, stdout);
		r = no_targets ? 0 : check_targets(cfg);
		config_free(cfg);
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	}

	log_init();
	if (n_prep) {
		char err[1024];
		sigset_t stop;
		/* Blocked: the prep sees them pending between writes and stops. */
		sigemptyset(&stop);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGINT);
		sigprocmask(SIG_BLOCK, &stop, NULL);
		for (size_t i = 0; i < n_prep; i++)
			prep[i].destroy_data = destroy_data;
		if (dev_prep(prep, n_prep, DEV_SAFETY_VIA_CLI, err, sizeof(err)) < 0) {
			log_error("%s", err);
			return EXIT_FAILURE;
		}
		return EXIT_SUCCESS;
	}
	if (log_to_journal())
		opts.live_table = false;
	r = config_load(config_path, stderr, &cfg);
	if (r < 0)
		return EXIT_FAILURE;
	/* Before any thread exists: the workloads' threads set their own. */
	cpu_prio_control_thread();
	/* From here a stalled journald or stderr reader holds no thread of
	 * the run (log.h); a failure leaves each thread writing its own. */
	int lr = log_start();
	if (lr < 0)
		log_warning_errno(lr, "cannot start the log's thread; logging directly");
	r = daemon_run(cfg, &opts);
	config_free(cfg);
	log_stop();
	return r;
}
