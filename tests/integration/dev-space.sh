#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A regular-file target larger than its filesystem's free space is refused
# before a byte is written, with the numbers, by the start and by
# --check-config; two targets that fit alone but not together likewise; a
# layout that fails part way (RLIMIT_FSIZE, which without care would kill
# soakd with SIGXFSZ) removes the file soakd created, and an existing file
# it was extending is shrunk back (issue 12, item 4).
source "$(dirname "$0")/lib.sh"
need_root "mounting a small tmpfs"
need_cmd mount umount prlimit

FS="$WORK/small"
mkdir "$FS"
mount -t tmpfs -o size=32m,mode=0755 tmpfs "$FS" || skip_unless_strict "cannot mount a tmpfs"
on_exit umount "$FS"
# tmpfs takes O_DIRECT since Linux 6.6.
dd if=/dev/zero of="$FS/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
	skip_unless_strict "tmpfs does not take O_DIRECT on this kernel"
rm -f "$FS/probe"

# write_config FILE SIZE TARGET...: a workload on each target.
write_config() {
	local file=$1 size=$2 targets="" t
	shift 2
	for t; do targets+="${targets:+, }\"$t\""; done
	cat >"$file" <<EOF
{
  "run": {"name": "space", "duration": "1s", "interval": "1s", "on_finish": "exit"},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": [$targets],
     "file_size": "$size", "read_pct": 50, "block_size": "4KiB", "queue_depth": 2,
     "rate": 100}
  ]
}
EOF
}

# refused WHAT: the start and --check-config both exit 1 saying so, and
# nothing is left in the small filesystem.
refused() {
	local rc=0 out
	timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" --state-dir "$WORK/state" \
		--new-run --no-table >"$WORK/run.log" 2>&1 || rc=$?
	((rc == 1)) || fail "$1: soakd exited $rc: $(cat "$WORK/run.log")"
	grep -q "not enough space to lay out" "$WORK/run.log" ||
		fail "$1: no free-space refusal: $(cat "$WORK/run.log")"
	grep -qE "only [0-9.]+ ?[KMG]i?B \([0-9]+ bytes\) is free on its filesystem" "$WORK/run.log" ||
		fail "$1: the refusal has no numbers: $(cat "$WORK/run.log")"
	rc=0
	out=$("$SOAKD" --check-config "$WORK/run.json" 2>&1 >/dev/null) || rc=$?
	((rc == 1)) || fail "$1: --check-config exited $rc: $out"
	[[ $out == *"not enough space to lay out"* ]] || fail "$1: --check-config says: $out"
	note "$1: $(grep -o 'not enough space.*' "$WORK/run.log")"
}

write_config "$WORK/run.json" 64MiB "$FS/big.dat"
refused "64 MiB on a 32 MiB filesystem"
[[ -z $(ls -A "$FS") ]] || fail "files left after the refusal: $(ls -A "$FS")"

write_config "$WORK/run.json" 20MiB "$FS/a.dat" "$FS/b.dat"
refused "two targets of 20 MiB on 32 MiB"
[[ -z $(ls -A "$FS") ]] || fail "files left after the refusal: $(ls -A "$FS")"

# What fits is laid out and runs.
write_config "$WORK/run.json" 8MiB "$FS/a.dat" "$FS/b.dat"
"$SOAKD" --check-config "$WORK/run.json" >/dev/null || fail "--check-config refused what fits"
timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" --state-dir "$WORK/state" \
	--new-run --no-table >"$WORK/fits.log" 2>&1 || fail "8 MiB targets: $(cat "$WORK/fits.log")"
rm -f "$FS"/*

# A layout that fails part way: the file soakd created is removed, soakd
# exits 1 with the reason (not killed by SIGXFSZ).
write_config "$WORK/run.json" 16MiB "$WORK/made.dat"
rc=0
prlimit --fsize=$((4 << 20)) -- timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" \
	--state-dir "$WORK/state" --new-run --no-table >"$WORK/fsize.log" 2>&1 || rc=$?
((rc == 1)) || fail "a failed layout: soakd exited $rc, expected 1: $(cat "$WORK/fsize.log")"
grep -q "cannot lay out $WORK/made.dat" "$WORK/fsize.log" ||
	fail "no layout error: $(cat "$WORK/fsize.log")"
[[ ! -e $WORK/made.dat ]] || fail "the half laid-out file soakd created was left ($(stat -c %s "$WORK/made.dat") bytes)"
note "failed layout: $(grep -o 'cannot lay out.*' "$WORK/fsize.log"); file removed"

# An existing file soakd was extending goes back to its size.
head -c $((1 << 20)) /dev/urandom >"$WORK/made.dat"
sum=$(sha256sum <"$WORK/made.dat")
rc=0
prlimit --fsize=$((4 << 20)) -- timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" \
	--state-dir "$WORK/state" --new-run --no-table >"$WORK/fsize2.log" 2>&1 || rc=$?
((rc == 1)) || fail "a failed extension: soakd exited $rc: $(cat "$WORK/fsize2.log")"
[[ $(stat -c %s "$WORK/made.dat") == $((1 << 20)) ]] ||
	fail "the existing file was left at $(stat -c %s "$WORK/made.dat") bytes"
[[ $(sha256sum <"$WORK/made.dat") == "$sum" ]] || fail "the existing file's data changed"
note "failed extension: file back to 1 MiB, unchanged"
note "ok"
