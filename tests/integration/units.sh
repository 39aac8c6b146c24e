#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The systemd units, offline: they load without warnings (systemd-analyze
# verify, with ExecStart pointing at the soakd just built, since verify
# wants it to exist), agree with what soakd expects of the socket, and stay
# sandboxed (systemd-analyze security's exposure score).
source "$(dirname "$0")/lib.sh"

need_cmd systemd-analyze

# Highest exposure accepted (0-100, i.e. 0.0-10.0): 2.5 (issue 7); the
# service scores 2.0 (what remains, and why, is in SECURITY.md).
EXPOSURE_THRESHOLD=25

units="$WORK/units"
mkdir "$units"
sed -e "s|@bindir@/soakd|$SOAKD|" -e "s|@bindir@/soakctl|$SOAKCTL|" -e "s|@docdir@|/usr/share/doc/soakd|" \
	-e "s|@soakd_config@|/etc/soakd/soakd.json|" \
	"$SRCDIR/units/soakd.service" >"$units/soakd.service"
cp "$SRCDIR/units/soakd.socket" "$units/soakd.socket"
grep -q '@[a-z_]*@' "$units/soakd.service" "$units/soakd.socket" &&
	fail "unsubstituted @variables@ left in the units: $(grep '@[a-z_]*@' "$units"/*)"

(cd "$units" && systemd-analyze verify --man=no soakd.service soakd.socket) >"$WORK/verify.log" 2>&1 ||
	fail "systemd-analyze verify failed: $(cat "$WORK/verify.log")"
[[ ! -s $WORK/verify.log ]] || fail "systemd-analyze verify warned: $(cat "$WORK/verify.log")"
note "systemd-analyze verify: clean"

# What soakd relies on.
unit_has() { grep -qx "$2" "$units/$1" || fail "$1 lacks '$2'"; }
unit_has soakd.service Type=notify
unit_has soakd.service NotifyAccess=main
unit_has soakd.service StateDirectory=soakd
unit_has soakd.service RuntimeDirectory=soakd
unit_has soakd.service RuntimeDirectoryPreserve=yes
unit_has soakd.socket ListenStream=/run/soakd/soakd.sock
unit_has soakd.socket FileDescriptorName=ctl
unit_has soakd.socket Service=soakd.service
# The control socket's access (SECURITY.md).
unit_has soakd.socket SocketGroup=soakd
unit_has soakd.socket SocketMode=0660
# Restarted after a crash or a hang, but not when a workload failed (3).
unit_has soakd.service Restart=on-failure
unit_has soakd.service RestartPreventExitStatus=3
unit_has soakd.service WatchdogSec=30s
unit_has soakd.service ProtectSystem=strict
unit_has soakd.service NoNewPrivileges=yes
# Least privilege: BPF and tracing, nothing else (unit-privileges.sh runs
# soakd with just these).
unit_has soakd.service "CapabilityBoundingSet=CAP_BPF CAP_PERFMON"
# The workload threads before the control plane for the CPU (soakd(8), CPU).
unit_has soakd.service LimitNICE=-10
unit_has soakd.service "SystemCallFilter=bpf setpriority sched_setscheduler"

# The group the socket belongs to: systemd-sysusers creates it (here in a
# scratch root, so the machine's /etc is left alone).
if command -v systemd-sysusers >/dev/null; then
	mkdir -p "$WORK/root/etc"
	systemd-sysusers --root="$WORK/root" "$SRCDIR/units/soakd-sysusers.conf" \
		>"$WORK/sysusers.log" 2>&1 || fail "systemd-sysusers failed: $(cat "$WORK/sysusers.log")"
	grep -q '^soakd:x:[0-9]*:' "$WORK/root/etc/group" ||
		fail "systemd-sysusers made no group soakd: $(cat "$WORK/root/etc/group" "$WORK/sysusers.log")"
	note "sysusers: $(grep '^soakd:' "$WORK/root/etc/group")"
fi

# The copy meson configures for installation points at the installed binary
# and configuration (sysconfdir: /etc/soakd/soakd.json with --prefix=/usr).
if [[ -f $BUILDDIR/units/soakd.service ]]; then
	grep -q '^ExecStart=/.*/soakd --config /.*/soakd/soakd.json$' "$BUILDDIR/units/soakd.service" ||
		fail "build's soakd.service has no absolute ExecStart: $(grep ExecStart "$BUILDDIR/units/soakd.service")"
fi

# The exposure of the unit as meson configures it for installation.
security_dir=$units
[[ -f $BUILDDIR/units/soakd.service ]] && security_dir=$BUILDDIR/units
if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	rc=0
	(cd "$security_dir" && systemd-analyze security --offline=true --threshold="$EXPOSURE_THRESHOLD" \
		soakd.service) >"$WORK/security.log" 2>&1 || rc=$?
	note "$(grep 'Overall exposure level' "$WORK/security.log" || tail -n1 "$WORK/security.log")"
	((rc == 0)) || fail "exposure above $EXPOSURE_THRESHOLD/100: $(grep '✗' "$WORK/security.log")"
else
	note "systemd-analyze security has no --offline here; exposure not checked"
fi
note "ok"
