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
	local dev=$1 iops=$2 cpu_cg=""
	blk_cgroup
	blk_limit "$dev" riops="$iops" wiops="$iops"
	if [[ $BLK_CG_KIND == v2 ]]; then
		THROTTLE_HOW="cgroup v2 io.max"
		grep -qw cpu "$(dirname "$BLK_CG")/cgroup.subtree_control" 2>/dev/null &&
			echo 1000 >"$BLK_CG/cpu.weight"
	else
		THROTTLE_HOW="cgroup v1 blkio.throttle"
		if [[ -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
			cpu_cg="/sys/fs/cgroup/cpu/soakd-$TEST_NAME.$$"
			mkdir "$cpu_cg"
			on_exit _cgroup_remove "$cpu_cg" /sys/fs/cgroup/cpu
			echo 10240 >"$cpu_cg/cpu.shares"
			THROTTLE_HOW+=", cpu.shares 10240"
		fi
	fi
	local cg=$BLK_CG
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

