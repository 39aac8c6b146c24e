# SPDX-License-Identifier: GPL-2.0-only
#
# What the bench scripts share; sourced by them (after setting BENCH_NAME),
# never run.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD_DIR:-$REPO/build-bench}

say() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }
die() { say "$*"; exit 1; }

# whole_numbers VAR...: each variable a whole number of at least 1, or die.
whole_numbers() {
	local v
	for v; do
		[[ ${!v} =~ ^[0-9]+$ ]] && ((${!v} >= 1)) ||
			die "$v must be a whole number of at least 1, not '${!v}'"
	done
}

# build_soakd: soakd built in $BUILD (release, no tests; set up, with the
# build dependencies, where there is no build yet) unless BENCH_NO_BUILD is
# set; its binaries in SOAKD and SOAKCTL.
build_soakd() {
	if [[ -z ${BENCH_NO_BUILD:-} ]]; then
		if [[ ! -f $BUILD/build.ninja ]]; then
			[[ -x $REPO/tools/setup-deps ]] && "$REPO/tools/setup-deps"
			say "building soakd in $BUILD (release, no tests)"
			(cd "$REPO" && meson setup "$BUILD" --buildtype=release -Dtests=false >&2)
		fi
		ninja -C "$BUILD" >&2 || die "building soakd in $BUILD failed"
	fi
	SOAKD=$BUILD/daemon/soakd
	SOAKCTL=$BUILD/ctl/soakctl
	[[ -x $SOAKD && -x $SOAKCTL ]] || die "no soakd/soakctl in $BUILD"
}
