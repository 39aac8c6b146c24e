# SPDX-License-Identifier: GPL-2.0-only
# bash completion for soakctl: commands, options, and the workload and op
# names of the soakd that runs (from "soakctl status --json"; nothing when
# none answers).  Needs only bash, not the bash-completion package.

# The names the running soakd knows: _soakctl_names workloads|ops WORDS...
_soakctl_names()
{
	local what=$1 socket=() i
	shift
	for ((i = 1; i < $#; i++)); do
		if [[ ${!i} == --socket ]]; then
			local j=$((i + 1))
			socket=(--socket "${!j}")
		elif [[ ${!i} == --socket=* ]]; then
			socket=(--socket "${!i#--socket=}")
		fi
	done
	local json
	json=$(command soakctl "${socket[@]}" --timeout 2 status --json 2>/dev/null) || return 0
	if [[ $what == workloads ]]; then
		# soakctl prints a workload's name at six spaces, its ops' at eight.
		sed -n 's/^      "name": "\([^"]*\)",*$/\1/p' <<<"$json"
	else
		# The members of a workload's "ops" object only (the kernel's
		# series have an "ops" object of their own, deeper).
		awk '/^      "ops": \{$/ {o = 1; next} o && /^      [}]/ {o = 0} o && /^        "[^"]*": \{$/ {sub(/^ *"/, ""); sub(/": \{$/, ""); print}' <<<"$json" | sort -u
	fi
}

_soakctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="status start stop trace reload dump merge report watch plot cmp"
	local global="--socket --timeout --help --version"
	local cmd="" i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --timeout | --format | --slice | --thresholds | --limits | --workload | \
			--op | --since | --until | --run-dir | --output | --interval | --html | --min-change)
			((i++)) ;;
		-*) ;;
		*)
			cmd=${COMP_WORDS[i]}
			break
			;;
		esac
	done

	case $prev in
	--socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--run-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--output | --html)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--format)
		if [[ $cmd == cmp ]]; then
			COMPREPLY=($(compgen -W "text json" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "json csv hdr" -- "$cur"))
		fi
		return
		;;
	--workload)
		COMPREPLY=($(compgen -W "$(_soakctl_names workloads "${COMP_WORDS[@]}")" -- "$cur"))
		return
		;;
	--op)
		COMPREPLY=($(compgen -W "$(_soakctl_names ops "${COMP_WORDS[@]}")" -- "$cur"))
		return
		;;
	--timeout | --slice | --thresholds | --limits | --since | --until | --interval | --min-change)
		return
		;;
	esac

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi

	local opts="" words=""
	case $cmd in
	status) opts="--json" ;;
	start)
		opts="--new-run"
		words=$(_soakctl_names workloads "${COMP_WORDS[@]}")
		;;
	stop) words=$(_soakctl_names workloads "${COMP_WORDS[@]}") ;;
	trace) words="on off blk tcp" ;;
	dump) opts="--format --since --until --slice --workload --op --service --run-dir" ;;
	merge) opts="--format" ;;
	report) opts="--slice --thresholds --limits --workload --op --service --run-dir --html" ;;
	watch) opts="--interval" ;;
	plot) opts="--output --workload --op --since --until --slice --run-dir" ;;
	cmp) opts="--format --html --slice --min-change" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts $global" -- "$cur"))
	elif [[ $cmd == merge || $cmd == plot || $cmd == cmp ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
}
complete -F _soakctl soakctl
