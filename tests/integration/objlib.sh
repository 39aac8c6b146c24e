# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the object workload tests (obj-*.sh); sourced after lib.sh, never
# run.  Real servers on 127.0.0.1, data in the test's work directory:
#
#   MinIO, the S3 server: built once with "go install" (about 5 minutes),
#   then cached in $SOAKD_TEST_CACHE/bin (default /var/cache/soakd-test/bin,
#   else ~/.cache/soakd-test/bin).  A test skips, saying why, only when no
#   binary exists and none can be built here (no Go, no module proxy).
#
#   nginx with its WebDAV module (dav_methods PUT DELETE), Debian's package,
#   for plain HTTP.

need_cmd curl python3

MINIO_USER=soakadmin
# Random per test, so that "the secret never appears" can be checked.
MINIO_SECRET="soak-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

_obj_cache_dir() {
	local dir=${SOAKD_TEST_CACHE:-/var/cache/soakd-test}
	if mkdir -p "$dir/bin" 2>/dev/null && [[ -w $dir/bin ]]; then
		echo "$dir"
	else
		dir="${XDG_CACHE_HOME:-$HOME/.cache}/soakd-test"
		mkdir -p "$dir/bin" && echo "$dir"
	fi
}

_find_go() {
	local go
	for go in "$(command -v go 2>/dev/null)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
		[[ -n $go && -x $go ]] && {
			echo "$go"
			return 0
		}
	done
	return 1
}

# ensure_minio: sets MINIO to a MinIO server binary, building it if needed.
ensure_minio() {
	local cache candidate go
	cache=$(_obj_cache_dir) || skip_unless_strict "no writable cache directory for the MinIO binary"
	for candidate in "${MINIO_BIN:-}" "$cache/bin/minio" "$(command -v minio 2>/dev/null)" \
		"$HOME/go/bin/minio"; do
		if [[ -n $candidate && -x $candidate ]]; then
			MINIO=$candidate
			return 0
		fi
	done
	go=$(_find_go) || skip "MinIO is not installed and there is no Go toolchain to build it" \
		"(go install github.com/minio/minio@latest)"
	note "building MinIO: go install github.com/minio/minio@latest (once, about 5 minutes;" \
		"cached in $cache/bin)"
	# One build at a time, even if several test runs start together.
	if ! (
		flock 9
		[[ -x $cache/bin/minio ]] ||
			GOBIN="$cache/bin" GOFLAGS=-mod=mod timeout 840 "$go" install \
				github.com/minio/minio@latest
	) 9>"$cache/minio.lock" >"$WORK/minio-build.log" 2>&1; then
		skip "cannot build MinIO here: $(tail -n 3 "$WORK/minio-build.log" | tr '\n' ' ')"
	fi
	MINIO=$cache/bin/minio
}

# refused_at_start NAME PATTERN WHAT: soakd on $WORK/NAME.json must refuse
# to start (exit status 1), its log ($WORK/NAME.log) matching PATTERN.
refused_at_start() {
	local name=$1 pattern=$2 what=$3 rc=0
	timeout 30 "$SOAKD" --config "$WORK/$name.json" --socket "$SOCK" \
		--state-dir "$WORK/state-$name" --no-table >"$WORK/$name.log" 2>&1 || rc=$?
	((rc == 1)) && grep -q -- "$pattern" "$WORK/$name.log" ||
		fail "$what: soakd exited $rc: $(cat "$WORK/$name.log")"
}

# start_fault_server [MODE]: fault_server.py on a free port of 127.0.0.1,
# in MODE (default "ok"); MODE is then its mode file (write another mode
# into it), PORT its port.
start_fault_server() {
	local mode=${1:-ok}
	MODE="$WORK/mode"
	echo "$mode" >"$MODE"
	spawn "$WORK/server.log" python3 "$(dirname "${BASH_SOURCE[0]}")/fault_server.py" 0 "$MODE"
	wait_until 10 "the fault server" _fault_server_port_known
	PORT=$(head -1 "$WORK/server.log")
}
_fault_server_port_known() { [[ -s $WORK/server.log ]]; }

# free_port: a TCP port on 127.0.0.1 nobody listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_minio DATA_DIR PORT [ENV=VALUE...]: a single-drive MinIO on
# 127.0.0.1:PORT; its pid in MINIO_PID.  Extra MinIO options in MINIO_ARGS.
start_minio() {
	local data=$1 port=$2
	shift 2
	mkdir -p "$data"
	spawn "$WORK/minio.log" env MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_SECRET" \
		MINIO_BROWSER=off MINIO_UPDATE=off "$@" "$MINIO" server --quiet \
		--address "127.0.0.1:$port" --console-address "127.0.0.1:$(free_port)" \
		${MINIO_ARGS[@]+"${MINIO_ARGS[@]}"} "$data"
	MINIO_PID=$SPAWNED
	MINIO_PORT=$port
	wait_until 60 "MinIO on port $port" curl -sfk -o /dev/null \
		"${MINIO_SCHEME:-http}://127.0.0.1:$port/minio/health/live"
}

# s3 CURL_ARGS...: curl signing as the MinIO root user.
s3() {
	curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$MINIO_USER:$MINIO_SECRET" \
		-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# s3_list BUCKET PREFIX: "KEY SIZE" lines of every object under PREFIX.
s3_list() {
	python3 - "$1" "$2" "$MINIO_PORT" "$MINIO_USER:$MINIO_SECRET" <<'PY'
import html, re, subprocess, sys, urllib.parse
bucket, prefix, port, user = sys.argv[1:]
token = None
while True:
    query = {"list-type": "2", "prefix": prefix}
    if token:
        query["continuation-token"] = token
    # SigV4 wants the query sorted and fully escaped.
    url = f"http://127.0.0.1:{port}/{bucket}/?" + urllib.parse.urlencode(
        sorted(query.items()), quote_via=urllib.parse.quote, safe="")
    page = subprocess.run(["curl", "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", user,
                           "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", url],
                          capture_output=True, text=True, check=True).stdout
    if "<ListBucketResult" not in page:
        sys.exit(f"listing failed: {page}")
    for key, size in re.findall(r"<Key>(.*?)</Key>.*?<Size>(\d+)</Size>", page):
        print(html.unescape(key), size)
    m = re.search(r"<NextContinuationToken>(.*?)</NextContinuationToken>", page)
    if "<IsTruncated>true</IsTruncated>" not in page or not m:
        break
    token = html.unescape(m.group(1))
PY
}

# write_creds FILE [SECRET]: an AWS shared-credentials file, mode 0600.
write_creds() {
	(
		umask 077
		printf '# soakd test\n[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
			"$MINIO_USER" "${2:-$MINIO_SECRET}" >"$1"
	)
}

# make_cert DIR: a self-signed certificate for localhost and 127.0.0.1,
# DIR/public.crt and DIR/private.key (the names MinIO's --certs-dir wants).
make_cert() {
	need_cmd openssl
	mkdir -p "$1"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		-keyout "$1/private.key" -out "$1/public.crt" >"$WORK/openssl.log" 2>&1 ||
		fail "openssl could not make a certificate: $(cat "$WORK/openssl.log")"
}

# start_nginx DIR PORT [TLS_PORT CERT_DIR]: nginx serving DIR/dav with
# WebDAV PUT and DELETE on 127.0.0.1:PORT, and over TLS with HTTP/2 on
# TLS_PORT.  One process, as the test's user.  NGINX_HTTP_EXTRA: more
# directives for its http block (e.g. "keepalive_timeout 1s;").
start_nginx() {
	local dir=$1 port=$2 tls_port=${3:-} certs=${4:-} nginx
	nginx=$(command -v nginx || echo /usr/sbin/nginx)
	[[ -x $nginx ]] || skip_unless_strict "needs nginx (Debian's nginx package)"
	mkdir -p "$dir/dav" "$dir/tmp"
	local tls=""
	if [[ -n $tls_port ]]; then
		tls="server {
        listen 127.0.0.1:$tls_port ssl http2;
        ssl_certificate $certs/public.crt;
        ssl_certificate_key $certs/private.key;
        root $dir/dav;
        location / { dav_methods PUT DELETE; create_full_put_path on; }
    }"
	fi
	cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_max_body_size 0;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_requests 100000;
    ${NGINX_HTTP_EXTRA:-}
    server {
        listen 127.0.0.1:$port;
        root $dir/dav;
        location / { dav_methods PUT DELETE; create_full_put_path on; }
    }
    $tls
}
EOF
	"$nginx" -t -p "$dir" -c "$dir/nginx.conf" >"$WORK/nginx-t.log" 2>&1 ||
		skip_unless_strict "nginx cannot run this WebDAV configuration: $(tail -n 2 "$WORK/nginx-t.log")"
	spawn "$WORK/nginx.log" "$nginx" -p "$dir" -c "$dir/nginx.conf"
	NGINX_PID=$SPAWNED
	wait_until 20 "nginx on port $port" curl -s -o /dev/null "http://127.0.0.1:$port/"
}

# dump_json FILE: soakctl dump --format json into FILE.
dump_json() { ctl dump --format json >"$1" || fail "soakctl dump failed: $(cat "$1")"; }

# dump_and_stop FILE: the run's dump into FILE, then soakd stopped, which
# must exit 0.
dump_and_stop() {
	dump_json "$1"
	stop_soakd 30
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
}

# op_field WORKLOAD OP FIELD: a number from the dump, e.g.
# op_field w get corrupt; op_field w get errors_by_class.connect.
op_field() {
	ctl dump --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
v = next(w for w in d["workloads"] if w["name"] == sys.argv[1])["ops"][sys.argv[2]]
for part in sys.argv[3].split("."):
    v = v[part]
print(v)' "$1" "$2" "$3"
}

# op_at_least WORKLOAD OP FIELD N: for wait_until.
op_at_least() {
	local v
	v=$(op_field "$1" "$2" "$3" 2>/dev/null) || return 1
	((v >= $4))
}

# secret_absent FILE...: the MinIO secret appears in none of them.
secret_absent() {
	local f
	for f; do
		[[ -e $f ]] || continue
		if grep -qF -- "$MINIO_SECRET" "$f"; then
			fail "the secret appears in $(basename "$f")"
		fi
	done
}

# start_versions_loop MODE: s3_versions_loop.py (a fake S3 server whose
# listings misbehave as MODE says) on a free port, with $MODE the file
# that holds the mode (write it to change it), $COUNT its count of
# listings served, $EP its address and $CREDS credentials it accepts.
start_versions_loop() {
	MODE="$WORK/mode"
	COUNT="$WORK/listings"
	echo "$1" >"$MODE"
	spawn "$WORK/server.log" python3 "$SRCDIR/tests/integration/s3_versions_loop.py" "$MODE" "$COUNT"
	_versions_port_known() { [[ -s $WORK/server.log ]]; }
	wait_until 10 "the S3 server" _versions_port_known
	EP="http://127.0.0.1:$(head -1 "$WORK/server.log")"
	CREDS="$WORK/s3.credentials"
	write_creds "$CREDS"
}
