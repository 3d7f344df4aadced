#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-report's call tree, memory and data movement against a truth worked out by hand:
# - slow_region 1 2 sleep extra: main holds "extra" three deep (the innermost waits 200 us),
#   two pthread_create and two pthread_join; each of the 2 threads' start routine holds
#   "compute" 4 times (6 ms each) and "io" 4 times (3 ms each).  Every node's calls are
#   exact, its times at least the waits and each node's exclusive time its inclusive less
#   its children's; the bottom-up tree gives each region the exclusive time of its nodes.
# - kokkos_app 1000 6 (Debian's Kokkos 3.4): Views x, y, y_host of 8000 bytes, grid of 800
#   and Kokkos' own scratch of 11264 live at once: a Host high-water mark of 36064 bytes
#   with those 5 live; 4 freed; kernels typed for/reduce/scan; the deep copy of 8000 bytes.
# - a CUDA trace under CUPTI (mk_gpu_trace.py): device memory 4096 + 8192 live at once, a
#   failed allocation and a bad free ignored; 2048 bytes of managed memory.
# The same from the saved JSON profile (read back) and from the OTF2 archives.
. "$(dirname "$0")/lib.sh"
REPORT=$BUILD/trace-report
[ -x "$REPORT" ] || skip "trace-report was not built"
traced "$WORK/slow" "$TESTBIN/slow_region" 1 2 sleep extra >/dev/null || fail "slow_region failed"
"$REPORT" --json -o "$WORK/slow.json" "$WORK/slow" || fail "trace-report --json: $?"
"$REPORT" --tree --all "$WORK/slow" >"$WORK/slow.tree" || fail "trace-report --tree: $?"
"$REPORT" --tree --all "$WORK/slow.json" >"$WORK/slow-saved.tree" || fail "trace-report --tree (saved): $?"
tail -n +2 "$WORK/slow.tree" >"$WORK/a"
tail -n +2 "$WORK/slow-saved.tree" >"$WORK/b"
cmp -s "$WORK/a" "$WORK/b" || fail "the tree read back from the saved profile differs"
archive=
if "$BUILD/trace2otf2" --help | grep -q '^  otf2 '; then
	"$BUILD/trace2otf2" -q "$WORK/slow" -o "$WORK/slow.otf2" || fail "trace2otf2: $?"
	"$REPORT" --json -o "$WORK/slow-otf2.json" "$WORK/slow.otf2" || fail "trace-report on the archive: $?"
	archive=$WORK/slow-otf2.json
fi
/usr/bin/python3 - "$WORK/slow.json" "$WORK/slow.tree" $archive <<'PY' || fail "slow_region's call tree"
import json, re, sys
def nodes(path):
    return json.load(open(path))["runs"][0]["tree"]
tree = nodes(sys.argv[1])
def path(i):
    p = []
    while i >= 0:
        p.append(tree[i]["name"].split(" @")[0])
        i = tree[i]["parent"]
    return " > ".join(reversed(p))
by = {}
for i, n in enumerate(tree):
    by.setdefault(path(i), []).append(n)
def one(p):
    assert p in by and len(by[p]) == 1, "no single node %s (have %s)" % (p, sorted(by))
    return by[p][0]
ms = 1000000
want = {"main > extra": 1, "main > extra > extra": 1,
        "main > extra > extra > extra": 1, "main > pthread_create": 2,
        "main > pthread_join": 2, "work > compute": 8, "work > io": 8, "work": 2}
for p, calls in want.items():
    n = one(p)
    assert n["calls"] == calls, "%s: %d calls, want %d" % (p, n["calls"], calls)
assert one("work > compute")["inclusive_ns"] >= 8 * 6 * ms
assert one("work > compute")["inclusive_ns"] < 8 * 6 * ms * 2
assert one("work > io")["inclusive_ns"] >= 8 * 3 * ms
inner = one("main > extra > extra > extra")
assert inner["exclusive_ns"] >= 200000 and inner["exclusive_ns"] == inner["inclusive_ns"]
# Every node: exclusive = inclusive - its children's inclusive; children within it.
for i, n in enumerate(tree):
    kids = [c for c in tree if c["parent"] == i]
    assert n["parent"] < i, "node %d comes before its parent" % i
    assert n["exclusive_ns"] == n["inclusive_ns"] - sum(c["inclusive_ns"] for c in kids), path(i)
# The bottom-up tree: each region's exclusive time is its nodes' sum.
text = open(sys.argv[2]).read().split("Bottom-up")[1]
fmt = lambda ns: "%.3f ms" % (ns / 1e6) if ns >= 1e6 else "%.3f us" % (ns / 1e3)
for name in ("compute", "io"):
    total = sum(n["exclusive_ns"] for n in tree if n["name"] == name)
    line = [l for l in text.splitlines() if re.search(r"  %s \[user\]$" % name, l)][0]
    assert line.split()[0] + " " + line.split()[1] == fmt(total), (line, fmt(total))
if len(sys.argv) > 3:  # from the archive: the same nodes, calls and times
    other = nodes(sys.argv[3])
    key = lambda t: sorted((n["name"], n["kind"], n["parent"], n["calls"], n["inclusive_ns"],
                            n["exclusive_ns"]) for n in t)
    assert key(other) == key(tree), "the archive's tree differs"
print("slow_region: %d nodes, calls exact, times consistent, bottom-up sums%s" % (
    len(tree), ", the archive's tree the same" if len(sys.argv) > 3 else ""))
PY

if [ -x "$TESTBIN/kokkos_app" ]; then
	(unset KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY KOKKOS_TOOLS_ARGS
	 traced "$WORK/kokkos" "$TESTBIN/kokkos_app" 1000 6 >/dev/null) || fail "kokkos_app failed"
	"$REPORT" --json -o "$WORK/kokkos.json" "$WORK/kokkos" || fail "trace-report --json kokkos: $?"
	"$REPORT" "$WORK/kokkos" >"$WORK/kokkos.txt" || fail "trace-report kokkos: $?"
	grep -q 'Host: high water 35.22 KiB (36064 bytes) at .*, 5 allocations live; 5 allocated, 4 freed, 11.00 KiB live at the end' \
		"$WORK/kokkos.txt" || { cat "$WORK/kokkos.txt" >&2; fail "kokkos: the memory section"; }
	/usr/bin/python3 - "$WORK/kokkos.json" <<'PY' || fail "kokkos memory and kernels"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
m = run["memory"]
assert len(m) == 1 and m[0]["space"] == "Host", m
m = m[0]
assert m["high_water_bytes"] == 3 * 8000 + 800 + 11264, m
assert (m["allocations"], m["frees"], m["end_bytes"], m["live_at_high_water"]) == (5, 4, 11264, 5), m
live = [(l["label"], l["bytes"]) for l in m["largest_live"]]
assert live == [("Kokkos::Serial::scratch_mem", 11264), ("x", 8000), ("y", 8000), ("y_host", 8000),
                ("grid", 800)], live
types = {r["name"]: r.get("type") for r in run["regions"]}
assert (types["axpy"], types["dot"], types["prefix"], types["solve"]) == ("for", "reduce", "scan", None), types
copy = [r for r in run["regions"] if r["name"].startswith("Kokkos::deep_copy")]
assert len(copy) == 1 and copy[0]["bytes"] == 8000 and copy[0]["bytes_per_second"] > 0, copy
print("kokkos: high water 36064 bytes with its 5 Views, kernels typed, a deep copy of 8000 bytes")
PY
else
	echo "kokkos: not tested (kokkos_app not built: libtrilinos-kokkos-dev missing)"
fi

exe=$TESTBIN/count_events
off=$(nm "$exe" 2>/dev/null | awk '$3 == "main" { print $1 }')
python3 "$SRC/tests/e2e/mk_gpu_trace.py" "$WORK/gpu" "$exe" "${off:-0}" cupti || fail "writing the GPU trace"
"$REPORT" --json -o "$WORK/gpu.json" "$WORK/gpu" || fail "trace-report --json gpu: $?"
/usr/bin/python3 - "$WORK/gpu.json" <<'PY' || fail "GPU memory"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
m = {x["space"]: x for x in run["memory"]}
d, u = m["device memory"], m["managed memory"]
assert (d["high_water_bytes"], d["allocations"], d["frees"], d["end_bytes"]) == (12288, 2, 1, 8192), d
assert [l["bytes"] for l in d["largest_live"]] == [8192, 4096], d
assert (u["high_water_bytes"], u["end_bytes"]) == (2048, 0), u
moved = {r["name"]: r["bytes"] for r in run["regions"] if "bytes" in r}
assert moved.get("cudaMemcpy") == 4096, moved
print("gpu: device memory high water 12288 bytes, managed 2048, copies counted")
PY
# From the OTF2 archives of the same traces: the same memory, bytes moved and kernel patterns
# (a GPU allocation's label has no call site there).
if [ -n "$archive" ]; then
	for t in kokkos gpu; do
		[ -d "$WORK/$t" ] || continue
		"$BUILD/trace2otf2" -q "$WORK/$t" -o "$WORK/$t.otf2" || fail "$t: trace2otf2: $?"
		"$REPORT" --json -o "$WORK/$t-otf2.json" "$WORK/$t.otf2" || fail "$t: trace-report on the archive: $?"
		/usr/bin/python3 - "$WORK/$t.json" "$WORK/$t-otf2.json" <<'PY' || fail "$t: the archive's memory"
import json, sys
a, b = (json.load(open(p))["runs"][0] for p in sys.argv[1:3])
def mem(run):
    return [(m["space"], m["high_water_bytes"], m["allocations"], m["frees"], m["end_bytes"],
             m["live_at_high_water"], [l["bytes"] for l in m["largest_live"]]) for m in run["memory"]]
def regs(run):
    return sorted((r["name"], r.get("type"), r.get("bytes")) for r in run["regions"])
assert mem(a) == mem(b), (mem(a), mem(b))
assert regs(a) == regs(b), set(regs(a)) ^ set(regs(b))
print("%s: the archive gives the same memory, bytes and kernel patterns" % sys.argv[1].split("/")[-1])
PY
	done
fi
echo "report-tree: ok"
