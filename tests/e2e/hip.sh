#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# HIP without a GPU: Debian's HIP runtime (libamdhip64 5.2) fails every device call here
# (hipGetDeviceCount 100, the others 101), and every call is still recorded.
#  1. No undefined HIP, CUDA or CUPTI symbol in libtrace.so: LD_BIND_NOW=1 runs of
#     programs without HIP work.
#  2. tests/programs/hip_calls.c (plain C, gcc, -lamdhip64): one call of every wrapped
#     entry point on the main thread, then 4 threads x 3 rounds of a fixed sequence.  Same
#     output traced and untraced; each thread's records hold exactly the program's calls in
#     program order, with their arguments (bytes, addresses, direction, grid and block,
#     streams and events, the registered kernels' names), a call site and the return code,
#     as the program wrote them down (its TRUTH file); exactly one LAUNCH per launch: a
#     `<<<>>>` launch is its failed __hipPushCallConfiguration.  (With a GPU the push
#     succeeds and the stub's hipLaunchKernel is the launch: that path needs an AMD GPU,
#     which this project is never lent; no stand-in runtime stands for it here.)
#  3. A library linked with libamdhip64 and loaded with dlopen(RTLD_LOCAL) (the runtime is
#     then out of RTLD_NEXT's reach): its calls still reach the runtime, with the same codes
#     and errno as untraced, and are recorded.  LIBTRACE_MODULES without hip: nothing.
#  4. Converted to OTF2 (otf2-print -Werror, check_otf2.py, check_gpu_otf2.py) and Paraver
#     (check_prv.py).
#  5. The name filters: LIBTRACE_EXCLUDE over call names, and LIBTRACE_INCLUDE keeping one
#     kernel's launches alone, each run held against the unfiltered one (gpu_filters).
. "$(dirname "$0")/lib.sh"
APP=$TESTBIN/hip_calls
[ -x "$APP" ] || skip "hip_calls was not built: no libamdhip64 (apt-get install libamdhip64-dev)"
mkdir -p "$WORK/in"
THREADS=4
ROUNDS=3

# ---- 1. no GPU symbol is a link-time dependency ----
no_gpu_dependency

# check_calls TRACE TRUTH LAUNCHES SITES: the trace's HIP calls are the program's (TRUTH),
# LAUNCHES LAUNCH records in all; writes each program thread's call sites, resolved to
# source lines, to SITES.
cat >"$WORK/check_calls.py" <<'EOF'
import re, shlex, subprocess, sys
dump, truth, meta, threads, launches, sites = sys.argv[1:7]
threads, launches = int(threads), int(launches)

def words(text):
    """key=value words (quotes removed), and the other words."""
    kv, rest = {}, []
    for w in shlex.split(text):
        k, eq, v = w.partition("=")
        if eq:
            kv[k] = v
        else:
            rest.append(w)
    return kv, rest

# What the program did: thread -> [(name, rc, key=value words)].
want = {}
for line in open(truth):
    tag, name, rest = line.split(" ", 2)
    kv, _ = words(rest)
    rc = int(kv.pop("rc"))
    want.setdefault(int(tag[1:]), []).append((name, rc, kv))

# What the trace holds: trace thread -> [(name, rc, key=value words, ENTER line)].
got, open_call = {}, {}
for line in open(dump):
    f = line.split(" ", 4)
    if len(f) < 5 or f[3] not in ("GPU_ENTER", "GPU_LEAVE"):
        continue
    th = int(f[1])
    kv, rest = words(f[4])
    if f[3] == "GPU_ENTER":
        assert th not in open_call, "nested call on thread %d: %s" % (th, line)
        assert rest[0] == "hip", "not a HIP record: " + line
        assert "at" in kv, "no call site: " + line
        open_call[th] = (rest[2], rest[1], kv, line.strip())
    else:
        name, op, enter_kv, enter = open_call.pop(th)
        assert rest[:2] == ["hip", op], "LEAVE %s after %s" % (rest, enter)
        got.setdefault(th, []).append((name, int(kv["rc"]), enter_kv, enter))
assert not open_call, "calls left open: %s" % open_call

def same(w, g):
    """None when the trace's calls are the program's: names, codes, every word it noted."""
    if len(w) != len(g):
        return "%d calls, the program made %d" % (len(g), len(w))
    for i, ((name, rc, kv), (gname, grc, gkv, line)) in enumerate(zip(w, g)):
        if (name, rc) != (gname, grc):
            return "call %d: %s rc=%d where the program made %s and saw %d" % (i, gname, grc, name, rc)
        for k, v in kv.items():
            if gkv.get(k) != v:
                return "call %d: %s=%s where the program passed %s=%s: %s" % (i, k, gkv.get(k), k, v, line)
    return None

# Thread 0 is the main thread in both; the others are matched by their calls (their sizes
# and handles differ per thread).
assert sorted(want) == list(range(threads + 1)), "the program's threads: %s" % sorted(want)
err = same(want[0], got.get(0, []))
assert not err, "main thread: " + err
order, left = {0: 0}, {th: seq for th, seq in got.items() if th != 0}
assert len(left) == threads, "%d threads with HIP calls, expected %d" % (len(left), threads)
for t in range(1, threads + 1):
    match = [th for th, seq in left.items() if same(want[t], seq) is None]
    assert match, "program thread %d: no trace thread has its calls (first: %s)" % (
        t, min(same(want[t], seq) for seq in left.values()))
    order[t] = match[0]
    del left[match[0]]
n = sum(len(seq) for seq in got.values())
nl = sum(1 for seq in got.values() for c in seq if " launch " in c[3])
assert nl == launches, "%d LAUNCH records for %d launches" % (nl, launches)

# Call sites as source lines (addr2line on the program's mapping in the meta file).
maps = [l.split(" ", 4) for l in open(meta, errors="replace") if l.startswith("map ")]
exe = next(l[1].strip() for l in (x.split(" ", 1) for x in open(meta, errors="replace")) if l[0] == "exe")
def vaddr(at):
    a = int(at, 16)
    for _, lo, hi, off, path in maps:
        if path.strip() == exe and int(lo, 16) <= a < int(hi, 16):
            return "%x" % (a - int(lo, 16) + int(off, 16))
    raise AssertionError("call site 0x%x is not in %s" % (a, exe))
addrs = [vaddr(c[2]["at"]) for t in range(threads + 1) for c in got[order[t]]]
lines = subprocess.run(["addr2line", "-f", "-s", "-e", exe] + addrs, check=True,
                       capture_output=True, text=True).stdout.splitlines()
resolved = iter("%s %s" % (lines[i], re.sub(r" \(discriminator \d+\)", "", lines[i + 1]))
                for i in range(0, len(lines), 2))
with open(sites, "w") as out:
    for t in range(threads + 1):
        for c in got[order[t]]:
            out.write("T%d %s\n" % (t, next(resolved)))
push = sum(1 for seq in got.values() for c in seq if c[0] == "__hipPushCallConfiguration")
print("%d calls in program order on %d threads, with their arguments and codes; "
      "%d launches, one LAUNCH each (%d of them failed <<<>>> pushes)" % (n, threads + 1, nl, push))
EOF
check_calls() {
	"$DUMP" "$1" >"$WORK/dump" || fail "trace-dump $1 failed"
	/usr/bin/python3 "$WORK/check_calls.py" "$WORK/dump" "$2" "$(ls "$1"/*/meta)" $THREADS "$3" "$4" ||
		fail "the recorded HIP calls are not the program's"
}

# launches_of OUT: the program's count of launches.
launches_of() {
	sed -n 's/^total: .* launches=\([0-9]*\) .*/\1/p' "$1"
}

# ---- 2. every call, its arguments and its code, on its thread, in program order ----
same_behaviour calls "$APP" $THREADS $ROUNDS "$WORK/truth" >"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "hip_calls: $(cat "$WORK/same.log" "$WORK/plain.err")"
total=$(grep '^total:' "$WORK/traced.out") || fail "hip_calls printed no totals"
echo "hip_calls: $(cat "$WORK/same.log"); $total"
# Without a GPU: 100 for the device count, 101 for the rest.
calls=$(echo "$total" | sed -n 's/.* calls=\([0-9]*\) .*/\1/p')
echo "$total" | grep -q " rc0=0 rc100=1 rc101=$((calls - 1)) other=0$" ||
	fail "the HIP runtime did not answer as it does without a GPU: $total"
check_calls "$WORK/calls.trace" "$WORK/truth" "$(launches_of "$WORK/traced.out")" "$WORK/sites"

# ---- 3. a runtime loaded privately; errno; the module off ----
cat >"$WORK/priv.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
extern int hipGetDeviceCount(int *count);
extern int hipMalloc(void **p, size_t n);
void priv_calls(void)
{
	int n = -1;
	void *p = NULL;
	errno = 1234;
	int a = hipGetDeviceCount(&n);
	int e1 = errno;
	errno = 4321;
	int b = hipMalloc(&p, 512);
	printf("hipGetDeviceCount %d errno %d; hipMalloc %d errno %d\n", a, e1, b, errno);
}
EOF
cat >"$WORK/priv_main.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void (*f)(void) = h ? (void (*)(void))dlsym(h, "priv_calls") : NULL;
	if (!f) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	f();
	return argc > 2;
}
EOF
gcc -shared -fPIC -O2 "$WORK/priv.c" -o "$WORK/libpriv.so" -lamdhip64 >"$WORK/cc.log" 2>&1 &&
	gcc -O2 "$WORK/priv_main.c" -o "$WORK/priv_main" -ldl >>"$WORK/cc.log" 2>&1 ||
	fail "building the RTLD_LOCAL test: $(cat "$WORK/cc.log")"
same_behaviour private "$WORK/priv_main" "$WORK/libpriv.so" >"$WORK/same.log"
grep -q 'exit status 0$' "$WORK/same.log" || fail "RTLD_LOCAL: $(cat "$WORK/plain.out" "$WORK/plain.err")"
grep -q '^hipGetDeviceCount 100 errno [0-9]*; hipMalloc 101 errno [0-9]*$' "$WORK/traced.out" ||
	fail "RTLD_LOCAL: the runtime did not answer: $(cat "$WORK/traced.out")"
n=$("$DUMP" "$WORK/private.trace" | grep -c 'GPU_ENTER hip ')
[ "$n" = 2 ] || fail "RTLD_LOCAL: $n calls recorded, expected 2"
echo "runtime loaded RTLD_LOCAL: reached, recorded, same codes and errno: $(cat "$WORK/traced.out")"
"$APP" 2 1 "$WORK/truth-nomod" >"$WORK/nomod.plain" || fail "hip_calls 2 1 failed"
LIBTRACE_MODULES=pthread traced "$WORK/nomod" "$APP" 2 1 "$WORK/truth-nomod" >"$WORK/nomod.out" ||
	fail "run without the hip module"
cmp -s "$WORK/nomod.plain" "$WORK/nomod.out" || fail "output differs with LIBTRACE_MODULES=pthread"
"$DUMP" "$WORK/nomod" | grep -q GPU_ && fail "GPU records with LIBTRACE_MODULES=pthread"
echo "LIBTRACE_MODULES=pthread: nothing of HIP recorded"

# ---- 5. name filters (before 4, which skips without the converter) ----
gpu_filters hip 'hipMemcpy*,hipStream*' "$APP" 2 1 "$WORK/filters.truth"

# ---- 4. OTF2 and Paraver ----
need_converter
T=$WORK/calls.trace
converted "$T" "$WORK/calls.otf2" --processes 1 --locations $((THREADS + 1)) --created $THREADS
per=$((ROUNDS * THREADS))
/usr/bin/python3 "$SRC/tests/e2e/check_gpu_otf2.py" "$WORK/calls.otf2/traces.otf2" \
	--expect-threads $((THREADS + 1)) \
	--expect-calls "hipMalloc=$per,hipMemcpy=$((2 * per)),hipMemset=$per,hipLaunchKernel=$per,__hipPushCallConfiguration=$((per + 1)),hipModuleLaunchKernel=$per,hipFree=$per,hipDeviceSynchronize=$per,hipGetDeviceCount=1,hipExtLaunchKernel=1" \
	>"$WORK/gpu.log" 2>&1 || {
	cat "$WORK/gpu.log" >&2
	fail "check_gpu_otf2"
}
# Each call's code as the archive has it (--expect-error takes one code; here are two).
[ "$(grep -c 'GpuResult=100$' "$WORK/gpu.log")" = 1 ] && [ "$(grep -c 'GpuResult=101$' "$WORK/gpu.log")" = $((calls - 1)) ] ||
	fail "the archive's GpuResult values are not 1 x 100 and $((calls - 1)) x 101"
echo "OTF2: $(tail -2 "$WORK/gpu.log" | tr '\n' ' ')"
"$CONVERT" -q -f paraver -o "$WORK/calls" "$T" || fail "Paraver conversion failed"
/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/calls.prv" >"$WORK/prv.log" 2>&1 || {
	tail "$WORK/prv.log" >&2
	fail "check_prv rejects the Paraver trace"
}
grep -q 'HIP' "$WORK/calls.pcf" || fail "the .pcf names no HIP event type"
echo "Paraver: accepted by check_prv.py"
echo ok
