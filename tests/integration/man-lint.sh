#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The man pages as this build installs them (configured: versions and
# paths filled in) pass mandoc's linter at every level, style included:
# a date in .TH, no unknown macros, no over-long input lines.
source "$(dirname "$0")/lib.sh"

need_cmd mandoc
pages=("$BUILDDIR"/man/soakd.8 "$BUILDDIR"/man/soakctl.1 "$BUILDDIR"/man/soakd.json.5)
for page in "${pages[@]}"; do
	[[ -f $page ]] || fail "$page was not configured by the build"
	grep -q '@[a-z_]*@' "$page" && fail "$page: unsubstituted $(grep -o '@[a-z_]*@' "$page" | head -n 1)"
	mandoc -T lint -W style "$page" >"$WORK/lint.txt" 2>&1 || true
	[[ -s $WORK/lint.txt ]] && fail "mandoc -T lint $page:
$(cat "$WORK/lint.txt")"
done
note "ok: ${#pages[@]} pages"
