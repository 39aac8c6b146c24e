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
# A second workload with "verify": its entries carry SOAK_VERIFY_* (issue 15).
python3 - "$CFG" <<'PY'
import copy, json, sys
cfg = json.load(open(sys.argv[1]))
w = copy.deepcopy(cfg["workloads"][0])
w.update(name="jverify", targets=[w["targets"][0].replace("jwork", "jverify")], verify=True, fill=True)
cfg["workloads"].append(w)
json.dump(cfg, open(sys.argv[1], "w"))
PY

cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
source "$SRCDIR/tests/integration/journallib.sh"
journald_start

rc=0
timeout 60 "$SOAKD" --config "$CFG" --socket "$WORK/soakd.sock" --state-dir "$WORK/state" \
	>"$WORK/soakd.log" 2>&1 || rc=$?
if ((rc != 0)); then
	echo "soakd exited $rc" >&2
	exit 3
fi
journald_stop
INNER

export WORK JOURNAL_DIR JOURNALD SRCDIR SOAKD CFG
timeout 120 unshare --mount --propagation private bash "$WORK/inner.sh" ||
	fail "running soakd with a private journald failed (exit $?)"

[[ -d $JOURNAL_DIR/journal ]] || fail "journald wrote no journal under $JOURNAL_DIR"
journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_WORKLOAD=jwork >"$WORK/entries.json" \
	2>"$WORK/journalctl.log" || fail "journalctl failed"
python3 - "$WORK/entries.json" <<'PY' || fail "journal entries: $(head -c 3000 "$WORK/entries.json")"
import json, sys

fields = ["SOAK_RUN", "SOAK_WORKLOAD", "SOAK_OP", "SOAK_OPS", "SOAK_RATE", "SOAK_P50_US",
          "SOAK_P99_US", "SOAK_P999_US", "SOAK_MAX_US", "SOAK_ERRORS",
          "SOAK_MISSED", "SOAK_PENDING"]
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
        # The device keeps up: nothing missed, nothing left pending at the end.
        if int(e["SOAK_MISSED"]) != 0:
            problems.append(f"SOAK_MISSED {e['SOAK_MISSED']}")
        if e.get("SOAK_EVENT") == "summary" and int(e["SOAK_PENDING"]) != 0:
            problems.append(f"SOAK_PENDING {e['SOAK_PENDING']} over the run")
        if not e.get("MESSAGE"):
            problems.append("entry without MESSAGE")
        # Each kind of entry has its MESSAGE_ID (units/soakd.catalog).
        want_id = {"interval": "2625afa8e3bb49e08635e59563a07a25",
                   "summary": "7f0b783ca7204cbab2f731163dbe1f9f"}.get(e.get("SOAK_EVENT"))
        if e.get("MESSAGE_ID") != want_id:
            problems.append(f"SOAK_EVENT={e.get('SOAK_EVENT')} with MESSAGE_ID {e.get('MESSAGE_ID')}, expected {want_id}")
        # A device workload's entries carry no object-only fields.
        extra = [f for f in e if f.startswith(("SOAK_TTFB", "SOAK_CORRUPT"))]
        if extra:
            problems.append(f"a device workload's entry with object fields {extra}")
    except (ValueError, TypeError) as err:
        problems.append(f"malformed entry {e}: {err}")
if sum(int(e["SOAK_OPS"]) for e in complete) == 0:
    problems.append("no entry counts any op")
if not any(e.get("SOAK_EVENT") == "summary" for e in complete):
    problems.append("no summary entry")
if problems:
    sys.exit("\n".join(sorted(set(problems))[:20]))
PY

journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_WORKLOAD=jverify >"$WORK/verify.json" \
	2>"$WORK/journalctl.log" || fail "journalctl failed"
python3 - "$WORK/verify.json" <<'PY' || fail "verify fields: $(head -c 3000 "$WORK/verify.json")"
import json, sys
classes = ["CHECKED", "CORRUPT", "STALE", "MISDIRECTED", "TORN", "FOREIGN", "UNCERTAIN", "UNCHECKED"]
entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
entries = [e for e in entries if e.get("SOAK_EVENT") == "interval"]
bad = [e for e in entries if not all("SOAK_VERIFY_" + c in e for c in classes) or "SOAK_CORRUPT" not in e]
if not entries or bad:
    sys.exit(f"{len(entries)} interval entries, {len(bad)} without every SOAK_VERIFY_* field")
reads = [e for e in entries if e["SOAK_OP"] == "read"]
checked = sum(int(e["SOAK_VERIFY_CHECKED"]) for e in reads)
fails = sum(int(e["SOAK_VERIFY_" + c]) for e in entries for c in classes[1:6])
if checked == 0 or fails or any(int(e["SOAK_CORRUPT"]) for e in entries):
    sys.exit(f"reads checked {checked} blocks, {fails} failures")
print(f"# jverify: {len(entries)} interval entries, {checked} blocks checked, no failure")
PY

# The catalog explains every MESSAGE_ID soakd sends: journalctl compiles it
# (as --update-catalog does after an install) and lists each ID.
mkdir -p "$WORK/catalog-root/usr/lib/systemd/catalog"
cp "$SRCDIR/units/soakd.catalog" "$WORK/catalog-root/usr/lib/systemd/catalog/"
journalctl --root="$WORK/catalog-root" --update-catalog 2>"$WORK/catalog.err" ||
	fail "journalctl --update-catalog: $(cat "$WORK/catalog.err")"
[[ -s $WORK/catalog.err ]] && fail "journalctl --update-catalog complained: $(cat "$WORK/catalog.err")"
journalctl --root="$WORK/catalog-root" --list-catalog >"$WORK/catalog.txt"
for id in $(sed -n 's/^#define SOAK_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)".*/\1/p' "$SRCDIR/daemon/base/journal_ids.h"); do
	grep -q "^$id soakd: " "$WORK/catalog.txt" || fail "no catalog entry for MESSAGE_ID $id: $(cat "$WORK/catalog.txt")"
done
# ... and nothing else: as many entries as IDs.
ids=$(grep -c '^#define SOAK_MESSAGE_' "$SRCDIR/daemon/base/journal_ids.h")
(($(wc -l <"$WORK/catalog.txt") == ids)) || fail "catalog entries, $ids IDs: $(cat "$WORK/catalog.txt")"
note "ok"
