#!/usr/bin/env zsh
# SPDX-License-Identifier: GPL-2.0-only
#
# What zsh's completion system offers for command lines, as a user at a
# terminal gets it: an interactive zsh on a pseudo-terminal (zsh/zpty)
# with compinit loading the functions of FUNCDIR, each LINE typed and
# completed with Tab.  compadd is wrapped to record the matches it adds
# after zsh's own matching against the word (builtin compadd -O), so what
# is checked is what the menu would list, not the function's source.
#
#   zsh_complete.zsh FUNCDIR WORK LINE...
# prints per LINE: "LINE => MATCH MATCH ..." (sorted, unique; nothing
# after => when there is none).  Exit 77 without zsh/zpty.
emulate -L zsh
zmodload zsh/zpty 2>/dev/null || { print -u2 "zsh has no zpty module"; exit 77 }
fdir=$1 work=$2
shift 2

zpty z env HOME=$work TERM=vt100 PATH=$PATH zsh -f -i
buf=
# wait_for TEXT: read the terminal until TEXT shows, 20 s at most.
wait_for() {
	local chunk
	float deadline=$(( SECONDS + 20 ))
	while (( SECONDS < deadline )); do
		if zpty -rt z chunk 2>/dev/null; then
			buf+=$chunk
			if [[ $buf == *$1* ]]; then
				buf=${buf#*$1}
				return 0
			fi
		else
			sleep 0.05
		fi
	done
	print -u2 "zsh did not show $1; its terminal ended with: ${(q+)buf[-400,-1]}"
	exit 1
}
# The markers are printed by arithmetic, so the echo of the typed command
# does not match them.
zpty -w z "PS1='%% ' PROMPT_EOL_MARK='' LISTMAX=100000; fpath=(${(q)fdir} \$fpath)"
zpty -w z "autoload -Uz compinit && compinit -u -D; zstyle ':completion:*' list-prompt ''"
zpty -w z 'compadd() {
	if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi
	local -a __m
	builtin compadd -O __m "$@"
	(( $#__m )) && print -rl -- $__m >>| $__zc_out
	builtin compadd "$@"
}'
zpty -w z "print READY\$((40+2))"
wait_for READY42
integer i=0
for line in "$@"; do
	(( i++ ))
	rm -f $work/zc.$i
	zpty -w z "__zc_out=${(q)work}/zc.$i; print SET\$((1000+$i))"
	wait_for SET$((1000 + i))
	zpty -w -n z "$line"$'\t'
	# Kill the line (whatever the completion left on it), then a marker.
	zpty -w z $'\x15'"print DONE\$((2000+$i))"
	wait_for DONE$((2000 + i))
	local -a got
	got=()
	[[ -s $work/zc.$i ]] && got=(${(ou)${(f)"$(<$work/zc.$i)"}})
	print -r -- "$line => ${(j: :)got}"
done
zpty -w z 'exit'
zpty -d z
