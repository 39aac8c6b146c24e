// SPDX-License-Identifier: GPL-2.0-only
/*
 * Why a probe family is unavailable, in words a user can act on: the
 * privilege soakd lacks, the tracepoints this kernel lacks, the verifier's
 * log when it rejects a program, libbpf's last warning.
 */

#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "probes_int.h"

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/* libbpf talks through a callback; keep its last warning for the reason
 * a family failed, and print everything only when asked. */
static char libbpf_last_warning[256];

int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("SOAKD_BPF_DEBUG") != NULL;
	if (level == LIBBPF_WARN) {
		va_list copy;
		va_copy(copy, ap);
		vsnprintf(libbpf_last_warning, sizeof(libbpf_last_warning), fmt, copy);
		va_end(copy);
		libbpf_last_warning[strcspn(libbpf_last_warning, "\n")] = '\0';
	}
	if (verbose)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static bool has_cap(const struct __user_cap_data_struct *caps, int cap)
{
	return caps[cap / 32].effective & (1u << (cap % 32));
}

/* Why this process may not be allowed to load tracing programs; NULL when
 * its capabilities suffice. */
const char *missing_privilege(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2] = { 0 };

	if (syscall(SYS_capget, &hdr, caps) < 0)
		return NULL;   /* let the kernel say */
	if (has_cap(caps, CAP_SYS_ADMIN) ||
	    (has_cap(caps, CAP_BPF_BIT) && has_cap(caps, CAP_PERFMON_BIT)))
		return NULL;
	return "no permission to load BPF tracing programs: soakd needs CAP_BPF and CAP_PERFMON "
	       "(or CAP_SYS_ADMIN)";
}

void set_reason(struct probe_family_state *fs, enum probe_cause cause, const char *fmt,
		...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fs->reason, sizeof(fs->reason), fmt, ap);
	va_end(ap);
	fs->state = PROBE_UNAVAILABLE;
	fs->cause = cause;
}

int verifier_logs_give(struct verifier_logs *logs, struct probe_family_state *fs)
{
	for (size_t i = 0; i < fs->n_progs; i++) {
		logs->text[i] = calloc(1, VERIFIER_LOG_SIZE);
		if (!logs->text[i])
			return -ENOMEM;
		int r = bpf_program__set_log_buf(fs->progs[i].prog, logs->text[i],
						 VERIFIER_LOG_SIZE);
		if (r < 0)
			return r;
	}
	return 0;
}

void verifier_logs_free(struct verifier_logs *logs, struct probe_family_state *fs)
{
	for (size_t i = 0; i < fs->n_progs; i++) {
		bpf_program__set_log_buf(fs->progs[i].prog, NULL, 0);
		free(logs->text[i]);
		logs->text[i] = NULL;
	}
}

/* Where the last `lines` lines of text start. */
static const char *last_lines(const char *text, size_t len, int lines)
{
	while (len > 0 && text[len - 1] == '\n')
		len--;
	for (size_t i = len; i-- > 0;)
		if (text[i] == '\n' && --lines == 0)
			return text + i + 1;
	return text;
}

/* The verifier rejected program i: its verdict (the log's last lines) in
 * the reason, and the end of the log in the journal.  SOAKD_BPF_DEBUG
 * prints the whole log (libbpf_print). */
static void verifier_rejected(struct probe_family_state *fs, size_t i, int r, const char *log)
{
	size_t len = strnlen(log, VERIFIER_LOG_SIZE);
	const char *verdict = last_lines(log, len, 3), *tail = last_lines(log, len, 40);
	int verdict_len = (int)(log + len - verdict);

	/* log_msg keeps 2 KiB. */
	while (log + len - tail > 1800)
		tail = strchr(tail, '\n') ? strchr(tail, '\n') + 1 : log + len - 1800;
	set_reason(fs, PROBE_CAUSE_VERIFIER,
		   "the kernel's verifier rejected program %s (%s), a bug in soakd's BPF code: %.*s",
		   bpf_program__name(fs->progs[i].prog), strerror(-r), verdict_len, verdict);
	for (char *c = fs->reason; *c; c++)
		if (*c == '\n')
			*c = ' ';
	for (size_t n = strlen(fs->reason); n > 0 && fs->reason[n - 1] == ' ';)
		fs->reason[--n] = '\0';
	log_error("the verifier's log of %s (last lines):\n%s", bpf_program__name(fs->progs[i].prog),
		  tail);
	if (getenv("SOAKD_BPF_DEBUG"))
		fprintf(stderr, "the verifier's log of %s:\n%s\n", bpf_program__name(fs->progs[i].prog),
			log);
}

void load_failed(struct probe_family_state *fs, int r, const struct verifier_logs *logs)
{
	for (size_t i = 0; logs && i < fs->n_progs; i++)
		if (logs->text[i] && logs->text[i][0]) {
			verifier_rejected(fs, i, r, logs->text[i]);
			return;
		}
	/* The kernel refuses before verifying: with soakd's capabilities
	 * checked already, something outside soakd said no. */
	if (r == -EPERM || r == -EACCES)
		set_reason(fs, PROBE_CAUSE_PRIVILEGE,
			   "the kernel refused to load BPF programs (%s) before verifying them "
			   "although soakd has CAP_BPF and CAP_PERFMON: a lockdown, seccomp or LSM "
			   "policy?",
			   strerror(-r));
	else if (r == -ENOSYS)
		set_reason(fs, PROBE_CAUSE_KERNEL,
			   "this kernel has no bpf() system call (CONFIG_BPF_SYSCALL)");
	else if (r == -EOPNOTSUPP || r == -ENOTSUP || r == -524 /* ENOTSUPP */)
		set_reason(fs, PROBE_CAUSE_KERNEL,
			   "this kernel does not support the BPF programs or maps soakd needs: %s%s%s",
			   strerror(-r), libbpf_last_warning[0] ? ": libbpf: " : "",
			   libbpf_last_warning);
	else
		set_reason(fs, PROBE_CAUSE_ERROR, "cannot load the BPF programs: %s%s%s",
			   strerror(-r), libbpf_last_warning[0] ? ": libbpf: " : "",
			   libbpf_last_warning);
}

/* Marks the family's programs whose tracepoint this kernel lacks: they are
 * not loaded.  Returns how many are missing. */
size_t check_tracepoints(struct probe_family_state *fs, const struct btf *vmlinux)
{
	char name[128];
	size_t missing = 0;

	for (size_t i = 0; i < fs->n_progs; i++) {
		struct probe_prog *pp = &fs->progs[i];
		snprintf(name, sizeof(name), "btf_trace_%s", pp->tracepoint);
		pp->missing = btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) < 0;
		if (pp->missing) {
			bpf_program__set_autoload(pp->prog, false);
			missing++;
		}
	}
	return missing;
}

const char *missing_list(const struct probe_family_state *fs, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < fs->n_progs && off < len; i++)
		if (fs->progs[i].missing) {
			int n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					 fs->progs[i].tracepoint);
			off += n > 0 ? (size_t)n : 0;
		}
	return buf;
}

void add_prog(struct probe_family_state *fs, const char *tracepoint,
	      struct bpf_program *prog, struct bpf_link **link, bool fallback)
{
	fs->progs[fs->n_progs++] = (struct probe_prog){
		.tracepoint = tracepoint, .prog = prog, .link = link, .fallback = fallback,
	};
}

