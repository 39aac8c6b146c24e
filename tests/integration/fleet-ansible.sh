#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fleet example, config/ansible/soakd-fleet.yml: ansible-playbook
# accepts it (--syntax-check), and its first play, run for real on this
# machine (--tags prepare), renders config/fleet.json with one start_at
# ahead of now, a configuration soakd accepts.  The plays that need hosts
# with systemd run over SSH on containers in fleet-ssh.sh.
source "$(dirname "$0")/lib.sh"

need_cmd python3 ansible-playbook

PLAYBOOK="$SRCDIR/config/ansible/soakd-fleet.yml"
export ANSIBLE_LOCAL_TEMP="$WORK/ansible-tmp" ANSIBLE_HOME="$WORK/ansible-home"
: >"$WORK/ansible.cfg"
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_CONFIG="$WORK/ansible.cfg"
# No hosts in the group soak_hosts: only the controller's plays have hosts.
INVENTORY=("-i" "localhost,")

timeout 60 ansible-playbook "${INVENTORY[@]}" --syntax-check "$PLAYBOOK" >"$WORK/syntax.log" 2>&1 ||
	fail "ansible-playbook --syntax-check: $(cat "$WORK/syntax.log")"
note "syntax: $(grep -c . "$WORK/syntax.log") lines, ok"

before=$(date +%s)
timeout 120 ansible-playbook "${INVENTORY[@]}" --tags prepare \
	-e "soak_results=$WORK/results" -e soak_lead_seconds=600 \
	-e ansible_python_interpreter=/usr/bin/python3 "$PLAYBOOK" >"$WORK/prepare.log" 2>&1 ||
	fail "the playbook's prepare step failed: $(cat "$WORK/prepare.log")"
after=$(date +%s)
RENDERED="$WORK/results/soakd.json"
[[ -s $RENDERED ]] || fail "the playbook rendered no $RENDERED: $(cat "$WORK/prepare.log")"

python3 - "$SRCDIR/config/fleet.json" "$RENDERED" "$before" "$after" <<'EOF' || fail "rendered configuration: $(cat "$RENDERED")"
import datetime, json, sys
template, rendered = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
before, after = int(sys.argv[3]), int(sys.argv[4])
start_at = rendered["run"].pop("start_at")
template["run"].pop("start_at", None)
if rendered != template:
    sys.exit("the rendered configuration differs from config/fleet.json beyond start_at")
t = datetime.datetime.strptime(start_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
ahead = t.timestamp()
if not before + 600 - 1 <= ahead <= after + 600 + 1:
    sys.exit(f"start_at {start_at} is not 600 s after the run of the playbook")
print(f"# rendered start_at {start_at}")
EOF

(cd "$WORK" && timeout 20 "$SOAKD" --check-config "$RENDERED" --no-targets) >"$WORK/plan.txt" 2>&1 ||
	fail "soakd refuses the rendered configuration: $(cat "$WORK/plan.txt")"
start_at=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["start_at"])' "$RENDERED")
grep -q "\"start_at\": \"$start_at\"" "$WORK/plan.txt" || fail "the plan lacks start_at: $(cat "$WORK/plan.txt")"
grep -q 'soakd starts its workloads on every host at' "$WORK/prepare.log" ||
	fail "the playbook did not say when the fleet starts"
note "ok"
