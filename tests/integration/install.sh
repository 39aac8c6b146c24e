#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "meson install" into a scratch root (--destdir) from the build the suite
# runs in (issue 8, point 1): every file lands where systemd and man look
# for it; the unit runs the installed soakd on the installed configuration;
# that configuration is the shipped default, which soakd accepts and which
# writes nothing until "soakctl start"; a second install leaves an edited
# configuration alone; tmpfiles.d puts the default back when it is missing;
# the man pages format without a warning.
source "$(dirname "$0")/lib.sh"

need_cmd meson python3
[[ -f $BUILDDIR/meson-private/install.dat ]] ||
	skip "$BUILDDIR has no meson-private/install.dat: not a configured meson build directory"

ROOT="$WORK/root"

# install_into LOG: meson install into $ROOT; what was built is installed
# as it is (--no-rebuild: meson test built it).
install_into() {
	meson install -C "$BUILDDIR" --destdir "$ROOT" --no-rebuild >"$WORK/$1" 2>&1 ||
		fail "meson install failed: $(cat "$WORK/$1")"
}

# Where this build installs, as meson.build resolves it.
eval "$(meson introspect "$BUILDDIR" --buildoptions | python3 -c '
import json, os, shlex, sys
options = {o["name"]: o["value"] for o in json.load(sys.stdin)}
prefix = options["prefix"]
def under_prefix(name):
    return os.path.join(prefix, options[name])  # an absolute value stays as it is
for var, path in [("PREFIX", prefix), ("BINDIR", under_prefix("bindir")),
                  ("MANDIR", under_prefix("mandir")), ("DATADIR", under_prefix("datadir")),
                  ("SYSCONFDIR", under_prefix("sysconfdir")),
                  ("UNITDIR_OPTION", options.get("systemdunitdir", ""))]:
    print(f"{var}={shlex.quote(path)}")
')"
CONFIG="$SYSCONFDIR/soakd/soakd.json"
DEFAULT="$DATADIR/soakd/soakd.json"
# The unit, sysusers.d and tmpfiles.d directories come from systemd.pc, as
# units/meson.build takes them.
systemd_dir() {
	local var=$1 fallback=$2
	if command -v pkg-config >/dev/null && pkg-config --exists systemd; then
		pkg-config --variable="$var" systemd
	else
		echo "$fallback"
	fi
}
UNITDIR=${UNITDIR_OPTION:-$(systemd_dir systemdsystemunitdir "$PREFIX/lib/systemd/system")}
SYSUSERSDIR=$(systemd_dir sysusersdir "$PREFIX/lib/sysusers.d")
TMPFILESDIR=$(systemd_dir tmpfilesdir "$PREFIX/lib/tmpfiles.d")
CATALOGDIR=$(systemd_dir catalogdir "$PREFIX/lib/systemd/catalog")
note "prefix $PREFIX, configuration $CONFIG, units in $UNITDIR"

install_into install1.log

# Every file lands.
expect_file() {
	local path=$ROOT$1
	[[ -f $path && -s $path ]] || fail "meson install put no $1 (looked for $path): $(cat "$WORK/install1.log")"
}
expect_file "$BINDIR/soakd"
expect_file "$BINDIR/soakctl"
[[ -x $ROOT$BINDIR/soakd && -x $ROOT$BINDIR/soakctl ]] || fail "soakd or soakctl is installed without x bits"
expect_file "$UNITDIR/soakd.service"
expect_file "$UNITDIR/soakd.socket"
expect_file "$SYSUSERSDIR/soakd.conf"
expect_file "$TMPFILESDIR/soakd.conf"
expect_file "$CATALOGDIR/soakd.catalog"
expect_file "$MANDIR/man8/soakd.8"
expect_file "$MANDIR/man1/soakctl.1"
expect_file "$MANDIR/man5/soakd.json.5"
expect_file "$CONFIG"
expect_file "$DEFAULT"
# Shell completion, where bash-completion and zsh look (ctl/meson.build).
BASHCOMPDIR=$DATADIR/bash-completion/completions
if command -v pkg-config >/dev/null && pkg-config --exists bash-completion; then
	BASHCOMPDIR=$(pkg-config --define-variable=datadir="$DATADIR" --variable=completionsdir bash-completion)
fi
expect_file "$BASHCOMPDIR/soakctl"
expect_file "$BASHCOMPDIR/soakd"
expect_file "$DATADIR/zsh/site-functions/_soakctl"
expect_file "$DATADIR/zsh/site-functions/_soakd"
# ... and so does everything else meson says it installs.
meson introspect "$BUILDDIR" --installed | python3 -c '
import json, os, sys
root = sys.argv[1]
missing = [dest for dest in json.load(sys.stdin).values() if not os.path.exists(root + dest)]
if missing:
    sys.exit("not installed: " + ", ".join(missing))
' "$ROOT" || fail "meson introspect --installed lists files that are not there"

# No placeholder left in what meson configured.
leftover=$(grep -l '@[a-z_]*@' "$ROOT$UNITDIR"/soakd.* "$ROOT$TMPFILESDIR/soakd.conf" \
	"$ROOT$MANDIR"/man*/soak* 2>/dev/null || true)
[[ -z $leftover ]] || fail "unsubstituted @names@ in $leftover"

# The configuration is the shipped default, readable by all (it holds no
# secrets: those live in credentials files).
cmp -s "$SRCDIR/config/soakd.json" "$ROOT$CONFIG" || fail "$CONFIG differs from config/soakd.json"
cmp -s "$SRCDIR/config/soakd.json" "$ROOT$DEFAULT" || fail "$DEFAULT differs from config/soakd.json"
mode=$(stat -c %a "$ROOT$CONFIG")
[[ $mode == 644 ]] || fail "$CONFIG has mode $mode, expected 644"

# The installed soakd accepts the installed configuration (from an empty
# directory, which checking must leave empty).
mkdir "$WORK/cwd"
rc=0
(cd "$WORK/cwd" && timeout 20 "$ROOT$BINDIR/soakd" --check-config "$ROOT$CONFIG" --no-targets) \
	>"$WORK/plan.out" 2>"$WORK/plan.err" || rc=$?
((rc == 0)) || fail "installed soakd --check-config $CONFIG exited $rc: $(cat "$WORK/plan.err")"
grep -q '"autostart": false' "$WORK/plan.out" ||
	fail "the default configuration's plan has no workload waiting for soakctl start: $(cat "$WORK/plan.out")"
[[ -z $(ls -A "$WORK/cwd") ]] || fail "--check-config created files: $(ls -A "$WORK/cwd")"
note "installed soakd accepts $CONFIG"

# The unit runs the installed soakd on that configuration.
want="ExecStart=$BINDIR/soakd --config $CONFIG"
grep -qxF "$want" "$ROOT$UNITDIR/soakd.service" ||
	fail "installed soakd.service lacks '$want': $(grep '^ExecStart' "$ROOT$UNITDIR/soakd.service")"
# tmpfiles.d copies the same default to the same place.
grep -qxF "C $CONFIG - - - - $DEFAULT" "$ROOT$TMPFILESDIR/soakd.conf" ||
	fail "tmpfiles.d/soakd.conf does not copy $DEFAULT to $CONFIG: $(grep -v '^#' "$ROOT$TMPFILESDIR/soakd.conf")"

# A second install keeps a configuration someone edited.
python3 - "$ROOT$CONFIG" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    config = json.load(f)
config["workloads"][0]["rate"] = 50
with open(sys.argv[1], "w") as f:
    json.dump(config, f, indent=2)
PY
cp "$ROOT$CONFIG" "$WORK/edited.json"
install_into install2.log
cmp -s "$WORK/edited.json" "$ROOT$CONFIG" ||
	fail "a second meson install replaced the edited $CONFIG: $(cat "$WORK/install2.log")"
note "a second install kept the edited configuration"

# systemd-tmpfiles (as at boot) restores a missing configuration, and only then.
if [[ $(id -u) == 0 ]] && command -v systemd-tmpfiles >/dev/null; then
	systemd-tmpfiles --root="$ROOT" --create "$ROOT$TMPFILESDIR/soakd.conf" >"$WORK/tmpfiles.log" 2>&1 ||
		fail "systemd-tmpfiles failed: $(cat "$WORK/tmpfiles.log")"
	cmp -s "$WORK/edited.json" "$ROOT$CONFIG" || fail "systemd-tmpfiles replaced an existing $CONFIG"
	rm "$ROOT$CONFIG"
	systemd-tmpfiles --root="$ROOT" --create "$ROOT$TMPFILESDIR/soakd.conf" >"$WORK/tmpfiles.log" 2>&1 ||
		fail "systemd-tmpfiles failed: $(cat "$WORK/tmpfiles.log")"
	cmp -s "$SRCDIR/config/soakd.json" "$ROOT$CONFIG" ||
		fail "systemd-tmpfiles did not restore the default $CONFIG: $(cat "$WORK/tmpfiles.log")"
	note "systemd-tmpfiles restores a missing configuration"
else
	note "not root or no systemd-tmpfiles: tmpfiles.d/soakd.conf not applied"
fi

# The man pages format without warnings, and man shows them.
if command -v groff >/dev/null; then
	for page in man8/soakd.8 man1/soakctl.1 man5/soakd.json.5; do
		groff -man -Tutf8 -ww -z "$ROOT$MANDIR/$page" >"$WORK/groff.out" 2>&1 ||
			fail "groff failed on $page: $(cat "$WORK/groff.out")"
		[[ ! -s $WORK/groff.out ]] || fail "groff warns about $page: $(cat "$WORK/groff.out")"
		if command -v man >/dev/null; then
			MANWIDTH=80 man -l "$ROOT$MANDIR/$page" >"$WORK/man.out" 2>"$WORK/man.err" ||
				fail "man -l $page failed: $(cat "$WORK/man.err")"
			grep -q '^NAME' "$WORK/man.out" || fail "man -l $page shows no NAME section"
		fi
	done
	note "man pages: no groff warnings"
else
	note "groff is not installed: man pages not formatted (tools/setup-deps installs groff-base)"
fi

# The default issues no I/O by itself: soakd runs it (its target moved
# into the work directory, and smaller) with its workload idle, no op
# done, until "soakctl start".  (soakd lays out a file target when it
# starts, whether the workload runs or not, so that is not checked.)
TARGET="$WORK/rand4k.dat"
python3 - "$SRCDIR/config/soakd.json" "$WORK/default.json" "$TARGET" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    config = json.load(f)
workload = config["workloads"][0]
workload["targets"] = [sys.argv[3]]
workload["file_size"] = "16MiB"
with open(sys.argv[2], "w") as f:
    json.dump(config, f)
PY
mkdir "$WORK/state"
start_soakd --config "$WORK/default.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "soakd's control socket" ctl_answers
elapsed_at_least() {
	ctl status --json | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["elapsed_s"] < float(sys.argv[1]))' "$1"
}
wait_until 20 "two intervals" elapsed_at_least 2
state=$(workload_state rand4k)
[[ $state == idle ]] || fail "the default workload is $state before soakctl start, expected idle"
ops_done() {
	ctl dump --format json | python3 -c '
import json, sys
dump = json.load(sys.stdin)
print(sum(op.get("count", 0) for w in dump.get("workloads", []) if w.get("name") == "rand4k"
          for op in w.get("ops", {}).values()))'
}
done_before=$(ops_done) || fail "soakctl dump failed"
[[ $done_before == 0 ]] || fail "the default workload did $done_before ops before soakctl start"
ctl start >"$WORK/start.out" 2>&1 || fail "soakctl start failed: $(cat "$WORK/start.out")"
wait_until 30 "rand4k to run" workload_is rand4k running
[[ -f $TARGET ]] || fail "rand4k runs but its target $TARGET is not there"
has_done_ops() { (($(ops_done) > 0)); }
wait_until 20 "rand4k's first ops" has_done_ops
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "the default configuration waits for soakctl start"
note "ok"
