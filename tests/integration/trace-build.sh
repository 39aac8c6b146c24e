#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The BPF build glue: this build generated vmlinux.h from the kernel's BTF
# with bpftool, compiled bpf/*.bpf.c into objects that are CO-RE (BTF and
# its relocation records, .BTF.ext) with typed tracepoints only, and
# skeletons from them; and a build configured with -Dvmlinux_h=FILE (for a
# machine without /sys/kernel/btf/vmlinux) uses that file instead.
source "$(dirname "$0")/lib.sh"

need_cmd meson ninja readelf cmp
BPF_DIR="$BUILDDIR/bpf"
for f in vmlinux.h blk.bpf.o tcp.bpf.o blk.skel.h tcp.skel.h; do
	[[ -s $BPF_DIR/$f ]] || fail "$BPF_DIR/$f was not built"
done
grep -q 'struct request {' "$BPF_DIR/vmlinux.h" || fail "vmlinux.h has no struct request"

for prog in blk tcp; do
	readelf -S -W "$BPF_DIR/$prog.bpf.o" >"$WORK/$prog.sections" || fail "readelf $prog.bpf.o"
	for s in .BTF .BTF.ext; do
		grep -qF " $s " "$WORK/$prog.sections" || fail "$prog.bpf.o has no $s section (not CO-RE)"
	done
	grep -qE ' (kprobe|kretprobe|fentry|fexit|fmod_ret)/' "$WORK/$prog.sections" &&
		fail "$prog.bpf.o has programs other than tracepoints: $(cat "$WORK/$prog.sections")"
	n=$(grep -cE ' tp_btf/' "$WORK/$prog.sections" || true)
	((n > 0)) || fail "$prog.bpf.o has no tp_btf programs"
	grep -q "${prog}_bpf__open" "$BPF_DIR/$prog.skel.h" || fail "$prog.skel.h is not a skeleton"
	note "$prog.bpf.o: $n typed tracepoint programs, CO-RE"
done
# Only daemon/probes/probes.c includes a skeleton.
includers=$(grep -rl '\.skel\.h"' "$SRCDIR/daemon" "$SRCDIR/ctl" "$SRCDIR/common" 2>/dev/null |
	sed "s|$SRCDIR/||" | sort | tr '\n' ' ')
[[ $includers == "daemon/probes/probes.c " ]] || fail "skeletons included by: $includers"

# A build with a prepared vmlinux.h: only the BPF targets, they are quick.
cp "$BPF_DIR/vmlinux.h" "$WORK/prepared-vmlinux.h"
meson setup "$WORK/build" "$SRCDIR" -Dtests=false -Dvmlinux_h="$WORK/prepared-vmlinux.h" \
	>"$WORK/setup.log" 2>&1 || fail "meson setup -Dvmlinux_h failed: $(tail -n 5 "$WORK/setup.log")"
ninja -C "$WORK/build" bpf/blk.skel.h bpf/tcp.skel.h >"$WORK/ninja.log" 2>&1 ||
	fail "building the skeletons with -Dvmlinux_h failed: $(tail -n 5 "$WORK/ninja.log")"
cmp -s "$WORK/prepared-vmlinux.h" "$WORK/build/bpf/vmlinux.h" ||
	fail "the -Dvmlinux_h build did not use the prepared header"
rc=0
meson setup "$WORK/bad" "$SRCDIR" -Dtests=false -Dvmlinux_h="$WORK/absent.h" >"$WORK/bad.log" 2>&1 ||
	rc=$?
((rc != 0)) || fail "meson setup accepted a -Dvmlinux_h that does not exist"
note "ok"
