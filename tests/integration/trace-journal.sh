#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel's series in a real journald (private, in a private mount
# namespace, as journald.sh): each workload entry carries SOAK_BLK_* for
# the same op and interval next to the application's SOAK_P99_US, and every
# device and endpoint gets entries of its own (SOAK_KERNEL=blk with
# SOAK_DEVICE, SOAK_KERNEL=tcp with SOAK_ENDPOINT and SOAK_TCP_SRTT_P99_US).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_loop_devices
need_cmd unshare journalctl curl
JOURNALD=/lib/systemd/systemd-journald
[[ -x $JOURNALD ]] || skip_unless_strict "$JOURNALD is not installed"
[[ -d /run/log && -d /var/log/journal ]] ||
	skip_unless_strict "/run/log or /var/log/journal missing (no mount points for the private journald)"

make_loop LOOP 64M
DEV=$(basename "$LOOP")
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
JOURNAL_DIR="$WORK/journal-root"
mkdir "$JOURNAL_DIR"
CFG="$WORK/journal.json"
cat >"$CFG" <<EOF
{"run": {"name": "trace-journal", "duration": "3s", "interval": "1s",
         "trace": {"tcp_endpoints": ["127.0.0.1:$PORT"]}},
 "workloads": [{"name": "load", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 2000}]}
EOF

cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
source "$SRCDIR/tests/integration/journallib.sh"
journald_start
python3 -m http.server --bind 127.0.0.1 "$PORT" >"$WORK/http.log" 2>&1 &
http=$!
trap 'kill -TERM $JOURNALD_PID $http 2>/dev/null; wait $JOURNALD_PID $http 2>/dev/null' EXIT
for ((i = 0; i < 100; i++)); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	sleep 0.1
done

timeout 60 "$SOAKD" --config "$CFG" --socket "$WORK/soakd.sock" --state-dir "$WORK/state" \
	--no-table >"$WORK/soakd.log" 2>&1 &
soakd=$!
# Ready (the probes attached) once it logs the run's start.
for ((i = 0; i < 200; i++)); do
	grep -q "^soakd: run trace-journal: " "$WORK/soakd.log" && break
	sleep 0.05
done
for ((i = 0; i < 10; i++)); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" || true
done
rc=0
wait $soakd || rc=$?
if ((rc != 0)); then
	echo "soakd exited $rc" >&2
	exit 3
fi
kill -TERM $http 2>/dev/null
wait $http 2>/dev/null || true
journald_stop
INNER

export WORK JOURNAL_DIR JOURNALD SRCDIR SOAKD CFG PORT
timeout 120 unshare --mount --propagation private bash "$WORK/inner.sh" ||
	fail "running soakd with a private journald failed (exit $?)"
# "kernel tracing of blk is unavailable (CAUSE): REASON"
if line=$(grep -m1 "kernel tracing of blk is unavailable" "$WORK/soakd.log"); then
	cause=$(sed -n 's/.*kernel tracing of blk is unavailable (\([a-z]*\)).*/\1/p' <<<"$line")
	bpf_unavailable blk "$cause" "$line"
fi

[[ -d $JOURNAL_DIR/journal ]] || fail "journald wrote no journal under $JOURNAL_DIR"
journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_RUN=trace-journal >"$WORK/entries.json" \
	2>"$WORK/journalctl.log" || fail "journalctl failed"
python3 - "$WORK/entries.json" "$DEV" "127.0.0.1:$PORT" <<'PY' || fail "journal entries: $(head -c 3000 "$WORK/entries.json")"
import json, sys

entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
dev, endpoint = sys.argv[2:4]
problems = []

rows = [e for e in entries if e.get("SOAK_WORKLOAD") == "load" and "SOAK_KERNEL" not in e
        and e.get("SOAK_OP") == "read"]
with_blk = [e for e in rows if "SOAK_BLK_P99_US" in e and int(e["SOAK_BLK_OPS"]) > 0]
print(f"# {len(rows)} read entries of 'load', {len(with_blk)} with SOAK_BLK_*")
if with_blk:
    e = with_blk[-1]
    print("# e.g. " + " ".join(f"{f}={e.get(f)}" for f in
          ("SOAK_OPS", "SOAK_BLK_OPS", "SOAK_P99_US", "SOAK_SERVICE_P50_US", "SOAK_BLK_P50_US",
           "SOAK_BLK_P99_US")))
if len(with_blk) < 2:
    problems.append(f"{len(with_blk)} workload entries carry SOAK_BLK_*, expected at least 2")
for e in with_blk:
    if not 0 < float(e["SOAK_BLK_P50_US"]) <= float(e["SOAK_BLK_P99_US"]) <= float(e["SOAK_BLK_MAX_US"]):
        problems.append(f"SOAK_BLK percentiles out of order: {e}")

blk = [e for e in entries if e.get("SOAK_KERNEL") == "blk" and e.get("SOAK_DEVICE") == dev]
ops = {e.get("SOAK_OP") for e in blk}
print(f"# {len(blk)} SOAK_KERNEL=blk entries for {dev}, ops {sorted(ops)}")
if not {"read", "write"} <= ops:
    problems.append(f"SOAK_KERNEL=blk entries for {dev} cover {sorted(ops)}")

tcp = [e for e in entries if e.get("SOAK_KERNEL") == "tcp" and e.get("SOAK_ENDPOINT") == endpoint]
print(f"# {len(tcp)} SOAK_KERNEL=tcp entries for {endpoint}")
if not tcp:
    problems.append(f"no SOAK_KERNEL=tcp entry for {endpoint}")
elif not any(float(e["SOAK_TCP_SRTT_P99_US"]) > 0 for e in tcp):
    problems.append(f"no SOAK_TCP_SRTT_P99_US above 0: {tcp}")
elif sum(int(e["SOAK_TCP_CONNECTS"]) for e in tcp) < 10:
    problems.append(f"{sum(int(e['SOAK_TCP_CONNECTS']) for e in tcp)} connects, expected 10")
elif not any(float(e["SOAK_TCP_CONNECT_P99_US"]) > 0 for e in tcp):
    problems.append("no SOAK_TCP_CONNECT_P99_US above 0")
if problems:
    sys.exit("\n".join(problems))
PY
note "ok"
