#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd as a user runs it (issue 8, point 3): installed with meson into a
# Debian rootfs booted with a real systemd as PID 1, soakd.socket enabled.
# The first "soakctl status" starts soakd.service (and the socket admits
# group soakd, no one else unprivileged); "systemctl show" has the
# live STATUS= line; the journal has soakd's interval entries with
# _SYSTEMD_UNIT=soakd.service and the SOAK_* fields; the run lives in
# StateDirectory and the socket in RuntimeDirectory; the BPF probes load
# under the unit's sandbox; and DeviceAllow= lets soakd do I/O on a loop
# device while the device cgroup refuses another block device (EPERM).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/systemd-lib.sh"

ct_loop LOOP 256M
# A block device the unit does not allow: a node of a block major that no
# DeviceAllow= of soakd.service names, with a minor that no device has
# here, so that nothing real is behind it.  Unconfined, opening it fails
# with ENXIO; inside soakd.service the device cgroup refuses it first.
allowed=$(sed -n 's/^DeviceAllow=block-\([^ ]*\).*/\1/p' "$SRCDIR/units/soakd.service" | tr '\n' ' ')
refused_major=$(awk -v allowed=" $allowed " '
	/^Block devices:/ { blk = 1; next }
	blk && NF == 2 && index(allowed, " " $2 " ") == 0 { print $1; exit }' /proc/devices)
if [[ -z $refused_major ]]; then
	# Every registered block driver is allowed: an unregistered major.
	for refused_major in $(seq 240 254); do
		awk '/^Block devices:/ { b = 1 } b { print $1 }' /proc/devices | grep -qx "$refused_major" ||
			break
	done
fi
refused_minor=250
[[ ! -e /sys/dev/block/$refused_major:$refused_minor ]] ||
	fail "block device $refused_major:$refused_minor exists here: pick another minor"
REFUSED=/dev/soak-refused
ct_node "$REFUSED" "$refused_major" "$refused_minor"
note "refused device: $REFUSED, block $refused_major:$refused_minor" \
	"($(awk -v m="$refused_major" '/^Block/ { b = 1 } b && $1 == m { print $2 }' /proc/devices))"

ct_loop LOOP2 64M
ct_prepare
ct_config "$(run_config units "$(dev_workload dev "$LOOP" 200)")"
ct_boot
ct_wait_running 60

# 1. Socket activation: enabled as a user does; the first soakctl starts soakd.
ct_systemctl enable soakd.socket soakd.service >"$WORK/enable.log" 2>&1 ||
	fail "systemctl enable: $(cat "$WORK/enable.log")"
ct_systemctl start soakd.socket || fail "soakd.socket does not start"
[[ $(ct_prop ActiveState) == inactive ]] ||
	fail "soakd.service is $(ct_prop ActiveState) before any connection"
sock=$(ct_path /run/soakd/soakd.sock)
[[ -S $sock ]] || fail "soakd.socket made no /run/soakd/soakd.sock"
soakd_gid=$(awk -F: '$1 == "soakd" { print $3 }' "$CT_ROOT/etc/group")
[[ -n $soakd_gid && $(stat -c '%a %g' "$sock") == "660 $soakd_gid" ]] ||
	fail "the socket is $(stat -c 'mode %a gid %g' "$sock"), expected 660 and group soakd ($soakd_gid)"
t0=$(now_ns)
ct_soakctl status >"$WORK/status.txt" 2>&1 ||
	fail "the first soakctl status failed: $(cat "$WORK/status.txt")"
note "first soakctl status answered in $((($(now_ns) - t0) / 1000000)) ms"
grep -q dev "$WORK/status.txt" || fail "status does not list workload dev: $(cat "$WORK/status.txt")"
[[ $(ct_prop ActiveState) == active ]] || fail "soakd.service is $(ct_prop ActiveState) after status"
[[ $(ct_prop TriggeredBy) == *soakd.socket* ]] || fail "soakd.service not triggered by soakd.socket"
INVOCATION=$(ct_invocation)
MAIN=$(ct_main_pid)
note "soakd.service active, main pid $MAIN, invocation $INVOCATION"
# The socket's group: a member reads status, anyone else cannot connect.
ct_run User=nobody SupplementaryGroups=soakd -- soakctl status >"$WORK/member.txt" 2>&1 ||
	fail "a member of group soakd cannot read status: $(cat "$WORK/member.txt")"
rc=0
ct_run User=nobody -- soakctl status >"$WORK/nobody.txt" 2>&1 || rc=$?
((rc != 0)) && grep -qi 'permission denied' "$WORK/nobody.txt" ||
	fail "a user outside group soakd reached soakd (exit $rc): $(cat "$WORK/nobody.txt")"
note "outside group soakd: $(head -n1 "$WORK/nobody.txt")"

# 2. The live STATUS= line, as systemctl shows it, and that it moves on.
status_live() {
	STATUS_TEXT=$(ct_prop StatusText)
	[[ $STATUS_TEXT =~ ^dev\ running\ read\ [0-9]+/s\ p99\ [0-9]+us\ write\ [0-9]+/s\ p99\ [0-9]+us ]]
}
wait_until 15 "a STATUS= line with rates (last: '${STATUS_TEXT:-}')" status_live
first_status=$STATUS_TEXT
status_changed() { status_live && [[ $STATUS_TEXT != "$first_status" ]]; }
wait_until 15 "the STATUS= line to change" status_changed
note "StatusText: $STATUS_TEXT"
read_rate=$(sed -n 's/^dev running read \([0-9]*\)\/s.*/\1/p' <<<"$STATUS_TEXT")
((read_rate >= 100 && read_rate <= 180)) || fail "read rate $read_rate/s in '$STATUS_TEXT', expected ~140"

# 3. StateDirectory and RuntimeDirectory: soakd was told them and uses them.
in_ct cat "/proc/$MAIN/environ" | tr '\0' '\n' >"$WORK/environ"
grep -qx 'STATE_DIRECTORY=/var/lib/soakd' "$WORK/environ" || fail "no STATE_DIRECTORY: $(cat "$WORK/environ")"
grep -qx 'RUNTIME_DIRECTORY=/run/soakd' "$WORK/environ" || fail "no RUNTIME_DIRECTORY: $(cat "$WORK/environ")"
[[ $(stat -c %a "$CT_ROOT/var/lib/soakd") == 700 ]] ||
	fail "/var/lib/soakd has mode $(stat -c %a "$CT_ROOT/var/lib/soakd"), expected 0700"
INTERVALS="$CT_ROOT/var/lib/soakd/units/intervals.log"
interval_records() {
	local n
	n=$(grep -c '"type":"interval"' "$INTERVALS" 2>/dev/null) || true
	echo "${n:-0}"
}
three_records() { (($(interval_records) >= 3)); }
wait_until 15 "interval records in /var/lib/soakd/units/intervals.log" three_records
in_ct ls -l "/proc/$MAIN/fd" >"$WORK/fds" 2>&1
grep -q '/var/lib/soakd/units/' "$WORK/fds" || fail "soakd holds nothing open in its run directory"
grep -q 'soakd.sock\|socket:' "$WORK/fds" || fail "soakd holds no socket: $(cat "$WORK/fds")"
note "run directory /var/lib/soakd/units: $(interval_records) interval records"

# 3b. The threads' priorities, which the unit allows (LimitNICE=-10,
# setpriority and sched_setscheduler): the main thread SCHED_BATCH, the
# workload's thread SCHED_OTHER at nice -10 (soakd(8), "CPU").  systemd
# raises RLIMIT_NICE to 30 only as far as the hard limit it inherited lets
# it, without CAP_SYS_RESOURCE (which these machines' bounding set lacks):
# where it stays below, soakd must say so once and run on.
in_ct sh -c "for t in /proc/$MAIN/task/*; do echo \$(cat \$t/stat); done" >"$WORK/threads.txt"
nice_limit=$(in_ct cat "/proc/$MAIN/limits" | awk '/^Max nice priority/ {print $4}')
ct_journal -u soakd.service "_SYSTEMD_INVOCATION_ID=$INVOCATION" >"$WORK/prio-journal.txt" 2>&1 || true
python3 - "$WORK/threads.txt" "$MAIN" "$nice_limit" "$WORK/prio-journal.txt" <<'PY' ||
import sys
threads = {}
for line in open(sys.argv[1]):
    if line.strip():
        fields = line.rsplit(") ", 1)[1].split()
        # nice is field 19 of stat, policy field 41; the list starts at 3.
        threads[line.split()[0]] = (int(fields[16]), int(fields[38]))
limit = int(sys.argv[3])
notices = open(sys.argv[4]).read().count("cannot raise the workload threads' priority")
print(f"# threads (nice, policy): {threads}; RLIMIT_NICE {limit}; notices {notices}")
problems = []
if threads.get(sys.argv[2], (0, 0))[1] != 3:
    problems.append("the main thread is not SCHED_BATCH (3)")
if limit >= 30:
    if (-10, 0) not in threads.values():
        problems.append("no thread runs SCHED_OTHER at nice -10")
else:
    print(f"# RLIMIT_NICE stayed {limit} (this machine's hard limit): nice -10 not checked")
    if notices != 1:
        problems.append(f"{notices} notices that the priority cannot be raised, expected 1")
sys.exit("; ".join(problems) or None)
PY
	fail "threads' priorities under the unit: $(cat "$WORK/threads.txt" "$WORK/prio-journal.txt")"

# 4. The journal: soakd's entries of this invocation, with their fields.
ct_journal_json "$WORK/journal.json" "_SYSTEMD_INVOCATION_ID=$INVOCATION"
python3 - "$WORK/journal.json" "$(basename "$LOOP")" <<'PY' || fail "journal entries"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
loop = sys.argv[2]
app = [e for e in entries if e.get("SOAK_WORKLOAD") == "dev" and "SOAK_OPS" in e]
blk = [e for e in entries if e.get("SOAK_KERNEL") == "blk" and e.get("SOAK_DEVICE") == loop]
print(f"# {len(entries)} entries of this invocation: {len(app)} interval entries of dev,"
      f" {len(blk)} kernel block entries of {loop}")
problems = []
if len(app) < 4:
    problems.append(f"{len(app)} interval entries of workload dev, expected at least 4")
fields = ["SOAK_RUN", "SOAK_WORKLOAD", "SOAK_OP", "SOAK_OPS", "SOAK_ERRORS", "SOAK_P99_US",
          "MESSAGE", "_SYSTEMD_UNIT", "_PID", "_SYSTEMD_CGROUP"]
for e in app:
    missing = [f for f in fields if f not in e]
    if missing:
        problems.append(f"an entry lacks {missing}")
    elif e["_SYSTEMD_UNIT"] != "soakd.service":
        problems.append(f"_SYSTEMD_UNIT={e['_SYSTEMD_UNIT']}")
    elif e["SOAK_RUN"] != "units" or e["SOAK_OP"] not in ("read", "write"):
        problems.append(f"SOAK_RUN={e['SOAK_RUN']} SOAK_OP={e['SOAK_OP']}")
    elif int(e["SOAK_ERRORS"]) != 0:
        problems.append(f"SOAK_ERRORS={e['SOAK_ERRORS']}")
if app and not sum(int(e.get("SOAK_OPS", 0)) for e in app):
    problems.append("no entry counts an op")
if not blk:
    problems.append(f"no SOAK_KERNEL=blk entry for {loop}: the BPF probes saw no I/O")
elif not sum(int(e.get("SOAK_BLK_OPS", 0)) for e in blk):
    problems.append("kernel block entries count no I/O")
if problems:
    sys.exit("\n".join(sorted(set(problems))[:10]))
e = app[-1]
print("# e.g. " + " ".join(f"{f}={e[f]}" for f in fields if f != "_SYSTEMD_CGROUP"))
PY

# 5. BPF under the sandbox: tracing is on and counted the loop device's I/O.
ct_soakctl trace >"$WORK/trace.txt" 2>&1 || fail "soakctl trace: $(cat "$WORK/trace.txt")"
grep -q '^blk: on' "$WORK/trace.txt" || fail "block tracing is not on under soakd.service: $(cat "$WORK/trace.txt")"
grep -q '^tcp: on' "$WORK/trace.txt" || fail "TCP tracing is not on under soakd.service: $(cat "$WORK/trace.txt")"
ct_soakctl dump --format json >"$WORK/dump.json" || fail "soakctl dump failed"
python3 - "$WORK/dump.json" "$(basename "$LOOP")" <<'PY' || fail "dump: $(head -c 2000 "$WORK/dump.json")"
import json, sys
d = json.load(open(sys.argv[1]))
dev = next(w for w in d["workloads"] if w["name"] == "dev")
app = sum(o["count"] for o in dev["ops"].values())
errors = sum(o["errors"] for o in dev["ops"].values())
blk = d["kernel"]["blk"].get(sys.argv[2], {}).get("ops", {})
kernel = sum(o.get("count", 0) for o in blk.values())
print(f"# dev: {app} ops, {errors} errors; kernel saw {kernel} requests on {sys.argv[2]}")
if app == 0 or errors:
    sys.exit("the workload did no I/O, or had errors")
if kernel < app * 0.5:
    sys.exit("the block probes saw far fewer requests than the workload issued")
PY
note "BPF: $(tr '\n' ';' <"$WORK/trace.txt")"

# 6. DeviceAllow=: the loop device above passed; a run with a workload on
# the refused node does not start, and the journal says why (soakd opens
# every target when it starts).
# restart_soakd CONFIG_TEXT: soakd.service restarted on it; false if it
# fails to start.  The start limit is reset: these are deliberate.
restart_soakd() {
	ct_config "$1"
	ct_systemctl reset-failed soakd.service 2>/dev/null || true
	ct_systemctl restart soakd.service >"$WORK/restart.txt" 2>&1
}
# start_refused DEVICE: soakd.service failed to start because opening
# DEVICE was not permitted; the journal of that start says so.
start_refused() {
	local inv
	inv=$(ct_invocation)
	[[ $(ct_prop ActiveState) != active ]] || fail "soakd.service is active with $1 in its configuration"
	ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$inv" >"$WORK/refused.txt" 2>&1
	grep -q "$1.*Operation not permitted" "$WORK/refused.txt" ||
		fail "the refusal of $1 is not reported as EPERM: $(cat "$WORK/refused.txt")"
	note "refused: $(grep -m1 "$1.*Operation not permitted" "$WORK/refused.txt")"
}
! restart_soakd "$(run_config refused "$(dev_workload dev "$LOOP" 200)" \
	"$(dev_workload refused "$REFUSED" 100 100)")" ||
	fail "soakd started with $REFUSED, which DeviceAllow= does not allow"
start_refused "$REFUSED"
# The same node outside the sandbox: not a permission matter there.
in_ct timeout 10 dd if="$REFUSED" of=/dev/null bs=4096 count=1 iflag=direct >"$WORK/dd.txt" 2>&1 || true
grep -q 'No such device or address' "$WORK/dd.txt" ||
	fail "outside soakd.service, reading $REFUSED gave: $(cat "$WORK/dd.txt")"

# 7. A drop-in that narrows DeviceAllow= to the first loop device: a
# second, real loop device is then refused too, and the first still works.
ct_dropin devices "[Service]
DeviceAllow=
DeviceAllow=$LOOP rw"
ct_systemctl daemon-reload || fail "daemon-reload"
! restart_soakd "$(run_config narrow "$(dev_workload dev "$LOOP" 200)" \
	"$(dev_workload second "$LOOP2" 100)")" ||
	fail "soakd started with $LOOP2, which the drop-in's DeviceAllow= does not allow"
start_refused "$LOOP2"
restart_soakd "$(run_config narrow2 "$(dev_workload dev "$LOOP" 200)")" ||
	fail "soakd.service does not start with $LOOP alone: $(cat "$WORK/restart.txt")"
INTERVALS="$CT_ROOT/var/lib/soakd/narrow2/intervals.log"
wait_until 15 "intervals of workload dev under the narrowed DeviceAllow=" three_records
ct_soakctl dump --format json >"$WORK/dump2.json" || fail "soakctl dump failed"
python3 - "$WORK/dump2.json" <<'PY' || fail "under the narrowed DeviceAllow="
import json, sys
dev = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "dev")
n, e = sum(o["count"] for o in dev["ops"].values()), sum(o["errors"] for o in dev["ops"].values())
print(f"# dev with DeviceAllow= narrowed to its device: {n} ops, {e} errors")
if n == 0 or e:
    sys.exit(f"dev: {n} ops, {e} errors")
PY

# 8. ProtectSystem=strict: the file system is read-only to soakd but for
# its own directories, so a regular-file target elsewhere fails to be
# made (EROFS), though root outside the unit may write there; a drop-in
# with ReadWritePaths= grants it (SECURITY.md).
mkdir -p "$CT_ROOT/srv/soak"
in_ct sh -c 'touch /srv/soak/outside && rm /srv/soak/outside' ||
	fail "root outside soakd.service cannot write /srv/soak"
file_workload=$(dev_workload file /srv/soak/target.dat 100 70 '"file_size": "16MiB"')
! restart_soakd "$(run_config rofs "$file_workload")" ||
	fail "soakd.service made a target file in /srv/soak, which ProtectSystem=strict keeps read-only"
ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$(ct_invocation)" >"$WORK/rofs.txt" 2>&1
grep -q '/srv/soak.*Read-only file system' "$WORK/rofs.txt" ||
	fail "the refusal of /srv/soak/target.dat is not reported as EROFS: $(cat "$WORK/rofs.txt")"
[[ ! -e $CT_ROOT/srv/soak/target.dat ]] || fail "/srv/soak/target.dat was made"
note "read-only: $(grep -m1 '/srv/soak.*Read-only file system' "$WORK/rofs.txt")"
ct_dropin rw "[Service]
ReadWritePaths=/srv/soak"
ct_systemctl daemon-reload || fail "daemon-reload"
restart_soakd "$(run_config rofs2 "$file_workload")" ||
	fail "soakd.service does not start with ReadWritePaths=/srv/soak: $(cat "$WORK/restart.txt")"
INTERVALS="$CT_ROOT/var/lib/soakd/rofs2/intervals.log"
wait_until 15 "intervals of the file workload with ReadWritePaths=" three_records
[[ -s $CT_ROOT/srv/soak/target.dat ]] || fail "no /srv/soak/target.dat with ReadWritePaths=/srv/soak"
note "ok"
