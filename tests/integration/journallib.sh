# SPDX-License-Identifier: GPL-2.0-only
#
# A private journald for a test's inner script, the one it runs with
# "unshare --mount --propagation private": sourced there, never run.  The
# journal's files go to $JOURNAL_DIR (outside the namespace, for
# journalctl -D afterwards); journald's own output to $WORK/journald.log.
# Needs WORK, JOURNAL_DIR and JOURNALD in the environment.

# journald_start: /run/systemd and /var/log/journal private, /run/log
# bound to $JOURNAL_DIR, journald started and listening (else exit 2);
# it is stopped if the script exits before journald_stop.
journald_start() {
	local i
	mount -t tmpfs tmpfs /run/systemd
	mkdir /run/systemd/journal
	mount --bind "$JOURNAL_DIR" /run/log
	mount -t tmpfs tmpfs /var/log/journal
	"$JOURNALD" >"$WORK/journald.log" 2>&1 &
	JOURNALD_PID=$!
	trap 'kill -TERM $JOURNALD_PID 2>/dev/null; wait $JOURNALD_PID 2>/dev/null' EXIT
	for ((i = 0; i < 100; i++)); do
		[[ -S /run/systemd/journal/socket ]] && break
		sleep 0.1
	done
	[[ -S /run/systemd/journal/socket ]] || { echo "journald did not start" >&2; exit 2; }
}

# journald_stop: journald syncs its files when it stops; waits for it
# (bounded) before the namespace and its mounts go away.
journald_stop() {
	local i
	kill -TERM "$JOURNALD_PID"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$JOURNALD_PID" 2>/dev/null || break
		[[ $(awk '{print $3}' "/proc/$JOURNALD_PID/stat" 2>/dev/null) == Z ]] && break
		sleep 0.1
	done
	wait "$JOURNALD_PID" || true
	trap - EXIT
}
