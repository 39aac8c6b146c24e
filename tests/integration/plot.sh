#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl plot: an SVG of latency and throughput over time, from a running
# soakd, from the run's directory without soakd, and from a dump's CSV;
# each is well-formed XML (Python's parser) with a <path> and a legend
# entry per series, and an SVG renderer draws it when one is installed.
# soakctl dump and plot also read a soakd from before dumps in chunks.
source "$(dirname "$0")/lib.sh"

need_cmd python3

CFG="$WORK/plot.json"
write_file_config "$CFG" plot w 4s idle 400
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the workload to finish" workload_is w finished

# From soakd, into the working directory by default (RUN.svg).
(cd "$WORK" && timeout 20 "$SOAKCTL" --socket "$SOCK" plot) 2>"$WORK/plot.err" ||
	fail "soakctl plot failed: $(cat "$WORK/plot.err")"
[[ -s $WORK/plot.svg ]] || fail "soakctl plot wrote no plot.svg: $(cat "$WORK/plot.err")"
# 10 of the ops, 7 of the host (its host_*_pct columns).
grep -q "wrote plot.svg (17 series)" "$WORK/plot.err" || fail "plot said: $(cat "$WORK/plot.err")"
ctl plot --op write --output "$WORK/write.svg" 2>/dev/null || fail "plot --op write failed"
ctl plot --output - >"$WORK/stdout.svg" || fail "plot --output - failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "dump --format csv failed"
rc=0
out=$(ctl plot --workload nope --output "$WORK/nope.svg" 2>&1) || rc=$?
((rc == 1)) && [[ $out == *"no intervals to plot for workload nope"* ]] ||
	fail "plot of an unknown workload: exit $rc: $out"
[[ ! -e $WORK/nope.svg ]] || fail "plot of nothing wrote a file"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# Without soakd: the run's directory, and the CSV saved above.
timeout 20 "$SOAKCTL" plot --run-dir "$WORK/state/plot" --output "$WORK/rundir.svg" 2>/dev/null ||
	fail "plot --run-dir failed"
timeout 20 "$SOAKCTL" plot --output "$WORK/csv.svg" "$WORK/dump.csv" 2>/dev/null ||
	fail "plot of a CSV file failed"
# Numbers a CSV from elsewhere can hold: times so far from 0 that a step
# adds nothing, a rate that overflows to infinity.  The axes' tick loops
# never ended, writing to the SVG until the disk was full.
printf 'workload,op,start_s,end_s,rate_achieved,latency_p50_us\nw,read,1e17,1e17,5,100\n' \
	>"$WORK/far.csv"
printf 'workload,op,start_s,end_s,rate_achieved,latency_p50_us\nw,read,0,1,1.7e308,100\nw,read,1,2,5,100\n' \
	>"$WORK/inf.csv"
# An output path that is a symlink (planted in a shared directory, say) is
# refused, not written through: the file it points at is as it was.  A
# device is written as it is (not replaced), and a plot that fails leaves
# the old file and no temporary one.
echo precious >"$WORK/victim.txt"
ln -s victim.txt "$WORK/link.svg"
rc=0
timeout 20 "$SOAKCTL" plot --output "$WORK/link.svg" "$WORK/dump.csv" 2>"$WORK/link.err" || rc=$?
((rc != 0)) && grep -q "is a symbolic link: not written through" "$WORK/link.err" ||
	fail "plot over a symlink: exit $rc, $(cat "$WORK/link.err")"
[[ $(cat "$WORK/victim.txt") == precious && -L $WORK/link.svg ]] || fail "plot wrote through a symlink"
timeout 20 "$SOAKCTL" plot --output /dev/null "$WORK/dump.csv" 2>/dev/null || fail "plot to /dev/null failed"
[[ -c /dev/null ]] || fail "/dev/null is no longer a device"
ls -A "$WORK" | grep -q '^\.' && fail "a temporary file was left: $(ls -A "$WORK")"
for f in far inf; do
	rc=0
	timeout 20 "$SOAKCTL" plot --output "$WORK/$f.svg" "$WORK/$f.csv" 2>/dev/null || rc=$?
	((rc != 124)) || fail "plot of $f.csv did not end"
	size=$(stat -c %s "$WORK/$f.svg" 2>/dev/null || echo 0)
	((size < 1000000)) || fail "plot of $f.csv wrote $size bytes"
done
# A soakd from before "chunks" (upgraded, not restarted yet) refuses the
# key: soakctl asks again without it and reads the text whole.  A fake
# of such a soakd on its own socket, serving the CSV saved above.
OLD_SOCK="$WORK/old.sock"
cat >"$WORK/old_soakd.py" <<'EOF'
import json, socket, sys
path, csv_path, log = sys.argv[1:4]
text = open(csv_path).read()
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(8)
srv.settimeout(20)
with open(log, "w") as out:
    while True:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            break
        f = conn.makefile("rwb")
        req = json.loads(f.readline())
        out.write(json.dumps(req, sort_keys=True) + "\n")
        out.flush()
        if "chunks" in req:
            rep = {"ok": False, "error": f"unknown key \"chunks\" for command '{req['cmd']}' "
                   "(expected format, since, until, slice, workload or op)"}
        elif req["cmd"] == "status":
            rep = {"ok": True, "run": "plot", "state": "finished", "workloads": []}
        elif req["cmd"] == "dump" and req.get("format") == "csv":
            rep = {"ok": True, "format": "csv", "csv": text}
        else:
            rep = {"ok": False, "error": "not expected by this test"}
        f.write((json.dumps(rep) + "\n").encode())
        f.flush()
        conn.close()
EOF
spawn "$WORK/old-soakd.log" python3 "$WORK/old_soakd.py" "$OLD_SOCK" "$WORK/dump.csv" \
	"$WORK/old-requests.log"
wait_until 10 "the old soakd's socket" test -S "$OLD_SOCK"
timeout 20 "$SOAKCTL" --socket "$OLD_SOCK" dump --format csv >"$WORK/old.csv" 2>"$WORK/old.err" ||
	fail "dump --format csv from a soakd without chunks: $(cat "$WORK/old.err")"
cmp -s "$WORK/old.csv" "$WORK/dump.csv" || fail "dump --format csv from a soakd without chunks differs"
(cd "$WORK" && timeout 20 "$SOAKCTL" --socket "$OLD_SOCK" plot --output old.svg) 2>"$WORK/old.err" ||
	fail "plot from a soakd without chunks: $(cat "$WORK/old.err")"
grep -q "wrote old.svg (17 series)" "$WORK/old.err" || fail "plot from a soakd without chunks said: $(cat "$WORK/old.err")"
python3 - "$WORK/old-requests.log" <<'EOF' || fail "soakctl's requests to a soakd without chunks"
import json, sys
dumps = [r for r in map(json.loads, open(sys.argv[1])) if r["cmd"] == "dump"]
# Each dump asked in chunks first, then again without.
if [("chunks" in r) for r in dumps] != [True, False, True, False]:
    sys.exit(f"dump requests: {dumps}")
EOF

rc=0
out=$(timeout 20 "$SOAKCTL" plot --output "$WORK/bad.svg" "$SRCDIR/README.md" 2>&1) || rc=$?
((rc == 1)) && [[ $out == *"dump --format csv"* ]] || fail "plot of a non-CSV file: exit $rc: $out"

python3 - "$WORK" <<'EOF' || fail "SVG plots"
import sys, xml.dom.minidom

work = sys.argv[1]
problems = []
def check(name, series):
    try:
        doc = xml.dom.minidom.parse(f"{work}/{name}")
    except Exception as e:
        problems.append(f"{name}: not well-formed XML: {e}")
        return
    root = doc.documentElement
    if root.tagName != "svg" or root.getAttribute("xmlns") != "http://www.w3.org/2000/svg":
        problems.append(f"{name}: root is {root.tagName}, not an SVG")
    paths = {p.getAttribute("data-series"): p for p in doc.getElementsByTagName("path")}
    legend = {t.getAttribute("data-legend"): t.firstChild.data
              for t in doc.getElementsByTagName("text") if t.getAttribute("data-legend")}
    for s in series:
        d = paths.get(s).getAttribute("d") if s in paths else ""
        if d.count("L") < 2:
            problems.append(f"{name}: series {s} missing or without a line ({d[:40]!r})")
        if s not in legend:
            problems.append(f"{name}: no legend entry for {s}")
    extra = set(paths) - set(series)
    if extra:
        problems.append(f"{name}: unexpected series {sorted(extra)}")
    texts = " ".join(t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild)
    for needle in ("workload w", "latency", "ops/s", "time since the run started"):
        if needle not in texts:
            problems.append(f"{name}: no text {needle!r}")
    title = doc.getElementsByTagName("title")[0].firstChild.data
    return title

host = [f"w/host/{m}" for m in ("cpu_user", "cpu_system", "cpu_iowait", "cpu_steal",
                                "cpu_soakd", "psi_io_some", "disk_util")]
every = [f"w/{op}/{m}" for op in ("read", "write")
         for m in ("p50", "p99", "p999", "ops_per_s", "target_per_s")] + host
title = check("plot.svg", every)
if not title or not title.startswith("soakd run plot"):
    problems.append(f"plot.svg: title {title!r}")
check("stdout.svg", every)
check("rundir.svg", every)
check("csv.svg", every)
check("old.svg", every)
check("write.svg", [s for s in every if s.startswith(("w/write/", "w/host/"))])
print(f"# plots well-formed, {len(every)} series each; title {title!r}")
if problems:
    sys.exit("\n".join(problems))
EOF

if command -v rsvg-convert >/dev/null; then
	rsvg-convert -o "$WORK/plot.png" "$WORK/plot.svg" || fail "rsvg-convert could not draw plot.svg"
	[[ -s $WORK/plot.png ]] || fail "rsvg-convert drew nothing"
	note "rsvg-convert drew plot.svg ($(stat -c %s "$WORK/plot.png") bytes of PNG)"
fi
note "ok"
