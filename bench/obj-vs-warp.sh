#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd's object engine against MinIO's warp on the same local MinIO: the
# same op (GET, PUT), object size (4 KiB, 1 MiB), concurrency and duration,
# closed loop, the two tools interleaved round after round.  Prints per run
# and as medians: obj/s, MiB/s, p50/p99 latency, client CPU seconds per 1000
# ops, and soakd/warp ratios.  Not part of the test suite.
#
#   bench/obj-vs-warp.sh [--duration 20s] [--rounds 3] [--concurrency 16]
#                        [--threads 1] [--sizes "4KiB 1MiB"] [--ops "get put"]
#                        [--verify on|off]  (soakd's "verify": every GET checked
#                        against its ledger, every PUT recorded; on by default,
#                        as issue 16 compares; warp checks no payload)
#
# --threads is soakd's "threads" (libcurl multi handles sharing the
# concurrency); warp runs as Go schedules it.
#
# Needs: soakd, built here in build-bench/ (BENCH_BUILD_DIR=... for another
# build, BENCH_NO_BUILD=1 to use it as it is), and MinIO and warp
# v1.3.1 binaries: taken from $MINIO_BIN / $WARP_BIN, the test cache
# (/var/cache/soakd-test/bin) or PATH, else built with Go as
# go install (MinIO, ~5 min) and go build of the v1.3.1 module (warp, ~1 min).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
duration=20s rounds=3 concurrency=16 threads=1 sizes="4KiB 1MiB" ops="get put" verify=on
while (($#)); do
	case $1 in
	--duration) duration=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--concurrency) concurrency=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--ops) ops=$2; shift 2 ;;
	--verify) verify=$2; shift 2 ;;
	*) echo "usage: $0 [--duration D] [--rounds N] [--concurrency N] [--threads N] [--sizes \"4KiB 1MiB\"] [--ops \"get put\"] [--verify on|off]" >&2; exit 64 ;;
	esac
done
[[ $verify == on || $verify == off ]] || { echo "obj-vs-warp: --verify takes on or off, not '$verify'" >&2; exit 64; }

cache=${SOAKD_TEST_CACHE:-/var/cache/soakd-test}
mkdir -p "$cache/bin" 2>/dev/null || cache="${XDG_CACHE_HOME:-$HOME/.cache}/soakd-test"
mkdir -p "$cache/bin"
go=$(command -v go || echo /usr/local/go/bin/go)

find_bin() { # NAME ENV_VALUE
	local c
	for c in "$2" "$cache/bin/$1" "$(command -v "$1" 2>/dev/null)" "$HOME/go/bin/$1"; do
		[[ -n $c && -x $c ]] && { echo "$c"; return 0; }
	done
	return 1
}

minio=$(find_bin minio "${MINIO_BIN:-}") || {
	echo "bench: building MinIO (go install github.com/minio/minio@latest, ~5 min)" >&2
	GOBIN="$cache/bin" GOFLAGS=-mod=mod "$go" install github.com/minio/minio@latest
	minio=$cache/bin/minio
}
warp=$(find_bin warp "${WARP_BIN:-}") || {
	# warp@latest and v1.4-v1.8 do not build from this module proxy; v1.3.1 does.
	echo "bench: building warp v1.3.1 (~1 min)" >&2
	dir=$(GONOSUMDB=github.com/minio/warp GOFLAGS=-mod=mod "$go" mod download -json \
		github.com/minio/warp@v1.3.1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
	(cd "$dir" && GONOSUMDB=github.com/minio/warp GOFLAGS=-mod=mod "$go" build -o "$cache/bin/warp" .)
	warp=$cache/bin/warp
}

# A release build without tests, as the other benchmarks use.
build=${BENCH_BUILD_DIR:-$repo/build-bench}
if [[ -z ${BENCH_NO_BUILD:-} ]]; then
	[[ -f $build/meson-private/coredata.dat ]] ||
		meson setup "$build" --buildtype=release -Dtests=false >/dev/null
	ninja -C "$build" >/dev/null
fi

work=$(mktemp -d /var/tmp/soakd-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$build/daemon/soakd" "$build/ctl/soakctl" "$minio" "$warp" "$work" \
	"$duration" "$rounds" "$concurrency" "$threads" "$sizes" "$ops" "$verify" <<'PY'
import atexit, json, os, re, signal, socket, statistics, subprocess, sys, time

soakd, soakctl, minio, warp, work, duration, rounds, conc, threads, sizes, ops, verify = sys.argv[1:]
rounds, conc, threads = int(rounds), int(conc), int(threads)
sizes, ops = sizes.split(), ops.split()
USER, SECRET = "benchadmin", "bench-secret-" + os.urandom(6).hex()
TICK = os.sysconf("SC_CLK_TCK")

def parse_duration(text):
    m = re.fullmatch(r"(\d+)(s|m)", text)
    return int(m.group(1)) * (60 if m.group(2) == "m" else 1)

def parse_size(text):
    m = re.fullmatch(r"(\d+)(KiB|MiB)", text)
    return int(m.group(1)) * (1024 if m.group(2) == "KiB" else 1024 * 1024)

secs = parse_duration(duration)

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK

port = free_port()
env = dict(os.environ, MINIO_ROOT_USER=USER, MINIO_ROOT_PASSWORD=SECRET, MINIO_BROWSER="off")
server = subprocess.Popen([minio, "server", "--quiet", "--address", f"127.0.0.1:{port}",
                           "--console-address", f"127.0.0.1:{free_port()}", f"{work}/minio"],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def stop_server():
    if server.poll() is None:
        server.terminate()
        server.wait(30)
# Also when the script fails (sys.exit): MinIO must not outlive it.
atexit.register(stop_server)
for _ in range(300):
    if subprocess.run(["curl", "-sf", "-o", "/dev/null", f"http://127.0.0.1:{port}/minio/health/live"]).returncode == 0:
        break
    time.sleep(0.1)
else:
    stop_server()
    sys.exit("MinIO did not start")

creds = f"{work}/creds"
with open(creds, "w") as f:
    f.write(f"[default]\naws_access_key_id = {USER}\naws_secret_access_key = {SECRET}\n")
os.chmod(creds, 0o600)

def unit_ms(value, unit):
    return float(value) * {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1, "s": 1000}[unit]

def run_warp(op, size, tag):
    args = [warp, op, "--host", f"127.0.0.1:{port}", "--access-key", USER, "--secret-key", SECRET,
            "--bucket", f"warp-{tag}", "--obj.size", size, "--concurrent", str(conc),
            "--duration", duration, "--no-color", "--noclear", "--benchdata", f"{work}/warp-{tag}"]
    if op == "get":
        args += ["--objects", "100"]
    else:
        # Like soakd's UNSIGNED-PAYLOAD: no client-side SHA-256 of each body.
        args += ["--disable-sha256-payload"]
    before = os.times()
    out = subprocess.run(args, capture_output=True, text=True, cwd=work)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    text = out.stdout + out.stderr
    m = re.search(r"Report: \w+\. Concurrency: \d+\. Ran: (\d+)s\s*\n \* Average: ([\d.]+) MiB/s, ([\d.]+) obj/s", text)
    q = re.search(r"Reqs: Avg: [^,]+, 50%: ([\d.]+)(\S+?), 90%: [^,]+, 99%: ([\d.]+)(\S+?),", text)
    if not m or not q:
        sys.exit(f"cannot read warp's report:\n{text[-3000:]}")
    ran, objs = int(m.group(1)), float(m.group(3))
    # Every op of the run (prefill included), as for soakd.
    total = objs * secs + (100 if op == "get" else 0)
    return {"obj_s": objs, "mib_s": float(m.group(2)), "p50": unit_ms(q.group(1), q.group(2)),
            "p99": unit_ms(q.group(3), q.group(4)), "cpu_per_1000": cpu / total * 1000}

def ctl(sock, *args):
    return subprocess.run([soakctl, "--socket", sock, *args], capture_output=True, text=True)

def run_soakd(op, size, tag):
    sock = f"{work}/soakd-{tag}.sock"
    cfg = {"run": {"name": f"bench-{tag}", "duration": duration, "interval": "1s", "on_finish": "idle"},
           "workloads": [{"name": "bench", "type": "object", "protocol": "s3",
                          "endpoint": f"http://127.0.0.1:{port}", "bucket": f"soakd-{tag}",
                          "create_bucket": True, "credentials": {"file": creds},
                          "concurrency": conc, "threads": threads, "objects": 100 if op == "get" else 1000000,
                          "size": size, "mix": {op: 100}, "cleanup": False,
                          "verify": verify == "on",
                          # warp puts each of its concurrent workers' objects
                          # under a prefix of its own; so does this.
                          "prefixes": conc}]}
    path = f"{work}/soakd-{tag}.json"
    json.dump(cfg, open(path, "w"))
    proc = subprocess.Popen([soakd, "--config", path, "--socket", sock, "--state-dir",
                             f"{work}/state-{tag}", "--no-table"],
                            stdout=subprocess.DEVNULL, stderr=open(f"{work}/soakd-{tag}.log", "w"))
    deadline = time.time() + secs + 120
    while time.time() < deadline:
        r = ctl(sock, "status", "--json")
        if r.returncode == 0 and json.loads(r.stdout)["workloads"][0]["state"] != "running":
            break
        time.sleep(0.2)
    cpu = cpu_seconds(proc.pid)
    r = ctl(sock, "dump", "--format", "json")
    if r.returncode != 0 or proc.poll() is not None:
        log = open(f"{work}/soakd-{tag}.log").read()[-3000:]
        sys.exit(f"soakd {tag}: no dump (soakd exit status {proc.poll()}, soakctl: "
                 f"{r.stderr.strip()}); the end of its log:\n{log}")
    dump = json.loads(r.stdout)
    csv = ctl(sock, "dump", "--format", "csv").stdout
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    o = dump["workloads"][0]["ops"]
    # Throughput over the whole intervals of the measured phase, the
    # first and last (partial) ones left out, as warp trims its own.
    rows = [line.split(",") for line in csv.splitlines()[1:]]
    header = csv.splitlines()[0].split(",")
    col = {name: i for i, name in enumerate(header)}
    mine = [r for r in rows if r[col["op"]] == op and int(r[col["count"]]) > 0]
    inner = mine[1:-1] or mine
    count = sum(int(r[col["count"]]) for r in inner)
    span = sum(float(r[col["end_s"]]) - float(r[col["start_s"]]) for r in inner)
    objs = count / span
    total = o[op]["count"] + o.get("prefill", {}).get("count", 0)
    assert o[op]["errors"] == 0 and o[op]["corrupt"] == 0, o[op]
    return {"obj_s": objs, "mib_s": objs * parse_size(size) / 2**20,
            "p50": o[op]["latency_us"]["p50"] / 1000, "p99": o[op]["latency_us"]["p99"] / 1000,
            "cpu_per_1000": cpu / total * 1000}

fields = [("obj_s", "obj/s", "{:9.0f}"), ("mib_s", "MiB/s", "{:8.1f}"), ("p50", "p50 ms", "{:7.2f}"),
          ("p99", "p99 ms", "{:7.2f}"), ("cpu_per_1000", "CPU s/1k ops", "{:12.3f}")]
print(f"# MinIO {port} on {work}/minio; {rounds} rounds, {duration} each, concurrency {conc}"
      f" (soakd on {threads} thread(s)), closed loop; load average {os.getloadavg()[0]:.1f}")
print(f"{'run':<22}" + "".join(f"{label:>13}" for _, label, _ in fields))
results = {}
for r in range(rounds):
    for op in ops:
        for size in sizes:
            # Alternate which tool goes first, so neither always gets the fresher server.
            order = [("soakd", run_soakd), ("warp", run_warp)]
            if r % 2:
                order.reverse()
            for tool, fn in order:
                res = fn(op, size, f"{op}-{size}-{r}-{tool}".lower())
                results.setdefault((op, size, tool), []).append(res)
                print(f"{tool + ' ' + op + ' ' + size + ' #' + str(r + 1):<22}" +
                      "".join(f"{fmt.format(res[k]):>13}" for k, _, fmt in fields), flush=True)

# On a shared machine the server's speed drifts between rounds: the ratio
# is taken within each round (the two runs back to back), then its median.
print(f"\nmedians of {rounds} rounds, and the median of each round's soakd/warp")
print(f"{'':<22}" + "".join(f"{label:>13}" for _, label, _ in fields))
for op in ops:
    for size in sizes:
        med = {}
        for tool in ("soakd", "warp"):
            med[tool] = {k: statistics.median(x[k] for x in results[(op, size, tool)]) for k, _, _ in fields}
            print(f"{tool + ' ' + op + ' ' + size:<22}" +
                  "".join(f"{fmt.format(med[tool][k]):>13}" for k, _, fmt in fields))
        pairs = list(zip(results[(op, size, "soakd")], results[(op, size, "warp")]))
        print(f"{'  ratio soakd/warp':<22}" +
              "".join(f"{statistics.median(a[k] / b[k] for a, b in pairs):13.2f}"
                      if all(b[k] for _, b in pairs) else f"{'-':>13}" for k, _, _ in fields))
stop_server()
PY
