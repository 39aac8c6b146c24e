#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Loads a page in headless Chromium over the DevTools protocol (a pipe,
--remote-debugging-pipe: no port) and writes its DOM and a full-page
screenshot, with JavaScript on or off.  chromium --dump-dom cannot do the
latter: with Blink's scriptEnabled=false it prints nothing, as it reads
the DOM with script.  Here JavaScript is turned off for the page only
(Emulation.setScriptExecutionDisabled) and the DOM read natively.

  cdp_page.py URL --width W [--no-js] [--dom FILE] [--png FILE [--max-height H]]
              [--eval JS OUT]

As root Chromium needs --no-sandbox (its sandbox wants an unprivileged
user); the page is a local file and nothing is fetched."""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("url")
ap.add_argument("--width", type=int, default=1366)
ap.add_argument("--no-js", action="store_true")
ap.add_argument("--print", action="store_true", help="emulate print media (@media print)")
ap.add_argument("--dom")
ap.add_argument("--png")
ap.add_argument("--eval", nargs=2, metavar=("JS", "OUT"),
                help="evaluate the expression in file JS in the page; its value as JSON in OUT")
ap.add_argument("--max-height", type=int, default=0, help="cut the screenshot at this height")
args = ap.parse_args()

to_child_r, to_child_w = os.pipe()
from_child_r, from_child_w = os.pipe()
profile = tempfile.mkdtemp(prefix="soakd-chromium.")
flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-extensions", f"--user-data-dir={profile}", "--remote-debugging-pipe",
         "about:blank"]
# The pipe is fds 3 (commands in) and 4 (replies out) of chromium.
proc = subprocess.Popen(
    ["sh", "-c", f'exec chromium "$@" 3<&{to_child_r} 4>&{from_child_w}', "sh"] + flags,
    pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_child_r)
os.close(from_child_w)
out = os.fdopen(to_child_w, "wb", buffering=0)
inp = os.fdopen(from_child_r, "rb", buffering=0)
buf = b""
next_id = 0


def read_message():
    global buf
    while b"\0" not in buf:
        chunk = inp.read(1 << 16)
        if not chunk:
            sys.exit("chromium closed the DevTools pipe")
        buf += chunk
    msg, _, buf = buf.partition(b"\0")
    return json.loads(msg)


def call(method, params=None, session=None, wait_event=None):
    """Sends a command; returns its result (and waits for wait_event after it)."""
    global next_id
    next_id += 1
    msg = {"id": next_id, "method": method, "params": params or {}}
    if session:
        msg["sessionId"] = session
    out.write(json.dumps(msg).encode() + b"\0")
    result, seen_event = None, wait_event is None
    while result is None or not seen_event:
        m = read_message()
        if m.get("id") == next_id:
            if "error" in m:
                sys.exit(f"{method}: {m['error']}")
            result = m["result"]
        elif wait_event and m.get("method") == wait_event:
            seen_event = True
    return result


try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    s = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    call("Page.enable", session=s)
    if args.no_js:
        call("Emulation.setScriptExecutionDisabled", {"value": True}, session=s)
    call("Emulation.setDeviceMetricsOverride",
         {"width": args.width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
    if args.print:
        call("Emulation.setEmulatedMedia", {"media": "print"}, session=s)
    call("Page.navigate", {"url": args.url}, session=s, wait_event="Page.loadEventFired")
    if args.dom:
        root = call("DOM.getDocument", {"depth": -1}, session=s)["root"]["nodeId"]
        html = call("DOM.getOuterHTML", {"nodeId": root}, session=s)["outerHTML"]
        with open(args.dom, "w", encoding="utf-8") as f:
            f.write(html)
    if args.eval:
        r = call("Runtime.evaluate", {"expression": open(args.eval[0]).read(),
                                      "returnByValue": True}, session=s)
        if "exceptionDetails" in r:
            sys.exit(f"--eval: {r['exceptionDetails']}")
        with open(args.eval[1], "w", encoding="utf-8") as f:
            json.dump(r["result"].get("value"), f)
    if args.png:
        size = call("Page.getLayoutMetrics", session=s)["cssContentSize"]
        height = int(size["height"]) + 1
        if args.max_height:
            height = min(height, args.max_height)
        call("Emulation.setDeviceMetricsOverride",
             {"width": args.width, "height": height, "deviceScaleFactor": 1, "mobile": False},
             session=s)
        shot = call("Page.captureScreenshot", {"format": "png"}, session=s)["data"]
        with open(args.png, "wb") as f:
            f.write(base64.b64decode(shot))
    try:
        call("Browser.close")
    except SystemExit:
        pass
finally:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    subprocess.run(["rm", "-rf", profile])
