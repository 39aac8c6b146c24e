# SPDX-License-Identifier: GPL-2.0-only
#
# A device with a known limit, for the certification and capacity tests;
# sourced after lib.sh and devlib.sh, never run.  A block cgroup throttles
# a loop device to an IOPS limit for the processes put in it: cgroup v2's
# io.max where the io controller is on the v2 hierarchy, else v1's
# blkio.throttle (these machines' hybrid layout).

# The CPU share of what runs through $IN_CGROUP is raised too: the tests
# share a 2-core machine with other work, and soakd's threads starved of
# CPU make intervals generator_late, which a certification rightly
# refuses to judge the device by.
#
# throttle_device DEV IOPS: reads and writes to DEV by processes started
# through $IN_CGROUP (IN_CGROUP COMMAND...) are held to IOPS per second;
# SOAKD_THROTTLED runs soakd so.  How, in THROTTLE_HOW.
throttle_device() {
	local dev=$1 iops=$2 majmin cg v2 cpu_cg=""
	majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
	[[ -n $majmin ]] || fail "no MAJ:MIN for $dev"
	v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
	if [[ -n $v2 ]] && grep -qw io "$v2/cgroup.controllers" 2>/dev/null &&
		{ grep -qw io "$v2/cgroup.subtree_control" ||
			echo +io >"$v2/cgroup.subtree_control"; } 2>/dev/null; then
		cg="$v2/soakd-$TEST_NAME.$$"
		mkdir "$cg"
		on_exit _cgroup_remove "$cg" "$v2"
		echo "$majmin riops=$iops wiops=$iops" >"$cg/io.max" ||
			fail "cannot write io.max for $dev"
		THROTTLE_HOW="cgroup v2 io.max"
		grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null && echo 1000 >"$cg/cpu.weight"
	elif [[ -w /sys/fs/cgroup/blkio/cgroup.procs ]]; then
		cg="/sys/fs/cgroup/blkio/soakd-$TEST_NAME.$$"
		mkdir "$cg"
		on_exit _cgroup_remove "$cg" /sys/fs/cgroup/blkio
		echo "$majmin $iops" >"$cg/blkio.throttle.read_iops_device" &&
			echo "$majmin $iops" >"$cg/blkio.throttle.write_iops_device" ||
			fail "cannot write blkio.throttle for $dev"
		THROTTLE_HOW="cgroup v1 blkio.throttle"
		if [[ -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
			cpu_cg="/sys/fs/cgroup/cpu/soakd-$TEST_NAME.$$"
			mkdir "$cpu_cg"
			on_exit _cgroup_remove "$cpu_cg" /sys/fs/cgroup/cpu
			echo 10240 >"$cpu_cg/cpu.shares"
			THROTTLE_HOW+=", cpu.shares 10240"
		fi
	else
		skip_unless_strict "no block cgroup controller (v2 io or v1 blkio) to throttle $dev"
	fi
	IN_CGROUP="$WORK/in-cgroup"
	cat >"$IN_CGROUP" <<EOF
#!/bin/bash
echo \$\$ >"$cg/cgroup.procs" || exit 125
${cpu_cg:+echo \$\$ >"$cpu_cg/cgroup.procs" || exit 125}
exec "\$@"
EOF
	SOAKD_THROTTLED="$WORK/soakd-throttled"
	cat >"$SOAKD_THROTTLED" <<EOF
#!/bin/bash
exec "$IN_CGROUP" "$SOAKD" "\$@"
EOF
	chmod +x "$IN_CGROUP" "$SOAKD_THROTTLED"
}

# Whatever is left in the cgroup goes back to the root; then it goes.
_cgroup_remove() {
	local pid
	if [[ -r $1/cgroup.procs ]]; then
		while read -r pid; do
			echo "$pid" >"$2/cgroup.procs" 2>/dev/null
		done <"$1/cgroup.procs"
	fi
	rmdir "$1" 2>/dev/null
	return 0
}
