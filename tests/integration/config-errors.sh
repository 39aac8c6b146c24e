#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd --check-config: broken configs are refused with exit 1 and
# "FILE:LINE:COLUMN: message" lines that point at the problem; every example
# in config/ is accepted with exit 0 and a printed plan; --version works.
source "$(dirname "$0")/lib.sh"

need_cmd python3

# A valid config that each case breaks on one line, CASE_LINE.
CASE_LINE=13
write_case() {
	local name=$1 workload_line=$2
	cat >"$WORK/$name.json" <<CONFIG
{
  "run": {"name": "broken", "duration": "10s", "interval": "1s"},
  "workloads": [
    {
      "name": "w",
      "type": "device",
      "model": "pattern",
      "targets": ["$WORK/w.dat"],
      "file_size": "16MiB",
      "block_size": "4KiB",
      "rate": 100,
      "queue_depth": 4,
$workload_line
      "schedule": [{"scale": 1, "for": "10s"}]
    }
  ]
}
CONFIG
}

# check_error NAME LINE WORD [COLUMN...]: soakd --check-config NAME.json
# exits 1 and its first "FILE:LINE:COLUMN: message" line is on LINE, at one
# of the COLUMNs (any if none given), with WORD in the message ("" for any).
check_error() {
	local name=$1 line=$2 word=$3
	shift 3
	local file="$WORK/$name.json" out="$WORK/$name.out" rc=0
	(cd "$WORK" && timeout 20 "$SOAKD" --check-config "$file") >"$out" 2>&1 || rc=$?
	((rc == 1)) || fail "$name: --check-config exited $rc, expected 1: $(cat "$out")"
	python3 - "$file" "$out" "$line" "$word" "$@" <<'PY' || fail "$name: $(cat "$out")"
import re, sys
file, out, want_line, word, *want_columns = sys.argv[1:]
text = open(out).read()
found = [m for m in re.finditer(r"^(.+?):(\d+):(\d+): (.+)$", text, re.M) if m.group(1) == file]
if not found:
    sys.exit(f"no '{file}:LINE:COLUMN: message' line in:\n{text}")
m = found[0]
line, column, message = int(m.group(2)), int(m.group(3)), m.group(4)
print(f"# {m.group(0)}")
if line != int(want_line):
    sys.exit(f"error on line {line}, expected line {want_line}")
if want_columns and column not in [int(c) for c in want_columns]:
    sys.exit(f"error at column {column}, expected one of {want_columns}")
if word and word.lower() not in message.lower():
    sys.exit(f"message does not mention '{word}': {message}")
PY
}

# A syntax error, where jansson finds it (the second comma).
write_case syntax '      "read_pct": 70,,'
check_error syntax "$CASE_LINE" ""

# An unknown key: at the key's opening quote (or the first letter of it).
write_case unknown-key '      "read_percentage": 70,'
check_error unknown-key "$CASE_LINE" "read_percentage" 7 8

# A wrong type.
write_case wrong-type '      "read_pct": "seventy",'
check_error wrong-type "$CASE_LINE" "read_pct"

# An impossible value.
write_case impossible '      "read_pct": 150,'
check_error impossible "$CASE_LINE" "read_pct"

# A value that does not parse in its unit.
write_case bad-duration '      "max_lag": "5 parsecs",'
check_error bad-duration "$CASE_LINE" "max_lag"

# An unknown enumeration value.
write_case bad-access '      "access": "diagonal",'
check_error bad-access "$CASE_LINE" "access"

# A file that does not exist: exit 1 and a message naming it.
rc=0
timeout 20 "$SOAKD" --check-config "$WORK/absent.json" >"$WORK/absent.out" 2>&1 || rc=$?
((rc == 1)) || fail "absent file: --check-config exited $rc, expected 1"
grep -q "absent.json" "$WORK/absent.out" ||
	fail "absent file: the message does not name it: $(cat "$WORK/absent.out")"

# Run names become directory names: "." and ".." named the state
# directory itself and its parent (issue 12).  Refused at the name, and a
# real start writes nothing beside the state directory.
for bad in .. . .hidden; do
	write_case "run-name$bad" '      "read_pct": 70,'
	sed -i "s/\"name\": \"broken\"/\"name\": \"$bad\"/" "$WORK/run-name$bad.json"
	check_error "run-name$bad" 2 "may not start with '.'"
done
mkdir -p "$WORK/parent/state"
rc=0
(cd "$WORK" && timeout 20 "$SOAKD" --config "$WORK/run-name...json" --state-dir "$WORK/parent/state" \
	--socket "$WORK/parent.sock" --no-table) >"$WORK/run-name-start.out" 2>&1 || rc=$?
((rc != 0)) || fail "soakd started a run named '..': $(cat "$WORK/run-name-start.out")"
grep -q "may not start with '.'" "$WORK/run-name-start.out" ||
	fail "soakd refused '..' without saying why: $(cat "$WORK/run-name-start.out")"
[[ $(ls -A "$WORK/parent") == state ]] || fail "a run named '..' wrote into the state directory's parent: $(ls -A "$WORK/parent")"
note "run names '..', '.' and '.hidden' refused"

# A FIFO where a file soakd reads should be (issue 12): refused at once
# with its path and type.  Opening one for reading used to wait for a
# writer forever; the short timeout turns such a hang into a failure.
fifo_refused() {
	local label=$1 config=$2 fifo=$3 rc=0
	timeout 5 "$SOAKD" --check-config "$config" >"$WORK/$label.out" 2>&1 || rc=$?
	((rc != 124)) || fail "$label: soakd hung on the FIFO $fifo"
	((rc == 1)) || fail "$label: --check-config exited $rc, expected 1: $(cat "$WORK/$label.out")"
	grep -q "$fifo is a FIFO; it must be a regular file" "$WORK/$label.out" ||
		fail "$label: the message does not name the FIFO: $(cat "$WORK/$label.out")"
}
mkfifo "$WORK/config.fifo" "$WORK/creds.fifo" "$WORK/ca.fifo"
fifo_refused config-fifo "$WORK/config.fifo" "$WORK/config.fifo"
printf '[default]\naws_access_key_id = AKID\naws_secret_access_key = SECRETKEY\n' >"$WORK/s3.creds"
for which in creds ca; do
	creds=$WORK/s3.creds ca=
	[[ $which == creds ]] && creds=$WORK/creds.fifo
	[[ $which == ca ]] && ca=", \"ca_file\": \"$WORK/ca.fifo\""
	endpoint=http
	[[ $which == ca ]] && endpoint=https
	cat >"$WORK/$which-fifo.json" <<CONFIG
{"workloads": [{"name": "o", "type": "object", "protocol": "s3",
  "endpoint": "$endpoint://127.0.0.1:9", "bucket": "soak-bucket", "credentials": {"file": "$creds"}$ca}]}
CONFIG
	fifo_refused "$which-fifo" "$WORK/$which-fifo.json" "$WORK/$which.fifo"
done
note "FIFOs as configuration, credentials and CA file refused"

# "versioning" (issue 17): a boolean, and for S3 only, at its line.
write_obj_case() {
	cat >"$WORK/$1.json" <<CONFIG
{
  "workloads": [
    {"name": "o", "type": "object", "protocol": "$2",
     "endpoint": "http://127.0.0.1:9", "bucket": "soak-bucket",
     "credentials": {"file": "$WORK/s3.creds"},
     "versioning": $3}
  ]
}
CONFIG
}
write_obj_case versioning-type s3 '"yes"'
check_error versioning-type 6 "versioning"
write_obj_case versioning-http http true
sed -i 's/"bucket": "soak-bucket",//; /"credentials"/d' "$WORK/versioning-http.json"
check_error versioning-http 5 '"versioning" is for "protocol": "s3"'
note "\"versioning\": not a boolean, or with http, refused at its line"

# --version prints the project's version.
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SRCDIR/meson.build" | head -n1)
out=$(timeout 10 "$SOAKD" --version 2>&1) || fail "soakd --version exited $?: $out"
[[ $out == *"$version"* ]] || fail "soakd --version printed '$out', expected it to mention $version"
note "soakd --version: $out"

# Every example configuration is valid.  Checked from an empty directory:
# relative targets resolve against it, and checking (which looks at them:
# free space, the path rules) must not create them.  Examples written for
# other machines' paths (/srv/soak, /var/lib/soakd) are checked without
# their targets.
shopt -s nullglob
examples=("$SRCDIR"/config/*.json)
((${#examples[@]} > 0)) || fail "no example configurations in $SRCDIR/config"
mkdir "$WORK/cwd"
for example in "${examples[@]}"; do
	name=$(basename "$example")
	rc=0
	no_targets=()
	grep -Eq '"(targets|devices)": *\[ *(\{"path": *)?"/' "$example" && no_targets=(--no-targets)
	(cd "$WORK/cwd" && timeout 20 "$SOAKD" --check-config "$example" ${no_targets[@]+"${no_targets[@]}"}) \
		>"$WORK/$name.plan" 2>"$WORK/$name.err" || rc=$?
	((rc == 0)) || fail "config/$name: --check-config exited $rc: $(cat "$WORK/$name.err" "$WORK/$name.plan")"
	[[ -s $WORK/$name.plan ]] || fail "config/$name: --check-config printed no plan"
	python3 - "$example" "$WORK/$name.plan" <<'PY' ||
import json, sys
config = json.load(open(sys.argv[1]))
plan = open(sys.argv[2]).read()
missing = [w["name"] for w in config["workloads"] if w["name"] not in plan]
if missing:
    sys.exit(f"missing {missing}")
# Data verification keys reach the plan (issue 15).
for w in config["workloads"]:
    if w.get("verify") and json.loads(plan)["workloads"][[x["name"] for x in json.loads(plan)["workloads"]].index(w["name"])].get("verify") is None:
        sys.exit(f"workload {w['name']}: \"verify\" not in the plan")
exports = config["run"].get("exports")
if exports and json.loads(plan)["run"].get("exports", {}).get("prometheus") != exports.get("prometheus"):
    sys.exit(f"exports {exports} not in the plan")
PY
		fail "config/$name: the plan does not name every workload or export: $(cat "$WORK/$name.plan")"
	note "config/$name: ok ($(wc -l <"$WORK/$name.plan") lines of plan${no_targets[*]:+, ${no_targets[*]}})"
done
grep -q '"versioning": true' "$WORK/s3-versioned.json.plan" ||
	fail "config/s3-versioned.json: the plan does not show \"versioning\": $(cat "$WORK/s3-versioned.json.plan")"
created=$(ls -A "$WORK/cwd")
[[ -z $created ]] || fail "--check-config created files in its working directory: $created"
note "ok"
