#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fault device of the tests (tests/faultdev, faultlib.sh), proven with
# plain dd through its loop device before soakd's tests lean on it (issue
# 15): unflushed writes vanish in a power cut and flushed ones stay; a lying
# flush loses a write it acknowledged, and says which; errors give EIO
# where asked; a delay shows in the timing; a stall holds I/O until
# released; a misdirected write lands elsewhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"
need_cmd dd cmp

faultdev_start 64M
faultdev_loop

BS=4096
# A distinct 4 KiB pattern per name, kept in WORK for comparisons.
block_file() {
	[[ -e $WORK/blk.$1 ]] || head -c $BS /dev/urandom >"$WORK/blk.$1"
	echo "$WORK/blk.$1"
}
head -c $BS /dev/zero >"$WORK/blk.zero"

# put BLOCK NAME [dd options...]: write pattern NAME at block BLOCK of the loop device.
put() {
	local block=$1 name=$2
	shift 2
	dd if="$(block_file "$name")" of="$FAULTDEV_LOOP" bs=$BS seek="$block" count=1 \
		oflag=direct "$@" status=none 2>"$WORK/dd.err"
}
# holds BLOCK NAME: the device reads pattern NAME at BLOCK (O_DIRECT).
holds() {
	dd if="$FAULTDEV_LOOP" bs=$BS skip="$1" count=1 iflag=direct status=none 2>"$WORK/dd.err" |
		cmp -s - "$(block_file "$2")"
}
# persisted BLOCK NAME: faultdev's backing file (what survives) holds NAME at BLOCK.
persisted() {
	dd if="$FAULTDEV_BACKING" bs=$BS skip="$1" count=1 status=none | cmp -s - "$(block_file "$2")"
}
expect_stat() {
	local got
	got=$(faultdev_stat "$1")
	[[ $got == "$2" ]] || fail "faultdev statistic $1 is $got, expected $2 ($3)"
}

# --- 1. The volatile write cache and a power cut -------------------------
put 10 a conv=fdatasync || fail "flushed write to block 10: $(cat "$WORK/dd.err")"
put 11 b oflag=dsync || fail "O_DSYNC write to block 11: $(cat "$WORK/dd.err")"
put 12 c || fail "write to block 12: $(cat "$WORK/dd.err")"
put 10 d || fail "write to block 10: $(cat "$WORK/dd.err")"
holds 10 d && holds 11 b && holds 12 c || fail "reads before the cut do not see the newest writes"
persisted 10 a && persisted 11 b || fail "flushed blocks 10 and 11 are not in the backing file"
persisted 12 zero || fail "unflushed block 12 reached the backing file before any flush"
expect_stat dirty_blocks 2 "blocks 10 and 12 written after the last flush"
faultdev_powercut
holds 10 a || fail "block 10 after the cut is not the flushed write (the unflushed one survived?)"
holds 11 b || fail "block 11, written with O_DSYNC (FUA), was lost in the cut"
holds 12 zero || fail "block 12, never flushed, survived the cut"
expect_stat drops 1 "one power cut"
expect_stat blocks_dropped 2 "blocks 10 and 12"
expect_stat dirty_blocks 0 "after the cut"
note "power cut: flushed writes stayed, unflushed ones vanished"

# After a drop with the device attached, readers see the flushed state at once.
put 13 e || fail "write to block 13"
faultdev_drop
holds 13 zero || fail "block 13 still reads its unflushed write after a drop"

# --- 2. A flush that lies -------------------------------------------------
faultdev_cmd lie 1
put 20 f conv=fdatasync || fail "write to block 20 with fdatasync: $(cat "$WORK/dd.err")"
expect_stat lies 1 "lie 1, then one flush"
[[ $(faultdev_doomed) == "$((20 * BS)) $BS" ]] ||
	fail "faultdev's doomed list is '$(faultdev_doomed)', expected block 20"
holds 20 f || fail "block 20 does not read its (acknowledged) write before the cut"
persisted 20 zero || fail "the lying flush wrote block 20 to the backing file"
# An honest flush after the lie must not save the doomed block.
put 21 g conv=fdatasync || fail "write to block 21 with fdatasync"
persisted 21 g || fail "the honest flush after the lie did not persist block 21"
faultdev_powercut
holds 20 zero || fail "block 20, acknowledged by a lying flush, survived the cut"
holds 21 g || fail "block 21, honestly flushed, was lost"
[[ $(faultdev_lost) == "$((20 * BS)) $BS" ]] ||
	fail "faultdev's lost list is '$(faultdev_lost)', expected block 20"
expect_stat blocks_lost_acked 1 "the one lied-about block"

# "lie 1 one": one block of the flush (the lowest) is doomed, the rest persisted.
faultdev_cmd lie 1 one
cat "$(block_file h)" "$(block_file i)" >"$WORK/blk.hi"
dd if="$WORK/blk.hi" of="$FAULTDEV_LOOP" bs=$((2 * BS)) seek=15 count=1 oflag=direct \
	conv=fdatasync status=none || fail "write to blocks 30-31"
persisted 31 i || fail "lie one: block 31 was not persisted"
persisted 30 zero || fail "lie one: block 30 was persisted"
# A doomed block written again is healed: the new write is flushed honestly.
faultdev_cmd lie 1
put 40 j conv=fdatasync || fail "write to block 40"
put 40 k conv=fdatasync || fail "rewrite of block 40"
expect_stat blocks_healed 1 "block 40 rewritten after the lie"
# A doomed block written again but not flushed is still doomed: the cut
# loses the write the lie acknowledged, and the lost list names it.
faultdev_cmd lie 1
put 50 n conv=fdatasync || fail "write to block 50"
put 50 o || fail "unflushed rewrite of block 50"
holds 50 o || fail "block 50 does not read its newest write"
[[ $(faultdev_doomed) == *"$((50 * BS)) $BS"* ]] ||
	fail "block 50, rewritten after a lie but not flushed, is not doomed: '$(faultdev_doomed)'"
faultdev_powercut
holds 30 zero && holds 31 i || fail "lie one: blocks 30-31 after the cut are wrong"
holds 40 k || fail "block 40, rewritten and flushed after a lie, was lost"
holds 50 zero || fail "block 50's acknowledged write survived the cut"
expect_stat blocks_lost_acked 3 "block 20, then blocks 30 and 50"
[[ $(faultdev_lost) == *"$((50 * BS)) $BS"* ]] ||
	fail "block 50, lost in the cut after a lie, is not in the lost list: '$(faultdev_lost)'"
note "lying flushes: acknowledged writes lost in the cut, and listed"

# --- 3. Errors ------------------------------------------------------------
faultdev_cmd errors read range 1M 8K
dd if="$FAULTDEV_LOOP" of=/dev/null bs=$BS skip=257 count=1 iflag=direct status=none \
	2>"$WORK/dd.err" && fail "a read inside the error range succeeded"
grep -q "Input/output error" "$WORK/dd.err" || fail "read error is not EIO: $(cat "$WORK/dd.err")"
holds 258 zero || fail "a read just past the error range failed"
put 256 l || fail "a write into a read-error range failed"
expect_stat read_errors 1 "one read inside the range"

faultdev_cmd errors write range 2M 4K
put 512 m && fail "a write inside the error range succeeded"
grep -q "Input/output error" "$WORK/dd.err" || fail "write error is not EIO: $(cat "$WORK/dd.err")"
holds 512 zero || fail "a failed write changed the block"
put 513 m || fail "a write just past the error range failed"

faultdev_cmd errors write every 3
failed=()
for block in 600 601 602 603 604 605; do
	put "$block" n || failed+=("$block")
done
[[ ${failed[*]} == "602 605" ]] || fail "errors write every 3 failed writes to blocks '${failed[*]}', expected 602 605"
expect_stat write_errors 3 "one in the range, two of every 3"

faultdev_cmd errors flush every 1
put 610 o conv=fdatasync && fail "fdatasync succeeded with every flush failing"
faultdev_cmd errors off
put 611 o conv=fdatasync || fail "fdatasync failed after errors off"
note "errors: EIO exactly where asked"

# --- 4. Delays and stalls -----------------------------------------------------
# five_reads BLOCK: nanoseconds for five O_DIRECT reads of BLOCK, one dd each.
five_reads() {
	local t0 i
	t0=$(now_ns)
	for ((i = 0; i < 5; i++)); do
		dd if="$FAULTDEV_LOOP" of=/dev/null bs=$BS skip="$1" count=1 iflag=direct status=none
	done
	echo $(($(now_ns) - t0))
}
faultdev_cmd delay 200ms
slow=$(five_reads 0)
faultdev_cmd delay off
fast=$(five_reads 0)
((slow >= 1000000000)) || fail "five reads with 200 ms delay took only $((slow / 1000000)) ms"
((slow < 10000000000)) || fail "five reads with 200 ms delay took $((slow / 1000000)) ms"
((fast < slow / 2)) || fail "without delay five reads took $((fast / 1000000)) ms, with $((slow / 1000000)) ms"
faultdev_cmd delay 300ms 4M 4K
ranged=$(five_reads 1024)
outside=$(five_reads 0)
faultdev_cmd delay off
((ranged >= 1500000000)) || fail "reads in the delay range took only $((ranged / 1000000)) ms"
((outside < ranged / 2)) || fail "reads outside the delay range took $((outside / 1000000)) ms"
note "delay: five reads $((slow / 1000000)) ms at 200 ms, $((fast / 1000000)) ms without; ranged $((ranged / 1000000)) ms vs $((outside / 1000000)) ms"

faultdev_cmd stall
dd if="$FAULTDEV_LOOP" of=/dev/null bs=$BS skip=5 count=1 iflag=direct status=none &
stalled_dd=$!
on_exit _kill_bg "$stalled_dd"
stalled_now() { [[ $(faultdev_stat stalled_now) -ge 1 ]]; }
wait_until 10 "a stalled read" stalled_now
is_alive "$stalled_dd" || fail "the read finished while the device was stalled"
faultdev_cmd unstall
wait_until 10 "the stalled read to finish after unstall" not_alive "$stalled_dd"
wait "$stalled_dd" || fail "the stalled read failed after unstall"
expect_stat stalled_now 0 "after unstall"
note "stall: a read held until unstall"

# --- 5. Misdirected writes -------------------------------------------------
faultdev_cmd misdirect 3M 5M once
put 768 p conv=fdatasync || fail "misdirected write failed"
holds 768 zero || fail "the misdirected write landed where it was aimed"
holds 1280 p || fail "the misdirected write is not at the mapped block"
expect_stat misdirected_blocks 1 "one misdirected block"
put 768 q || fail "second write to block 768"
holds 768 q || fail "misdirect once misdirected a second write"
faultdev_cmd misdirect 6M 7M always
put 1536 u || fail "misdirected write failed"
put 1536 v || fail "second misdirected write failed"
holds 1536 zero && holds 1792 v || fail "misdirect always: block 1536 or 1792 is wrong"
faultdev_cmd misdirect off
put 1536 w && holds 1536 w || fail "misdirect off: the write did not land where aimed"
expect_stat misdirected_blocks 3 "one once, two always"
note "misdirect: a write to 3 MiB landed at 5 MiB (once), 6 MiB to 7 MiB (always)"

# --- 6. Cache off, bad commands, the end ------------------------------------
faultdev_cmd cache off
expect_stat dirty_blocks 0 "cache off writes the cache back"
put 50 r || fail "write with the cache off"
persisted 50 r || fail "with the cache off a write did not reach the backing file"

for bad in "bogus" "lie x" "errors read range 1M" "misdirect 1000 4096" "delay forever" "cache maybe"; do
	faultdev_try "$bad" && fail "faultdev took the bad command '$bad'"
	[[ -n $(faultdev_stat last_error) ]] || fail "no last_error after '$bad'"
done
expect_stat ops_while_off 0 "nothing reached the device while it was off"
faultdev_cmd power off
holds 0 zero && fail "a read succeeded with the power off"
expect_stat ops_while_off 1 "one read with the power off"
faultdev_cmd power on

# faultdev itself killed and started again: the image outlives it.
faultdev_cmd cache on
put 70 s conv=fdatasync || fail "flushed write to block 70"
put 71 t || fail "write to block 71"
faultdev_restart
holds 70 s || fail "block 70, flushed, did not survive faultdev's restart"
holds 71 zero || fail "block 71, never flushed, survived faultdev's restart"
holds 50 r || fail "block 50, written with the cache off, did not survive the restart"
expect_stat drops 0 "a new faultdev"

loop=$FAULTDEV_LOOP
mnt=$FAULTDEV_MNT
faultdev_stop
[[ ! -e /sys/block/${loop#/dev/}/loop/backing_file ]] || fail "$loop is still attached after faultdev_stop"
! awk -v m="$mnt" '$2 == m {found = 1} END {exit !found}' /proc/self/mounts ||
	fail "$mnt is still mounted after faultdev_stop"
[[ $FAULTDEV_RC == 0 ]] || fail "faultdev exited with status $FAULTDEV_RC on SIGTERM"
# In a sanitizer build (tools/test's), faultdev's own memory errors and leaks.
! grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$FAULTDEV_LOG" ||
	fail "faultdev's sanitizers reported: $(grep -E -m3 "Sanitizer|runtime error" "$FAULTDEV_LOG")"
note "all faults as asked; loop device and mount gone"
