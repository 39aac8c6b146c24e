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
	on_exit umount "$2"
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
