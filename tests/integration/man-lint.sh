#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The man pages as this build installs them (configured: versions and
# paths filled in) pass mandoc's linter at every level, style included:
# a date in .TH, no unknown macros, no over-long input lines.  And every
# journal field soakd sends (SOAK_*) is in soakd(8)'s JOURNAL FIELDS.
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
missing=()
while read -r field; do
	grep -qw -- "$field" "$BUILDDIR/man/soakd.8" || missing+=("$field")
done < <(grep -rhoE '"SOAK_[A-Z0-9_]+' "$SRCDIR/daemon" --include='*.c' | tr -d '"' | grep -v '_$' | sort -u)
((${#missing[@]} == 0)) || fail "journal fields soakd sends that soakd(8) does not list: ${missing[*]}"
note "ok: ${#pages[@]} pages"
