#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/gpu-check.sh - the CUDA end-to-end checks that need an NVIDIA GPU (CI has none).
#
#   tools/gpu-check.sh [BUILD_DIR]
#
# Builds tests/programs/cuda_calls.cu with the static CUDA runtime (nvcc's default) and the
# shared one, runs each under libtrace.so (2 host threads x 3 rounds) and checks, from the
# raw records (trace-dump):
#   - CUPTI recorded the process (meta `gpu cupti N`), so the cudart wrappers stayed quiet;
#   - every round's runtime calls are on the thread that made them, none twice;
#   - the device's work: one kernel record per launch (2 per round), one host-to-device and
#     one device-to-host copy of 4096 bytes, one set, each joined by its correlation id to
#     the call that issued it;
#   - device times on the host timeline: each kernel or copy starts after its call's ENTER
#     and ends before the LEAVE of the thread's next synchronising call; on a stream,
#     kernels run in launch order without overlap;
#   - with the shared cudart, every call of the program's has its call site (the wrappers
#     note it for CUPTI); the static cudart's calls have none;
#   - the leak report: the allocation the program never frees (8192 bytes per round).
# Then asynchronous CUDA: graphs, pinned copies, stream-ordered allocation (cuda_async.cu),
# and recording less: started paused, LIBTRACE_MIN_DURATION.
# Converts with trace2otf2 where it was built (OTF2 libraries present) and checks the
# archive with otf2-print and check_gpu_otf2.py.  BUILD_DIR: an existing build (e.g. one
# carried to the GPU machine) or where to configure one (default build-gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
work=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-gpu.XXXXXX")
command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "gpu-check: nvidia-smi not found"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || {
	echo "gpu-check: nvcc not found" >&2
	exit 2
}
"$nvcc" --version | tail -2
if [ ! -e "$build/libtrace.so" ]; then
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" -j"$(nproc)" --target trace trace-dump >/dev/null
	cmake --build "$build" -j"$(nproc)" --target trace2otf2 >/dev/null 2>&1 || true
fi
lib=$PWD/$build/libtrace.so
[ "${build#/}" != "$build" ] && lib=$build/libtrace.so
threads=2 rounds=3
status=0
for kind in static shared; do
	exe=$work/cuda_calls_$kind
	"$nvcc" -cudart $kind -O2 -o "$exe" tests/programs/cuda_calls.cu
	trace=$work/$kind.trace
	echo "== $kind cudart: $exe $threads $rounds"
	LD_PRELOAD=$lib LIBTRACE_OUTPUT=$trace LIBTRACE_QUIET=1 "$exe" $threads $rounds
	grep -a '^gpu' "$trace"/*/meta || true
	if ! grep -aq '^gpu cupti' "$trace"/*/meta; then
		echo "gpu-check: CUPTI did not record this process (see gpu_off above): no GPU, no driver?"
		status=1
		continue
	fi
	"$build/trace-dump" "$trace" >"$work/$kind.dump"
	python3 - "$work/$kind.dump" $threads $rounds $kind <<'EOF' || status=1
import collections, re, sys
dump, threads, rounds, cudart = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
calls, acts, problems = [], [], []
stack = collections.defaultdict(list)
for line in open(dump):
    f = line.split()
    if len(f) < 4:
        continue
    th, ts, kind = int(f[1]), int(f[2]), f[3]
    if kind == "GPU_ENTER":
        corr = int(re.search(r"corr=(\d+)", line).group(1))
        at = re.search(r" at=(0x[0-9a-f]+)", line)
        stack[th].append(dict(thread=th, api=f[4], op=f[5], name=f[6].strip('"'), corr=corr, enter=ts,
                              at=at.group(1) if at else None, line=line))
    elif kind == "GPU_LEAVE" and stack[th]:
        c = stack[th].pop()
        c["leave"] = ts
        c["rc"] = int(re.search(r"rc=(-?\d+)", line).group(1))
        calls.append(c)
    elif kind == "GPU_ACTIVITY":
        g = dict(kind=f[4], line=line)
        for k in ("stream", "corr", "start", "end", "bytes"):
            m = re.search(r"\b%s=(-?\d+)" % k, line)
            g[k] = int(m.group(1)) if m else None
        g["dir"] = f[5] if f[4] == "copy" else None
        acts.append(g)
apis = collections.Counter(c["api"] for c in calls)
print("calls by source:", dict(apis))
if apis.get("cudart"):
    problems.append("the cudart wrappers recorded %d calls while CUPTI was active" % apis["cudart"])
count = collections.Counter(c["name"] for c in calls if c["thread"] != 0)
n = threads * rounds
want = {"cudaMalloc": 3 * n, "cudaFree": 2 * n, "cudaMemcpy": n, "cudaMemcpyAsync": n,
        "cudaMemsetAsync": n, "cudaDeviceSynchronize": n, "cudaStreamSynchronize": n,
        "cudaEventSynchronize": n}
for name, k in want.items():
    got = sum(v for key, v in count.items() if key == name or key.startswith(name + "_v"))
    if got != k:
        problems.append("%s: %d calls recorded, the program made %d" % (name, got, k))
launches = [c for c in calls if c["op"] == "launch"]
# Call sites: the shared cudart's wrappers note them for CUPTI; a static cudart has none.
wrapped = [c for c in calls if c["thread"] != 0 and (c["op"] == "launch" or any(
    c["name"] == w or c["name"].startswith(w + "_v") for w in want))]
sited = sum(1 for c in wrapped if c["at"])
print("program calls with a call site: %d of %d" % (sited, len(wrapped)))
if cudart == "shared" and sited != len(wrapped):
    problems.append("%d of %d calls to the shared cudart have no call site" % (len(wrapped) - sited, len(wrapped)))
if len(launches) != 2 * n:
    problems.append("%d launches recorded, the program made %d" % (len(launches), 2 * n))
if any(c["rc"] for c in calls if c["thread"] != 0):
    problems.append("failed calls: %s" % [c["name"] for c in calls if c["rc"] and c["thread"] != 0][:5])
by_corr = {c["corr"]: c for c in calls}
kinds = collections.Counter(a["kind"] for a in acts)
print("device records:", dict(kinds))
kernels = [a for a in acts if a["kind"] == "kernel"]
copies = [a for a in acts if a["kind"] == "copy"]
if len(kernels) != 2 * n:
    problems.append("%d kernel records for %d launches" % (len(kernels), 2 * n))
for d, k in (("HtoD", n), ("DtoH", n)):
    got = [a for a in copies if a["dir"] == d]
    if len(got) != k or any(a["bytes"] != 4096 for a in got):
        problems.append("%s copies: %d (%s bytes), expected %d of 4096" % (d, len(got), sorted({a["bytes"] for a in got}), k))
if sum(1 for a in acts if a["kind"] == "set") != n:
    problems.append("%d set records, expected %d" % (kinds["set"], n))
syncs = sorted((c for c in calls if c["op"] == "sync"), key=lambda c: c["enter"])
worst = 0
for a in kernels + copies + [a for a in acts if a["kind"] == "set"]:
    c = by_corr.get(a["corr"])
    if not c:
        problems.append("no host call with correlation id %d: %s" % (a["corr"], a["line"].strip()))
        continue
    if a["start"] < c["enter"]:
        problems.append("%s starts %d ns before its call %s" % (a["kind"], c["enter"] - a["start"], c["name"]))
    nxt = [s for s in syncs if s["thread"] == c["thread"] and s["enter"] >= c["leave"]]
    if nxt and a["end"] > nxt[0]["leave"]:
        problems.append("%s ends %d ns after %s returned" % (a["kind"], a["end"] - nxt[0]["leave"], nxt[0]["name"]))
    worst = max(worst, a["end"] - a["start"])
streams = collections.defaultdict(list)
for a in kernels:
    streams[a["stream"]].append(a)
for s, ks in streams.items():
    ks.sort(key=lambda a: by_corr[a["corr"]]["enter"] if a["corr"] in by_corr else 0)
    for x, y in zip(ks, ks[1:]):
        if y["start"] < x["end"]:
            problems.append("stream %d: kernels overlap or run out of launch order" % s)
print("streams with kernels: %d; longest device operation %d ns" % (len(streams), worst))
for p in problems[:20]:
    print("PROBLEM:", p)
print("gpu-check: %s" % ("ok" if not problems else "%d problems" % len(problems)))
sys.exit(1 if problems else 0)
EOF
	if [ -x "$build/trace2otf2" ]; then
		"$build/trace2otf2" "$trace" -o "$work/$kind.otf2" 2>&1 | tail -15 || status=1
		if command -v otf2-print >/dev/null; then
			otf2-print --silent -Werror "$work/$kind.otf2/traces.otf2" || status=1
		fi
		if python3 -c 'import otf2' 2>/dev/null; then
			python3 tests/e2e/check_gpu_otf2.py "$work/$kind.otf2/traces.otf2" \
				--expect-kernels $((2 * threads * rounds)) --device-inside-host \
				--expect-leaks $((threads * rounds)) || status=1
		fi
	fi
done

# Asynchronous CUDA (tests/programs/cuda_async.cu, static cudart): the same results traced;
# one kernel record per launch that ran (3) and per graph node per graph launch (2 x 3),
# none for the launches captured into the graph; a graph's kernels joined to their
# cudaGraphLaunch, which names the graph and the stream; the event wait names its stream
# and event; the pinned copies (2 of 256 KiB); the stream-ordered allocation and free.
echo "== asynchronous CUDA: cuda_async 3"
exe=$work/cuda_async
"$nvcc" -O2 -o "$exe" tests/programs/cuda_async.cu
"$exe" 3 >"$work/async.plain" || status=1
LD_PRELOAD=$lib LIBTRACE_OUTPUT=$work/async.trace LIBTRACE_QUIET=1 "$exe" 3 >"$work/async.out" ||
	status=1
cmp -s "$work/async.plain" "$work/async.out" || {
	echo "PROBLEM: cuda_async printed otherwise traced"
	status=1
}
cat "$work/async.out"
"$build/trace-dump" "$work/async.trace" >"$work/async.dump"
python3 - "$work/async.dump" <<'EOF' || status=1
import collections, re, sys
calls, acts, problems = {}, [], []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 6 and f[3] == "GPU_ENTER" and f[4] == "cupti-runtime":
        corr = int(re.search(r"corr=(\d+)", line).group(1))
        calls[corr] = dict(name=f[6].strip('"'), enter=int(f[2]), line=line.strip())
    elif len(f) > 4 and f[3] == "GPU_ACTIVITY":
        g = dict(kind=f[4], line=line.strip())
        for k in ("corr", "start", "bytes"):
            m = re.search(r"\b%s=(\d+)" % k, line)
            g[k] = int(m.group(1)) if m else None
        acts.append(g)
kernels = [a for a in acts if a["kind"] == "kernel"]
by_call = collections.Counter(calls[a["corr"]]["name"] if a["corr"] in calls else "?" for a in kernels)
print("kernel records by call:", dict(by_call))
if by_call.get("cudaGraphLaunch") != 6 or sum(by_call.values()) != 9:
    problems.append("kernels: %s, expected 3 launches and 6 from cudaGraphLaunch" % dict(by_call))
for a in kernels:
    c = calls.get(a["corr"])
    if c and a["start"] < c["enter"]:
        problems.append("a kernel starts before its call: " + c["line"])
copies = [a for a in acts if a["kind"] == "copy"]
if len(copies) != 2 or any(a["bytes"] != 262144 for a in copies):
    problems.append("copies: %s" % [a["line"] for a in copies])
for name, what in (("cudaGraphLaunch", "obj=0x[1-9a-f]"), ("cudaStreamWaitEvent", "obj=0x[1-9a-f]"),
                   ("cudaMallocAsync", 'mem="stream-ordered device"'),
                   ("cudaFreeAsync", 'mem="stream-ordered device"')):
    lines = [c["line"] for c in calls.values() if c["name"] == name]
    if not lines or not all(re.search(what, l) for l in lines):
        problems.append("%s: %s" % (name, lines[:1] or "not recorded"))
for p in problems:
    print("PROBLEM:", p)
print("gpu-check async: %s" % ("ok" if not problems else "%d problems" % len(problems)))
sys.exit(1 if problems else 0)
EOF

# Recording less (static cudart, 2 threads x 1 round): started paused and never resumed,
# CUPTI starts and nothing of CUDA is written, the device's work included; with
# LIBTRACE_MIN_DURATION=1s the calls that give the device no work go, the rest stays with
# its device runs (4 kernels, 4 copies, 2 sets).
echo "== recording less: LIBTRACE_START_PAUSED=1, LIBTRACE_MIN_DURATION=1s"
LIBTRACE_START_PAUSED=1 LD_PRELOAD=$lib LIBTRACE_OUTPUT=$work/paused.trace LIBTRACE_QUIET=1 \
	"$work/cuda_calls_static" 2 1 >/dev/null || status=1
n=$("$build/trace-dump" "$work/paused.trace" | grep -c ' GPU_' || true)
if ! grep -aq '^gpu cupti' "$work"/paused.trace/*/meta || [ "$n" != 0 ]; then
	echo "PROBLEM: started paused: $n GPU records, meta: $(grep -ah '^gpu' "$work"/paused.trace/*/meta)"
	status=1
fi
LIBTRACE_MIN_DURATION=1s LD_PRELOAD=$lib LIBTRACE_OUTPUT=$work/short.trace LIBTRACE_QUIET=1 \
	"$work/cuda_calls_static" 2 1 >/dev/null || status=1
"$build/trace-dump" "$work/short.trace" >"$work/short.dump"
ops=$(awk '$4 == "GPU_ENTER" && $2 != 0 { print $6 }' "$work/short.dump" | sort | uniq -c |
	awk '{ printf "%s=%s ", $2, $1 }')
runs=$(awk '$4 == "GPU_ACTIVITY" && $5 != "sync" { print $5 }' "$work/short.dump" | sort |
	uniq -c | awk '{ printf "%s=%s ", $2, $1 }')
echo "min-duration: calls kept on the threads: $ops; device runs: $runs"
if [ "$ops" != "alloc=6 copy=4 free=4 launch=4 set=2 " ] || [ "$runs" != "copy=4 kernel=4 set=2 " ]; then
	echo "PROBLEM: LIBTRACE_MIN_DURATION kept other calls or lost device runs"
	status=1
fi
echo "gpu-check: traces and dumps in $work"
exit $status
