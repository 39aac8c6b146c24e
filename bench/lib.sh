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

# need_packages CMD:PACKAGE...: installs (Debian packages, bench-only) the
# packages whose command is missing, or dies.
need_packages() {
	local pair missing=()
	for pair; do
		command -v "${pair%%:*}" >/dev/null || [[ -x /usr/sbin/${pair%%:*} ]] ||
			missing+=("${pair#*:}")
	done
	((${#missing[@]})) || return 0
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
		die "cannot install ${missing[*]}"
}

# start_nginx DIR PORT: an nginx of one worker on 127.0.0.1:PORT serving
# DIR/dav, with WebDAV PUT and DELETE and endless keep-alive, its files in
# DIR; its pid in NGINX_PID (the caller stops it).  Waits until it answers.
start_nginx() {
	local dir=$1 port=$2 i nginx
	nginx=$(command -v nginx || echo /usr/sbin/nginx)
	mkdir -p "$dir/dav" "$dir/tmp"
	cat >"$dir/nginx.conf" <<-EOF
	daemon off;
	master_process off;
	worker_processes 1;
	pid $dir/nginx.pid;
	error_log $dir/error.log;
	events { worker_connections 4096; }
	http {
	    access_log off;
	    client_max_body_size 0;
	    client_body_temp_path $dir/tmp/body;
	    proxy_temp_path $dir/tmp/proxy;
	    fastcgi_temp_path $dir/tmp/fastcgi;
	    uwsgi_temp_path $dir/tmp/uwsgi;
	    scgi_temp_path $dir/tmp/scgi;
	    keepalive_requests 10000000;
	    keepalive_timeout 300s;
	    server {
	        listen 127.0.0.1:$port;
	        root $dir/dav;
	        location / { dav_methods PUT DELETE; create_full_put_path on; }
	    }
	}
	EOF
	"$nginx" -t -p "$dir" -c "$dir/nginx.conf" >"$dir/nginx-t.log" 2>&1 || die "nginx: $(cat "$dir/nginx-t.log")"
	"$nginx" -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx.log" &
	NGINX_PID=$!
	for ((i = 0; i < 100; i++)); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
		kill -0 "$NGINX_PID" 2>/dev/null || die "nginx exited: $(cat "$dir/nginx.log" "$dir/error.log" 2>/dev/null)"
		sleep 0.1
	done
	die "nginx does not answer on port $port"
}
