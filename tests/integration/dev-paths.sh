#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Target paths are resolved safely and every decision is made on the
# descriptor soakd opened (issue 12, item 1):
#   - a symlink planted by another user (here: nobody) in a directory it
#     may write is refused, and the file it points to is untouched;
#   - a target in a directory any user may write to (sticky, as /tmp) is
#     refused, and accepted with "allow_unsafe_path": true;
#   - a regular file owned by another user is refused;
#   - a root-owned symlink in a root-owned directory is followed;
#   - a user swapping a regular file and a symlink to a loop device that
#     holds a mounted ext4 (renameat2 RENAME_EXCHANGE in a loop) while soakd
#     starts again and again, with "allow_unsafe_path" (so that only the
#     descriptor checks stand between it and the data): the ext4 survives;
#   - --check-config finds the same problems and writes nothing;
#   - a reload adding a target on an unsafe path is refused with the reason.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
need_cmd setpriv e2fsck

# nobody must reach the directories it attacks.
chmod 755 "$WORK"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# write_config FILE TARGET_JSON [DURATION]: a small write workload.
write_config() {
	cat >"$1" <<EOF
{
  "run": {"name": "paths", "duration": "${3:-1s}", "interval": "1s", "on_finish": "exit"},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": [$2],
     "file_size": "8MiB", "read_pct": 50, "block_size": "4KiB", "queue_depth": 2,
     "rate": 100}
  ]
}
EOF
}

# run_soakd TARGET_JSON: soakd in the foreground; RUN_RC and RUN_LOG.
runs=0
run_soakd() {
	write_config "$WORK/run.json" "$1"
	RUN_LOG="$WORK/run-$((++runs)).log"
	RUN_RC=0
	timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" \
		--state-dir "$WORK/state" --new-run --no-table >"$RUN_LOG" 2>&1 || RUN_RC=$?
}

# expect_refused WHAT TARGET_JSON TEXT...: exit 1, the log and
# --check-config both say each TEXT.
expect_refused() {
	local what=$1 target=$2 text out
	shift 2
	run_soakd "$target"
	((RUN_RC == 1)) || fail "$what: soakd exited $RUN_RC, expected 1: $(cat "$RUN_LOG")"
	for text; do
		grep -qF -- "$text" "$RUN_LOG" || fail "$what: \"$text\" is not in: $(cat "$RUN_LOG")"
	done
	rc=0
	out=$("$SOAKD" --check-config "$WORK/run.json" 2>&1 >/dev/null) || rc=$?
	((rc == 1)) || fail "$what: --check-config exited $rc, expected 1: $out"
	for text; do
		[[ $out == *"$text"* ]] || fail "$what: --check-config does not say \"$text\": $out"
	done
	note "$what: $(grep -F -- "$1" "$RUN_LOG" | head -n1)"
}

expect_ran() {
	run_soakd "$2"
	((RUN_RC == 0)) || fail "$1: soakd exited $RUN_RC: $(cat "$RUN_LOG")"
	note "$1: ran"
}

# --- a symlink planted by nobody in a directory it may write ---
mkdir -m 0777 "$WORK/open"
mkdir -m 0755 "$WORK/etc"
head -c 65536 /dev/urandom >"$WORK/etc/victim"
sum=$(sha256sum <"$WORK/etc/victim")
as_nobody ln -s "$WORK/etc/victim" "$WORK/open/soak.dat"
expect_refused "planted symlink" "\"$WORK/open/soak.dat\"" "unsafe path" \
	"$WORK/open/soak.dat is in $WORK/open"
[[ $(sha256sum <"$WORK/etc/victim") == "$sum" ]] || fail "the symlink's target was written"

# The same symlink in a directory only root writes, but owned by nobody.
mkdir -m 0755 "$WORK/safe"
ln -s "$WORK/etc/victim" "$WORK/safe/link.dat"
chown -h nobody "$WORK/safe/link.dat"
expect_refused "symlink owned by nobody" "\"$WORK/safe/link.dat\"" \
	"$WORK/safe/link.dat is a symlink owned by uid $(id -u nobody)"
[[ $(sha256sum <"$WORK/etc/victim") == "$sum" ]] || fail "the symlink's target was written"

# --- a file others could have planted: in a sticky, world-writable dir ---
mkdir -m 1777 "$WORK/sticky"
expect_refused "new file in a sticky directory" "\"$WORK/sticky/soak.dat\"" \
	"it would be created in $WORK/sticky, a directory any user may write to" \
	'"allow_unsafe_path": true'
[[ ! -e $WORK/sticky/soak.dat ]] || fail "the refused target was created"
expect_ran "allow_unsafe_path in a sticky directory" \
	"{\"path\": \"$WORK/sticky/soak.dat\", \"allow_unsafe_path\": true}"
[[ $(stat -c %s "$WORK/sticky/soak.dat") == 8388608 ]] || fail "the target was not laid out"

# A private directory inside a sticky one (mktemp -d in /tmp): fine.
mkdir -m 0700 "$WORK/sticky/mine"
expect_ran "private directory inside a sticky one" "\"$WORK/sticky/mine/soak.dat\""

# --- a regular file owned by another user ---
head -c 8388608 /dev/zero >"$WORK/safe/theirs.dat"
chown nobody "$WORK/safe/theirs.dat"
expect_refused "file owned by nobody" "\"$WORK/safe/theirs.dat\"" \
	"$WORK/safe/theirs.dat is a file owned by uid $(id -u nobody)"

# --- root's own symlink in root's directory is followed ---
ln -s "$WORK/safe/real.dat" "$WORK/safe/alias.dat"
expect_ran "root's symlink" "\"$WORK/safe/alias.dat\""
[[ -f $WORK/safe/real.dat && ! -L $WORK/safe/real.dat ]] || fail "the symlink was not followed"

# --- the swap race, against a mounted ext4 ---
new_loop 64M
DEV=$NEW_LOOP
mkfs.ext4 -q -F -L soak-paths "$DEV" || fail "mkfs.ext4 $DEV failed"
mount_on "$DEV" "$WORK/mnt"
echo "precious" >"$WORK/mnt/precious"
sync
mkdir -m 0777 "$WORK/race"
as_nobody sh -c "head -c 8388608 /dev/zero >'$WORK/race/soak.dat' &&
	ln -s '$DEV' '$WORK/race/swap'"
# renameat2(RENAME_EXCHANGE) between the file and the symlink, as fast
# as it goes, as nobody.
spawn "$WORK/swapper.log" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	/usr/bin/python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = (p.encode() for p in sys.argv[1:3])
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
' "$WORK/race/soak.dat" "$WORK/race/swap"
SWAPPER=$SPAWNED
target="{\"path\": \"$WORK/race/soak.dat\", \"allow_unsafe_path\": true}"
ran=0 refused=0
for ((i = 0; i < 20; i++)); do
	run_soakd "$target"
	if ((RUN_RC == 0)); then
		ran=$((ran + 1))
	else
		refused=$((refused + 1))
		grep -qE "refusing to write to $WORK/race/soak.dat: it is mounted|is not a|in use" \
			"$RUN_LOG" || fail "attempt $i failed for another reason: $(cat "$RUN_LOG")"
	fi
done
_kill_bg "$SWAPPER" || true
note "swap race: $ran starts ran on the file, $refused found the mounted device and refused"
((refused > 0)) || note "the race never handed soakd the device (the check is then unexercised)"
[[ $(cat "$WORK/mnt/precious" 2>/dev/null) == precious ]] || fail "the mounted ext4 lost its file"
umount "$WORK/mnt"
e2fsck -fn "$DEV" >"$WORK/fsck.log" 2>&1 || fail "the ext4 on $DEV was damaged: $(cat "$WORK/fsck.log")"
mount "$DEV" "$WORK/mnt" || fail "cannot mount $DEV again"

# --- a reload cannot bring an unsafe path in either ---
write_config "$WORK/live.json" "\"$WORK/safe/live.dat\"" 60s
start_soakd --config "$WORK/live.json" --socket "$SOCK" --state-dir "$WORK/state2" --no-table
wait_until 30 "workload w running" workload_is w running
python3 - "$WORK/live.json" "$WORK/open/soak.dat" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
extra = dict(cfg["workloads"][0], name="x", targets=[sys.argv[2]])
cfg["workloads"].append(extra)
json.dump(cfg, open(sys.argv[1], "w"))
PY
rc=0
out=$(ctl reload 2>&1) || rc=$?
((rc == 1)) || fail "a reload adding an unsafe path exited $rc: $out"
[[ $out == *"unsafe path"* ]] || fail "the reload's refusal does not say why: $out"
[[ $(sha256sum <"$WORK/etc/victim") == "$sum" ]] || fail "the reload wrote through the symlink"
note "reload: $out"
stop_soakd 20
note "ok"
