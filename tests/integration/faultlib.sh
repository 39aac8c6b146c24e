# SPDX-License-Identifier: GPL-2.0-only
#
# A block device whose faults the test controls: a loop device over the one
# disk image of faultdev, a FUSE filesystem of our own (tests/faultdev,
# README.md there).  Sourced after lib.sh, never run.  Everything it makes
# (the FUSE process, its mount, the loop device, the backing file) is undone
# by the cleanup stack however the test ends; mounts and loop devices left by
# a run that was SIGKILLed are undone at the start of the next.
#
#   faultdev_start SIZE [BLOCK_SIZE]  start faultdev (cache on; 4 KiB blocks);
#                                     sets FAULTDEV_MNT, FAULTDEV_BACKING (the
#                                     flushed image), FAULTDEV_PID
#   faultdev_loop                     attach a loop device with direct I/O over
#                                     the image; its name in FAULTDEV_LOOP
#   faultdev_cmd COMMAND...           send a command; fails the test if refused
#   faultdev_try COMMAND...           the same, returning faultdev's verdict
#   faultdev_stat KEY                 one value of the statistics
#   faultdev_stats                    all of them, KEY=VALUE lines
#   faultdev_lost                     "OFFSET LENGTH" of acknowledged blocks drops lost
#   faultdev_doomed                   "OFFSET LENGTH" of blocks a lying flush left volatile
#   faultdev_drop                     lose the write cache, device stays up
#   faultdev_powercut                 a power cut end to end: cache lost, loop
#                                     device detached and attached again (same
#                                     name when free; FAULTDEV_LOOP updated).
#                                     Kill whatever holds the device first.
#   faultdev_restart                  the same, but faultdev is stopped and
#                                     started again over the same image (its
#                                     statistics start from zero)
#   faultdev_stop                     undo everything now (also done at exit);
#                                     faultdev's exit status in FAULTDEV_RC
#
# Commands (README.md has the details): cache on|off, flush, drop,
# power off|on, lie N [all|one], lie off, errors KINDS range OFFSET LENGTH,
# errors KINDS every N, errors off, delay DURATION [OFFSET LENGTH | flush],
# delay off, stall, unstall, misdirect FROM TO [once|always], misdirect off,
# trace on|off, reset-stats.  KINDS: read, write, rw, flush, all, or a
# comma list.  Sizes as soakd reads them (4096, 4K, 1MiB).
#
# A power-cut test of a program that writes the device (soakd) goes:
#   faultdev_start 256M; faultdev_loop
#   ...run it on $FAULTDEV_LOOP (its own state elsewhere, not on the device)...
#   faultdev_cmd lie 1 one            # plant one lost write at its next flush
#   wait_until 20 "a lie" lie_done    # lie_done() { (($(faultdev_stat lies) >= 1)); }
#   kill -KILL "$pid"; faultdev_powercut
#   faultdev_lost                     # what it must report: the lied-about block,
#                                     # unless it rewrote that block and flushed it
#                                     # before the cut (then blocks_healed counts it
#                                     # and lost is empty)
#   ...restart it on $FAULTDEV_LOOP (same name unless that was taken)...
#
# What the loop driver sends (kernel 6.18, checked with "trace on"): a
# REQ_OP_FLUSH becomes fsync(2) of disk.img, which is faultdev's cache
# flush; the loop device does not claim FUA (queue/fua is 0), so the block
# layer turns a REQ_FUA write into the write and then a flush.  A write with
# O_DIRECT|O_DSYNC therefore reaches faultdev as write, fsync (the FUA's
# post-flush), fsync (O_DSYNC's own sync of the block device).

need_root "loop devices and FUSE mounts"
need_cmd losetup blockdev umount timeout awk
[[ -n ${FAULTDEV:-} && -x ${FAULTDEV:-} ]] ||
	skip_unless_strict "faultdev is not built (libfuse3-dev missing when meson setup ran; tools/setup-deps installs it)"
[[ -c /dev/fuse ]] || skip_unless_strict "no /dev/fuse (FUSE not available)"
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

FAULTDEV_MNT=
FAULTDEV_BACKING=
FAULTDEV_PID=
FAULTDEV_LOOP=
FAULTDEV_RC=
FAULTDEV_LOG="$WORK/faultdev.log"
_FAULTDEV_BACKING_DIR=
_FAULTDEV_ARGS=()

# Leftovers of SIGKILLed runs of this test: their work directory is gone
# with the run's cleanup never done.  Loop devices over images on those
# mounts are detached, then the mounts are lazily unmounted.
_faultdev_reap_stale() {
	local mnt dev back owner
	while read -r mnt; do
		[[ $mnt == "${TMPDIR:-/tmp}/soakd-$TEST_NAME."*/faultdev.mnt ]] || continue
		# Only a run that is gone: its shell's pid, recorded at start.
		owner=$(cat "${mnt%/faultdev.mnt}/faultdev.owner" 2>/dev/null || echo 0)
		[[ $owner != 0 && -d /proc/$owner ]] && continue
		while read -r dev back; do
			[[ $back == "$mnt/"* ]] && losetup -d "$dev" 2>/dev/null
		done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | sed 's/ (deleted)$//')
		umount -l "$mnt" 2>/dev/null
	done < <(awk '$3 == "fuse.faultdev" {print $2}' /proc/self/mounts)
	for back in /dev/shm/soakd-faultdev-"$TEST_NAME".*; do
		[[ -d $back ]] || continue
		owner=$(cat "$back/owner" 2>/dev/null || echo 0)
		[[ $owner != 0 && -d /proc/$owner ]] || rm -rf "$back"
	done
	return 0
}
_faultdev_reap_stale

# Before the cleanup stack: a process the test started that waits on a
# stalled or slow device is in uninterruptible sleep, so killing it (which
# the stack does before it gets to faultdev_stop, registered earlier) would
# wait for ever.  Release the device first; then the stack runs as always,
# with the test's exit status.
_faultdev_release() {
	[[ -n $FAULTDEV_PID ]] && is_alive "$FAULTDEV_PID" || return 0
	printf 'unstall\ndelay off\nerrors off\n' |
		timeout 5 dd of="$FAULTDEV_MNT/ctl" status=none 2>/dev/null && return 0
	# A wedged faultdev: its death aborts the FUSE connection, and every
	# request waiting on it fails.
	kill -KILL "$FAULTDEV_PID" 2>/dev/null
	return 0
}
# set +e: "(exit 1)" would otherwise end the trap before the stack runs.
trap '_faultdev_rc=$?; set +e; _faultdev_release; (exit $_faultdev_rc); _run_cleanups' EXIT

_faultdev_mounted() {
	awk -v m="$FAULTDEV_MNT" '$2 == m {found = 1} END {exit !found}' /proc/self/mounts
}

faultdev_start() {
	local size=$1 block=${2:-4096}
	[[ -z $FAULTDEV_PID ]] || fail "faultdev_start: faultdev already runs (pid $FAULTDEV_PID)"
	# The image in RAM when /dev/shm has room (faultdev writes it with
	# plain pwrite; the shared disk would only add noise), else in WORK.
	_FAULTDEV_BACKING_DIR="$WORK/faultdev.backing"
	if (($(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}' || echo 0) > 2 * 1024 * 1024)); then
		_FAULTDEV_BACKING_DIR=$(mktemp -d "/dev/shm/soakd-faultdev-$TEST_NAME.XXXXXX")
		echo $$ >"$_FAULTDEV_BACKING_DIR/owner"
	fi
	mkdir -p "$_FAULTDEV_BACKING_DIR"
	FAULTDEV_BACKING="$_FAULTDEV_BACKING_DIR/disk.img"
	FAULTDEV_MNT="$WORK/faultdev.mnt"
	mkdir -p "$FAULTDEV_MNT"
	echo $$ >"$WORK/faultdev.owner"
	on_exit faultdev_stop
	_FAULTDEV_ARGS=(--size "$size" --block-size "$block")
	_faultdev_launch
	note "faultdev (pid $FAULTDEV_PID): $size in $block B blocks on $FAULTDEV_MNT"
}

# faultdev over _FAULTDEV_BACKING_DIR (an image there is kept), mounted.
_faultdev_launch() {
	local i
	"$FAULTDEV" --backing "$_FAULTDEV_BACKING_DIR" "${_FAULTDEV_ARGS[@]}" \
		"$FAULTDEV_MNT" >>"$FAULTDEV_LOG" 2>&1 &
	FAULTDEV_PID=$!
	for ((i = 0; i < 100; i++)); do
		[[ -e $FAULTDEV_MNT/ctl ]] && break
		is_alive "$FAULTDEV_PID" || fail "faultdev exited at start: $(tail -n 5 "$FAULTDEV_LOG")"
		sleep 0.1
	done
	[[ -e $FAULTDEV_MNT/ctl ]] || fail "faultdev did not mount $FAULTDEV_MNT within 10 s"
}

# Attach FAULTDEV_LOOP over the image: to the device named by $1 when
# given (and free), else to the first free one.
_faultdev_attach() {
	local want=${1:-} err="$WORK/faultdev-losetup.err"
	if [[ -n $want ]] && losetup --direct-io=on "$want" "$FAULTDEV_MNT/disk.img" 2>"$err"; then
		FAULTDEV_LOOP=$want
	else
		FAULTDEV_LOOP=$(losetup --direct-io=on -f --show "$FAULTDEV_MNT/disk.img" 2>"$err") ||
			fail "losetup cannot attach $FAULTDEV_MNT/disk.img: $(cat "$err")"
	fi
	# A loop device that silently fell back to buffered I/O would keep a
	# page cache of the image that a drop does not reach.
	[[ $(cat "/sys/block/${FAULTDEV_LOOP#/dev/}/loop/dio" 2>/dev/null) == 1 ]] ||
		fail "$FAULTDEV_LOOP did not take --direct-io=on over the FUSE image"
}

faultdev_loop() {
	[[ -n $FAULTDEV_PID ]] || fail "faultdev_loop before faultdev_start"
	[[ -z $FAULTDEV_LOOP ]] || fail "faultdev_loop: $FAULTDEV_LOOP is attached already"
	_faultdev_attach
	note "loop device $FAULTDEV_LOOP over $FAULTDEV_MNT/disk.img (direct I/O)"
}

# Commands go in one write(2); a refused one fails it with EINVAL and
# last_error says why.  Bounded: a wedged faultdev must not hang the test.
faultdev_try() {
	printf '%s\n' "$*" | timeout 10 dd of="$FAULTDEV_MNT/ctl" bs=64K iflag=fullblock status=none 2>/dev/null
}
faultdev_cmd() {
	faultdev_try "$@" || fail "faultdev refused '$*': $(faultdev_stat last_error)"
}
faultdev_stats() { timeout 10 cat "$FAULTDEV_MNT/ctl"; }
faultdev_stat() {
	local line
	while IFS= read -r line; do
		if [[ ${line%%=*} == "$1" ]]; then
			echo "${line#*=}"
			return 0
		fi
	done < <(faultdev_stats)
	fail "faultdev has no statistic '$1'"
}
faultdev_lost() { timeout 10 cat "$FAULTDEV_MNT/lost"; }
faultdev_doomed() { timeout 10 cat "$FAULTDEV_MNT/doomed"; }

# The cache is lost, the device stays attached.  Whoever keeps the loop
# device open with buffered I/O still has its page cache (it goes at the
# last close): flushbufs drops it, which a real power cut would have done.
faultdev_drop() {
	faultdev_cmd drop
	[[ -z $FAULTDEV_LOOP ]] || blockdev --flushbufs "$FAULTDEV_LOOP"
}

# A power cut, as the host would see a drive without power-loss protection
# lose power and come back: what its cache held is gone, nothing written
# meanwhile lands (faultdev refuses every op while off, so the writeback of
# the loop device's page cache at detach goes nowhere), the device goes away
# and comes back with an empty page cache.  The caller kills the program
# that has the device open first: a loop device still open is only detached
# at its last close.
faultdev_powercut() {
	[[ -n $FAULTDEV_LOOP ]] || fail "faultdev_powercut without a loop device"
	faultdev_cmd power off
	_faultdev_detach
	faultdev_cmd power on
	_faultdev_attach "$FAULTDEV_LOOP"
	note "power cut: cache lost, $FAULTDEV_LOOP attached again"
}

# losetup -d, and wait until the device is really gone (it is not while
# someone holds it open: a loop device is detached at its last close).
_faultdev_detach() {
	local name=${FAULTDEV_LOOP#/dev/} i
	losetup -d "$FAULTDEV_LOOP" || fail "cannot detach $FAULTDEV_LOOP"
	for ((i = 0; i < 100; i++)); do
		[[ -e /sys/block/$name/loop/backing_file ]] || return 0
		sleep 0.1
	done
	fail "$FAULTDEV_LOOP is still attached 10 s after losetup -d: something holds it open (kill it first)"
}

# SIGTERM ends the FUSE loop (faultdev releases its stalls first) and
# faultdev unmounts; SIGKILL if it has not gone in 5 s.  Its exit status in
# FAULTDEV_RC.
_faultdev_end() {
	local i
	kill -TERM "$FAULTDEV_PID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		is_alive "$FAULTDEV_PID" || break
		sleep 0.1
	done
	is_alive "$FAULTDEV_PID" && kill -KILL "$FAULTDEV_PID" 2>/dev/null
	FAULTDEV_RC=0
	wait "$FAULTDEV_PID" 2>/dev/null || FAULTDEV_RC=$?
	FAULTDEV_PID=
}

# The power cut as faultdev_powercut, but faultdev itself goes and starts
# again over the same image: what was flushed is all there is.
faultdev_restart() {
	[[ -n $FAULTDEV_PID ]] || fail "faultdev_restart before faultdev_start"
	faultdev_cmd power off
	[[ -z $FAULTDEV_LOOP ]] || _faultdev_detach
	# SIGTERM loses the cache as surely as SIGKILL, and lets a sanitizer
	# build report on the way out.
	_faultdev_end
	[[ $FAULTDEV_RC == 0 ]] || fail "faultdev exited with status $FAULTDEV_RC: $(tail -n 20 "$FAULTDEV_LOG")"
	# faultdev unmounts as it exits; not when it had to be SIGKILLed.
	if _faultdev_mounted; then
		umount "$FAULTDEV_MNT" 2>/dev/null || umount -l "$FAULTDEV_MNT" ||
			fail "cannot unmount $FAULTDEV_MNT after stopping faultdev"
	fi
	_faultdev_launch
	[[ -z $FAULTDEV_LOOP ]] || _faultdev_attach "$FAULTDEV_LOOP"
	note "faultdev stopped and started again (pid $FAULTDEV_PID) over the same image"
}

# Undo everything, in the order that cannot hang: let stalled and delayed
# I/O go (a loop detach waits for its in-flight requests), detach, stop
# faultdev, unmount whatever is left, remove the image.  Idempotent.
faultdev_stop() {
	_faultdev_release
	if [[ -n $FAULTDEV_LOOP ]]; then
		timeout 20 losetup -d "$FAULTDEV_LOOP" 2>/dev/null
		FAULTDEV_LOOP=
	fi
	[[ -z $FAULTDEV_PID ]] || _faultdev_end
	# Not mountpoint(1): a FUSE mount whose process died fails its stat.
	if [[ -n $FAULTDEV_MNT ]] && _faultdev_mounted; then
		umount "$FAULTDEV_MNT" 2>/dev/null || umount -l "$FAULTDEV_MNT" 2>/dev/null
	fi
	if [[ -n $_FAULTDEV_BACKING_DIR ]]; then
		rm -rf "$_FAULTDEV_BACKING_DIR"
		_FAULTDEV_BACKING_DIR=
	fi
	return 0
}
