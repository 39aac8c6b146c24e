#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Structured interval records in a real journald: a private systemd-journald
# in a private mount namespace (the machine's /run is not touched), soakd
# runs a few intervals against it, and journalctl reads the records back by
# field.
source "$(dirname "$0")/lib.sh"

need_root "a mount namespace with a private journald"
need_cmd unshare journalctl python3
JOURNALD=/lib/systemd/systemd-journald
[[ -x $JOURNALD ]] || skip_unless_strict "$JOURNALD is not installed"
[[ -d /run/log && -d /var/log/journal ]] ||
	skip_unless_strict "/run/log or /var/log/journal missing (no mount points for the private journald)"

JOURNAL_DIR="$WORK/journal-root"
mkdir "$JOURNAL_DIR"
CFG="$WORK/journal.json"
write_file_config "$CFG" journal jwork 3s exit 300

cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
mount -t tmpfs tmpfs /run/systemd
mkdir /run/systemd/journal
mount --bind "$JOURNAL_DIR" /run/log
mount -t tmpfs tmpfs /var/log/journal

"$JOURNALD" >"$WORK/journald.log" 2>&1 &
journald=$!
trap 'kill -TERM $journald 2>/dev/null; wait $journald 2>/dev/null' EXIT
for ((i = 0; i < 100; i++)); do
	[[ -S /run/systemd/journal/socket ]] && break
	sleep 0.1
done
[[ -S /run/systemd/journal/socket ]] || { echo "journald did not start" >&2; exit 2; }

rc=0
timeout 60 "$SOAKD" --config "$CFG" --socket "$WORK/soakd.sock" --state-dir "$WORK/state" \
	>"$WORK/soakd.log" 2>&1 || rc=$?
if ((rc != 0)); then
	echo "soakd exited $rc" >&2
	exit 3
fi
# journald syncs its files when it stops; wait for it (bounded) before
# the namespace and its mounts go away.
kill -TERM $journald
for ((i = 0; i < 100; i++)); do
	kill -0 $journald 2>/dev/null || break
	[[ $(awk '{print $3}' /proc/$journald/stat 2>/dev/null) == Z ]] && break
	sleep 0.1
done
wait $journald || true
trap - EXIT
INNER

export WORK JOURNAL_DIR JOURNALD SOAKD CFG
timeout 120 unshare --mount --propagation private bash "$WORK/inner.sh" ||
	fail "running soakd with a private journald failed (exit $?)"

[[ -d $JOURNAL_DIR/journal ]] || fail "journald wrote no journal under $JOURNAL_DIR"
journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_WORKLOAD=jwork >"$WORK/entries.json" \
	2>"$WORK/journalctl.log" || fail "journalctl failed"
python3 - "$WORK/entries.json" <<'PY' || fail "journal entries: $(head -c 3000 "$WORK/entries.json")"
import json, sys

fields = ["SOAK_RUN", "SOAK_WORKLOAD", "SOAK_OP", "SOAK_OPS", "SOAK_RATE", "SOAK_P50_US",
          "SOAK_P99_US", "SOAK_P999_US", "SOAK_MAX_US", "SOAK_ERRORS"]
entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
complete = [e for e in entries if all(f in e for f in fields)]
print(f"# {len(entries)} entries with SOAK_WORKLOAD=jwork, {len(complete)} with every field")
if entries:
    print("# e.g. " + " ".join(f"{f}={entries[-1].get(f)}" for f in fields + ["MESSAGE"]))
problems = []
if len(complete) < 2:
    missing = sorted({f for e in entries for f in fields if f not in e})
    problems.append(f"{len(complete)} complete entries, expected at least 2; missing fields: {missing}")
for e in complete:
    try:
        if e["SOAK_RUN"] != "journal":
            problems.append(f"SOAK_RUN {e['SOAK_RUN']!r}, expected 'journal'")
        if e["SOAK_OP"] not in ("read", "write"):
            problems.append(f"SOAK_OP {e['SOAK_OP']!r}")
        ops, errors = int(e["SOAK_OPS"]), int(e["SOAK_ERRORS"])
        float(e["SOAK_RATE"])
        lat = [float(e[f]) for f in ("SOAK_P50_US", "SOAK_P99_US", "SOAK_P999_US", "SOAK_MAX_US")]
        if ops > 0 and not lat[0] <= lat[1] <= lat[2] <= lat[3]:
            problems.append(f"percentiles out of order: {lat}")
        if errors != 0:
            problems.append(f"SOAK_ERRORS {errors}")
        if not e.get("MESSAGE"):
            problems.append("entry without MESSAGE")
    except (ValueError, TypeError) as err:
        problems.append(f"malformed entry {e}: {err}")
if sum(int(e["SOAK_OPS"]) for e in complete) == 0:
    problems.append("no entry counts any op")
if problems:
    sys.exit("\n".join(sorted(set(problems))[:20]))
PY
note "ok"
