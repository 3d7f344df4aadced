#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Headless Chromium for the tests, driven over the DevTools protocol (python3-websocket).

    with Browser() as b:
        page = b.open(url, wait_for="expression that becomes true", timeout=30)
        page.errors        # console errors and uncaught exceptions, as text
        page.eval("document.title")
        page.eval("fetch('/x').then(r => r.text())", await_promise=True)
        page.screenshot(path)   # PNG; returns (width, height, distinct colours)

Chromium runs with its own empty profile in a temporary directory, no network beyond
127.0.0.1 (the page is served by the test), and quits when the block ends.
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
import zlib

import websocket


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Page:
    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.errors = []
        self.load_fired = False
        for domain in ("Runtime", "Page", "Log"):
            self.call(domain + ".enable")

    def _event(self, msg):
        method = msg.get("method")
        p = msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text")
            self.errors.append("uncaught: %s" % text)
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = [a.get("value", a.get("description", "")) for a in p.get("args", [])]
            self.errors.append("console.%s: %s" % (p["type"], " ".join(map(str, args))))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            # The favicon a page does not have is not the page's error.
            if "favicon" not in e.get("url", "") and "favicon" not in e.get("text", ""):
                self.errors.append("log: %s %s" % (e.get("text"), e.get("url", "")))
        elif method == "Page.loadEventFired":
            self.load_fired = True

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)

    def pump(self, seconds):
        """Reads events for a while (errors that come late)."""
        end = time.time() + seconds
        self.ws.settimeout(0.2)
        while time.time() < end:
            try:
                self._event(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                pass
        self.ws.settimeout(60)

    def eval(self, expr, await_promise=False):
        """The value of expr; with await_promise, of the promise it gives, once settled."""
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True,
                      awaitPromise=await_promise)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        with open(path, "wb") as f:
            f.write(data)
        return png_stats(data)


def png_stats(data):
    """(width, height, distinct colours) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, w = 8, b"", None
    while at < len(data):
        n = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            depth, ctype = body[8], body[9]
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    if depth != 8 or ctype not in (2, 6):
        raise ValueError("PNG colour type %d depth %d" % (ctype, depth))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    pos = 0
    for _ in range(h):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        for i in range(0, stride, bpp * 7):  # every 7th pixel is enough to count colours
            colours.add(bytes(line[i:i + 3]))
        prev = line
    return w, h, len(colours)


class Browser:
    def __init__(self, width=1400, height=1000):
        self.width, self.height = width, height

    def __enter__(self):
        exe = chromium_path()
        if not exe:
            raise FileNotFoundError("chromium")
        self.profile = tempfile.mkdtemp(prefix="libtrace-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (self.width, self.height), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited with %d" % self.proc.returncode)
            time.sleep(0.1)
        self.port = int(open(port_file).read().split("\n")[0])
        return self

    def open(self, url, wait_for=None, timeout=60, settle=1.0):
        req = urllib.request.Request("http://127.0.0.1:%d/json/new?about:blank" % self.port,
                                     method="PUT")
        target = json.load(urllib.request.urlopen(req, timeout=30))
        page = Page(target["webSocketDebuggerUrl"])
        page.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=url)
        end = time.time() + timeout
        while not page.load_fired and time.time() < end:
            page.pump(0.2)
        if wait_for:
            while time.time() < end and not page.eval(wait_for):
                page.pump(0.3)
            if not page.eval(wait_for):
                raise TimeoutError("%s: %s never held" % (url, wait_for))
        page.pump(settle)
        return page

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
        return False
