#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shell completion (issue 19): the bash completion of soakctl and soakd,
# sourced as bash-completion would, gives the commands, options and values
# asked for, and the workload and op names of a running soakd (nothing,
# quickly and silently, when none answers).  The zsh functions parse, are
# bound by compinit, and complete the same kinds of words at a real zsh
# prompt (zsh_complete.zsh: an interactive zsh on a pseudo-terminal, Tab
# pressed after each line).
source "$(dirname "$0")/lib.sh"

# The completion calls soakctl by name: the one just built.
export PATH="$(dirname "$SOAKCTL"):$(dirname "$SOAKD"):$PATH"
source "$SRCDIR/ctl/completion/soakctl.bash"
source "$SRCDIR/ctl/completion/soakd.bash"

# complete_words WORD... : COMPREPLY for the last word, as one line.
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	case $1 in
	soakctl) _soakctl ;;
	soakd) _soakd ;;
	esac
	echo "${COMPREPLY[*]}"
}
expect() {
	local want=$1 got
	shift
	got=$(complete_words "$@" 2>"$WORK/complete.err")
	[[ $got == "$want" ]] || fail "completing '$*': got '$got', expected '$want'"
	[[ ! -s $WORK/complete.err ]] || fail "completing '$*' printed: $(cat "$WORK/complete.err")"
}

expect "status start stop" soakctl st
expect "cmp" soakctl c
expect "--socket" soakctl --so
expect "json csv hdr" soakctl dump --format ""
expect "text json" soakctl cmp --format ""
expect "--html --help" soakctl report --h
expect "--new-run" soakctl start --n
expect "on off blk tcp" soakctl trace ""
expect "--state-dir" soakd --st
expect "--check-config" soakd --che

# Without a soakd: no names, no message, no wait.
start=$(now_ns)
expect "" soakctl --socket "$WORK/none.sock" stop ""
expect "" soakctl --socket "$WORK/none.sock" dump --op ""
(($(now_ns) - start < 5000000000)) || fail "completion without soakd took over 5 s"

# zsh_expect LINE WANT...: what zsh offers on Tab after LINE, as a user at
# a terminal gets it (nothing without zsh; zsh_check says so once).
ZSH_LINES=() ZSH_WANT=()
zsh_expect() {
	ZSH_LINES+=("$1")
	ZSH_WANT+=("$1 => $2")
}
zsh_check() {
	local out i
	command -v zsh >/dev/null || return 0
	mkdir -p "$WORK/zfunc"
	cp "$SRCDIR/ctl/completion/_soakctl" "$SRCDIR/ctl/completion/_soakd" "$WORK/zfunc/"
	out=$(timeout 120 zsh "$SRCDIR/tests/integration/zsh_complete.zsh" "$WORK/zfunc" "$WORK" \
		"${ZSH_LINES[@]}" 2>"$WORK/zsh.err") || fail "zsh completion did not run: $(cat "$WORK/zsh.err")"
	mapfile -t got <<<"$out"
	for i in "${!ZSH_WANT[@]}"; do
		[[ ${got[i]:-} == "${ZSH_WANT[i]}" ]] ||
			fail "zsh: got '${got[i]:-}', expected '${ZSH_WANT[i]}'"
	done
	note "zsh completed ${#ZSH_WANT[@]} lines as expected"
	ZSH_LINES=() ZSH_WANT=()
}
zsh_expect "soakctl st" "start status stop"
zsh_expect "soakctl c" "cmp"
zsh_expect "soakctl --so" "--socket"
zsh_expect "soakctl dump --format " "csv hdr json"
zsh_expect "soakctl cmp --format " "json text"
zsh_expect "soakctl start --n" "--new-run"
zsh_expect "soakctl report --h" "--help --html"
zsh_expect "soakctl trace " "blk off on tcp"
zsh_expect "soakd --st" "--state-dir"
zsh_expect "soakd --che" "--check-config"
# Without a soakd: no names (and no message, which would break the line).
zsh_expect "soakctl --socket $WORK/none.sock stop " ""
zsh_expect "soakctl --socket $WORK/none.sock dump --workload " ""
start=$(now_ns)
zsh_check
(($(now_ns) - start < 60000000000)) || fail "zsh completion without soakd took over 60 s"

# With one: its workloads and ops.
CFG="$WORK/c.json"
write_file_config "$CFG" comp alpha 30s idle 100
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "alpha to run" workload_is alpha running
expect "alpha" soakctl --socket "$SOCK" stop ""
expect "alpha" soakctl --socket="$SOCK" start a
expect "alpha" soakctl --socket "$SOCK" dump --workload ""
expect "read write" soakctl --socket "$SOCK" plot --op ""
zsh_expect "soakctl --socket $SOCK stop " "alpha"
zsh_expect "soakctl --socket $SOCK start a" "alpha"
zsh_expect "soakctl --socket $SOCK dump --workload " "alpha"
zsh_expect "soakctl --socket $SOCK plot --op " "read write"
zsh_check
stop_soakd 15

if command -v zsh >/dev/null; then
	zsh -n "$SRCDIR/ctl/completion/_soakctl" || fail "_soakctl does not parse in zsh"
	zsh -n "$SRCDIR/ctl/completion/_soakd" || fail "_soakd does not parse in zsh"
	# Loaded by compinit from a site-functions directory, as installed.
	mkdir -p "$WORK/zfunc"
	cp "$SRCDIR/ctl/completion/_soakctl" "$SRCDIR/ctl/completion/_soakd" "$WORK/zfunc/"
	out=$(HOME=$WORK zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$1/.zcompdump"
		print -r -- "${_comps[soakctl]} ${_comps[soakd]}"' zsh "$WORK/zfunc" 2>&1) ||
		fail "zsh compinit: $out"
	[[ $out == "_soakctl _soakd" ]] || fail "zsh's compinit did not take the functions: $out"
	note "zsh: both functions parse and compinit binds them"
else
	note "zsh is not installed: its functions not checked (tools/setup-deps installs it)"
fi
note "ok"
