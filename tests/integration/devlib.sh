# SPDX-License-Identifier: GPL-2.0-only
#
# Loop devices for the device safety and prep tests; sourced after lib.sh,
# never run.  Every device, mount and holder a test makes is undone by the
# cleanup stack however the test ends; devices left by a run that was
# SIGKILLed (backing file gone) are detached at the start of the next.

need_root "loop devices, mkfs.ext4, sfdisk and mount"
need_cmd losetup blkid mkfs.ext4 sfdisk partx mount umount python3
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

DEV_PREFIX="soakd-$TEST_NAME"
while read -r _dev _back; do
	[[ $_back == /dev/shm/$DEV_PREFIX.* || $_back == /var/tmp/$DEV_PREFIX.* ]] || continue
	[[ -e $_back ]] || losetup -d "$_dev" 2>/dev/null || true
done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | sed 's/ (deleted)$//')
unset _dev _back

DEV_BACKING_DIR=/dev/shm
if (($(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}' || echo 0) < 512 * 1024)); then
	DEV_BACKING_DIR=/var/tmp
fi

# new_loop SIZE: a loop device with direct I/O and partition scanning over a
# new file; its name in NEW_LOOP (not echoed: cleanups registered in a
# command substitution would be lost with its subshell).
new_loop() {
	local backing
	backing=$(mktemp "$DEV_BACKING_DIR/$DEV_PREFIX.XXXXXX")
	on_exit rm -f "$backing"
	truncate -s "$1" "$backing"
	NEW_LOOP=$(losetup --direct-io=on --partscan -f --show "$backing" 2>"$WORK/losetup.err") ||
		skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
	on_exit losetup -d "$NEW_LOOP"
	note "loop device $NEW_LOOP over $backing ($1)"
}

# mount_on DEVICE DIR: mounted until the test ends.
mount_on() {
	mkdir -p "$2"
	mount "$1" "$2" || fail "cannot mount $1 on $2"
	on_exit umount_retry "$2"
}

# freezable_fs SIZE: an ext4 on a new loop device of SIZE, mounted on MNT
# ($WORK/mnt); freeze freezes it (fsfreeze), thaw thaws it if frozen.  A
# test registers "on_exit thaw" after start_soakd (cleanups run last
# first): a process cannot exit while its writes wait on a frozen file
# system.
freezable_fs() {
	new_loop "$1"
	mkfs.ext4 -q -F "$NEW_LOOP" || fail "mkfs.ext4 $NEW_LOOP failed"
	MNT="$WORK/mnt"
	mount_on "$NEW_LOOP" "$MNT"
	frozen=false
}
freeze() {
	fsfreeze -f "$MNT" || fail "fsfreeze -f $MNT failed"
	frozen=true
}
thaw() { if $frozen; then fsfreeze -u "$MNT" || true; frozen=false; fi; }

# umount_retry DIR: a process that just exited may still hold files there
# for a moment (the kernel tears an io_uring down after the process is
# gone): EBUSY is tried again for up to 5 s.
umount_retry() {
	local i
	for ((i = 0; i < 50; i++)); do
		umount "$1" 2>/dev/null && return 0
		mountpoint -q "$1" || return 0
		sleep 0.1
	done
	umount "$1"
}

# The filesystem or partition table type libblkid sees, "" for none.
signature_of() {
	local type
	type=$(blkid -p -o value -s TYPE "$1" 2>/dev/null || true)
	[[ -n $type ]] || type=$(blkid -p -o value -s PTTYPE "$1" 2>/dev/null || true)
	echo "$type"
}

# The partitions of a loop device appear once the kernel rescans it; udev
# is not there to do it on these machines.
rescan_partitions() {
	partx -u "$1" >/dev/null 2>&1 || partx -a "$1" >/dev/null 2>&1 || true
	[[ -e /sys/class/block/$(basename "$1")/$(basename "$1")p1 && -b ${1}p1 ]]
}

# --- block cgroups: a device held to a known limit ----------------------
# cgroup v2's io controller where it is on the v2 hierarchy, else v1's
# blkio (these machines' hybrid layout).

# blk_cgroup_try: a cgroup of this test's for block limits, removed (what
# is left in it moved out) when the test ends: its path in BLK_CG and
# "v2" or "v1" in BLK_CG_KIND.  Returns 1, creating nothing, where neither
# controller can be used.
blk_cgroup_try() {
	local v2 root
	v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
	if [[ -n $v2 ]] && grep -qw io "$v2/cgroup.controllers" 2>/dev/null &&
		{ grep -qw io "$v2/cgroup.subtree_control" ||
			echo +io >"$v2/cgroup.subtree_control"; } 2>/dev/null; then
		root=$v2
		BLK_CG_KIND=v2
	elif [[ -w /sys/fs/cgroup/blkio/cgroup.procs ]]; then
		root=/sys/fs/cgroup/blkio
		BLK_CG_KIND=v1
	else
		return 1
	fi
	BLK_CG="$root/soakd-$TEST_NAME.$$"
	mkdir "$BLK_CG" || return 1
	on_exit _cgroup_remove "$BLK_CG" "$root"
}

# blk_cgroup: as blk_cgroup_try, skipping the test where it cannot.
blk_cgroup() {
	blk_cgroup_try || skip_unless_strict "no block cgroup controller (v2 io or v1 blkio) to throttle a device"
}

# blk_limit_cmd DEV KEY=VALUE...: the shell command that sets DEV's limits
# in BLK_CG; keys riops, wiops, rbps, wbps; a value of 0 lifts that limit.
blk_limit_cmd() {
	local dev=$1 majmin kv key value v2=""
	shift
	majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
	[[ -n $majmin ]] || fail "no MAJ:MIN for $dev"
	for kv in "$@"; do
		key=${kv%%=*}
		value=${kv#*=}
		if [[ $BLK_CG_KIND == v2 ]]; then
			v2+=" $key=$([[ $value == 0 ]] && echo max || echo "$value")"
			continue
		fi
		case $key in
		riops) key=read_iops_device ;;
		wiops) key=write_iops_device ;;
		rbps) key=read_bps_device ;;
		wbps) key=write_bps_device ;;
		*) fail "blk_limit_cmd: unknown limit $key" ;;
		esac
		printf "echo '%s %s' >'%s/blkio.throttle.%s' && " "$majmin" "$value" "$BLK_CG" "$key"
	done
	if [[ -n $v2 ]]; then
		printf "echo '%s%s' >'%s/io.max' && " "$majmin" "$v2" "$BLK_CG"
	fi
	echo true
}

# blk_limit DEV KEY=VALUE...: sets them now.
blk_limit() {
	eval "$(blk_limit_cmd "$@")" || fail "cannot set the limits $* on $1 in $BLK_CG"
}

# blk_join PID: the process (every thread of it) into BLK_CG.
blk_join() {
	echo "$1" >"$BLK_CG/cgroup.procs" || fail "cannot move $1 into $BLK_CG"
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

# The device tests on faultdev (tests/integration/faultlib.sh, which the
# test sources after this file) share these.

# fault_device [SIZE]: faultdev started over a new image of SIZE (64M by
# default) and a loop device with direct I/O over it, in FAULTDEV_LOOP.
fault_device() {
	faultdev_start "${1:-64M}"
	faultdev_loop
}

# failing_flushes [DELAY]: every flush fails with EIO, after DELAY (200ms,
# 1s) if given; healthy_flushes: they succeed again, at once.
failing_flushes() {
	faultdev_cmd errors flush every 1
	[[ -z ${1:-} ]] || faultdev_cmd delay "$1" flush
}
healthy_flushes() {
	faultdev_cmd errors off
	faultdev_cmd delay off
}

# written: the writes soakd's first workload has completed so far (its
# "count_total" in soakctl status), through $SOCK.
written() {
	ctl status --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["workloads"][0]["ops"]["write"]["count_total"])'
}

# fill_verify_ring NAME [FIELDS]: soakd runs run NAME ($WORK/NAME.json), one workload "b" of
# 1 MiB verified writes at 300/s on the faultdev loop device (flushes
# failing: failing_flushes first), FIELDS (e.g. '"pre_read": true,') added
# to it; returns once the verify map's ring is full (64 Ki blocks of
# 4 KiB: about 255 writes, none flushed) and two flushes have failed.
fill_verify_ring() {
	local cfg="$WORK/$1.json"
	cat >"$cfg" <<JSON
{"run": {"name": "$1", "duration": "120s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "b", "type": "device", "model": "pattern",
                "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 0,
                "block_size": "1MiB", "access": "random", "queue_depth": 8, "rate": 300,
                "verify": true, ${2:-} "fill": false, "flush_interval": "1h"}]}
JSON
	start_soakd --config "$cfg" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 15 "the control socket" ctl_answers
	wait_until 15 "workload b to run" workload_is b running
	_ring_full() { (($(written) >= 240 && $(faultdev_stat flush_errors) >= 2)); }
	wait_until 30 "the verify ring to fill" _ring_full
}
