#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/fixed.sh - the tracer's fixed costs: a process that does nothing, a thread, the
# launcher, measured side by side in one run.
#
#   bench/fixed.sh [BUILD_DIR] [ROUNDS] [THREADS] [hog]       (build, 21, 1000)
#
# Rounds of alternating pairs (untraced, then traced), medians over the rounds:
#  - /bin/true untraced and with BUILD_DIR's libtrace.so preloaded: wall time of each, the
#    extra ms, and the disk the trace directory keeps (du -sk, after the process ended);
#  - bench_threads alive THREADS (all alive at once) and seq THREADS (create+join one after
#    the other): the whole process's extra wall time, per thread;
#  - trace-run -q -o DIR -- /bin/true next to LD_PRELOAD=libtrace.so /bin/true: what the
#    launcher adds.
# With `hog`, a busy loop per CPU runs in the background the whole time (a busy machine).
# Traces go to TMPDIR (the disk that is measured: /tmp, not /dev/shm).
set -eu
build=${1:-build}
rounds=${2:-21}
threads=${3:-1000}
hog=${4:-}
lib=$(cd "$build" && pwd)/libtrace.so
tb=$build/bench/bench_threads
run=$build/trace-run
[ -f "$lib" ] && [ -x "$tb" ] && [ -x "$run" ] ||
	{ echo "build the project with -DLIBTRACE_BENCH=ON first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-fixed.XXXXXX")
hogs=()
cleanup() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$hog" = hog ]; then
	for _ in $(seq "$(nproc)"); do
		/usr/bin/python3 -c 'while True: pass' &
		hogs+=($!)
	done
fi

/usr/bin/python3 - "$lib" "$tb" "$run" "$tmp" "$rounds" "$threads" "${hog:-quiet}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
lib, tb, run, tmp, rounds, threads, mode = sys.argv[1:]
rounds, threads = int(rounds), int(threads)
trace = os.path.join(tmp, "t")
base = {k: v for k, v in os.environ.items()
        if not k.startswith("LIBTRACE_") and k != "LD_PRELOAD"}
traced = dict(base, LD_PRELOAD=lib, LIBTRACE_OUTPUT=trace, LIBTRACE_QUIET="1")

def wall(cmd, env):
    """Seconds from spawn to reaped; the trace directory's disk in KiB, then removed."""
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status = os.waitpid(pid, 0)
    dt = time.perf_counter() - t
    if status != 0:
        sys.exit("%s: exit status %d" % (" ".join(cmd), status))
    kib = 0
    if os.path.isdir(trace):
        kib = int(subprocess.run(["du", "-sk", trace], capture_output=True,
                                 text=True).stdout.split()[0])
        shutil.rmtree(trace)
    return dt, kib

true = shutil.which("true") or "/bin/true"
res = {}
def add(key, v):
    res.setdefault(key, []).append(v)
for _ in range(rounds):
    add("true", wall([true], base)[0])
    t, kib = wall([true], traced)
    add("true traced", t)
    add("disk", kib)
    add("preload", wall([true], traced)[0])
    add("trace-run", wall([run, "-q", "-o", trace, "--", true], base)[0])
    for m in ("alive", "seq"):
        add(m, wall([tb, m, str(threads)], base)[0])
        add(m + " traced", wall([tb, m, str(threads)], traced)[0])

med = {k: statistics.median(v) for k, v in res.items()}
ms = lambda k: med[k] * 1e3
print("bench/fixed.sh: %d rounds, medians, %s machine (%s)" % (rounds, mode, os.uname().machine))
print("  /bin/true              untraced %7.2f ms   traced %7.2f ms   extra %6.2f ms" % (
    ms("true"), ms("true traced"), ms("true traced") - ms("true")))
print("  disk left per process  %d KiB (du -sk of the trace directory)" % med["disk"])
for m, what in (("alive", "%d alive at once" % threads), ("seq", "%d one after another" % threads)):
    print("  threads, %-22s untraced %7.1f ms   traced %7.1f ms   extra %6.3f ms per thread" % (
        what, ms(m), ms(m + " traced"), (ms(m + " traced") - ms(m)) / threads))
print("  trace-run -q -- true   %7.2f ms   LD_PRELOAD %7.2f ms   launcher adds %6.2f ms" % (
    ms("trace-run"), ms("preload"), ms("trace-run") - ms("preload")))
PY
