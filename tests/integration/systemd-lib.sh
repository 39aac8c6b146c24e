# SPDX-License-Identifier: GPL-2.0-only
#
# A real systemd as PID 1 for the integration tier (issue 8); sourced after
# lib.sh, never run.  Each test boots its own container:
#
#   - a Debian bookworm rootfs (debootstrap --variant=minbase with systemd,
#     dbus and the libraries soakd links against), built once and cached as
#     a tarball in $SOAKD_TEST_CACHE (default /var/cache/soakd-test), keyed
#     by a hash of what goes into it;
#   - unpacked afresh for each test (in /dev/shm when there is room: a
#     tenth of a second), with the plain build
#     (PLAIN_BUILD, made by tools/test) put in by "meson install --destdir",
#     as a user installs soakd;
#   - booted by unshare(1) in new PID, mount, UTS, IPC and cgroup namespaces
#     (the network is the machine's: loopback servers are reachable) and a
#     cgroup of its own, so that cgroup.kill can end everything in it;
#   - driven with systemctl, journalctl and soakctl through nsenter(1).
#
# Every mount lives in the container's private mount namespace and ends
# with it; the cleanup stack powers the container off (SIGRTMIN+4), kills
# what is left through its cgroup, and detaches the loop devices, however
# the test ends.  Nothing in here touches /dev/vda.

need_root "systemd as PID 1 in new namespaces"
need_cmd unshare nsenter mount tar zstd losetup python3 flock findmnt
[[ -n ${PLAIN_BUILD:-} ]] ||
	skip_unless_strict "PLAIN_BUILD is not set: tools/test builds build-plain (meson setup -Dtests=false" \
		"-Dtest_hooks=true) and exports PLAIN_BUILD"
[[ -x $PLAIN_BUILD/daemon/soakd && -x $PLAIN_BUILD/ctl/soakctl ]] ||
	skip_unless_strict "PLAIN_BUILD=$PLAIN_BUILD holds no built soakd and soakctl"
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

CG2_ROOT=$(findmnt -n -t cgroup2 -o TARGET | head -n1)
[[ -n $CG2_ROOT && -w $CG2_ROOT/cgroup.procs ]] ||
	skip_unless_strict "no writable cgroup2 hierarchy: systemd in a container needs one"

# What the rootfs holds; changing it changes the cache key, so the next run
# builds a new one.  The libraries are soakd's and soakctl's (ldd).
CT_SUITE=bookworm
# openssh-server and python3: the fleet test (fleet-ssh.sh) reaches its
# containers as Ansible reaches hosts, over SSH, and runs modules there.
CT_PACKAGES=(systemd systemd-sysv dbus libjansson4 liburing2 libcurl4 libbpf1 libblkid1 zlib1g
	libsystemd0 libssl3 libelf1 openssh-server python3)
# Bumped when the way the rootfs is built or trimmed changes.
CT_RECIPE=1

# The mirror apt uses here, else Debian's.
_ct_mirror() {
	local uri
	uri=$(grep -hsE '^(URIs:|deb) ' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
		/etc/apt/sources.list.d/*.list 2>/dev/null |
		grep -oE 'https?://[^ ]*/debian/?( |$)' | grep -v security | head -n1 | tr -d ' ')
	echo "${SOAKD_TEST_MIRROR:-${uri:-http://deb.debian.org/debian}}"
}

_ct_cache_dir() {
	local dir=${SOAKD_TEST_CACHE:-/var/cache/soakd-test}
	mkdir -p "$dir" 2>/dev/null && [[ -w $dir ]] || return 1
	echo "$dir"
}

# remove_tree DIR: rm -rf that never leaves DIR's file system, after lazily
# unmounting anything still mounted below it (a debootstrap cut short
# leaves /proc and /sys mounted in its target).
remove_tree() {
	local dir=$1 mnt
	[[ -n $dir && -d $dir ]] || return 0
	while read -r mnt; do
		umount -l "$mnt" 2>/dev/null || true
	done < <(findmnt -rn -o TARGET | grep -F -- "$dir/" | sort -r)
	rm -rf --one-file-system -- "$dir"
}

# ensure_rootfs: CT_TARBALL, the cached rootfs, built if missing.  One
# build at a time (flock); built in a temporary directory and renamed into
# place, so that a run cut short never leaves a half tarball.
ensure_rootfs() {
	local cache key mirror tmp rc=0
	cache=$(_ct_cache_dir) || skip_unless_strict "no writable cache directory for the rootfs (SOAKD_TEST_CACHE)"
	key=$(printf '%s\n' "$CT_RECIPE" "$CT_SUITE" "${CT_PACKAGES[@]}" | sha256sum | cut -c1-16)
	CT_TARBALL="$cache/rootfs-$CT_SUITE-$key.tar.zst"
	[[ -s $CT_TARBALL ]] && return 0

	command -v debootstrap >/dev/null ||
		skip_unless_strict "no cached rootfs and no debootstrap to build one (tools/setup-deps installs it)"
	mirror=$(_ct_mirror)
	note "building the rootfs once: debootstrap $CT_SUITE from $mirror (about a minute)"
	local started=$SECONDS
	(
		exec 9>"$cache/rootfs.lock"
		flock -w 900 9 || exit 3
		[[ -s $CT_TARBALL ]] && exit 10
		tmp=$(mktemp -d "$cache/rootfs-build.XXXXXX")
		trap 'remove_tree "$tmp"; rm -f "$CT_TARBALL.tmp.$$"' EXIT
		# debootstrap wants a clean environment (meson's may hold
		# sanitizer options and the like).
		timeout 900 env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
			debootstrap --variant=minbase --include="$(
				IFS=,
				echo "${CT_PACKAGES[*]}"
			)" "$CT_SUITE" "$tmp/root" "$mirror" || exit 2
		# What a test never reads: downloaded packages, apt lists, docs.
		rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* \
			"$tmp/root/usr/share/doc" "$tmp/root/usr/share/man" "$tmp/root/usr/share/locale" \
			"$tmp/root/usr/share/info"
		tar -C "$tmp/root" --numeric-owner -cf - . | zstd -q -T0 -3 >"$CT_TARBALL.tmp.$$" || exit 4
		mv -f "$CT_TARBALL.tmp.$$" "$CT_TARBALL"
	) >"$WORK/debootstrap.log" 2>&1 || rc=$?
	case $rc in
	0) note "rootfs built in $((SECONDS - started)) s: $CT_TARBALL" ;;
	10) note "rootfs built by another run meanwhile ($((SECONDS - started)) s): $CT_TARBALL" ;;
	2) skip "debootstrap cannot build the rootfs here (no Debian mirror?):" \
		"$(grep -E '^[EW]:' "$WORK/debootstrap.log" | tail -n 3 | tr '\n' ' ')" \
		"$(tail -n 2 "$WORK/debootstrap.log" | tr '\n' ' ')" ;;
	3) fail "timed out waiting for another run building the rootfs ($cache/rootfs.lock)" ;;
	*) fail "packing the rootfs failed: $(tail -n 5 "$WORK/debootstrap.log")" ;;
	esac
}

# Units a container of tests has no use for, or that would reach out of it
# (the clock, sysctls, modules, binfmt, timers that fetch or trim).
CT_MASK=(console-getty.service getty.target getty@.service serial-getty@.service
	container-getty@.service systemd-logind.service systemd-sysctl.service
	systemd-binfmt.service proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount
	systemd-modules-load.service kmod-static-nodes.service systemd-random-seed.service
	systemd-remount-fs.service systemd-pstore.service systemd-timesyncd.service
	systemd-networkd.service systemd-networkd.socket systemd-network-generator.service
	systemd-networkd-wait-online.service systemd-hwdb-update.service systemd-firstboot.service
	systemd-machine-id-commit.service systemd-journal-catalog-update.service ldconfig.service
	sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount
	sys-fs-fuse-connections.mount dev-hugepages.mount
	apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer
	e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer
	ssh.service ssh.socket rescue-ssh.target)
# (sshd is for fleet-ssh.sh alone, which boots its containers in network
# namespaces of their own and unmasks it: elsewhere a container shares the
# machine's network and its sshd would listen on the machine's port 22.)

# Containers left by a test run that was SIGKILLed: their cgroup and
# rootfs are named after the test's shell, which is gone.
_ct_reap_stale() {
	local cg pid dir
	for cg in "$CG2_ROOT"/soakd-test.*; do
		[[ -d $cg ]] || continue
		pid=${cg##*.}
		[[ -d /proc/$pid ]] && continue
		[[ -e $cg/cgroup.kill ]] && echo 1 >"$cg/cgroup.kill" 2>/dev/null
		sleep 0.2
		find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	local dev back
	while read -r dev back; do
		[[ $back == /dev/shm/soakd-systemd.*.* ]] || continue
		pid=${back%.*}
		pid=${pid##*.}
		[[ -d /proc/$pid ]] && continue
		losetup -d "$dev" 2>/dev/null && rm -f "$back"
	done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | sed 's/ (deleted)$//')
	for dir in /dev/shm/soakd-ct.*.*.*; do
		[[ -d $dir ]] || continue
		pid=${dir%.*}
		pid=${pid##*.}
		[[ -d /proc/$pid ]] && continue
		remove_tree "$dir"
	done
}

# ct_prepare: unpack the rootfs into CT_ROOT and install soakd into it.
ct_prepare() {
	_ct_reap_stale
	ensure_rootfs
	# In RAM when there is room: unpacking there takes a tenth of a second
	# where the disk takes seconds.
	if (($(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}' || echo 0) > 1024 * 1024)); then
		CT_ROOT=$(mktemp -d "/dev/shm/soakd-ct.$TEST_NAME.$$.XXXXXX")
		on_exit remove_tree "$CT_ROOT"
	else
		CT_ROOT="$WORK/rootfs"
		mkdir "$CT_ROOT"
	fi
	local t0
	t0=$(now_ns)
	zstd -dc "$CT_TARBALL" | tar -C "$CT_ROOT" --numeric-owner -xpf - ||
		fail "cannot unpack $CT_TARBALL"
	# The user's steps: meson install, then the group for the socket.
	env -u DESTDIR meson install -C "$PLAIN_BUILD" --destdir "$CT_ROOT" --no-rebuild --quiet \
		>"$WORK/install.log" 2>&1 || fail "meson install into the rootfs: $(tail "$WORK/install.log")"
	systemd-sysusers --root="$CT_ROOT" >>"$WORK/install.log" 2>&1 ||
		fail "systemd-sysusers in the rootfs: $(tail "$WORK/install.log")"
	local exec_start
	exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$CT_ROOT/lib/systemd/system/soakd.service")
	[[ -x $CT_ROOT$exec_start ]] ||
		fail "soakd.service runs $exec_start, which meson did not install into the rootfs"
	# The configuration the unit runs (sysconfdir depends on the prefix).
	CT_CONFIG=$(sed -n 's/^ExecStart=.* --config \([^ ]*\).*/\1/p' "$CT_ROOT/lib/systemd/system/soakd.service")
	[[ $CT_CONFIG == /* ]] || fail "soakd.service's ExecStart= names no --config FILE"
	local u
	for u in "${CT_MASK[@]}"; do
		ln -sf /dev/null "$CT_ROOT/etc/systemd/system/$u"
	done
	# A machine id of its own: each container's journal is its own.
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$CT_ROOT/etc/machine-id"
	echo >>"$CT_ROOT/etc/machine-id"
	echo "soakd-test" >"$CT_ROOT/etc/hostname"
	mkdir -p "$CT_ROOT/etc/systemd/system/soakd.service.d"
	note "rootfs ready in $((($(now_ns) - t0) / 1000000)) ms (unpack and meson install)"
}

# ct_config TEXT: the configuration soakd.service runs (CT_CONFIG, e.g.
# /usr/local/etc/soakd/soakd.json), before or after boot.
ct_config() {
	mkdir -p "$CT_ROOT${CT_CONFIG%/*}"
	printf '%s\n' "$1" >"$CT_ROOT$CT_CONFIG"
}

# ct_dropin NAME TEXT: /etc/systemd/system/soakd.service.d/NAME.conf.
ct_dropin() {
	printf '%s\n' "$2" >"$CT_ROOT/etc/systemd/system/soakd.service.d/$1.conf"
}

# dev_workload NAME DEVICE RATE [READ_PCT [JSON_MEMBERS]]: a device
# workload of random 4 KiB I/O (70% reads unless told) at RATE ops/s for
# an hour, as JSON.
dev_workload() {
	printf '{"name": "%s", "type": "device", "model": "pattern", "targets": ["%s"],
     "read_pct": %s, "block_size": "4KiB", "access": "random", "queue_depth": 4,
     "rate": %s, "schedule": [{"scale": 1, "for": "1h"}]%s}' "$1" "$2" "${4:-70}" "$3" "${5:+, $5}"
}

# run_config RUN WORKLOAD_JSON...: a run of these workloads, 1 s intervals.
run_config() {
	local run=$1 sep="" w
	shift
	printf '{\n  "run": {"name": "%s", "interval": "1s", "on_finish": "idle"},\n  "workloads": [' "$run"
	for w; do
		printf '%s\n    %s' "$sep" "$w"
		sep=,
	done
	printf '\n  ]\n}\n'
}

# ct_loop VAR SIZE: a loop device with direct I/O over a new file in
# /dev/shm, its path in VAR; ct_boot puts it into the container's /dev.
ct_loop() {
	local backing dev
	backing=$(mktemp "/dev/shm/soakd-systemd.$$.XXXXXX")
	on_exit rm -f "$backing"
	truncate -s "$2" "$backing"
	dev=$(losetup --direct-io=on -f --show "$backing" 2>"$WORK/losetup.err") ||
		skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
	on_exit losetup -d "$dev"
	local st
	st=$(stat -Lc '%t %T' "$dev") || fail "cannot stat $dev"
	ct_node "$dev" "$((16#${st% *}))" "$((16#${st#* }))"
	printf -v "$1" '%s' "$dev"
}

# ct_node PATH MAJOR MINOR: a block device node in the container's /dev
# (made there by mknod: nothing of it exists on this machine).
CT_NODES=()
ct_node() { CT_NODES+=(b "$2" "$3" "$1"); }

# Runs as the container's PID 1 until it execs systemd.  Arguments: the
# rootfs, then "b MAJOR MINOR PATH" quadruples for device nodes.
_CT_INIT='
set -eu
root=$1
shift
mount --bind "$root" "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
# As in any container: the kernel tunables are the machine'"'"'s, read-only.
for p in sys sysrq-trigger; do
	[ -e "$root/proc/$p" ] || continue
	mount --bind "$root/proc/$p" "$root/proc/$p"
	mount -o remount,bind,ro "$root/proc/$p"
done
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
mount -t bpf -o nosuid,nodev,noexec,mode=700 bpf "$root/sys/fs/bpf"
# The unified hierarchy alone, rooted at the container'"'"'s own cgroup: given
# nothing, systemd would mount the machine'"'"'s v1 hierarchies too and make
# its cgroups at their roots, shared with every other container.
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$root/sys/fs/cgroup"
mount -t tmpfs -o nosuid,mode=755,size=16m tmpfs "$root/dev"
for n in null zero full random urandom tty; do
	touch "$root/dev/$n"
	mount --bind "/dev/$n" "$root/dev/$n"
done
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
while (($# >= 4)); do
	mknod -m 0600 "$root$4" "$1" "$2" "$3"
	shift 4
done
cd "$root"
pivot_root . .pivot
umount -l /.pivot
rmdir /.pivot
# Without it, LoadCredential= silently yields an empty directory.
mount --make-rshared /
exec /lib/systemd/systemd --system --show-status=no
'

# ct_boot: boot systemd as PID 1 of the container; CT_PID is its pid here.
# CT_NAME (default: the test's name, no dots) names its cgroup, for a test
# that boots several; CT_NETNS, a network namespace's file (/run/netns/X),
# puts it in that network namespace instead of the machine's.
ct_boot() {
	CT_CGROUP="$CG2_ROOT/soakd-test.${CT_NAME:-$TEST_NAME}.$$"
	local netns=()
	[[ -n ${CT_NETNS:-} ]] && netns=(nsenter "--net=$CT_NETNS")
	mkdir "$CT_CGROUP" || fail "cannot make cgroup $CT_CGROUP"
	if [[ -z ${_ct_teardown_registered:-} ]]; then
		on_exit _ct_teardown
		_ct_teardown_registered=1
	fi
	CT_BOOT_NS=$(now_ns)
	# Where pivot_root puts the old root (removed again at each boot).
	mkdir -p "$CT_ROOT/.pivot"
	# unshare forks PID 1 of the new namespace; --kill-child ends it if
	# unshare itself is killed.  Not spawn(): _ct_teardown powers the
	# container off before anything kills unshare.
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"$CT_CGROUP" ${netns[@]+"${netns[@]}"} unshare --pid --fork --kill-child=SIGKILL --mount --uts --ipc --cgroup \
		--propagation private env -i container=unshare PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "$_CT_INIT" ct-init "$CT_ROOT" ${CT_NODES[@]+"${CT_NODES[@]}"} \
		>>"$WORK/systemd.log" 2>&1 &
	CT_UNSHARE=$!
	wait_until 20 "the container's PID 1 to exec systemd" _ct_find_pid1
	note "systemd is PID 1 of the container (pid $CT_PID here)"
}

_ct_find_pid1() {
	is_alive "$CT_UNSHARE" || fail "the container exited while booting: $(tail -n 20 "$WORK/systemd.log")"
	local child
	child=$(cat "/proc/$CT_UNSHARE/task/$CT_UNSHARE/children" 2>/dev/null) || return 1
	child=${child%% *}
	[[ -n $child && $(cat "/proc/$child/comm" 2>/dev/null) == systemd ]] || return 1
	CT_PID=$child
}

# in_ct COMMAND...: COMMAND inside the container, with a clean environment.
in_ct() {
	nsenter -t "$CT_PID" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
ct_systemctl() { in_ct timeout 90 systemctl --no-pager "$@"; }
ct_journal() { in_ct timeout 60 journalctl --no-pager "$@"; }
ct_soakctl() { in_ct timeout 20 soakctl "$@"; }
# ct_run PROPERTIES... -- COMMAND...: COMMAND as a transient service (its
# own sandbox, not the shell's), output piped back, exit status passed on.
ct_run() {
	local props=()
	while (($#)) && [[ $1 != -- ]]; do
		props+=(-p "$1")
		shift
	done
	shift
	in_ct timeout 60 systemd-run --quiet --wait --pipe --collect ${props[@]+"${props[@]}"} "$@"
}

# ct_wait_running SECONDS: the system has finished booting.
ct_wait_running() {
	local state
	wait_until "$1" "systemd's private bus socket" test -S "$(ct_path /run/systemd/private)"
	state=$(in_ct timeout "$1" systemctl is-system-running --wait 2>&1) || true
	case $state in
	running) ;;
	degraded) note "system degraded: $(ct_systemctl --failed --plain --no-legend 2>&1 | tr '\n' ' ')" ;;
	*) fail "the container did not finish booting: '$state'; $(ct_systemctl --failed 2>&1)" ;;
	esac
	note "booted to '$state' in $((($(now_ns) - CT_BOOT_NS) / 1000000)) ms"
}

# soakd.service's properties: ct_prop NAME.
# ct_intervals LOG [WORKLOAD]: how many interval records the run's
# intervals.log holds (of WORKLOAD); 0 before it exists.
ct_intervals() {
	local pattern='"type":"interval"' n
	[[ -n ${2:-} ]] && pattern+=",\"workload\":\"$2\""
	n=$(grep -c "$pattern" "$1" 2>/dev/null) || true
	echo "${n:-0}"
}
ct_prop() { ct_systemctl show -p "$1" --value soakd.service; }
ct_invocation() { ct_prop InvocationID; }
ct_main_pid() { ct_prop MainPID; }
ct_active_is() { [[ $(ct_prop ActiveState 2>/dev/null) == "$1" ]]; }

# ct_cursor: the cursor of the journal's last entry, for --after-cursor=.
ct_cursor() { ct_journal -n 1 -o export | sed -n 's/^__CURSOR=//p'; }

# ct_journal_json FILE MATCHES...: the container's journal as JSON lines.
ct_journal_json() {
	local out=$1
	shift
	ct_journal -o json "$@" >"$out" 2>"$WORK/journalctl.err" ||
		fail "journalctl $*: $(cat "$WORK/journalctl.err")"
}

# ct_path PATH: where PATH inside the running container is seen from here.
ct_path() { echo "/proc/$CT_PID/root$1"; }

# ct_debug: what a failure report shows about the container.
ct_debug() {
	[[ -n ${CT_PID:-} ]] && is_alive "$CT_PID" || return 0
	{
		echo "--- systemctl status soakd.service soakd.socket ---"
		ct_systemctl status soakd.service soakd.socket 2>&1 | head -n 40
		echo "--- journal of soakd.service (last 40) ---"
		ct_journal -u soakd.service -n 40 2>&1
	} >&2 || true
}

# Power off (as a host does: SIGRTMIN+4 asks PID 1 to), then kill whatever
# is left through the cgroup.  Logs of the shutdown go to systemd.log.
_ct_teardown() {
	local i
	# On meson's timeout (SIGTERM, then SIGKILL 0.5 s later) there is no
	# time for a clean power-off: the cgroup is killed at once.
	if [[ -z ${_CT_SIGNALLED:-} && -n ${CT_PID:-} ]] && is_alive "$CT_PID"; then
		kill -RTMIN+4 "$CT_PID" 2>/dev/null || true
		for ((i = 0; i < 300; i++)); do
			is_alive "$CT_UNSHARE" || break
			sleep 0.1
		done
		if is_alive "$CT_UNSHARE"; then
			echo "# the container did not power off in 30 s: killing it" >&2
		fi
	fi
	if [[ -d ${CT_CGROUP:-} ]]; then
		# (Also called with set -e on: nothing here may fail the test.)
		{ [[ -e $CT_CGROUP/cgroup.kill ]] && echo 1 >"$CT_CGROUP/cgroup.kill"; } 2>/dev/null || true
		{ [[ -n ${CT_PID:-} ]] && kill -KILL "$CT_PID"; } 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			[[ -z $(find "$CT_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null) ]] && break
			sleep 0.1
		done
		find "$CT_CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		if [[ -d $CT_CGROUP ]]; then
			echo "# cgroup $CT_CGROUP could not be removed" >&2
		fi
	fi
	if [[ -n ${CT_UNSHARE:-} ]]; then
		wait "$CT_UNSHARE" 2>/dev/null || true
	fi
	return 0
}
trap '_CT_SIGNALLED=1; exit 143' TERM
trap '_CT_SIGNALLED=1; exit 130' INT

# ct_poweroff SECONDS: power the container off and wait for it; its
# shutdown log in systemd.log.
ct_poweroff() {
	kill -RTMIN+4 "$CT_PID"
	wait_until "$1" "the container to power off" not_alive "$CT_UNSHARE"
	_ct_teardown
	CT_PID=
}

# A failure shows the unit's status and journal besides the test's logs.
eval "_lib_show_logs() $(declare -f show_logs | tail -n +2)"
show_logs() {
	_lib_show_logs
	ct_debug
}
