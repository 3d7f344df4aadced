#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""speedscope_check.py - do Trace Event JSON files open in speedscope, in headless Chromium?

    speedscope_check.py SPEEDSCOPE_RELEASE_DIR OUT_DIR FILE.json...

Serves speedscope's release files and the JSON files on 127.0.0.1, opens each in speedscope
(#profileURL=), and checks: no console error and no uncaught exception; speedscope names
the file and counts one profile per thread that has complete events ("NAME (1/N)"); the
flame chart drew (a screenshot, saved to OUT_DIR/NAME.png, with more than a handful of
colours).  Prints a line per file and "speedscope_check: ok", or the problems and exits 1.
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
            threads = len({(e["pid"], e["tid"]) for e in events if e["ph"] == "X"})
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
            print("%s: speedscope shows %r, %dx%d screenshot with %d colours, %d errors" % (
                name, want, w, h, colours, len(page.errors)))
    srv.shutdown()
    if errors:
        for e in errors:
            print("speedscope_check: %s" % e)
        sys.exit(1)
    print("speedscope_check: ok")


if __name__ == "__main__":
    main()
