#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CUDA through CUPTI without a GPU.  tests/gpu/mock_cupti.c stands in for libcupti (built
# against the real cupti.h, so with its ABI) and reports, through the CUPTI API, what CUPTI
# reports for a small CUDA program that tests/gpu/cupti_app.c runs on 3 threads (2
# allocations, copies both ways, a <<<>>> launch, a device synchronisation, a memset, a
# free, a driver API launch; one allocation leaks).  libtrace loads the mock as its CUPTI
# (LIBTRACE_CUPTI_LIB) when CUDA comes into the process.
#  1. Timestamp callback, buffers handed over by the program's threads, CUPTI started when
#     the program opens the CUDA driver (as nvcc's default static cudart does): same output
#     traced and untraced; meta `gpu cupti 130001`; per thread, the GPU_ENTER/LEAVE of
#     every call of the program in order, with its arguments, return code and the address
#     it made, the driver calls cudart makes inside its calls not recorded, the program's
#     own cuLaunchKernel recorded; a GPU_ACTIVITY for every kernel, copy, set and sync,
#     joined by correlation id to its call, on device 0, context 1, the thread's stream,
#     timed after the call's ENTER and before the LEAVE of the call that waits for it; the
#     totals are the program's own account.  Converted: otf2-print -Werror, check_otf2.py,
#     check_gpu_otf2.py, check_prv.py, and the converter's leak report names each leaked
#     allocation (address, 4096 bytes, cudaMalloc).
#  2. No timestamp callback (device times on CLOCK_REALTIME, mapped through paired
#     readings), buffers of 2 records handed over by the mock's worker thread while the
#     program runs, CUPTI started at init (libcudart in the process from the start): the
#     same checks, device times still inside the host windows.
#  3. CUPTI refuses the subscription (39, another tool subscribed): meta `gpu_off cupti`
#     says why, no GPU record, the program runs unchanged.
#  4. The real libcupti (no driver here: 999) and a library that does not exist: `gpu_off`
#     and an unchanged program.  Without LIBTRACE_CUPTI_LIB, CUPTI is found in the
#     extras/CUPTI/lib64 of the toolkit whose libcudart the program uses.  Calls through
#     the shared cudart's wrappers carry the program's call site.  Started paused and
#     resumed by LIBTRACE_TOGGLE_SIGNAL: CUPTI is there, the paused calls' device work is not
#     written.  The program's own cuptiSubscribe gets CUPTI, as untraced: libtrace hands it
#     over and keeps what it recorded.
#  5. A forked child that leaves with _exit: it asks CUPTI nothing, the parent's device
#     records are all there.
#  6. The name filters over the calls CUPTI reports (a kernel's launch and its run on the
#     device go together), each run held against the unfiltered one (gpu_filters).
. "$(dirname "$0")/lib.sh"
MOCK=$TESTBIN/libmock_cupti.so
APP=$TESTBIN/cupti_app
[ -f "$MOCK" ] && [ -x "$APP" ] ||
	skip "the mock CUPTI was not built (no cupti.h: CUDA toolkit headers not found)"
# The toolkit whose headers built the mock: its driver stub and its runtime bring CUDA
# into the process (nothing here calls them).
inc=$(sed -n 's/^LIBTRACE_CUDA_INCLUDE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
root=${inc%/include}
root=${root%/targets/*}
find_lib() { find -L "$root/" -maxdepth 5 -path "$1" 2>/dev/null | sort | head -1; }
DRIVER=$(find_lib '*/stubs/libcuda.so')
CUDART=$(find_lib '*/libcudart.so.[0-9]*')
REAL_CUPTI=$(find_lib '*/libcupti.so.[0-9]*')
[ -n "$DRIVER" ] && [ -n "$CUDART" ] ||
	skip "no CUDA driver stub or runtime under $root (the CUDA toolkit's libraries)"
mkdir -p "$WORK/in"
N=3
CONVERSIONS=0
LATE_FAILURES= # failures that leave the other checks worth running, told at the end
(need_converter) >/dev/null 2>&1 && CONVERSIONS=1
export LIBTRACE_CUPTI_LIB=$MOCK
unset MOCK_CUPTI_SUBSCRIBE_RESULT MOCK_CUPTI_NO_TS_CALLBACK MOCK_CUPTI_WORKER MOCK_CUPTI_MAX_RECORDS

# meta_has TRACE REGEX: a line of the process's meta file matches (values escaped: \x20).
meta_has() {
	grep -aqE "$2" "$1"/*/meta
}

# The raw records against the program: check_records.py DUMP TRUTH LEAKS_OUT SLACK, SLACK:
# how far (ns) a device time may stray outside its host window (the error of the mapping).
cat >"$WORK/check_records.py" <<'EOF'
import collections, re, sys
dump, truth, leaks_out, slack = sys.argv[1:4] + [int(sys.argv[4])]
BASE, THREAD_SHIFT, ALLOC_SHIFT = 0x7f4a00000000, 28, 21  # the mock's device addresses
# One thread's calls in program order: source, name, op, what its ENTER shows ({A}, {B}:
# the two allocations' addresses).
PROGRAM = [
    ("cupti-runtime", "cudaMalloc", "alloc", r'bytes=4096 mem="device"'),
    ("cupti-runtime", "cudaMalloc", "alloc", r'bytes=4096 mem="device"'),
    ("cupti-runtime", "cudaMemcpy", "copy", r"bytes=4096 dst=0x{A} src=0x[0-9a-f]+ kind=HtoD"),
    ("cupti-runtime", "__cudaLaunchKernel", "launch",
     r'grid=4x1x1 block=256x1x1 shared=0 stream=0x2 kernel="_Z3addPfPKfi"'),
    ("cupti-runtime", "cudaDeviceSynchronize", "sync", r"on=0x0"),
    ("cupti-runtime", "cudaMemcpy", "copy", r"bytes=4096 dst=0x[0-9a-f]+ src=0x{B} kind=DtoH"),
    ("cupti-runtime", "cudaMemset", "set", r"bytes=4096 dst=0x{A} value=0"),
    ("cupti-runtime", "cudaFree", "free", r'ptr=0x{A} mem="device"'),
    ("cupti-driver", "cuLaunchKernel", "launch",
     r'grid=8x1x1 block=128x1x1 shared=0 stream=0x2 kernel="_Z5scalePfi"'),
]
# The device's work, by the index of the call that gave it: kind, name or direction, what
# it shows, and the call whose LEAVE it ends before (None: may run past the program).
ACTIVITY = {
    2: ("copy", "HtoD", r"bytes=4096", 2),
    3: ("kernel", '"_Z3addPfPKfi"', r"grid=4x1x1 block=256x1x1", 4),
    4: ("sync", None, "", 4),
    5: ("copy", "DtoH", r"bytes=4096", 5),
    6: ("set", None, r"bytes=4096", 7),
    8: ("kernel", '"_Z5scalePfi"', r"grid=8x1x1 block=128x1x1", None),
}
ACT_RE = re.compile(r'GPU_ACTIVITY (\w+)(?: ("[^"]*"|\w+))? device=(\d+) context=(\d+) '
                    r'stream=(\d+) corr=(\d+) start=(-?\d+) end=(-?\d+)')
problems = []
def check(ok, msg):
    if not ok and len(problems) < 20:
        problems.append(msg)

calls = collections.defaultdict(list)  # thread -> [call dict]
activities = {}  # corr -> activity
open_call = {}
foreign = collections.Counter()
for line in open(dump):
    f = line.split()
    if len(f) < 4:
        continue
    th, ts, kind = int(f[1]), int(f[2]), f[3]
    if kind == "LOST":
        check(False, "records lost: " + line.strip())
    elif kind == "GPU_ENTER":
        check(th not in open_call, "thread %d: a call inside a call: %s" % (th, line.strip()))
        corr = int(re.search(r" corr=(\d+)", line).group(1))
        open_call[th] = dict(src=f[4], op=f[5], name=f[6].strip('"'), enter=ts, line=line,
                             corr=corr)
    elif kind == "GPU_LEAVE":
        c = open_call.pop(th, None)
        check(c is not None and c["op"] == f[5], "thread %d: LEAVE without its ENTER: %s" % (th, line.strip()))
        if c:
            c["leave"] = ts
            c["rc"] = int(re.search(r" rc=(-?\d+)", line).group(1))
            m = re.search(r" made=0x([0-9a-f]+)", line)
            c["made"] = int(m.group(1), 16) if m else None
            calls[th].append(c)
    elif kind in ("CALL", "CALL_ENTER") and re.match(r"pthread_(mutex|cond|rwlock)_", f[4]):
        # The program makes no such call: these are CUPTI's insides (its worker thread,
        # the flushes the tracer asks of it), which are not the program's doing.
        foreign[(th, f[4])] += 1
    elif kind == "GPU_ACTIVITY":
        m = ACT_RE.search(line)
        check(m is not None, "unreadable: " + line.strip())
        if m:
            a = dict(kind=m.group(1), what=m.group(2), device=int(m.group(3)),
                     context=int(m.group(4)), stream=int(m.group(5)), start=int(m.group(7)),
                     end=int(m.group(8)), line=line)
            corr = int(m.group(6))
            check(corr not in activities, "two activity records with corr %d" % corr)
            activities[corr] = a
check(not open_call, "calls never left: %s" % [c["line"] for c in open_call.values()])
names = collections.Counter(c["name"] for seq in calls.values() for c in seq)
for hidden in ("cuMemAlloc_v2", "cuMemFree_v2"):
    check(hidden not in names, "cudart's own driver call %s recorded (%d)" % (hidden, names[hidden]))
corrs = [c["corr"] for seq in calls.values() for c in seq]
check(len(corrs) == len(set(corrs)), "correlation ids given twice")

# Each thread: the program's calls in order, then the device's work of each.
joined, allocs, freed, tnos = set(), {}, set(), set()
for th, seq in sorted(calls.items()):
    check([(c["src"], c["name"], c["op"]) for c in seq] == [p[:3] for p in PROGRAM],
          "thread %d: calls %s" % (th, [(c["src"], c["name"]) for c in seq]))
    if len(seq) != len(PROGRAM):
        continue
    a, b = seq[0]["made"] or 0, seq[1]["made"] or 0
    tno = (a - BASE) >> THREAD_SHIFT
    check(a == BASE + (tno << THREAD_SHIFT) and b == a + (1 << ALLOC_SHIFT),
          "thread %d: allocations made 0x%x, 0x%x" % (th, a, b))
    tnos.add(tno)
    for i, (c, p) in enumerate(zip(seq, PROGRAM)):
        want = p[3].format(A="%x" % a, B="%x" % b)
        check(re.search(want, c["line"]), "thread %d: %s lacks %s: %s" % (th, c["name"], want, c["line"].strip()))
        check(c["rc"] == 0, "thread %d: %s returned %d" % (th, c["name"], c["rc"]))
        if c["op"] == "alloc":
            allocs[c["made"]] = (c["name"], 4096)
        if c["op"] == "free":
            freed.add(a)
        if i not in ACTIVITY:
            continue
        kind, what, shows, until = ACTIVITY[i]
        act = activities.get(c["corr"])
        check(act is not None, "thread %d: no %s record for %s (corr %d)" % (th, kind, c["name"], c["corr"]))
        if act is None:
            continue
        joined.add(c["corr"])
        line = act["line"].strip()
        check(act["kind"] == kind and (what is None or act["what"] == what) and re.search(shows, line),
              "thread %d: %s's record is %s" % (th, c["name"], line))
        check(act["device"] == 0 and act["context"] == 1, "not on device 0 context 1: " + line)
        check(kind == "sync" or act["stream"] == tno + 7,
              "thread %d (program thread %d): stream %d, expected %d" % (th, tno, act["stream"], tno + 7))
        check(c["enter"] <= act["start"] + slack and act["start"] <= act["end"],
              "thread %d: %s ran before its call (ENTER %d): %s" % (th, kind, c["enter"], line))
        if until is not None:
            check(act["end"] <= seq[until]["leave"] + slack,
                  "thread %d: %s ends after %s returned (%d): %s" % (th, kind, seq[until]["name"], seq[until]["leave"], line))
check(not set(activities) - joined, "activity records without their call: %s" %
      [activities[k]["line"].strip() for k in sorted(set(activities) - joined)][:3])

# The program's own account, whole process.
leaked = {addr: v for addr, v in allocs.items() if addr not in freed}
counts = {
    "call": lambda n: (names[n], sum(int(re.search(r" bytes=(\d+)", c["line"]).group(1))
                                     for seq in calls.values() for c in seq
                                     if c["name"] == n and " bytes=" in c["line"])),
    "kernel": lambda n: (sum(a["kind"] == "kernel" and a["what"] == '"%s"' % n for a in activities.values()), 0),
    "copy": lambda n: (sum(a["kind"] == "copy" and a["what"] == n for a in activities.values()),
                       sum(int(re.search(r" bytes=(\d+)", a["line"]).group(1)) for a in activities.values()
                           if a["kind"] == "copy" and a["what"] == n)),
    "set": lambda n: (sum(a["kind"] == "set" for a in activities.values()),
                      sum(int(re.search(r" bytes=(\d+)", a["line"]).group(1)) for a in activities.values()
                          if a["kind"] == "set")),
    "sync": lambda n: (sum(a["kind"] == "sync" for a in activities.values()), 0),
    "leak": lambda n: (sum(v[0] == n for v in leaked.values()), sum(v[1] for v in leaked.values() if v[0] == n)),
}
threads = 0
for line in open(truth):
    what, name, count, nbytes = line.split()
    if what == "program":
        threads = int(nbytes)
        continue
    got = counts[what](name)
    check(got == (int(count), int(nbytes)), "%s %s: %d, %d bytes in the trace, the program says %s, %s" %
          (what, name, got[0], got[1], count, nbytes))
check(len(calls) == threads and tnos == set(range(threads)),
      "%d threads with CUDA calls (program threads %s), the program ran %d" % (len(calls), sorted(tnos), threads))
if problems:
    sys.exit("\n".join(problems))
with open(leaks_out, "w") as out:
    for addr, (name, nbytes) in sorted(leaked.items()):
        out.write("%x %d %s\n" % (addr, nbytes, name))
print("%d threads x %d calls in program order; %d device records joined and timed; %d leaks"
      % (threads, len(PROGRAM), len(joined), len(leaked)), flush=True)
if foreign:  # told apart (status 3): the other checks are worth running still
    print("CUPTI's own synchronisation recorded as the program's ((thread, call): count): %s"
          % dict(foreign), file=sys.stderr)
    sys.exit(3)
EOF

# checked NAME SLACK: the raw records of $WORK/NAME.trace against the program's account
# ($WORK/traced.out), then the converted archive, Paraver trace and leak report.
checked() {
	local name=$1 slack=$2 t=$WORK/$1.trace
	meta_has "$t" '^gpu cupti 130001$' || fail "$name: meta: $(grep -a gpu "$t"/*/meta)"
	"$DUMP" "$t" >"$WORK/$name.dump" || fail "$name: trace-dump failed"
	/usr/bin/python3 "$WORK/check_records.py" "$WORK/$name.dump" "$WORK/traced.out" \
		"$WORK/$name.leaks" $slack >"$WORK/records.log" 2>&1
	case $? in
	0) echo "$name: $(cat "$WORK/records.log")" ;;
	3)
		echo "$name: $(head -1 "$WORK/records.log")"
		LATE_FAILURES+="$name: $(tail -n +2 "$WORK/records.log")"$'\n'
		;;
	*)
		cat "$WORK/records.log" >&2
		fail "$name: the records are not what the program did"
		;;
	esac
	[ $CONVERSIONS = 1 ] || return 0
	converted "$t" "$WORK/$name.otf2"
	rm -rf "$WORK/$name.leak.otf2"
	"$CONVERT" "$t" -o "$WORK/$name.leak.otf2" 2>"$WORK/$name.summary" ||
		fail "$name: trace2otf2: $(cat "$WORK/$name.summary")"
	grep -q "device memory never freed: $N allocations, $((N * 4096)) bytes" "$WORK/$name.summary" ||
		fail "$name: leak report: $(cat "$WORK/$name.summary")"
	while read -r addr bytes fn; do
		grep -q "$bytes bytes of .* at 0x$addr, by $fn" "$WORK/$name.summary" ||
			fail "$name: the leak at 0x$addr is not named: $(cat "$WORK/$name.summary")"
	done <"$WORK/$name.leaks"
	if [ -f "$SRC/tests/e2e/check_gpu_otf2.py" ]; then
		/usr/bin/python3 "$SRC/tests/e2e/check_gpu_otf2.py" "$WORK/$name.otf2/traces.otf2" \
			--expect-threads $N --expect-streams $N --expect-kernels $((2 * N)) \
			--expect-copies "H2D=$N:$((N * 4096)),D2H=$N:$((N * 4096)),SET=$N:$((N * 4096))" \
			--device-inside-host --expect-error 0 --expect-leaks $N \
			--expect-calls "cudaMalloc=$((2 * N)),cudaMemcpy=$((2 * N)),__cudaLaunchKernel=$N" \
			--expect-calls "cudaDeviceSynchronize=$N,cudaMemset=$N,cudaFree=$N,cuLaunchKernel=$N" \
			--expect-calls "cuMemAlloc_v2=0,cuMemFree_v2=0" \
			>"$WORK/gpu.log" 2>&1 || {
			cat "$WORK/gpu.log" >&2
			fail "$name: check_gpu_otf2"
		}
		echo "$name: OTF2: $(tail -1 "$WORK/gpu.log")"
	else
		echo "$name: check_gpu_otf2.py not there yet: GPU streams in OTF2 not checked"
	fi
	"$CONVERT" -q -f paraver -o "$WORK/$name" "$t" || fail "$name: Paraver conversion failed"
	/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/$name.prv" >"$WORK/prv.log" 2>&1 || {
		head -20 "$WORK/prv.log" >&2
		fail "$name: check_prv rejects the Paraver trace"
	}
	echo "$name: converted: OTF2 and Paraver accepted, leaks named"
}

# ---- 1. timestamp callback; CUPTI started when the program opens the driver ----
LD_PRELOAD=$MOCK same_behaviour callback "$APP" $N "$DRIVER" >"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "callback: $(cat "$WORK/same.log" "$WORK/plain.err")"
meta_has "$WORK/callback.trace" '^gpu_clock callback$' || fail "callback: the timestamp callback was not taken"
checked callback 0

# ---- 2. CLOCK_REALTIME device times, the mock's worker, buffers of 2 records; CUPTI
# started at init ----
export MOCK_CUPTI_NO_TS_CALLBACK=1 MOCK_CUPTI_WORKER=1 MOCK_CUPTI_MAX_RECORDS=2
LIB="$LIB $CUDART" LD_PRELOAD=$MOCK same_behaviour sync "$APP" $N >"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "sync: $(cat "$WORK/same.log" "$WORK/plain.err")"
meta_has "$WORK/sync.trace" '^gpu_clock sync$' || fail "sync: device times not mapped by paired readings"
# Paired readings bracket CUPTI's clock within a few hundred ns: 2 us of slack.
checked sync 2000
unset MOCK_CUPTI_NO_TS_CALLBACK MOCK_CUPTI_WORKER MOCK_CUPTI_MAX_RECORDS

# ---- 3. CUPTI refuses: another tool subscribed first ----
export MOCK_CUPTI_SUBSCRIBE_RESULT=39
LD_PRELOAD=$MOCK same_behaviour refused "$APP" $N "$DRIVER" >"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "refused: $(cat "$WORK/same.log" "$WORK/plain.err")"
meta_has "$WORK/refused.trace" '^gpu_off cupti .*39.*MULTIPLE_SUBSCRIBERS' ||
	fail "refused: meta: $(grep -a gpu "$WORK"/refused.trace/*/meta)"
"$DUMP" "$WORK/refused.trace" | grep -q ' GPU_' && fail "refused: GPU records without CUPTI"
echo "refused: $(grep -a '^gpu_off' "$WORK"/refused.trace/*/meta)"
unset MOCK_CUPTI_SUBSCRIBE_RESULT

# ---- 4. the real libcupti (no driver) and none at all ----
# name library what the meta file must say
while read -r name lib why; do
	[ -n "$why" ] || continue # no real libcupti: lib is empty, read shifts why into it
	LIBTRACE_CUPTI_LIB=$lib same_behaviour $name "$APP" $N "$DRIVER" >"$WORK/same.log"
	grep -q 'exit status 1$' "$WORK/same.log" && grep -q 'is not loaded' "$WORK/plain.err" ||
		fail "$name: $(cat "$WORK/same.log" "$WORK/plain.err")"
	meta_has "$WORK/$name.trace" "^gpu_off cupti .*$why" ||
		fail "$name: meta: $(grep -a gpu "$WORK/$name.trace"/*/meta)"
	meta_has "$WORK/$name.trace" '^gpu cupti' && fail "$name: CUPTI said to be on"
	echo "$name: program unchanged; $(grep -a '^gpu_off' "$WORK/$name.trace"/*/meta)"
done <<EOF
real $REAL_CUPTI cuptiSubscribe:.x20999.x20CUPTI_ERROR_UNKNOWN
none /nonexistent/libcupti.so cannot.x20load.x20CUPTI
EOF
[ -n "$REAL_CUPTI" ] || echo "no libcupti.so under $root: the real library not tried"

# ---- 4b. found without LIBTRACE_CUPTI_LIB, where a CUDA toolkit keeps it ----
# A toolkit's layout: lib64/libcudart.so.13 and extras/CUPTI/lib64/libcupti.so.13 (the
# mock), nothing beside libcudart: the library finds CUPTI in the extras.
tk=$WORK/toolkit
mkdir -p "$tk/lib64" "$tk/extras/CUPTI/lib64"
ln -sf "$CUDART" "$tk/lib64/libcudart.so.13"
cp "$TESTBIN/libmock_cupti.so" "$tk/extras/CUPTI/lib64/libcupti.so.13"
LIBTRACE_CUPTI_LIB= CUPTI_APP_MOCK=$tk/extras/CUPTI/lib64/libcupti.so.13 \
	LD_PRELOAD="$LIB $tk/lib64/libcudart.so.13" LIBTRACE_OUTPUT=$WORK/extras.trace \
	LIBTRACE_QUIET=1 "$APP" $N >/dev/null || fail "extras: the program failed ($?)"
meta_has "$WORK/extras.trace" '^gpu cupti 130001$' ||
	fail "extras: CUPTI not found in the toolkit's extras: $(grep -a gpu "$WORK"/extras.trace/*/meta)"
acts=$("$DUMP" "$WORK/extras.trace" | grep -c ' GPU_ACTIVITY ')
[ "$acts" = $((6 * N)) ] || fail "extras: $acts device records, expected $((6 * N))"
echo "extras: CUPTI found in $tk/extras/CUPTI/lib64, $acts device records"

# ---- 4c. call sites: calls through the shared cudart's wrappers carry them ----
# The program calls cudaMalloc twice and cudaFree once through the entry points the process
# has: libtrace's wrappers, which pass them on (CUPTI records) to the mock's, which plays
# them as CUPTI reports them.  Those three records carry the program's call site; the calls
# the mock plays by itself after them (vector_add, on the same thread and on another) carry
# none: no call site is left over.
CUPTI_APP_CUDART=1 LD_PRELOAD="$LIB $TESTBIN/libmock_cupti.so $CUDART" \
	LIBTRACE_OUTPUT=$WORK/sites.trace LIBTRACE_QUIET=1 "$APP" 1 >/dev/null ||
	fail "sites: the program failed ($?)"
meta_has "$WORK/sites.trace" '^gpu cupti 130001$' || fail "sites: CUPTI did not record"
"$DUMP" "$WORK/sites.trace" >"$WORK/sites.dump"
through=$(grep -E ' 0 [0-9]+ GPU_ENTER cupti-runtime (alloc "cudaMalloc"|free "cudaFree")' \
	"$WORK/sites.dump" | head -3)
[ "$(grep -c ' at=0x' <<<"$through")" = 3 ] ||
	fail "sites: the calls through the wrappers have no call site: $through"
played=$(grep -E ' [0-9]+ [0-9]+ GPU_ENTER ' "$WORK/sites.dump" | tail -n +4)
[ -n "$played" ] || fail "sites: the mock's own calls are missing"
grep -q ' at=0x' <<<"$played" && fail "sites: a call site on a call that had none: $(grep ' at=0x' <<<"$played" | head -1)"
if [ $CONVERSIONS = 1 ]; then
	"$CONVERT" "$WORK/sites.trace" -o "$WORK/sites.otf2" 2>"$WORK/sites.summary" ||
		fail "sites: trace2otf2: $(cat "$WORK/sites.summary")"
	grep -q 'by cudaMalloc at cudart_calls' "$WORK/sites.summary" ||
		fail "sites: the leak report does not name the line: $(grep -a 'device memory' "$WORK/sites.summary")"
fi
echo "sites: $(grep -c ' at=0x' <<<"$through") calls through the wrappers with their call site, $(wc -l <<<"$played") played calls without"

# ---- 4d. started paused, resumed by the toggle signal ----
# CUPTI starts although recording is paused; the calls the main thread makes before the
# signal and what the device did for them are not recorded (their activity records come
# with the threads' buffers, after the resume), the threads' calls are, all of them.
CUPTI_APP_TOGGLE=12 LIBTRACE_START_PAUSED=1 LIBTRACE_TOGGLE_SIGNAL=SIGUSR2 LD_PRELOAD=$LIB \
	LIBTRACE_OUTPUT=$WORK/paused.trace LIBTRACE_QUIET=1 "$APP" $N "$DRIVER" >/dev/null ||
	fail "paused: the program failed ($?)"
meta_has "$WORK/paused.trace" '^gpu cupti 130001$' ||
	fail "paused: CUPTI not started: $(grep -a gpu "$WORK"/paused.trace/*/meta)"
"$DUMP" "$WORK/paused.trace" >"$WORK/paused.dump"
main_calls=$(grep -cE '^[^ ]+ 0 [0-9]+ GPU_ENTER ' "$WORK/paused.dump" || true)
calls=$(grep -c ' GPU_ENTER ' "$WORK/paused.dump" || true)
acts=$(grep -c ' GPU_ACTIVITY ' "$WORK/paused.dump" || true)
[ "$main_calls" = 0 ] || fail "paused: $main_calls calls recorded while paused"
[ "$calls" = $((9 * N)) ] || fail "paused: $calls calls recorded, expected $((9 * N))"
[ "$acts" = $((6 * N)) ] || fail "paused: $acts device records, expected $((6 * N)) (the threads')"
echo "paused: CUPTI started paused; after the resume $calls calls and $acts device records, none of the paused calls'"

# ---- 4e. the program subscribes to CUPTI itself (a profiler of its own) ----
# CUPTI takes one subscriber: the program's must get it, as untraced, and see the same
# callbacks; libtrace hands CUPTI over (the meta file says so) and keeps what it recorded
# before: every call of the threads and the device's work for them.
LIB="$LIB $MOCK" LD_PRELOAD=$MOCK CUPTI_APP_SUBSCRIBE=1 same_behaviour own "$APP" $N "$DRIVER" \
	>"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "own: $(cat "$WORK/same.log" "$WORK/plain.err")"
grep -q '^own subscriber: cuptiSubscribe 0$' "$WORK/traced.out" ||
	fail "own: the program's subscription: $(grep 'own subscriber' "$WORK/traced.out")"
meta_has "$WORK/own.trace" '^gpu cupti 130001$' || fail "own: CUPTI did not record first"
meta_has "$WORK/own.trace" '^gpu_off cupti handed.x20over' ||
	fail "own: the meta file does not say CUPTI was handed over"
"$DUMP" "$WORK/own.trace" >"$WORK/own.dump"
calls=$(grep -c ' GPU_ENTER ' "$WORK/own.dump" || true)
acts=$(grep -c ' GPU_ACTIVITY ' "$WORK/own.dump" || true)
[ "$calls" = $((9 * N)) ] && [ "$acts" = $((6 * N)) ] ||
	fail "own: $calls calls and $acts device records kept, expected $((9 * N)) and $((6 * N))"
echo "own: $(grep 'callbacks' "$WORK/traced.out"), as untraced; the $calls calls and $acts device records before kept"

# ---- 5. a child of fork leaving with _exit (a Python worker process) ----
# CUPTI's threads stay in the parent: the child asks CUPTI nothing (its exit flush is
# skipped), ends cleanly, and the parent's device records are all there.
CUPTI_APP_FORK=1 MOCK_CUPTI_WORKER=1 LD_PRELOAD="$LIB $CUDART" LIBTRACE_OUTPUT=$WORK/fork.trace \
	LIBTRACE_QUIET=1 "$APP" $N >/dev/null || fail "fork: the program failed ($?)"
dirs=$(ls "$WORK/fork.trace" | wc -l)
[ "$dirs" = 2 ] || fail "fork: $dirs process directories, expected 2"
acts=$("$DUMP" "$WORK/fork.trace" | grep -c ' GPU_ACTIVITY ')
[ "$acts" = $((6 * N)) ] || fail "fork: $acts device records, expected $((6 * N))"
echo "fork: the child ended at once, the parent kept its $acts device records"

# ---- 6. name filters: the calls CUPTI reports and the device's kernel runs ----
gpu_filters cuda 'cudaMemcpy,_Z5scale*' "$APP" $N "$DRIVER"

[ -z "$LATE_FAILURES" ] || fail "$LATE_FAILURES"
[ $CONVERSIONS = 1 ] || skip "raw records checked; no trace2otf2 or OTF2 tools: conversions not checked"
echo "cupti-mock: ok"
