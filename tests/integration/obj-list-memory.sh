#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A LIST op against a server whose listing is huge (s3_versions_loop.py,
# "huge-list": 8 pages of 10 MiB, 1 Mi keys soakd's names would have):
# once the op has ended, the transfer no longer holds the page buffer
# (16 MiB) nor the listed ids (8 MiB).  Seen in soakd's memory: its
# resident set falls back well below its peak (VmHWM) after the op.
#
# The sanitizers' allocator keeps freed memory in quarantine, so this runs
# the build without them (PLAIN_SOAKD, which tools/test builds), with
# glibc's mmap threshold pinned at 128 KiB: a large buffer is then always
# its own mapping, given back to the kernel when it is freed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

[[ -n ${PLAIN_SOAKD:-} && -x ${PLAIN_SOAKD:-} ]] ||
	skip_unless_strict "PLAIN_SOAKD is not set: tools/test builds build-plain (no sanitizers)" \
		"and exports PLAIN_SOAKD"
SOAKD=$PLAIN_SOAKD
SOAKD_ENV=("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072")

start_versions_loop huge-list

cat >"$WORK/huge.json" <<JSON
{
  "run": {"name": "huge", "duration": "60s", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "big",
    "names": "sequential", "threads": 1, "size": "1KiB", "objects": 5, "rate": 2,
    "concurrency": 1, "mix": {"put": 50, "list": 50}} ]
}
JSON

# status_kib FIELD: soakd's VmRSS, in KiB.  (Not VmHWM: the kernel does
# not always update the peak before memory is unmapped.)
status_kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$SOAKD_PID/status"; }
list_pages() { cat "$COUNT.list" 2>/dev/null || echo 0; }
# For wait_until: the huge listing read and its LIST counted; meanwhile
# the largest resident set seen, in PEAK.
PEAK=0
huge_listed() {
	local rss
	rss=$(status_kib VmRSS)
	((rss > PEAK)) && PEAK=$rss
	(($(list_pages) >= 8)) && op_at_least w list count 1
}
# The resident set back within 6 MiB of what it was before the listing:
# the 16 MiB page buffer (11 MiB of it touched) and the 8 MiB of ids are
# gone.  Kept for the next listing, they would hold it 19 MiB above.
fell_back() {
	local rss
	rss=$(status_kib VmRSS)
	((rss - BASE <= 6 * 1024))
}

start_soakd --config "$WORK/huge.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
BASE=$(status_kib VmRSS)
note "soakd: $SOAKD; VmRSS $BASE KiB before the listing"
wait_until 60 "the huge listing to be read and its LIST counted" huge_listed
grep -q "LIST MISMATCH.* 104857[0-9] listed that the ledger does not hold" "$SOAKD_LOG" ||
	fail "the huge listing was not read whole: $(grep 'LIST MISMATCH' "$SOAKD_LOG" | head -3)"
note "VmRSS at most $PEAK KiB seen during the listing"
((PEAK - BASE >= 8 * 1024)) ||
	fail "soakd grew by $((PEAK - BASE)) KiB only: the listing did not take the memory"
wait_until 10 "soakd's memory to fall back after the LIST" fell_back
note "the LIST's buffers were released: VmRSS $(status_kib VmRSS) KiB"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
