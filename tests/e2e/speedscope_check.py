#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""speedscope_check.py - do Trace Event JSON files open in speedscope, in headless Chromium?

    speedscope_check.py SPEEDSCOPE_RELEASE_DIR OUT_DIR FILE.json...

Serves speedscope's release files and the JSON files on 127.0.0.1, opens each in speedscope
(#profileURL=), and checks: no console error and no uncaught exception; speedscope names
the file and counts one profile per thread that has complete events ("NAME (1/N)"); the
flame chart drew (a screenshot, saved to OUT_DIR/NAME.png, with more than a handful of
colours).  Then it saves the profiles as speedscope reads them (its own export, Ctrl+S, caught
before the download) and checks what it made of them: one frame per region (the frames'
names are the regions' names: arguments stay out of them), and on each thread the regions
of the same role ("parallel": successive OpenMP regions) at the depth the file nests them
at, not each inside the one before.
Prints a line per file and "speedscope_check: ok", or the problems and exits 1.
"""
import functools
import http.server
import json
import os
import shutil
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402


# Catches the file speedscope's export (Ctrl+S) makes, and gives its text.
EXPORT = """(async () => {
    let saved = null;
    const url = URL.createObjectURL, click = HTMLAnchorElement.prototype.click;
    URL.createObjectURL = b => { saved = b; return "about:blank"; };
    HTMLAnchorElement.prototype.click = function () {};
    window.dispatchEvent(new KeyboardEvent("keydown", {key: "s", ctrlKey: true}));
    for (let i = 0; i < 100 && !saved; i++)
        await new Promise(r => setTimeout(r, 100));
    URL.createObjectURL = url;
    HTMLAnchorElement.prototype.click = click;
    return saved ? await saved.text() : null;
})()"""


def file_regions(events):
    """Per thread: its regions as (start, end, name, role), from complete events or B/E
    pairs; times in microseconds."""
    out, stacks = {}, {}
    for e in events:
        key = (e["pid"], e["tid"])
        if e["ph"] == "X":
            out.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], e["name"],
                                            e.get("args", {}).get("role")))
        elif e["ph"] == "B":
            stacks.setdefault(key, []).append(e)
        elif e["ph"] == "E" and stacks.get(key):
            b = stacks[key].pop()
            role = e.get("args", {}).get("role", b.get("args", {}).get("role"))
            out.setdefault(key, []).append((b["ts"], e["ts"], b["name"], role))
    return out


def depths(regions):
    """The depth of each region, by the intervals (a region holds those inside it)."""
    out, open_ = [], []
    for s, e, name, role in sorted(regions, key=lambda r: (r[0], -r[1])):
        while open_ and open_[-1] <= s:
            open_.pop()
        out.append((s, name, role, len(open_)))
        open_.append(e)
    return out


def check_frames(name, events, saved, errors):
    """speedscope's profiles (its export) against the file: one frame per region name, and
    the parallel regions at the file's depths."""
    shared = saved["shared"]["frames"]
    regions = file_regions(events)
    want = {r[2] for lst in regions.values() for r in lst}
    got = {f["name"] for f in shared}
    if got != want:
        errors.append("%s: %d frames in speedscope for %d region names, such as %s" % (
            name, len(got), len(want), sorted(got - want)[:2]))
    # Per thread (profiles come in pid, tid order, threads with regions only).
    keys = sorted(regions)
    if len(keys) != len(saved["profiles"]):
        errors.append("%s: %d profiles for %d threads" % (name, len(saved["profiles"]),
                                                           len(keys)))
        return 0
    checked = 0
    for key, prof in zip(keys, saved["profiles"]):
        stack, opened = [], []
        for ev in prof["events"]:
            if ev["type"] == "O":
                opened.append((shared[ev["frame"]]["name"], len(stack)))
                stack.append(ev["frame"])
            elif stack:
                stack.pop()
        mine = [(n, d) for _, n, role, d in depths(regions[key]) if role == "parallel"]
        theirs = [(n, d) for n, d in opened if any(n == m or n.startswith(m + " {")
                                                   for m, _ in mine)]
        if mine != theirs:
            errors.append("%s: thread %s: the parallel regions at depths %s in the file, "
                          "%s in speedscope" % (name, key, [d for _, d in mine][:12],
                                                [d for _, d in theirs][:12]))
        checked += len(mine)
    return checked


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    release, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.path.join(out, "www")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(release, os.path.join(root, "speedscope"))
    for f in files:
        shutil.copy(f, root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                          functools.partial(Quiet, directory=root))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    errors = []
    with Browser() as b:
        for f in files:
            name = os.path.basename(f)
            stem = name[:-5]
            events = json.load(open(f))["traceEvents"]
            threads = len({(e["pid"], e["tid"]) for e in events if e["ph"] in "XB"})
            url = "http://127.0.0.1:%d/speedscope/index.html#profileURL=/%s&title=%s" % (
                port, name, stem)
            want = "%s (1/%d)" % (stem, threads) if threads > 1 else stem
            try:
                page = b.open(url, wait_for="document.body.innerText.includes(%s)" %
                              json.dumps(want), timeout=60, settle=1.5)
            except TimeoutError:
                errors.append("%s: speedscope never showed %r" % (name, want))
                continue
            png = os.path.join(out, stem + ".png")
            w, h, colours = page.screenshot(png)
            for e in page.errors:
                errors.append("%s: %s" % (name, e))
            if colours < 20:
                errors.append("%s: the screenshot has %d colours: nothing drawn" % (name, colours))
            text = page.eval(EXPORT, await_promise=True)
            if not text:
                errors.append("%s: speedscope saved no profile" % name)
                continue
            par = check_frames(name, events, json.loads(text), errors)
            print("%s: speedscope shows %r, %dx%d screenshot with %d colours, %d errors, "
                  "%d parallel regions placed" % (name, want, w, h, colours, len(page.errors),
                                                  par))
    srv.shutdown()
    if errors:
        for e in errors:
            print("speedscope_check: %s" % e)
        sys.exit(1)
    print("speedscope_check: ok")


if __name__ == "__main__":
    main()
