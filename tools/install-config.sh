#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# meson install script: install-config.sh SOURCE DEST
#
# Installs SOURCE (the default configuration) as DEST (the absolute path
# soakd.service runs, e.g. /etc/soakd/soakd.json) unless a file is already
# there: a configuration someone edited must survive every reinstall and
# upgrade, which install_data() would not allow.  DEST may lie outside the
# prefix (/etc with --prefix=/usr), so it goes under $DESTDIR as it is
# rather than under $MESON_INSTALL_DESTDIR_PREFIX.  "meson uninstall" leaves
# the file, as a package manager leaves a configuration file.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 SOURCE DEST" >&2
	exit 64
fi
src=$1 dest=$2
case $dest in
/*) ;;
*)
	echo "install-config.sh: $dest is not an absolute path" >&2
	exit 64
	;;
esac

# meson sets DESTDIR (made absolute) when installing with --destdir or
# DESTDIR; without it, it is the part of MESON_INSTALL_DESTDIR_PREFIX in
# front of the prefix, as meson joins them.
destdir=${DESTDIR-}
if [ -z "$destdir" ] && [ -n "${MESON_INSTALL_DESTDIR_PREFIX-}" ] &&
	[ -n "${MESON_INSTALL_PREFIX-}" ]; then
	destdir=${MESON_INSTALL_DESTDIR_PREFIX%"$MESON_INSTALL_PREFIX"}
fi
target=$destdir$dest

say() {
	[ -n "${MESON_INSTALL_QUIET-}" ] || echo "$@"
}

if [ -n "${MESON_INSTALL_DRY_RUN-}" ]; then
	say "Would install $src as $target unless it exists"
	exit 0
fi
# A dangling symlink counts as a file someone put there.
if [ -e "$target" ] || [ -L "$target" ]; then
	say "Keeping $target (an existing configuration is never replaced)"
	exit 0
fi

dir=$(dirname "$target")
mkdir -p "$dir"
# Written under a temporary name and renamed, so that an interrupted
# install leaves no half file that the next one would keep.
tmp="$dir/.soakd.json.install.$$"
trap 'rm -f "$tmp"' EXIT
cp "$src" "$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$target"
trap - EXIT
say "Installing $src to $target"
