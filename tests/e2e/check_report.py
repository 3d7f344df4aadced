#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_report.py - independent checks of trace-report's outputs (tests/e2e/report.sh).

  check_report.py totals --dump TRACE_DUMP TRACE PROFILE.json
      per region calls, inclusive and exclusive time computed here from trace-dump's
      records, against the profile (user, pthread and process regions; one function region
      per thread)
  check_report.py schema --readme docs/profiles-and-ci.md FILE.json
      the JSON has exactly the members docs/profiles-and-ci.md documents for its schema, with their types
  check_report.py csv FILE.csv PROFILE.json
  check_report.py table FILE.txt PROFILE.json [--top N]
  check_report.py compare FILE.json [--status STATUS=REGION]... [--verdict V]
  check_report.py same TRACE.json ARCHIVE.json
      the profile of an OTF2 archive is that of the trace directory it was converted from:
      regions (kind, role, calls exact; times within 1 ns per call), what ran, threads
"""
import argparse
import csv
import json
import re
import subprocess
import sys

PROCESS_FNS = {"fork", "vfork", "execve", "posix_spawn", "dlopen", "dlclose"}


def die(msg):
    print("check_report: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---- totals from trace-dump ----

QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def unquote(s):
    """trace-dump's escapes: \\" \\\\ \\xHH."""
    return re.sub(r'\\(x[0-9a-f]{2}|.)',
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 3 else m.group(1), s)


def dump_regions(dump, trace):
    """{(kind, name): [calls, inclusive, exclusive]}, thread count, from trace-dump."""
    out = subprocess.run([dump, trace], capture_output=True, text=True, errors="replace")
    if out.returncode != 0:
        die("trace-dump %s: exit status %d" % (trace, out.returncode))
    stacks = {}  # (process, thread) -> [[kind, name, start, child]]
    regions = {}
    threads = set()
    begins = 0

    def close(th, frame, t):
        kind, name, start, child = frame
        dur = t - start
        r = regions.setdefault((kind, name), [0, 0, 0])
        r[0] += 1
        r[2] += dur - child
        if not any(f[0] == kind and f[1] == name for f in stacks[th]):
            r[1] += dur  # outermost on this thread
        if stacks[th]:
            stacks[th][-1][3] += dur

    for line in out.stdout.splitlines():
        if line.startswith("#"):
            continue
        parts = line.split(None, 4)
        if len(parts) < 4:
            continue
        th = (parts[0], parts[1])
        t = int(parts[2])
        rec = parts[3]
        rest = parts[4] if len(parts) > 4 else ""
        threads.add(th)
        st = stacks.setdefault(th, [])
        if rec == "THREAD_BEGIN":
            begins += 1
        elif rec in ("REGION_ENTER", "REGION_LEAVE"):
            m = QUOTED.match(rest)
            if not m:
                die("cannot parse " + line)
            name = unquote(m.group(1))
            if rec == "REGION_ENTER":
                st.append(["user", name, t, 0])
            else:
                for i in range(len(st) - 1, -1, -1):
                    if st[i][0] == "user" and st[i][1] == name:
                        while len(st) > i:
                            close(th, st.pop(), t)
                        break
        elif rec in ("CALL_ENTER", "CALL_LEAVE", "CALL"):
            fn = rest.split()[0]
            kind = "process" if fn in PROCESS_FNS else "pthread"
            if rec == "CALL_ENTER":
                st.append([kind, fn, t, 0])
            elif rec == "CALL":
                st.append([kind, fn, t, 0])
                close(th, st.pop(), t)
            else:
                for i in range(len(st) - 1, -1, -1):
                    if st[i][0] == kind and st[i][1] == fn:
                        while len(st) > i:
                            close(th, st.pop(), t)
                        break
    for th, st in stacks.items():
        if st:
            die("thread %s left %d regions open: not a test trace" % (th, len(st)))
    return regions, len(threads), begins


def cmd_totals(a):
    doc = load(a.profile)
    run = doc["runs"][0]
    mine, nthreads, begins = dump_regions(a.dump, a.trace)
    theirs = {(r["kind"], r["name"]): r for r in run["regions"]}
    checked = 0
    for key, (calls, incl, excl) in sorted(mine.items()):
        r = theirs.get(key)
        if not r:
            die("region %s %s (from trace-dump) is not in the profile" % key)
        if r["calls"] != calls:
            die("%s %s: %d calls in the profile, %d in the trace" % (key + (r["calls"], calls)))
        tol = 2 * calls + 2  # each time stamp rounds to a ns on its own
        if abs(r["inclusive_ns"] - incl) > tol:
            die("%s %s: inclusive %d ns in the profile, %d in the trace" %
                (key + (r["inclusive_ns"], incl)))
        if abs(r["exclusive_ns"] - excl) > tol:
            die("%s %s: exclusive %d ns in the profile, %d in the trace" %
                (key + (r["exclusive_ns"], excl)))
        checked += 1
    for key in theirs:
        if key[0] in ("user", "pthread", "process") and key not in mine:
            die("region %s %s is in the profile, not in the trace" % key)
    fn_calls = sum(r["calls"] for r in run["regions"] if r["kind"] == "function")
    if fn_calls != begins:
        die("%d calls of function regions, %d threads began" % (fn_calls, begins))
    if run["metadata"]["threads"] != nthreads:
        die("metadata.threads %d, the trace has %d" % (run["metadata"]["threads"], nthreads))
    nth = sum(len(p["threads"]) for p in run["processes"])
    if nth != nthreads:
        die("%d threads listed, the trace has %d" % (nth, nthreads))
    if sum(p["events"] for p in run["processes"]) != run["totals"]["events"]:
        die("the processes' events do not add up to totals.events")
    for p in run["processes"]:
        if sum(t["events"] for t in p["threads"]) != p["events"]:
            die("process %s: its threads' events do not add up" % p["name"])
    print("check_report: %d regions agree with trace-dump (%d threads)" % (checked, nthreads))


# ---- schema ----

TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "array of strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "array of numbers": lambda v: isinstance(v, list) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in v),
}


def documented(readme, schema):
    """{path: (type, optional)} from the docs page's table after <!-- schema: NAME -->."""
    spec = {}
    lines = open(readme, encoding="utf-8").read().splitlines()
    try:
        i = lines.index("<!-- schema: %s -->" % schema) + 1
    except ValueError:
        die("the docs page documents no schema %s" % schema)
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`([^`]+)`", cells[0])
        if not m:
            die("docs: cannot read the row " + line)
        typ = cells[1]
        optional = "(optional)" in typ
        typ = typ.replace("(optional)", "").replace("(required)", "").strip()
        nullable = typ.endswith(" or null")
        typ = typ[:-len(" or null")] if nullable else typ
        if typ not in TYPES:
            die("docs: unknown type %r in %s" % (typ, line))
        path = m.group(1)
        b = re.match(r"\{([^}]*)\}(.*)", path)
        for alt in (b.group(1).split(",") if b else [path]):
            spec[alt + b.group(2) if b else path] = (typ, optional, nullable)
    if not spec:
        die("docs: the %s table is empty" % schema)
    return spec


def walk(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            p = path + "." + k if path else k
            out.setdefault(p, []).append(x)
            walk(x, p, out)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                walk(x, path + "[]", out)


def objects_at(doc, path):
    """The objects a path such as runs[].metadata names (none where a member is absent)."""
    objs = [doc]
    for tok in path.split(".") if path else []:
        many = tok.endswith("[]")
        key = tok[:-2] if many else tok
        nxt = []
        for o in objs:
            if not isinstance(o, dict) or key not in o:
                continue
            v = o[key]
            if many:
                if not isinstance(v, list):
                    die("%s is not an array" % key)
                nxt.extend(v)
            else:
                nxt.append(v)
        objs = nxt
    for o in objs:
        if not isinstance(o, dict):
            die("%s holds %r, not an object" % (path, o))
    return objs


def cmd_schema(a):
    doc = load(a.file)
    spec = documented(a.readme, doc.get("schema", "?"))
    seen = {}
    walk(doc, "", seen)
    for p in seen:
        if p not in spec:
            die("%s: member %s is not documented in docs/profiles-and-ci.md" % (a.file, p))
    for p, (typ, optional, nullable) in spec.items():
        parent, _, key = p.rpartition(".")
        for obj in objects_at(doc, parent):
            if key not in obj:
                if not optional:
                    die("%s: %s is missing" % (a.file, p))
                continue
            val = obj[key]
            if val is None and nullable:
                continue
            if not TYPES[typ](val):
                die("%s: %s is %r, not %s" % (a.file, p, val, typ))
    print("check_report: %s has the %d documented members of %s" % (a.file, len(spec),
                                                                    doc["schema"]))


# ---- CSV and table ----

CSV_COLS = ["run", "trace", "program", "kind", "role", "region", "calls", "inclusive_ns",
            "exclusive_ns", "min_ns", "mean_ns", "max_ns", "threads", "thread_min_ns",
            "thread_mean_ns", "thread_max_ns", "imbalance", "max_thread"]


def cmd_csv(a):
    doc = load(a.profile)
    with open(a.file, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if rows[0] != CSV_COLS:
        die("CSV header %r" % rows[0])
    want = [(i, r) for i, run in enumerate(doc["runs"]) for r in run["regions"]]
    if len(rows) - 1 != len(want):
        die("CSV has %d rows, the profile %d regions" % (len(rows) - 1, len(want)))
    for row, (i, r) in zip(rows[1:], want):
        d = dict(zip(CSV_COLS, row))
        if len(row) != len(CSV_COLS):
            die("CSV row with %d fields: %r" % (len(row), row))
        if int(d["run"]) != i or d["region"] != r["name"] or d["kind"] != r["kind"]:
            die("CSV row %r is not region %s of run %d" % (row, r["name"], i))
        for k in CSV_COLS[6:16]:
            if int(d[k]) != r[k]:
                die("CSV %s %s: %s, JSON %s" % (r["name"], k, d[k], r[k]))
        if abs(float(d["imbalance"]) - r["imbalance"]) > 1e-4 * max(1, r["imbalance"]):
            die("CSV imbalance of %s" % r["name"])
    print("check_report: %d CSV rows match the JSON" % len(want))


ROW = re.compile(r"^\s+(\S+ \S+)\s+([\d.]+)%\s+(\S+ \S+)\s+(\d+)\s+(\S+ \S+)\s+(\S+ \S+)"
                 r"\s+(\S+ \S+)\s+([\d.]+)\s+(\S+)\s+(\S+)\s(.*)$")


def ns_of(text):
    num, unit = text.split()
    return float(num) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def cmd_table(a):
    run = load(a.profile)["runs"][0]
    lines = open(a.file, encoding="utf-8").read().splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("Regions by exclusive time")]
    if len(head) != 1:
        die("no (or several) region tables")
    rows = []
    for line in lines[head[0] + 2:]:
        if not line.strip():
            break
        m = ROW.match(line)
        if not m:
            die("table row not understood: %r" % line)
        rows.append(m)
    n = min(a.top, len(run["regions"])) if a.top else len(run["regions"])
    if len(rows) != n:
        die("table has %d region rows, expected %d" % (len(rows), n))
    pct = 0
    for m, r in zip(rows, run["regions"]):
        if m.group(11).strip() != r["name"] or m.group(10) != r["kind"]:
            die("table row %r is not %s %s" % (m.group(0), r["kind"], r["name"]))
        if int(m.group(4)) != r["calls"]:
            die("table: calls of %s" % r["name"])
        for g, k in ((1, "exclusive_ns"), (3, "inclusive_ns"), (5, "min_ns"), (6, "mean_ns"),
                     (7, "max_ns")):
            if abs(ns_of(m.group(g)) - r[k]) > max(1, r[k] * 1e-3):
                die("table: %s of %s is %s, JSON %d" % (k, r["name"], m.group(g), r[k]))
        pct += float(m.group(2))
    if not a.top and abs(pct - 100) > 0.1 * len(rows) + 0.1:
        die("the %% column adds up to %.1f" % pct)
    for word in ("program", "started", "processes", "git", "Threads:", "Processes:"):
        if not any(word in l for l in lines):
            die("table: no %r" % word)
    print("check_report: table of %d regions matches the JSON" % len(rows))


# ---- compare ----

def cmd_compare(a):
    doc = load(a.file)
    if doc.get("schema") != "libtrace-compare/1":
        die("not a comparison: %r" % doc.get("schema"))
    status = {(r["name"]): r["status"] for r in doc["regions"]}
    for s in a.status or []:
        want, name = s.split("=", 1)
        got = status.get(name)
        if got != want:
            r = [x for x in doc["regions"] if x["name"] == name]
            die("region %s is %s, expected %s: %s" % (name, got, want, r))
    if a.verdict and doc["verdict"] != a.verdict:
        die("verdict %s, expected %s" % (doc["verdict"], a.verdict))
    counts = {}
    for r in doc["regions"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    for k, v in doc["summary"].items():
        if counts.get(k, 0) != v:
            die("summary.%s is %d, %d regions have that status" % (k, v, counts.get(k, 0)))
    print("check_report: comparison %s (%s)" % (doc["verdict"], ", ".join(
        "%s %d" % kv for kv in sorted(counts.items()))))


# ---- same: a trace directory's profile and its archive's ----

def cmd_same(a):
    t = load(a.trace)["runs"][0]
    o = load(a.archive)["runs"][0]
    tr = {(r["kind"], r["name"]): r for r in t["regions"]}
    orr = {(r["kind"], r["name"]): r for r in o["regions"]}
    if set(tr) != set(orr):
        die("regions only in the trace: %s; only in the archive: %s" %
            (sorted(set(tr) - set(orr)), sorted(set(orr) - set(tr))))
    for key, x in sorted(tr.items()):
        y = orr[key]
        for k in ("role", "calls", "threads"):
            if x[k] != y[k]:
                die("%s %s: %s %r from the trace, %r from the archive" % (key + (k, x[k], y[k])))
        tol = x["calls"]  # 1 ns per call: each time stamp rounds on its own
        for k in ("inclusive_ns", "exclusive_ns", "min_ns", "max_ns", "thread_min_ns",
                  "thread_max_ns"):
            if abs(x[k] - y[k]) > tol:
                die("%s %s: %s %d from the trace, %d from the archive" % (key + (k, x[k], y[k])))
    if [(r["kind"], r["name"]) for r in t["regions"]] != \
            [(r["kind"], r["name"]) for r in o["regions"]]:
        die("the regions are not in the same order")
    tm, om = t["metadata"], o["metadata"]
    for k in ("program", "executable", "arguments", "host", "hosts", "processes", "threads",
              "ranks", "duration_ns", "git_revision"):
        if tm[k] != om[k]:
            die("metadata.%s: %r from the trace, %r from the archive" % (k, tm[k], om[k]))
    if abs(tm["start_unix_ns"] - om["start_unix_ns"]) > 10 ** 9:
        die("metadata.start: %s from the trace, %s from the archive" % (tm["start"], om["start"]))
    for k in ("events", "lost_events", "truncated_threads", "cut_processes", "unclosed_regions"):
        if t["totals"][k] != o["totals"][k]:
            die("totals.%s: %d from the trace, %d from the archive" %
                (k, t["totals"][k], o["totals"][k]))
    if len(t["processes"]) != len(o["processes"]):
        die("%d processes from the trace, %d from the archive" %
            (len(t["processes"]), len(o["processes"])))
    for p, q in zip(t["processes"], o["processes"]):
        for k in ("name", "pid", "host", "program", "ended", "lifetime_ns", "in_regions_ns",
                  "events", "lost_events"):
            if p[k] != q[k]:
                die("process %s: %s %r from the trace, %r from the archive" %
                    (p["name"], k, p[k], q[k]))
        th = [(x["index"], x["tid"], x["name"], x["lifetime_ns"], x["in_regions_ns"],
               x["events"], x["lost_events"]) for x in p["threads"]]
        oh = [(x["index"], x["tid"], x["name"], x["lifetime_ns"], x["in_regions_ns"],
               x["events"], x["lost_events"]) for x in q["threads"]]
        if th != oh:
            die("process %s: threads %r from the trace, %r from the archive" % (p["name"], th, oh))
    print("check_report: the archive's profile is the trace's (%d regions, %d threads)" %
          (len(tr), tm["threads"]))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("totals")
    p.add_argument("--dump", required=True)
    p.add_argument("trace")
    p.add_argument("profile")
    p = sub.add_parser("schema")
    p.add_argument("--readme", required=True)
    p.add_argument("file")
    p = sub.add_parser("csv")
    p.add_argument("file")
    p.add_argument("profile")
    p = sub.add_parser("table")
    p.add_argument("file")
    p.add_argument("profile")
    p.add_argument("--top", type=int, default=0)
    p = sub.add_parser("compare")
    p.add_argument("file")
    p.add_argument("--status", action="append")
    p.add_argument("--verdict")
    p = sub.add_parser("same")
    p.add_argument("trace")
    p.add_argument("archive")
    a = ap.parse_args()
    {"totals": cmd_totals, "schema": cmd_schema, "csv": cmd_csv, "table": cmd_table,
     "compare": cmd_compare, "same": cmd_same}[a.cmd](a)


if __name__ == "__main__":
    main()
