#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl report --html in a real browser (issue 19): a short run on a
# loop device and a file, its report from the live soakd and from the run
# directory (with hand-made host, drift and verify records added to a
# copy), loaded by headless Chromium with JavaScript off and on; the DOM's
# verdict, every workload's panels and the table's numbers are checked
# against the dump's, colour contrast and text alternatives are judged by
# WCAG 2.x (report_a11y.py), and screenshots at two widths are kept as artifacts
# ($SOAKD_TEST_ARTIFACTS, else BUILDDIR/meson-logs/report-html).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/objlib.sh"

need_cmd chromium python3

ART=${SOAKD_TEST_ARTIFACTS:-$BUILDDIR/meson-logs}/report-html
rm -rf "$ART"
mkdir -p "$ART"

# chromium FLAGS... URL: headless, bounded in time.  As root Chromium
# refuses to start without --no-sandbox (its sandbox needs an unprivileged
# user); the page is our own file, loaded with no network.
browser() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --disable-extensions --user-data-dir="$WORK/chromium" "$@" \
		2>>"$WORK/chromium.err"
}
# Chromium must start for a reason outside soakd to be skipped: try a
# trivial page first.
echo '<!DOCTYPE html><title>t</title><p id=x>ok</p>' >"$WORK/probe.html"
if ! browser --dump-dom "file://$WORK/probe.html" >"$WORK/probe.dom" ||
	! grep -q 'id="x"' "$WORK/probe.dom"; then
	skip "headless chromium does not start here: $(tail -n 3 "$WORK/chromium.err")"
fi

new_loop 64M
# An object workload too, on a real nginx: its panels and TCP's series.
PORT=$(free_port)
start_nginx "$WORK/nginx" "$PORT"
mkdir -p "$WORK/nginx/dav/web"
CFG="$WORK/report.json"
cat >"$CFG" <<JSON
{"run": {"name": "rep", "duration": "6s", "interval": "1s", "slice": "2s", "on_finish": "idle"},
 "workloads": [{"name": "storage", "type": "device", "model": "act-storage",
                "devices": [{"path": "$NEW_LOOP", "destroy_data": true}], "load": "1x"},
               {"name": "mix", "type": "device", "model": "pattern",
                "targets": ["$WORK/mix.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "access": "random", "queue_depth": 8, "rate": 400,
                "schedule": [{"scale": 1, "for": "6s"}]},
               {"name": "web", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/web/", "concurrency": 4, "objects": 16,
                "size": "4KiB", "rate": 100, "mix": {"put": 50, "get": 50}}]}
JSON
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 30 "storage to finish" workload_is storage finished
wait_until 30 "mix to finish" workload_is mix finished
wait_until 30 "web to finish" workload_is web finished

# From the live soakd: it names its run directory in its status.
rc=0
ctl report --html "$WORK/live.html" 2>"$WORK/live.err" || rc=$?
((rc == 0 || rc == 3)) || fail "report --html from soakd: exit $rc: $(cat "$WORK/live.err")"
grep -q "wrote $WORK/live.html (verdict" "$WORK/live.err" || fail "report --html said: $(cat "$WORK/live.err")"
ctl dump --format json >"$WORK/dump.json" || fail "dump --format json failed"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# Without soakd, from a copy of the run with records of fields other parts
# of soakd add, and a secret-looking key in its plan that must not show.
cp -r "$WORK/state/rep" "$WORK/copy"
python3 "$SRCDIR/tests/integration/report_extra.py" "$WORK/copy/intervals.log" ||
	fail "could not add records to the copy"
python3 - "$WORK/copy/plan.json" <<'PY' || fail "could not edit the plan"
import json, sys
plan = json.load(open(sys.argv[1]))
plan["workloads"][0]["secret_key"] = "hunter2"
json.dump(plan, open(sys.argv[1], "w"))
PY
rc=0
timeout 60 "$SOAKCTL" report --html "$WORK/copy.html" --run-dir "$WORK/copy" 2>"$WORK/copy.err" || rc=$?
((rc == 0 || rc == 3)) || fail "report --html --run-dir: exit $rc: $(cat "$WORK/copy.err")"
# The page needs nothing from outside: no resource by address (src, a link
# that is not an anchor of its own, url() or @import in its style).  The
# endpoint's URL in the configuration is text, not fetched.
python3 - "$WORK/copy.html" <<'PY' || fail "the page refers to something outside it"
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
found = re.findall(r'\bsrc\s*=|href\s*=\s*"(?!#)[^"]*"|url\(|@import', page)
if found:
    sys.exit(f"outside references: {found[:5]}")
PY
cp "$WORK/copy.html" "$ART/report.html"

# Loaded over the DevTools protocol (tests/integration/cdp_page.py): the
# DOM and a full-page screenshot, with JavaScript off for the page, then on.
page() { timeout 90 python3 "$SRCDIR/tests/integration/cdp_page.py" "$@" 2>>"$WORK/chromium.err"; }
# Where soakd could load its block-layer probes, the kernel's series must
# be beside the application's.
kernel=()
if grep -q '"kernel":{"blk":{"read"' "$WORK/state/rep/intervals.log"; then
	kernel=(--kernel)
else
	note "no block-layer series in the log (BPF not available?): kernel charts not checked"
fi
if grep -q '"tcp":{"srtt_samples":[1-9]' "$WORK/state/rep/intervals.log"; then
	kernel+=(--tcp web)
else
	note "no TCP series in the log (BPF not available?): TCP charts not checked"
fi
for html in live copy; do
	extras=("${kernel[@]}")
	[[ $html == copy ]] && extras+=(--extras)
	page "file://$WORK/$html.html" --no-js --dom "$WORK/$html.nojs.dom" ||
		fail "chromium could not load $html.html without JavaScript: $(tail -n 3 "$WORK/chromium.err")"
	python3 "$SRCDIR/tests/integration/report_dom.py" "$WORK/$html.nojs.dom" "$WORK/dump.json" \
		storage,mix,web "${extras[@]}" || fail "$html.html without JavaScript"
	page "file://$WORK/$html.html" --dom "$WORK/$html.js.dom" ||
		fail "chromium could not load $html.html: $(tail -n 3 "$WORK/chromium.err")"
	python3 "$SRCDIR/tests/integration/report_dom.py" "$WORK/$html.js.dom" "$WORK/dump.json" \
		storage,mix,web "${extras[@]}" --js || fail "$html.html with JavaScript"
done
cp "$WORK/copy.nojs.dom" "$ART/report.nojs.dom"

# Accessibility (WCAG 2.x): every text's contrast against its background,
# SVG text and series lines against the chart's, every SVG named and every
# chart described with its numbers; colours as Chromium computes them.
for html in live copy; do
	page "file://$WORK/$html.html" --eval "$SRCDIR/tests/integration/report_a11y.js" \
		"$WORK/$html.a11y.json" || fail "chromium could not evaluate $html.html"
	python3 "$SRCDIR/tests/integration/report_a11y.py" "$WORK/$html.a11y.json" ||
		fail "$html.html is not accessible enough"
done

# Screenshots at a laptop's width and a narrow one, JavaScript off and on.
for width in 1366 820; do
	page "file://$WORK/copy.html" --no-js --width $width --png "$ART/report-$width-nojs.png" ||
		fail "no screenshot at $width px without JavaScript"
	page "file://$WORK/copy.html" --width $width --png "$ART/report-$width.png" ||
		fail "no screenshot at $width px"
	for f in "$ART/report-$width-nojs.png" "$ART/report-$width.png"; do
		python3 - "$f" $width <<'PY' || fail "screenshot $f"
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
w, h = struct.unpack(">II", data[16:24])
if w != int(sys.argv[2]) or h < 1000 or len(data) < 20000:
    sys.exit(f"{w}x{h}, {len(data)} bytes: not a page's screenshot")
PY
	done
done
# Printed (@media print): Chromium's PDF of it, kept beside the screenshots.
browser --no-pdf-header-footer --print-to-pdf="$ART/report.pdf" "file://$WORK/copy.html" >/dev/null ||
	fail "chromium could not print the report"
python3 - "$ART/report.pdf" <<'PY' || fail "the report's PDF"
import re, sys
data = open(sys.argv[1], "rb").read()
pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
if not data.startswith(b"%PDF") or pages < 2:
    sys.exit(f"not a PDF of the report: {len(data)} bytes, {pages} pages")
print(f"# printed: {pages} pages")
PY
note "artifacts in $ART: $(cd "$ART" && echo *)"
note "ok"
