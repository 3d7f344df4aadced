#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""html_check.py - does trace-report's HTML page render, and show trace-report's numbers?

    html_check.py PAGE.html PROFILE.json SHOT.png [--messages N] [--memory]

Opens PAGE in headless Chromium (browser.py) and checks: no console error, no uncaught
exception; the page rendered; a screenshot (saved to SHOT) that is not blank (many colours)
and whose timeline canvas is drawn; every row of the profile table shows the region, calls,
inclusive and exclusive time of PROFILE (trace-report --json of the same run), the times
formatted as trace-report's table formats them; the call tree's first node is the tree's
heaviest root; with --memory, the memory table holds PROFILE's high-water marks; with
--messages N, the MPI matrix sums to N messages.  Prints what it saw and "html_check: ok".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402


def fmt_ns(ns):
    a = abs(ns)
    if a < 1e3:
        return "%.0f ns" % ns
    if a < 1e6:
        return "%.3f us" % (ns / 1e3)
    if a < 1e9:
        return "%.3f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    page_path, prof_path, shot = args[:3]
    messages, memory = None, "--memory" in args
    if "--messages" in args:
        messages = int(args[args.index("--messages") + 1])
    run = json.load(open(prof_path))["runs"][0]
    errors = []
    with Browser(1400, 2400) as b:
        page = b.open("file://" + os.path.abspath(page_path),
                      wait_for="document.body.getAttribute('data-rendered') === '1'",
                      timeout=60, settle=1.0)
        errors += page.errors
        w, h, colours = page.screenshot(shot)
        if colours < 60:
            errors.append("the screenshot has %d colours: blank" % colours)
        drawn = page.eval("""(() => { const c = document.getElementById('timeline-canvas');
            if (!c) return 0; const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const s = new Set(); for (let i = 0; i < d.length; i += 4 * 13) s.add(d[i] << 16 | d[i+1] << 8 | d[i+2]);
            return s.size; })()""")
        if drawn < 5:
            errors.append("the timeline canvas has %d colours: nothing drawn" % drawn)
        rows = page.eval("""[...document.querySelectorAll('#profile-0 tbody tr')].map(tr =>
            Object.fromEntries([...tr.children].map(td => [td.dataset.key, [td.dataset.v, td.textContent]])))""")
        want = {(r["kind"], r["name"]): r for r in run["regions"]}
        if len(rows) != len(want):
            errors.append("the table has %d regions, the profile %d" % (len(rows), len(want)))
        for row in rows:
            r = want.get((row["kind"][0], row["name"][0]))
            if not r:
                errors.append("region %r not in the profile" % row["name"][0])
                continue
            for key in ("calls", "inclusive_ns", "exclusive_ns", "min_ns", "max_ns"):
                if int(row[key][0]) != r[key]:
                    errors.append("%s: %s %s, the profile says %d" % (r["name"], key, row[key][0], r[key]))
            for key in ("inclusive_ns", "exclusive_ns"):
                if row[key][1] != fmt_ns(r[key]):
                    errors.append("%s: shows %r for %s, trace-report %r" % (
                        r["name"], row[key][1], key, fmt_ns(r[key])))
        tree = run.get("tree", [])
        if tree:
            top = max((n for n in tree if n["parent"] < 0), key=lambda n: n["inclusive_ns"])
            first = page.eval("document.querySelector('#tree-top-down summary, #tree-top-down .leaf').textContent")
            if not first.startswith(fmt_ns(top["inclusive_ns"])) or top["name"] not in first:
                errors.append("the tree begins with %r, not %s %s" % (first, fmt_ns(top["inclusive_ns"]), top["name"]))
        if memory:
            shown = page.eval("""[...document.querySelectorAll('#memory-0 tbody tr')].map(tr =>
                Number(tr.querySelector('[data-key=high_water_bytes]').dataset.v))""")
            truth = sorted(m["high_water_bytes"] for m in run["memory"])
            if sorted(shown) != truth or not truth:
                errors.append("memory high-water marks %s, the profile %s" % (shown, truth))
        if messages is not None:
            total = page.eval("""[...document.querySelectorAll('#mpi-matrix td')]
                .reduce((s, td) => s + Number(td.dataset.msgs || 0), 0)""")
            if total != messages:
                errors.append("the MPI matrix counts %s messages, want %d" % (total, messages))
    print("%s: %dx%d, %d colours, %d regions as trace-report has them%s%s, %d errors" % (
        os.path.basename(page_path), w, h, colours, len(rows),
        ", memory as the profile" if memory else "",
        ", %d MPI messages" % messages if messages is not None else "", len(errors)))
    if errors:
        for e in errors[:20]:
            print("html_check: %s" % e)
        sys.exit(1)
    print("html_check: ok")


if __name__ == "__main__":
    main()
