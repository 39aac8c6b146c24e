#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The systemd units, offline: they load without warnings (systemd-analyze
# verify, with ExecStart pointing at the soakd just built, since verify
# wants it to exist), agree with what soakd expects of the socket, and stay
# sandboxed (systemd-analyze security's exposure score).
source "$(dirname "$0")/lib.sh"

need_cmd systemd-analyze

# Highest exposure accepted (0-100, i.e. 0.0-10.0); the units score 2.9 now.
EXPOSURE_THRESHOLD=35

units="$WORK/units"
mkdir "$units"
sed "s|@bindir@/soakd|$SOAKD|" "$SRCDIR/units/soakd.service" >"$units/soakd.service"
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

# The copy meson configures for installation points at the installed binary.
if [[ -f $BUILDDIR/units/soakd.service ]]; then
	grep -q '^ExecStart=/.*/soakd --config /etc/soakd/soakd.json$' "$BUILDDIR/units/soakd.service" ||
		fail "build's soakd.service has no absolute ExecStart: $(grep ExecStart "$BUILDDIR/units/soakd.service")"
fi

if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	rc=0
	(cd "$units" && systemd-analyze security --offline=true --threshold="$EXPOSURE_THRESHOLD" \
		soakd.service) >"$WORK/security.log" 2>&1 || rc=$?
	note "$(grep 'Overall exposure level' "$WORK/security.log" || tail -n1 "$WORK/security.log")"
	((rc == 0)) || fail "exposure above $EXPOSURE_THRESHOLD/100: $(grep '✗' "$WORK/security.log")"
else
	note "systemd-analyze security has no --offline here; exposure not checked"
fi
note "ok"
