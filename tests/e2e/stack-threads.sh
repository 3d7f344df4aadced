#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Stack sampling of every thread: an OpenMP program spending its time in libm's sin (its
# samples reach the outlined function on every thread, no path is a library leaf alone, no
# frame is the tracer's), and `xz -T2`, whose worker threads block every signal: each worker
# either has samples or is named, with the samples it did not give, by the meta file, the
# converter and trace-report.
. "$(dirname "$0")/lib.sh"
grep -q _ULx86_64_init_local2 "$LIB" || skip "libtrace.so was built without libunwind.h: no stack sampling"
gcc -fopenmp -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror \
	"$SRC/tests/programs/omp_sin.c" -o "$WORK/omp_sin" -lm || skip "no OpenMP C compiler"

# check.py TRACE DUMP [JSON PROGRAM]: the samples of TRACE (trace-dump's STACK lines) hold no
# address of libtrace.so (the executable mappings of each process's meta file); with a
# profile, the fraction of its call paths that are one function outside PROGRAM (a library
# leaf without its callers) is below 5 %.
cat >"$WORK/check.py" <<'PY'
import glob, json, os, subprocess, sys
trace, dump = sys.argv[1], sys.argv[2]
ours = {}  # process directory -> libtrace.so's mappings
for meta in glob.glob(os.path.join(trace, "*", "meta")):
    proc = os.path.basename(os.path.dirname(meta))
    for line in open(meta, errors="replace"):
        f = line.split()
        if len(f) >= 5 and f[0] == "map" and os.path.basename(f[4]) == "libtrace.so":
            ours.setdefault(proc, []).append((int(f[1], 16), int(f[2], 16)))
assert ours, "no mapping of libtrace.so in the meta files"
n = mine = 0
for line in subprocess.run([dump, trace], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) < 4 or f[3] != "STACK":
        continue
    n += 1
    assert any(x.startswith("frames=") for x in f), "trace-dump prints no frames: " + line
    pcs = [int(x, 16) for x in f[4:] if x.startswith("0x")]
    if any(lo <= pc < hi for pc in pcs for lo, hi in ours.get(f[0], [])):
        mine += 1
print("%d samples, %d with a frame of libtrace.so" % (n, mine))
assert n, "no samples"
assert mine == 0, "%d samples hold the tracer's own frames" % mine
if len(sys.argv) > 3:
    s = json.load(open(sys.argv[3]))["runs"][0]["samples"]
    nm = subprocess.run(["nm", "--defined-only", sys.argv[4]], capture_output=True, text=True)
    own = {l.split()[-1] for l in nm.stdout.splitlines() if l.split()[1:2] in (["t"], ["T"])}
    bare = sum(p["self"] for p in s["paths"] if " > " not in p["name"] and p["name"] not in own)
    print("%d of %d samples are a library leaf alone: %s" % (bare, s["count"],
          [p["name"] for p in s["paths"] if " > " not in p["name"] and p["name"] not in own]))
    assert bare < 0.05 * s["count"], "%.0f %% of the samples are a leaf without callers" % (
        100 * bare / s["count"])
    outlined = [f for f in s["functions"] if "_omp_fn" in f["name"]]
    assert outlined and outlined[0]["total"] >= 0.9 * s["count"], (
        "fewer than 90 % of the samples reach the outlined function: %s" % outlined)
PY

# 1. OpenMP, two threads, nearly all the time in sin.
OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive LIBTRACE_STACK_SAMPLING=1ms \
	traced "$WORK/omp.trace" "$WORK/omp_sin" 20000000 >"$WORK/out" || fail "omp_sin sampled"
grep -q '^sum ' "$WORK/out" || fail "omp_sin: $(cat "$WORK/out")"
"$DUMP" --stats "$WORK/omp.trace" >"$WORK/stats" || fail "trace-dump omp_sin"
for th in 0 1; do
	awk -v t=$th '$2 == t' "$WORK/stats" | grep -q 'STACK=' ||
		fail "omp_sin: thread $th has no samples: $(cat "$WORK/stats")"
done
"$BUILD/trace-report" --json -o "$WORK/omp.json" "$WORK/omp.trace" || fail "trace-report omp_sin"
/usr/bin/python3 "$WORK/check.py" "$WORK/omp.trace" "$DUMP" "$WORK/omp.json" "$WORK/omp_sin" ||
	fail "omp_sin's samples"

# 2. xz -T2: liblzma's worker threads start with every signal blocked.
command -v xz >/dev/null || skip "xz missing (apt-get install xz-utils)"
head -c 6000000 /dev/urandom | base64 >"$WORK/in" || fail "input"
LIBTRACE_STACK_SAMPLING=1ms traced "$WORK/xz.trace" xz -T2 -1 --block-size=1MiB -c "$WORK/in" \
	>"$WORK/in.xz" || fail "xz -T2 sampled"
xz -dc "$WORK/in.xz" | cmp -s - "$WORK/in" || fail "xz -T2 under sampling: a wrong archive"
/usr/bin/python3 "$WORK/check.py" "$WORK/xz.trace" "$DUMP" || fail "xz's samples"
"$DUMP" --stats "$WORK/xz.trace" >"$WORK/stats" || fail "trace-dump xz"
"$BUILD/trace-report" "$WORK/xz.trace" >"$WORK/table" || fail "trace-report xz"
if [ -x "$CONVERT" ]; then
	"$CONVERT" -f paraver "$WORK/xz.trace" -o "$WORK/xz.prv" 2>"$WORK/summary" >/dev/null ||
		fail "trace2otf2 xz"
fi
workers=0
while read -r proc th rest; do
	[ "$th" = 0 ] && continue
	workers=$((workers + 1))
	case " $rest " in *" STACK="*) continue ;; esac # sampled
	tid=$(awk -v t="$th" '$1 == "stack_blocked" && $2 == t { print $3 }' "$WORK/xz.trace/$proc/meta")
	[ -n "$tid" ] || fail "xz's worker $th has no samples and is not said to block the signal"
	grep -q "^Warning: thread $proc/$th (tid $tid) blocked the sampling signal: [1-9][0-9]* samples not taken" \
		"$WORK/table" || fail "trace-report does not name worker $th: $(grep -i block "$WORK/table")"
	if [ -x "$CONVERT" ]; then
		grep -q "stack sampling: .* thread $th (tid $tid) blocked the sampling signal" "$WORK/summary" ||
			fail "trace2otf2 does not name worker $th: $(cat "$WORK/summary")"
	fi
	echo "xz worker $th (tid $tid): $(grep "thread $proc/$th " "$WORK/table")"
done <"$WORK/stats"
[ "$workers" -ge 1 ] || fail "xz -T2 started no worker: $(cat "$WORK/stats")"
echo "e2e.stack-threads: ok"
