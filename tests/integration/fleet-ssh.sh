#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fleet play, config/ansible/soakd-fleet.yml, for real (issue 14,
# section 4): three hosts booted with systemd as PID 1 from the systemd
# tier's rootfs, soakd installed as a user installs it (meson install; the
# unit's ProtectSystem=strict and all), each host in a network namespace of
# this test's own, reached by ansible-playbook over SSH with a key made
# here.  The network: a namespace "ctl" for the controller holding a bridge,
# and one veth pair from it into each host's namespace, 10.77.0.0/24;
# nothing touches the machine's own network.
#
# The play renders a 20 s run with a file target under /srv/soak and a
# Prometheus textfile under /var/lib/prometheus (both read-only under
# ProtectSystem=strict without the play's drop-in), waits as long as the
# run lasts (start_at plus its duration, not a fixed time), fetches the
# hosts' logs and dumps and merges them.  Asserted: the drop-in names the
# directories, soakd wrote the target and the textfile, each fetched dump
# is the sum of its host's interval log, the merge holds the three hosts
# and its counts are the sums of their whole intervals in the time all
# three ran (all but the first or last of a host whose start was a few ms
# earlier), and the play took the lead plus the run and a few polls.  Last, on one host, the same
# run without the drop-in fails: the drop-in is what makes the target
# writable.  FLEET_PLAYBOOK=FILE runs another play (an old one) instead.
source "$(dirname "$0")/lib.sh"
need_root "network namespaces and systemd as PID 1"
need_cmd ip ansible-playbook ssh ssh-keygen python3
source "$(dirname "$0")/systemd-lib.sh"

HOSTS=(1 2 3)
NET=10.77.0

# net_ns VAR: a new network namespace, held by a process of its own whose
# pid goes in VAR (its file: /proc/PID/ns/net).  No name under /run/netns,
# no mount: the namespace ends with its last process, and the holder
# (tail --pid) ends with this test's shell even if that is SIGKILLed.
net_ns() {
	local pid i
	unshare --net tail --pid=$$ -f /dev/null 2>"$WORK/unshare.err" &
	pid=$!
	on_exit _kill_bg "$pid"
	for ((i = 0; i < 50; i++)); do
		[[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) != "$(readlink /proc/self/ns/net)" ]] && break
		is_alive "$pid" || skip "unshare --net cannot make a network namespace: $(cat "$WORK/unshare.err")"
		sleep 0.1
	done
	((i < 50)) || fail "no new network namespace after 5 s"
	printf -v "$1" '%s' "$pid"
}
in_ns() {
	local pid=$1
	shift
	nsenter "--net=/proc/$pid/ns/net" "$@"
}

# The network: the controller's namespace with a bridge, one namespace per
# host with a veth pair to the bridge; the veths end with the namespaces.
net_ns CTL_NS
in_ns "$CTL_NS" ip link set lo up
in_ns "$CTL_NS" ip link add br0 type bridge 2>"$WORK/ip.err" ||
	skip "no bridge devices here (kernel): $(cat "$WORK/ip.err")"
in_ns "$CTL_NS" ip addr add "$NET.1/24" dev br0
in_ns "$CTL_NS" ip link set br0 up
declare -A H_NS
for i in "${HOSTS[@]}"; do
	net_ns "H_NS[$i]"
	ns=${H_NS[$i]}
	in_ns "$CTL_NS" ip link add "veth$i" type veth peer name eth0 netns "$ns" 2>"$WORK/ip.err" ||
		skip "no veth devices here (kernel): $(cat "$WORK/ip.err")"
	in_ns "$CTL_NS" ip link set "veth$i" master br0 up
	in_ns "$ns" ip link set lo up
	in_ns "$ns" ip addr add "$NET.1$i/24" dev eth0
	in_ns "$ns" ip link set eth0 up
done
in_ctl() { in_ns "$CTL_NS" "$@"; }

# The controller's key, and each host's own host key (the cached rootfs
# holds one for all): known_hosts is exact, no host key is taken on trust.
ssh-keygen -q -t ed25519 -N '' -C fleet-controller -f "$WORK/id_ed25519"
: >"$WORK/known_hosts"

# Three containers; the systemd tier's globals (CT_ROOT, CT_PID, ...) hold
# the selected one.
declare -A H_ROOT H_PID H_UNSHARE H_CGROUP H_CONFIG
select_host() {
	CT_ROOT=${H_ROOT[$1]} CT_PID=${H_PID[$1]:-} CT_UNSHARE=${H_UNSHARE[$1]:-}
	CT_CGROUP=${H_CGROUP[$1]:-} CT_CONFIG=${H_CONFIG[$1]}
}
# (A container whose boot failed has no entry yet: it is still the
# selected one.)
teardown_host() {
	if [[ -n ${H_CGROUP[$1]:-} ]]; then
		select_host "$1"
	elif [[ $1 != "${BOOTING:-}" ]]; then
		return 0
	fi
	_ct_teardown
}
# Each container is torn down by its own entry, not ct_boot's single one.
_ct_teardown_registered=1
for i in "${HOSTS[@]}"; do
	ct_prepare
	H_ROOT[$i]=$CT_ROOT H_CONFIG[$i]=$CT_CONFIG
	[[ -x $CT_ROOT/usr/sbin/sshd && -x $CT_ROOT/usr/bin/python3 ]] ||
		fail "the rootfs $CT_TARBALL has no sshd or python3 (CT_PACKAGES)"
	echo "fleet-$i" >"$CT_ROOT/etc/hostname"
	# sshd, masked by ct_prepare: these hosts have a network of their own.
	rm -f "$CT_ROOT/etc/systemd/system/ssh.service" "$CT_ROOT/etc/systemd/system/ssh.socket" \
		"$CT_ROOT/etc/systemd/system/rescue-ssh.target"
	rm -f "$CT_ROOT"/etc/ssh/ssh_host_*
	ssh-keygen -q -t ed25519 -N '' -C "fleet-$i" -f "$CT_ROOT/etc/ssh/ssh_host_ed25519_key"
	echo "$NET.1$i $(cut -d' ' -f1-2 "$CT_ROOT/etc/ssh/ssh_host_ed25519_key.pub")" >>"$WORK/known_hosts"
	install -d -m 0700 "$CT_ROOT/root/.ssh"
	install -m 0600 "$WORK/id_ed25519.pub" "$CT_ROOT/root/.ssh/authorized_keys"
	# Not there before the play: the play makes them.
	[[ ! -e $CT_ROOT/srv/soak && ! -e $CT_ROOT/var/lib/prometheus ]] ||
		fail "the rootfs already holds /srv/soak or /var/lib/prometheus"
	on_exit teardown_host "$i"
	BOOTING=$i CT_PID=
	CT_NAME="$TEST_NAME-$i" CT_NETNS="/proc/${H_NS[$i]}/ns/net" ct_boot
	H_PID[$i]=$CT_PID H_UNSHARE[$i]=$CT_UNSHARE H_CGROUP[$i]=$CT_CGROUP
done
for i in "${HOSTS[@]}"; do
	select_host "$i"
	ct_wait_running 60
	[[ $(ct_prop ActiveState) != failed ]] || fail "soakd.service failed at boot on fleet-$i"
	[[ $(ct_systemctl is-active ssh.service 2>&1) == active ]] ||
		fail "sshd is not running on fleet-$i: $(ct_systemctl status ssh.service 2>&1 | head -n 20)"
done

SSH_ARGS="-o UserKnownHostsFile=$WORK/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=5"
cat >"$WORK/hosts.ini" <<EOF
[soak_hosts]
fleet-1 ansible_host=$NET.11
fleet-2 ansible_host=$NET.12
fleet-3 ansible_host=$NET.13

[soak_hosts:vars]
ansible_user=root
ansible_ssh_private_key_file=$WORK/id_ed25519
ansible_ssh_common_args=$SSH_ARGS
ansible_python_interpreter=/usr/bin/python3
ansible_become_method=su
EOF
for i in "${HOSTS[@]}"; do
	in_ctl ssh -i "$WORK/id_ed25519" $SSH_ARGS "root@$NET.1$i" hostname >"$WORK/ssh.out" 2>&1 ||
		fail "ssh to fleet-$i ($NET.1$i): $(cat "$WORK/ssh.out")"
	[[ $(cat "$WORK/ssh.out") == "fleet-$i" ]] || fail "ssh $NET.1$i reached $(cat "$WORK/ssh.out")"
done
note "three hosts up, reachable over SSH from the controller's namespace"

# The run: 20 s of 4 KiB random I/O at 200 ops/s on a file target under
# /srv/soak, a textfile under /var/lib/prometheus: both outside what
# ProtectSystem=strict leaves writable.
RUN_SECONDS=20
LEAD=30
cat >"$WORK/fleet.json" <<EOF
{"run": {"name": "fleet-ssh", "duration": "${RUN_SECONDS}s", "interval": "1s", "on_finish": "idle",
         "exports": {"prometheus": {"textfile": "/var/lib/prometheus/node-exporter/soakd.prom"}}},
 "workloads": [{"name": "rand4k", "type": "device", "model": "pattern",
                "targets": ["/srv/soak/soak.dat"], "file_size": "32MiB", "read_pct": 70,
                "block_size": "4KiB", "access": "random", "queue_depth": 4, "rate": 200}]}
EOF

PLAYBOOK=${FLEET_PLAYBOOK:-$SRCDIR/config/ansible/soakd-fleet.yml}
RESULTS="$WORK/results"
mkdir -p "$WORK/bin" "$WORK/ansible-tmp" "$WORK/ansible-home" "$WORK/cp"
# The controller's soakctl, for the merge: the build's.
ln -s "$PLAIN_SOAKCTL" "$WORK/bin/soakctl"
: >"$WORK/ansible.cfg"
t0=$(date +%s)
in_ctl env PATH="$WORK/bin:$PATH" ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_NOCOLOR=1 \
	ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCAL_TEMP="$WORK/ansible-tmp" \
	ANSIBLE_HOME="$WORK/ansible-home" ANSIBLE_SSH_CONTROL_PATH_DIR="$WORK/cp" \
	ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 \
	timeout 200 ansible-playbook -i "$WORK/hosts.ini" "$PLAYBOOK" \
	-e "soak_results=$RESULTS" -e "soak_config_file=$WORK/fleet.json" \
	-e soak_lead_seconds=$LEAD -e soak_margin_seconds=30 -e soak_poll_seconds=2 \
	>"$WORK/play.log" 2>&1 || fail "ansible-playbook failed (rc $?): $(tail -n 60 "$WORK/play.log")"
took=$(($(date +%s) - t0))
paused=$(sed -n 's/^Pausing for \([0-9]*\) seconds.*/\1/p' "$WORK/play.log")
note "the play took $took s (lead $LEAD s, run $RUN_SECONDS s), of which ${paused:-no} s" \
	"waiting for the run's end"
# It waited for the run, and no more than the run and a few 2 s polls (the
# old play polled once a minute, for up to 90,000 s).
((took >= LEAD + RUN_SECONDS - 1)) || fail "the play ended after $took s, before the run did"
((took <= LEAD + RUN_SECONDS + 20)) || fail "the play took $took s for a run of $((LEAD + RUN_SECONDS)) s"
grep -q "the run lasts $RUN_SECONDS s from" "$WORK/play.log" ||
	fail "the play did not derive the run's length: $(grep -A3 'how long the run' "$WORK/play.log")"

for i in "${HOSTS[@]}"; do
	select_host "$i"
	dropin=$(ct_path /etc/systemd/system/soakd.service.d/fleet.conf)
	grep -qx 'ReadWritePaths=/srv/soak' "$dropin" && grep -qx 'ReadWritePaths=/var/lib/prometheus/node-exporter' "$dropin" ||
		fail "fleet-$i: the drop-in lacks the directories: $(cat "$dropin" 2>&1)"
	[[ $(ct_prop ReadWritePaths) == *"/srv/soak"* ]] || fail "fleet-$i: ReadWritePaths=$(ct_prop ReadWritePaths)"
	[[ $(ct_systemctl is-enabled soakd.service 2>&1) == enabled ]] || fail "fleet-$i: soakd.service is not enabled"
	[[ -s $(ct_path /srv/soak/soak.dat) ]] || fail "fleet-$i: no target /srv/soak/soak.dat"
	grep -q '^soakd_' "$(ct_path /var/lib/prometheus/node-exporter/soakd.prom)" ||
		fail "fleet-$i: no textfile: $(ls -l "$(ct_path /var/lib/prometheus/node-exporter)" 2>&1)"
	[[ -s $RESULTS/fleet-$i/dump.json && -s $RESULTS/fleet-$i/intervals.log ]] ||
		fail "fleet-$i: nothing fetched: $(ls -lR "$RESULTS")"
done
[[ -s $RESULTS/merged.json && -s $RESULTS/merged.csv && -s $RESULTS/merged.svg ]] ||
	fail "no merged results: $(ls -l "$RESULTS")"

python3 - "$RESULTS" "$RUN_SECONDS" <<'EOF' || fail "merged results: $(head -c 3000 "$RESULTS/merged.json")"
import json, sys
results, seconds = sys.argv[1], int(sys.argv[2])
merged = json.load(open(f"{results}/merged.json"))
sources = sorted(s["source"] for s in merged["merged"]["sources"])
want = sorted(f"{results}/fleet-{i}/intervals.log" for i in (1, 2, 3))
if sources != want:
    sys.exit(f"merged sources {sources}, expected {want}")
window = (merged["merged"]["wall_start_ns"], merged["merged"]["wall_end_ns"])
# One start_at: the hosts ran the same 20 s, give or take their starts'
# milliseconds.
if abs(merged["merged"]["overlap_s"] - seconds) > 0.5:
    sys.exit(f"overlap {merged['merged']['overlap_s']} s, expected {seconds} s")

def ops(doc):
    (w,) = [w for w in doc["workloads"] if w["name"] == "rand4k"]
    return {op: v["count"] for op, v in w["ops"].items() if op in ("read", "write")}

dumps, inside = {"read": 0, "write": 0}, {"read": 0, "write": 0}
for i in (1, 2, 3):
    dump = ops(json.load(open(f"{results}/fleet-{i}/dump.json")))
    logged, n, kept = {"read": 0, "write": 0}, 0, 0
    for line in open(f"{results}/fleet-{i}/intervals.log").read().splitlines()[1:]:
        rec = json.loads(line.split(" ", 1)[1])
        if rec["type"] != "interval" or rec["workload"] != "rand4k":
            continue
        n += 1
        # soakctl merge's rule: inside the window but for a quarter of
        # an interval, as hosts started together tick ms apart.
        slack = (rec["wall_end_ns"] - rec["wall_start_ns"]) // 4
        whole = window[0] <= rec["wall_start_ns"] + slack and rec["wall_end_ns"] - slack <= window[1]
        kept += whole
        for op in logged:
            logged[op] += rec["ops"][op]["count"]
            if whole:
                inside[op] += rec["ops"][op]["count"]
    # The fetched dump is the fetched log's sum.
    if dump != logged:
        sys.exit(f"fleet-{i}: dump {dump}, its intervals.log adds up to {logged}")
    # Started together by start_at: every interval lines up, edges too.
    if n != seconds or kept != seconds:
        sys.exit(f"fleet-{i}: {n} intervals, {kept} inside the merge's window")
    for op in dumps:
        dumps[op] += dump[op]
    print(f"# fleet-{i}: {dump}, {kept} of {n} intervals inside the merge's window")
# 3 hosts x 200 ops/s x 20 s.
if sum(dumps.values()) != 3 * 200 * seconds:
    sys.exit(f"the dumps add up to {dumps}, expected {3 * 200 * seconds} ops")
# The merge: the three hosts' whole intervals inside the time all ran.
if ops(merged) != inside:
    sys.exit(f"merged counts {ops(merged)}, the hosts' intervals in its window add up to {inside}")
print(f"# merged {ops(merged)} over {merged['merged']['overlap_s']:.3f} s; the dumps add up to {dumps}")
EOF

# Without the drop-in the same run cannot write its target: on fleet-1,
# a new run (another name, so nothing is resumed), no drop-in.
select_host 1
rm "$(ct_path /etc/systemd/system/soakd.service.d/fleet.conf)"
python3 - "$WORK/fleet.json" >"$(ct_path "$CT_CONFIG")" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["run"]["name"] = "no-dropin"
c["run"]["duration"] = "3s"
c["workloads"][0]["targets"] = ["/srv/soak/other.dat"]
print(json.dumps(c))
EOF
ct_systemctl daemon-reload
ct_systemctl restart soakd.service >"$WORK/restart.log" 2>&1 || true
gone() { ct_active_is failed || ct_active_is inactive || ct_active_is activating; }
wait_until 30 "soakd.service without the drop-in to fail" gone
ct_journal -o cat -u soakd.service >"$WORK/nodropin.journal"
grep -q 'Read-only file system' "$WORK/nodropin.journal" ||
	fail "without the drop-in soakd did not fail on a read-only /srv/soak: $(tail -n 20 "$WORK/nodropin.journal")"
[[ ! -e $(ct_path /srv/soak/other.dat) ]] || fail "without the drop-in the target was created"
note "without the drop-in: $(grep -m1 'Read-only file system' "$WORK/nodropin.journal")"
note "ok"
