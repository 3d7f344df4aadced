#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Call-stack sampling (LIBTRACE_STACK_SAMPLING): stacks unwound through DWARF in code built
# without frame pointers, as OTF2 CallingContextSample events; libunwind stays private (not a
# dependency of libtrace.so, not the program's C++ unwinder); a program's own SIGPROF timer
# keeps working.
. "$(dirname "$0")/lib.sh"
need_converter
grep -q _ULx86_64_init_local2 "$LIB" || skip "libtrace.so was built without libunwind.h: no stack sampling"
CFLAGS="-O2 -g -fomit-frame-pointer -Wall -Wextra -Werror"
gcc $CFLAGS "$SRC/tests/programs/stack_split.c" -o "$WORK/stack_split" || fail "build stack_split"
gcc $CFLAGS "$SRC/tests/programs/own_sigprof.c" -o "$WORK/own_sigprof" || fail "build own_sigprof"
g++ $CFLAGS "$SRC/tests/programs/throw_catch.cpp" -o "$WORK/throw_catch" || fail "build throw_catch"
gcc $CFLAGS "$SRC/tests/programs/blocked_spin.c" -o "$WORK/blocked_spin" -lpthread ||
	fail "build blocked_spin"

# libtrace.so needs the C library alone at load time.
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] || fail "libtrace.so needs: $needed"

# 1 s of CPU, 70 % in hot_a, 30 % in hot_b, both reached through main -> outer -> inner.
LIBTRACE_STACK_SAMPLING=1ms traced "$WORK/split.trace" "$WORK/stack_split" 1000 >"$WORK/out" ||
	fail "stack_split under sampling"
"$CONVERT" -q "$WORK/split.trace" -o "$WORK/split.otf2" || fail "trace2otf2"
otf2-print -Werror "$WORK/split.otf2/traces.otf2" >/dev/null || fail "otf2-print -Werror"
/usr/bin/python3 "$SRC/tests/e2e/check_otf2.py" "$WORK/split.otf2/traces.otf2" >/dev/null ||
	fail "check_otf2"
/usr/bin/python3 - "$WORK/split.otf2/traces.otf2" <<'PY' || fail "the samples"
import collections, sys
import otf2
n, through, a, b = 0, 0, 0, 0
entered = collections.defaultdict(list)  # location -> contexts of its open regions
with otf2.reader.open(sys.argv[1]) as tr:
    gens = list(tr.definitions.interrupt_generators)
    assert len(gens) == 1 and gens[0].period > 0, gens
    for loc, ev in tr.events:
        kind = type(ev).__name__
        # OTF2: calling-context events exclude Enter and Leave in one archive.
        assert kind not in ("Enter", "Leave"), "%s beside stack samples" % kind
        if kind == "CallingContextEnter":
            entered[loc].append(ev.calling_context)
        elif kind == "CallingContextLeave":
            assert entered[loc] and entered[loc].pop() == ev.calling_context, ev
        if kind != "CallingContextSample":
            continue
        path, c, nodes = [], ev.calling_context, []
        while c is not None:
            path.append(c.region.name)
            nodes.append(c)
            c = c.parent
        path.reverse()  # outermost first
        # the sample lies under the last region entered, within the unwind distance
        if entered[loc]:
            top = entered[loc][-1]
            assert top in nodes and nodes.index(top) < ev.unwind_distance, (path, top)
        n += 1
        # main: the region of main (its name has its line), the unwound frames above it
        mains = [i for i, p in enumerate(path) if p == "main" or p.startswith("main @")]
        if mains and path[mains[-1] + 1:mains[-1] + 3] == ["outer", "inner"]:
            through += 1
        assert len(mains) <= 1, "main twice in a sample's path: %s" % path
        a += "hot_a" in path
        b += "hot_b" in path
assert n >= 30, "only %d samples" % n
print("samples: %d, %d through main -> outer -> inner (%.0f %%); hot_a %d, hot_b %d" % (
    n, through, 100 * through / n, a, b))
assert through >= 0.9 * n, "fewer than 90 % unwound to main through both levels"
PY

# trace-report's samples, from the trace and from the archive: the same; hot_a has 70 % of
# the CPU time the samples stand for (each stands for one period or, where the kernel's
# tick made the timer late, several), hot_b 30 %.
"$BUILD/trace-report" --json -o "$WORK/t.json" "$WORK/split.trace" || fail "trace-report trace"
"$BUILD/trace-report" --json -o "$WORK/a.json" "$WORK/split.otf2" || fail "trace-report archive"
"$BUILD/trace-report" "$WORK/split.trace" >"$WORK/table" || fail "trace-report table"
grep -q '^Call tree of the samples' "$WORK/table" || fail "no call tree in the table"
/usr/bin/python3 - "$WORK/t.json" "$WORK/a.json" <<'PY' || fail "trace-report's samples"
import json, sys
t, a = (json.load(open(f))["runs"][0].get("samples") for f in sys.argv[1:])
assert t and t == a, "the trace's samples differ from the archive's"
f = {r["name"]: r for r in t["functions"]}
ha, hb = f["hot_a"]["total_ns"], f["hot_b"]["total_ns"]
share = ha / (ha + hb)
print("trace-report: %d samples, %.0f ms of CPU; hot_a %.0f %%, hot_b %.0f %%" % (
    t["count"], t["cpu_ns"] / 1e6, 100 * share, 100 - 100 * share))
assert 0.6 <= share <= 0.8, "hot_a's share is %.2f, not 0.7 +- 0.1" % share
assert f["outer"]["total"] == f["inner"]["total"] >= 0.9 * t["count"], f
assert t["regions"][0]["name"].startswith("main @"), t["regions"]
assert t["paths"][0]["name"].startswith("outer > inner > hot_"), t["paths"][0]
PY
# A saved profile keeps them: read back, written again, the same.
"$BUILD/trace-report" --json -o "$WORK/again.json" "$WORK/t.json" || fail "trace-report saved"
/usr/bin/python3 -c 'import json, sys
a, b = (json.load(open(f))["runs"][0]["samples"] for f in sys.argv[1:])
sys.exit(0 if a == b else "the saved profile lost its samples")' "$WORK/t.json" "$WORK/again.json" ||
	fail "samples of a saved profile"
"$BUILD/trace-report" "$WORK/t.json" | grep -q '^Stack samples: ' || fail "no samples in a saved profile's table"

# trace-report reads the archive's calling-context events as its regions.
/usr/bin/python3 "$SRC/tests/e2e/check_report.py" same "$WORK/t.json" "$WORK/a.json" ||
	fail "the archive's profile is not the trace's"
/usr/bin/python3 "$SRC/tests/e2e/check_report.py" schema --readme "$SRC/docs/profiles-and-ci.md" "$WORK/t.json" ||
	fail "the profile's samples are not as documented"

# Paraver: each sample as Extrae writes its samples, the function at each depth (30000000 +
# depth) and its line (30000100 + depth), labelled in the .pcf.
"$CONVERT" -q -f paraver "$WORK/split.trace" -o "$WORK/split.prv" || fail "trace2otf2 -f paraver"
/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/split.prv" >/dev/null || fail "check_prv"
/usr/bin/python3 - "$WORK/split.prv" "$WORK/split.pcf" "$WORK/t.json" <<'PY' || fail "Paraver samples"
import json, re, sys
prv, pcf = open(sys.argv[1]).read(), open(sys.argv[2]).read()
count = json.load(open(sys.argv[3]))["runs"][0]["samples"]["count"]
n = sum(len(re.findall(r":30000000:\d+", l)) for l in prv.splitlines() if l.startswith("2:"))
assert n == count, "%d samples in the .prv, %d in the profile" % (n, count)
m = re.search(r"EVENT_TYPE\n0 +30000000 +Sampled functions\nVALUES\n(.*?)\n\n", pcf, re.S)
assert m and "spin" in m.group(1), "no labels of 30000000"
for depth, name in ((1, "hot_a"), (2, "inner"), (3, "outer")):
    assert re.search(r"0 +%d +Sampled functions \(depth %d\)\nVALUES\n[^E]*%s" % (
        30000000 + depth, depth, name), pcf), "%s not labelled at depth %d" % (name, depth)
assert "30000100" in pcf, "no sampled lines"
print("Paraver: %d samples as Extrae's sampling events" % n)
PY

# Without the setting: no samples, the same archive as before.
traced "$WORK/plain.trace" "$WORK/stack_split" 50 >/dev/null || fail "stack_split plain"
"$DUMP" --stats "$WORK/plain.trace" | grep -q 'STACK=' && fail "samples without the setting"

# libunwind loaded, yet C++ exceptions unwind with libgcc's unwinder.
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$WORK/bind" LIBTRACE_STACK_SAMPLING=1ms \
	traced "$WORK/throw.trace" "$WORK/throw_catch" 100000 >"$WORK/out" || fail "throw_catch"
grep -q 'caught 100000' "$WORK/out" || fail "throw_catch: $(cat "$WORK/out")"
# ld.so's lines: "binding file FROM [0] to TO [0]: normal symbol `SYM'".
grep -h "normal symbol \`_Unwind_" "$WORK"/bind.* >"$WORK/unwind-bindings" ||
	fail "no binding of an _Unwind_ function seen"
grep -E ' to [^ ]*libunwind[^ ]* ' "$WORK/unwind-bindings" >"$WORK/bad" &&
	fail "_Unwind_ functions bound to libunwind: $(head -1 "$WORK/bad")"
grep -qE "file [^ ]*libstdc\+\+[^ ]* .* to [^ ]*libgcc_s[^ ]* .*_Unwind_RaiseException'" \
	"$WORK/unwind-bindings" ||
	fail "libstdc++ does not throw through libgcc_s: $(grep RaiseException "$WORK/unwind-bindings")"
"$DUMP" --stats "$WORK/throw.trace" | grep -q 'STACK=' || fail "throw_catch: no samples"

# A program's own ITIMER_PROF and SIGPROF handler keep working under sampling.
LIBTRACE_STACK_SAMPLING=1ms traced "$WORK/prof.trace" "$WORK/own_sigprof" >"$WORK/out" ||
	fail "own_sigprof under sampling: $(cat "$WORK/out")"
"$DUMP" --stats "$WORK/prof.trace" | grep -q 'STACK=' || fail "own_sigprof: no samples"
echo "own timer: $(cat "$WORK/out")"

# A thread that blocks every signal is not sampled (and runs on); a forked child is sampled
# and execs cleanly (a pending sample does not kill the new program).
LIBTRACE_STACK_SAMPLING=100us traced "$WORK/blocked.trace" "$WORK/blocked_spin" >"$WORK/out" ||
	fail "blocked_spin under sampling: $(cat "$WORK/out")"
grep -qx ok "$WORK/out" || fail "blocked_spin: $(cat "$WORK/out")"
"$DUMP" --stats "$WORK/blocked.trace" >"$WORK/stats" || fail "trace-dump blocked"
/usr/bin/python3 - "$WORK/stats" <<'PY' || fail "blocked_spin's samples: $(cat "$WORK/stats")"
import re, sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
samples = {}
for f in lines:  # "<process dir> <thread> records=... STACK=n ..."
    m = [x for x in f if x.startswith("STACK=")]
    samples[(f[0], f[1])] = int(m[0][6:]) if m else 0
parent = [p for p, t in samples if t == "1"][0]  # the process with the second thread
assert samples.get((parent, "0"), 0) > 0, "the main thread has no samples"
assert samples.get((parent, "1"), 0) == 0, "the thread that blocks signals was sampled"
child = [k for k in samples if k[0] != parent and samples[k] > 0]
assert child, "the forked child has no samples: %s" % samples
print("blocked thread: 0 samples; main %d; child %d" % (samples[(parent, "0")], samples[child[0]]))
PY
# ... and is said when it ends: its 200 ms of CPU time are 2000 periods of 100 us.
blocked=$(awk '$1 == "stack_blocked" && $2 == 1 { print $4 }' "$WORK"/blocked.trace/*/meta)
[ "${blocked:-0}" -ge 1000 ] || fail "the blocked thread's samples not taken: '$blocked'"
echo "blocked thread: $blocked samples not taken"
# OpenMP tasks (untied ones move between threads under libomp) with samples: task switches
# and calling contexts together; the tasks stay whole, the samples the same in the archive.
occ=gcc
echo 'int main(void){return 0;}' >"$WORK/probe.c"
clang -fopenmp "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null && occ=clang
$occ -fopenmp -O2 -g "$SRC/tests/programs/omp_bots.c" -o "$WORK/omp_bots" || fail "build omp_bots"
OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive LIBTRACE_STACK_SAMPLING=100us \
	traced "$WORK/bots.trace" "$WORK/omp_bots" 14 >"$WORK/out" || fail "omp_bots sampled"
grep -q WRONG "$WORK/out" && fail "omp_bots: $(cat "$WORK/out")"
"$CONVERT" -q "$WORK/bots.trace" -o "$WORK/bots.otf2" || fail "trace2otf2 omp_bots"
otf2-print -Werror "$WORK/bots.otf2/traces.otf2" >/dev/null || fail "otf2-print omp_bots"
(cd "$SRC/tests/e2e" && /usr/bin/python3 check_otf2.py "$WORK/bots.otf2/traces.otf2" >/dev/null &&
	/usr/bin/python3 check_omp.py "$WORK/bots.otf2/traces.otf2" --tasks 2460 \
		--task-resumptions 0 --tasks-in-parallel --waits-cover-tasks >"$WORK/omp.log") ||
	fail "omp_bots ($occ) sampled: $(tail -5 "$WORK/omp.log")"
"$BUILD/trace-report" --json -o "$WORK/bt.json" "$WORK/bots.trace" || fail "report bots trace"
"$BUILD/trace-report" --json -o "$WORK/ba.json" "$WORK/bots.otf2" || fail "report bots archive"
/usr/bin/python3 - "$WORK/bt.json" "$WORK/ba.json" <<'PY' || fail "omp_bots: samples or anomalies"
import json, sys
t, a = (json.load(open(f))["runs"][0] for f in sys.argv[1:])
assert t["totals"]["anomalies"] == a["totals"]["anomalies"] == 0, "anomalies"
s, z = t.get("samples"), a.get("samples")
assert s and z and (s["count"], s["cpu_ns"]) == (z["count"], z["cpu_ns"]), "the samples differ"
# Where they were taken is the same; the frames kept below an untied task that moved may
# differ (its contexts are those of the thread it began on, docs/tracing.md).
self = lambda x: {f["name"]: f["self"] for f in x["functions"] if f["self"]}
assert self(s) == self(z), "the functions samples were taken in differ"
print("omp_bots sampled: %d samples, the same in the archive" % s["count"])
PY
echo "e2e.stack: ok"
