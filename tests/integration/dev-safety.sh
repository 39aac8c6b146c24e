#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd refuses to write to a block device that holds data or that the
# system is using, before any I/O, and says which device and why:
#   - an ext4 filesystem (mkfs.ext4) and a dos partition table (sfdisk):
#     refused without "destroy_data", and still intact afterwards;
#   - mounted (the device, or a partition of it): refused even with
#     "destroy_data";
#   - held by device-mapper (dmsetup, where the kernel has it) or open
#     exclusively by another program: refused even with "destroy_data";
#   - the disk holding /: refused even with "destroy_data", before it is
#     opened (on these machines it cannot be opened at all);
#   - a loop device over a mounted device, through one loop or two, or
#     over one another program holds exclusively: refused even with
#     "destroy_data" (none of the loop's own checks sees what is under it),
#     and a loop over a blank, unused device accepted;
#   - the backing of a loop device (a device with a mounted ext4 on a loop
#     over it at an offset, where libblkid sees nothing; a partition's or
#     the whole disk's loop; a regular file, also one whose loop names it
#     by a deleted hard link): refused even with "destroy_data", at
#     --check-config and at the start, and the stacked ext4 is intact;
#   - a regular file holding an ext4 filesystem (a raw disk image): refused
#     without "destroy_data" at --check-config and at the start, intact,
#     read-only accepted, written over with "destroy_data"; a file soakd
#     created carries a mark and is not probed again (a copy is);
# and accepts a blank device (with or without "destroy_data"), a device
# holding data with "destroy_data", and a read-only workload on the ext4
# device without it.  The dump records each target's device facts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

# write_config FILE TARGET_JSON READ_PCT
write_config() {
	cat >"$1" <<EOF
{
  "run": {"name": "dev-safety", "duration": "1s", "interval": "1s", "on_finish": "exit"},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": [$2],
     "read_pct": $3, "block_size": "4KiB", "queue_depth": 4, "rate": 200}
  ]
}
EOF
}

# run_soakd TARGET_JSON READ_PCT: soakd in the foreground; RUN_RC, RUN_LOG.
run_soakd() {
	write_config "$WORK/run.json" "$1" "$2"
	RUN_LOG="$WORK/run-$((++runs)).log"
	RUN_RC=0
	timeout 60 "$SOAKD" --config "$WORK/run.json" --socket "$SOCK" --state-dir "$WORK/state" \
		--no-table >"$RUN_LOG" 2>&1 || RUN_RC=$?
}
runs=0

# expect_refused WHAT TARGET_JSON DEVICE TEXT...: soakd exits 1 with a line
# "refusing to write to DEVICE: ..." that contains each TEXT.
expect_refused() {
	local what=$1 target=$2 device=$3 line text
	shift 3
	run_soakd "$target" 70
	((RUN_RC == 1)) || fail "$what: soakd exited $RUN_RC, expected 1: $(cat "$RUN_LOG")"
	line=$(grep -F "refusing to write to $device: " "$RUN_LOG") ||
		fail "$what: no \"refusing to write to $device\" in: $(cat "$RUN_LOG")"
	for text; do
		[[ $line == *"$text"* ]] || fail "$what: \"$text\" is not in: $line"
	done
	note "$what: refusing${line#*refusing}"
}

# expect_check_refused WHAT TARGET_JSON DEVICE TEXT...: as expect_refused,
# from soakd --check-config.
expect_check_refused() {
	local what=$1 target=$2 device=$3 line text log="$WORK/check-$((++runs)).log" rc=0
	shift 3
	write_config "$WORK/check.json" "$target" 70
	timeout 60 "$SOAKD" --check-config "$WORK/check.json" >"$log" 2>&1 || rc=$?
	((rc == 1)) || fail "$what: --check-config exited $rc, expected 1: $(cat "$log")"
	line=$(grep -F "refusing to write to $device: " "$log") ||
		fail "$what: no \"refusing to write to $device\" from --check-config: $(cat "$log")"
	for text; do
		[[ $line == *"$text"* ]] || fail "$what: \"$text\" is not in: $line"
	done
	note "$what (--check-config): refusing${line#*refusing}"
}

# loop_over FILE_OR_DEVICE [LOSETUP_ARGS...]: a loop device over it, in
# LOOP_OVER, detached when the test ends.
loop_over() {
	local src=$1
	shift
	LOOP_OVER=$(losetup "$@" -f --show "$src" 2>"$WORK/losetup.err") ||
		fail "losetup over $src failed: $(cat "$WORK/losetup.err")"
	on_exit losetup -d "$LOOP_OVER"
	note "loop device $LOOP_OVER over $src $*"
}

# hold_exclusively DEVICE: another program holds DEVICE with O_EXCL, as
# mkfs or a database would, until _kill_bg "$HOLDER".
hold_exclusively() {
	local log="$WORK/holder-$((++holders)).log"
	spawn "$log" python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(300)' "$1"
	HOLDER=$SPAWNED
	wait_until 10 "the holder to open $1" grep -q held "$log"
}
holders=0

expect_accepted() {
	local what=$1
	run_soakd "$2" "$3"
	((RUN_RC == 0)) || fail "$what: soakd exited $RUN_RC: $(cat "$RUN_LOG")"
	grep -q "refusing" "$RUN_LOG" && fail "$what: $(grep refusing "$RUN_LOG")"
	note "$what: accepted and ran"
}

# --- a filesystem: refused, and left intact ---
new_loop 64M
EXT4=$NEW_LOOP
mkfs.ext4 -q -F -L soak-safety "$EXT4" || fail "mkfs.ext4 $EXT4 failed"
uuid=$(blkid -p -o value -s UUID "$EXT4")
expect_refused "ext4" "\"$EXT4\"" "$EXT4" "it holds an ext4 filesystem" "$uuid" \
	'add "destroy_data": true to this target'
[[ $(signature_of "$EXT4") == ext4 ]] || fail "the ext4 filesystem on $EXT4 is gone after a refusal"
e2fsck -fn "$EXT4" >"$WORK/fsck.log" 2>&1 || fail "$EXT4 no longer checks clean: $(cat "$WORK/fsck.log")"

# A read-only workload on it needs no flag, and changes nothing.
expect_accepted "read-only on ext4" "\"$EXT4\"" 100
e2fsck -fn "$EXT4" >"$WORK/fsck.log" 2>&1 || fail "$EXT4 changed under reads: $(cat "$WORK/fsck.log")"

# --- a partition table ---
new_loop 64M
PARTED=$NEW_LOOP
printf 'label: dos\n,32M,L\n,,L\n' | sfdisk -q "$PARTED" >"$WORK/sfdisk.log" 2>&1 ||
	fail "sfdisk $PARTED failed: $(cat "$WORK/sfdisk.log")"
ptuuid=$(blkid -p -o value -s PTUUID "$PARTED")
expect_refused "partition table" "{\"path\": \"$PARTED\"}" "$PARTED" "it holds a dos partition table" \
	"$ptuuid"
[[ $(signature_of "$PARTED") == dos ]] || fail "the partition table on $PARTED is gone after a refusal"

# A partition of it mounted: the whole disk is refused, destroy_data or not.
if rescan_partitions "$PARTED"; then
	mkfs.ext4 -q -F "${PARTED}p1" || fail "mkfs.ext4 ${PARTED}p1 failed"
	mount_on "${PARTED}p1" "$WORK/mnt-part"
	expect_refused "mounted partition" "{\"path\": \"$PARTED\", \"destroy_data\": true}" "$PARTED" \
		"its partition ${PARTED}p1 is mounted on $WORK/mnt-part (ext4)" "does not override"
	expect_refused "mounted partition itself" "{\"path\": \"${PARTED}p1\", \"destroy_data\": true}" \
		"${PARTED}p1" "it is mounted on $WORK/mnt-part"
else
	note "the kernel did not list ${PARTED}'s partitions: skipping the mounted-partition case"
fi

# --- mounted: refused even with destroy_data ---
new_loop 64M
MOUNTED=$NEW_LOOP
mkfs.ext4 -q -F "$MOUNTED" || fail "mkfs.ext4 $MOUNTED failed"
mount_on "$MOUNTED" "$WORK/mnt"
expect_refused "mounted" "{\"path\": \"$MOUNTED\", \"destroy_data\": true}" "$MOUNTED" \
	"it is mounted on $WORK/mnt (ext4)" "destroy_data does not override this"
[[ -n $(findmnt -n -o TARGET "$WORK/mnt") ]] || fail "$WORK/mnt is no longer mounted"

# --- held by another device or program: refused even with destroy_data ---
new_loop 64M
HELD=$NEW_LOOP
if grep -qw device-mapper /proc/misc && command -v dmsetup >/dev/null; then
	dm_name="soakd-test-$$"
	sectors=$(blockdev --getsz "$HELD")
	dmsetup create "$dm_name" --table "0 $sectors linear $HELD 0" ||
		fail "dmsetup create $dm_name failed"
	on_exit dmsetup remove --retry "$dm_name"
	expect_refused "held by device-mapper" "{\"path\": \"$HELD\", \"destroy_data\": true}" "$HELD" \
		"it is in use by dm-" "(device-mapper device \"$dm_name\")" "does not override"
else
	# Checked instead from a fake sysfs tree in test-dev_sys.
	note "device-mapper is not in this kernel: the holders/ case runs only in test-dev_sys"
fi
# Another program holding it with O_EXCL, as mkfs or a database would.
hold_exclusively "$HELD"
expect_refused "held exclusively" "{\"path\": \"$HELD\", \"destroy_data\": true}" "$HELD" \
	"it is in use" "does not override"

# --- a loop device over a device in use: refused even with destroy_data ---
# MOUNTED holds a mounted ext4; a loop over it at an offset shows no
# signature, and is neither mounted nor held itself.
loop_over "$MOUNTED" -o 1M
OVER=$LOOP_OVER
expect_refused "loop over a mounted device" "{\"path\": \"$OVER\", \"destroy_data\": true}" "$OVER" \
	"it writes to $MOUNTED through the loop device $OVER" "it is mounted on $WORK/mnt (ext4)" \
	"destroy_data does not override this"
loop_over "$OVER"
OVER2=$LOOP_OVER
expect_refused "loop over a loop over a mounted device" \
	"{\"path\": \"$OVER2\", \"destroy_data\": true}" "$OVER2" \
	"it writes to $MOUNTED through the loop device $OVER" "it is mounted on $WORK/mnt (ext4)"
loop_over "$HELD"
OVER_HELD=$LOOP_OVER
expect_refused "loop over a device held exclusively" \
	"{\"path\": \"$OVER_HELD\", \"destroy_data\": true}" "$OVER_HELD" \
	"it writes to $HELD through the loop device $OVER_HELD" "held exclusively" \
	"destroy_data does not override this"
_kill_bg "$HOLDER" || true  # wait reports the SIGTERM it died of
[[ $(findmnt -n -o TARGET "$WORK/mnt") ]] || fail "$WORK/mnt is no longer mounted"
# Nothing holds HELD now: a loop over it is a device like any other.
expect_accepted "loop over an unused device" "{\"path\": \"$OVER_HELD\", \"destroy_data\": true}" 70
# A loop over a partition of a loop device over an unused device: every
# step down is checked, and the loop the writes come through at each step
# (a partition's disk's) is not taken for another one over that device.
new_loop 64M
BASE=$NEW_LOOP
loop_over "$BASE" --partscan
MID=$LOOP_OVER
printf 'label: dos\n,,L\n' | sfdisk -q "$MID" >"$WORK/sfdisk-mid.log" 2>&1 ||
	fail "sfdisk $MID failed: $(cat "$WORK/sfdisk-mid.log")"
if rescan_partitions "$MID"; then
	loop_over "${MID}p1"
	TOP=$LOOP_OVER
	expect_accepted "loop over a partition of a loop over an unused device" \
		"{\"path\": \"$TOP\", \"destroy_data\": true}" 70
	# Down past the partition: BASE held by another program is found.
	hold_exclusively "$BASE"
	expect_refused "loop over a partition of a loop over a held device" \
		"{\"path\": \"$TOP\", \"destroy_data\": true}" "$TOP" \
		"it writes to $BASE through the loop device $MID" "held exclusively"
	_kill_bg "$HOLDER" || true
else
	note "no partitions on $MID here: the loop-over-partition chain is not run"
fi

# --- the backing of a loop device: refused even with destroy_data ---
# A loop at an offset over LOWER holds a mounted ext4: LOWER is neither
# mounted nor held, nothing names it in holders/, and libblkid finds no
# signature at its start.  Writes to it would land under the filesystem.
new_loop 64M
LOWER=$NEW_LOOP
loop_over "$LOWER" -o 1M
STACKED=$LOOP_OVER
mkfs.ext4 -q -F -L soak-stacked "$STACKED" || fail "mkfs.ext4 $STACKED failed"
mkdir -p "$WORK/mnt-stacked"
mount "$STACKED" "$WORK/mnt-stacked" || fail "cannot mount $STACKED"
on_exit "! mountpoint -q '$WORK/mnt-stacked' || umount '$WORK/mnt-stacked'"
echo data >"$WORK/mnt-stacked/file" && sync
for target in "\"$LOWER\"" "{\"path\": \"$LOWER\", \"destroy_data\": true}"; do
	expect_check_refused "loop backing $target" "$target" "$LOWER" \
		"it is the backing of the loop device $STACKED" "losetup -d $STACKED" \
		"destroy_data does not override this"
	expect_refused "loop backing $target" "$target" "$LOWER" \
		"it is the backing of the loop device $STACKED" "destroy_data does not override this"
done
umount "$WORK/mnt-stacked" || fail "cannot unmount $WORK/mnt-stacked"
e2fsck -fn "$STACKED" >"$WORK/fsck.log" 2>&1 ||
	fail "the ext4 on $STACKED, over $LOWER, no longer checks clean: $(cat "$WORK/fsck.log")"

# A loop over a partition refuses its disk; a loop over the disk refuses
# its partitions.
new_loop 64M
PARTED2=$NEW_LOOP
printf 'label: dos\n,32M,L\n,,L\n' | sfdisk -q "$PARTED2" >"$WORK/sfdisk.log" 2>&1 ||
	fail "sfdisk $PARTED2 failed: $(cat "$WORK/sfdisk.log")"
if rescan_partitions "$PARTED2"; then
	loop_over "${PARTED2}p2"
	expect_refused "loop over a partition" "{\"path\": \"$PARTED2\", \"destroy_data\": true}" \
		"$PARTED2" "its partition ${PARTED2}p2 is the backing of the loop device $LOOP_OVER"
	loop_over "$PARTED2"
	expect_check_refused "loop over the disk" \
		"{\"path\": \"${PARTED2}p1\", \"destroy_data\": true}" "${PARTED2}p1" \
		"its disk $PARTED2 is the backing of the loop device $LOOP_OVER"
else
	note "the kernel did not list ${PARTED2}'s partitions: skipping the loop-over-a-partition cases"
fi

# A regular file: refused for writes, destroy_data or not; reads are fine.
truncate -s 16M "$WORK/backing.dat"
loop_over "$WORK/backing.dat"
expect_check_refused "loop's backing file" "\"$WORK/backing.dat\"" "$WORK/backing.dat" \
	"it is the backing of the loop device $LOOP_OVER" "destroy_data does not override this"
expect_refused "loop's backing file" "{\"path\": \"$WORK/backing.dat\", \"destroy_data\": true}" \
	"$WORK/backing.dat" "it is the backing of the loop device $LOOP_OVER"
expect_accepted "read-only on a loop's backing file" "\"$WORK/backing.dat\"" 100
# The loop was set up through a second name, since removed: sysfs says
# "link.dat (deleted)", and only the inode tells it is this file.
truncate -s 16M "$WORK/linked.dat"
ln "$WORK/linked.dat" "$WORK/link.dat"
loop_over "$WORK/link.dat"
rm "$WORK/link.dat"
grep -q "link.dat (deleted)" "/sys/block/$(basename "$LOOP_OVER")/loop/backing_file" ||
	fail "sysfs does not show the removed name: $(cat "/sys/block/$(basename "$LOOP_OVER")/loop/backing_file")"
expect_check_refused "loop over a removed hard link" "\"$WORK/linked.dat\"" "$WORK/linked.dat" \
	"it is the backing of the loop device $LOOP_OVER"
expect_refused "loop over a removed hard link" "\"$WORK/linked.dat\"" "$WORK/linked.dat" \
	"it is the backing of the loop device $LOOP_OVER"

# --- the root disk: refused before it is opened, destroy_data or not ---
read -r maj min < <(stat -c '%Hd %Ld' /)
if ((maj == 0)); then
	# btrfs and friends: the device number is anonymous; ask the source.
	source_dev=$(findmnt -n -o SOURCE / | sed 's/\[.*//')
	if [[ -b $source_dev ]]; then
		read -r maj min < <(stat -L -c '%Hr %Lr' "$source_dev")
	fi
fi
sysdir=$(readlink -f "/sys/dev/block/$maj:$min" 2>/dev/null || true)
[[ -n $sysdir && -e $sysdir/partition ]] && sysdir=$(dirname "$sysdir")
ROOT_DISK=${sysdir:+/dev/$(basename "$sysdir")}
if ((maj == 0)) || [[ -z $ROOT_DISK || ! -b $ROOT_DISK ]]; then
	note "/ is not on a local block device here ($(findmnt -n -o SOURCE /)): skipping the root-disk case"
else
	# soakd would stop at its open if the check came later; on these
	# machines the open fails, so a refusal naming the root disk shows
	# the check came first.
	expect_refused "root disk" "{\"path\": \"$ROOT_DISK\", \"destroy_data\": true}" "$ROOT_DISK" \
		"root disk" "holds /" "destroy_data or not"
	grep -q "cannot open" "$RUN_LOG" && fail "root disk: soakd tried to open $ROOT_DISK: $(cat "$RUN_LOG")"
fi

# --- a regular file holding a filesystem (a raw disk image) ---
# As a device: refused without destroy_data, at --check-config and at the
# start, and intact; read-only needs nothing; destroy_data writes over it.
IMAGE=$WORK/disk.img
truncate -s 32M "$IMAGE"
mkfs.ext4 -q -F -L soak-image "$IMAGE" || fail "mkfs.ext4 $IMAGE failed"
image_uuid=$(blkid -p -o value -s UUID "$IMAGE")
expect_check_refused "ext4 image file" "\"$IMAGE\"" "$IMAGE" "it holds an ext4 filesystem" \
	"$image_uuid" 'add "destroy_data": true to this target'
expect_refused "ext4 image file" "\"$IMAGE\"" "$IMAGE" "it holds an ext4 filesystem" "$image_uuid"
e2fsck -fn "$IMAGE" >"$WORK/fsck.log" 2>&1 || fail "$IMAGE no longer checks clean: $(cat "$WORK/fsck.log")"
expect_accepted "read-only on an ext4 image file" "\"$IMAGE\"" 100
e2fsck -fn "$IMAGE" >"$WORK/fsck.log" 2>&1 || fail "$IMAGE changed under reads: $(cat "$WORK/fsck.log")"
expect_accepted "ext4 image file with destroy_data" "{\"path\": \"$IMAGE\", \"destroy_data\": true}" 70
grep -q "$IMAGE holds an ext4 filesystem.*writing over it, as destroy_data allows" "$RUN_LOG" ||
	fail "no warning about writing over $IMAGE's filesystem: $(cat "$RUN_LOG")"
# A file of data libblkid finds nothing in is written without the flag.
head -c 8M /dev/urandom >"$WORK/random.dat"
expect_accepted "a file of random data" "\"$WORK/random.dat\"" 70
# A file soakd created carries its mark and is not probed again (random
# data reads as a filesystem about once in 30,000 probes): here it is
# made to hold one, and is still written; a copy without the mark is not.
write_config "$WORK/made.json" "\"$WORK/made.dat\"" 70
sed -i 's/"rate": 200}/"rate": 200, "file_size": "32MiB"}/' "$WORK/made.json"
timeout 60 "$SOAKD" --config "$WORK/made.json" --socket "$SOCK" --state-dir "$WORK/state" \
	--no-table >"$WORK/made.log" 2>&1 || fail "soakd creating $WORK/made.dat: $(cat "$WORK/made.log")"
if python3 -c 'import os, sys; sys.exit(os.getxattr(sys.argv[1], "user.soakd.laid_out") != b"1")' \
	"$WORK/made.dat" 2>/dev/null; then
	mkfs.ext4 -q -F "$WORK/made.dat" || fail "mkfs.ext4 $WORK/made.dat failed"
	expect_accepted "a file soakd created, holding ext4" "\"$WORK/made.dat\"" 70
	cp "$WORK/made.dat" "$WORK/copy.dat"
	expect_refused "a copy of it" "\"$WORK/copy.dat\"" "$WORK/copy.dat" "it holds an ext4 filesystem"
else
	note "$WORK has no user extended attributes: soakd's files there are probed as any"
fi

# --- accepted: blank devices, and data with destroy_data ---
new_loop 64M
BLANK=$NEW_LOOP
expect_accepted "blank" "\"$BLANK\"" 70
expect_accepted "blank with destroy_data" "{\"path\": \"$BLANK\", \"destroy_data\": true}" 70

# The ext4 device with destroy_data: runs, after a warning that says what
# is being written over.  Run it under soakctl to see the dump's facts.
write_config "$WORK/destroy.json" "{\"path\": \"$EXT4\", \"destroy_data\": true}" 70
sed -i 's/"on_finish": "exit"/"on_finish": "idle"/' "$WORK/destroy.json"
start_soakd --config "$WORK/destroy.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 30 "workload w to finish" workload_is w finished
grep -q "$EXT4 holds an ext4 filesystem.*writing over it, as destroy_data allows" "$SOAKD_LOG" ||
	fail "no warning about writing over $EXT4's filesystem: $(cat "$SOAKD_LOG")"
grep -q "device $EXT4: 64 MiB, $(basename "$EXT4"), .*logical block 512" "$SOAKD_LOG" ||
	fail "the device facts of $EXT4 are not logged: $(cat "$SOAKD_LOG")"
ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump failed"
python3 - "$WORK/dump.json" "$EXT4" <<'PY' || fail "device facts in the dump: $(head -c 3000 "$WORK/dump.json")"
import json, os, sys
dump, path = json.load(open(sys.argv[1])), sys.argv[2]
target = dump["workloads"][0]["targets"][0]
device = target.get("device")
if not device:
    sys.exit(f"no 'device' in the target entry: {sorted(target)}")
name = os.path.basename(path)
want = {"path": path, "kind": "block", "name": name, "disk": name, "partition": False,
        "size_bytes": 64 << 20, "logical_block_size": 512, "rotational": False}
for key, value in want.items():
    if device.get(key) != value:
        sys.exit(f"device[{key!r}] = {device.get(key)!r}, expected {value!r}: {device}")
for key in ("physical_block_size", "scheduler", "model", "serial", "firmware", "dev"):
    if key not in device:
        sys.exit(f"no {key!r} in {device}")
if not device.get("backing_file", "").startswith(("/dev/shm/", "/var/tmp/")):
    sys.exit(f"backing_file: {device.get('backing_file')!r}")
print(f"# device facts: {json.dumps(device)[:300]}")
PY
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
