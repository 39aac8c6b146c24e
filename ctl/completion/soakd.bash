# SPDX-License-Identifier: GPL-2.0-only
# bash completion for soakd: its options, configuration files and devices.

_soakd()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}

	case $prev in
	--config | --check-config)
		COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
		return
		;;
	--socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--state-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--prep)
		COMPREPLY=($(compgen -f -- "${cur:-/dev/}"))
		return
		;;
	esac
	COMPREPLY=($(compgen -W "--config --check-config --no-targets --socket --state-dir
		--no-table --new-run --prep --destroy-data --version --help" -- "$cur"))
}
complete -F _soakd soakd
