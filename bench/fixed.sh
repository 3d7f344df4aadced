#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/fixed.sh - the tracer's fixed costs: a process that does nothing, a thread, the
# launcher, measured side by side in one run.
#
#   [HOG=1] [PAIRS=N] bench/fixed.sh [BUILD_DIR] [ROUNDS] [THREADS] [OTHER_BUILD]
#                                                             (build, 21, 1000; PAIRS 200)
#
# First, PAIRS (default 200) alternating pairs of /bin/true, untraced and with BUILD_DIR's
# libtrace.so preloaded (and OTHER_BUILD's: a triple), nothing else run between them, the
# order within a pair turning each time: the process's fixed cost is the median of the
# traced run's wall time less the untraced one's, pair by pair; also the medians of each
# and of the CPU time (user + system, its threads included: on a busy machine the wall time
# also holds the scheduler's waits).
# Then rounds in which each measurement below runs once, in a shuffled order (a fixed seed
# per round), medians over the rounds:
#  - /bin/true untraced and traced again, now each beside the other kinds of runs (a run
#    just after 1,000 threads waits longer for its share of a busy machine), and the disk
#    the trace directory keeps (du -sk, after the process ended);
#  - bench_threads alive THREADS (all alive at once) and seq THREADS (create+join one after
#    the other): the whole process's extra wall time, per thread;
#  - trace-run -q -o DIR -- /bin/true next to LD_PRELOAD=libtrace.so /bin/true: what the
#    launcher adds.
# With OTHER_BUILD (another build's libtrace.so and trace-run, e.g. before a change), its
# traced runs join the same rounds: a before/after comparison in one run.
# With HOG=1, a busy loop per CPU runs in the background the whole time (a busy machine).
# Traces go to TMPDIR: the disk that is measured (not a tmpfs).  Each traced run writes a
# directory of its own, measured (du) at the end of its round and removed only when the
# bench ends: on an ext4 without a journal, a file made within minutes of many deletions
# costs more (the inode allocator skips the recently freed ones, one by one), and a bench
# that deletes as it goes measures its own deletions.  TMPDIR needs room for them: about
# 5 MiB a round and a build with 1,000 threads.  KEEP=0 removes each trace right after its
# run, as the bench did before.
set -eu
build=${1:-build}
rounds=${2:-21}
threads=${3:-1000}
other=${4:-}
hog=${HOG:-0}
lib=$(cd "$build" && pwd)/libtrace.so
tb=$build/bench/bench_threads
run=$build/trace-run
[ -f "$lib" ] && [ -x "$tb" ] && [ -x "$run" ] ||
	{ echo "build the project with -DLIBTRACE_BENCH=ON first ($build)" >&2; exit 2; }
olib='' orun=''
if [ -n "$other" ]; then
	olib=$(cd "$other" && pwd)/libtrace.so
	orun=$other/trace-run
	[ -f "$olib" ] && [ -x "$orun" ] || { echo "no libtrace.so and trace-run in $other" >&2; exit 2; }
fi
. "$(dirname "$0")/common.sh"
bench_scratch fixed
bench_hogs

/usr/bin/python3 - "$tb" "$tmp" "$rounds" "$threads" "$hog" "$lib" "$run" "$olib" "$orun" \
	"${PAIRS:-200}" <<'PY'
import os, random, shutil, statistics, subprocess, sys, time
tb, tmp, rounds, threads, hog, lib, run, olib, orun, pairs = sys.argv[1:]
rounds, threads, pairs = int(rounds), int(threads), int(pairs)
keep = os.environ.get("KEEP", "1") != "0"
runs = 0
def fresh_trace():
    """A new trace directory for the next traced run."""
    global runs
    runs += 1
    return os.path.join(tmp, "t%d" % runs)
trace = fresh_trace()
base = {k: v for k, v in os.environ.items()
        if not k.startswith("LIBTRACE_") and k != "LD_PRELOAD"}
builds = [("", lib, run)] + ([("other ", olib, orun)] if olib else [])

retries = []
def disk_kib(path):
    """The disk a trace directory keeps, in KiB (0 when the run made none)."""
    if not os.path.isdir(path):
        return 0
    return int(subprocess.run(["du", "-sk", path], capture_output=True,
                              text=True).stdout.split()[0])

def wall(cmd, env, tries=3):
    """Seconds from spawn to reaped, the trace directory the run used (KEEP=0: its disk in
    KiB, the directory removed), the CPU seconds.  A run that fails (a signal from elsewhere
    on a shared machine) is run again, and said."""
    global trace
    cmd = [trace if c == "@TRACE@" else c for c in cmd]
    env = {k: trace if v == "@TRACE@" else v for k, v in env.items()}
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter() - t
    cpu = ru.ru_utime + ru.ru_stime
    if status != 0:
        shutil.rmtree(trace, ignore_errors=True)
        retries.append("%s (%s): wait status %d" % (" ".join(cmd), env.get("LD_PRELOAD", "untraced"), status))
        if tries <= 1:
            sys.exit(retries[-1])
        return wall(cmd, env, tries - 1)
    used = trace
    if keep:
        trace = fresh_trace()
        return dt, used, cpu
    kib = disk_kib(used)
    shutil.rmtree(used, ignore_errors=True)
    return dt, kib, cpu

true = shutil.which("true") or "/bin/true"
res = {}
def add(key, v):
    res.setdefault(key, []).append(v)
def run_true(o, env):
    """/bin/true untraced (o None) or traced with build o's library."""
    key = "true" if o is None else o + "true traced"
    t, kib, cpu = wall([true], env)
    add(key, t)
    add(key + " cpu", cpu)
    if o is not None and keep:
        pending.append((o + "disk", kib)) # a directory: measured at the round's end
    elif o is not None:
        add(o + "disk", kib)

# The alternating pairs (triples with another build): untraced, traced, turning the order.
variants = [None] + [o for o, _, _ in builds]
envs = {None: base}
for o, l, _ in builds:
    envs[o] = dict(base, LD_PRELOAD=l, LIBTRACE_OUTPUT="@TRACE@", LIBTRACE_QUIET="1")
alt = {v: [] for v in variants}
for i in range(pairs):
    order = variants[i % len(variants):] + variants[:i % len(variants)]
    for v in order:
        t, _, cpu = wall([true], envs[v])
        alt[v].append((t, cpu))

# Each round runs every measurement once, in an order of its own (shuffled, the same for
# every run of the script): on a busy machine a run measured just after another kind of
# run is systematically slower or faster (with the order fixed, whichever build came first
# after the untraced /bin/true took 3 ms more).
for k in range(rounds):
    pending = []
    tasks = [lambda: run_true(None, base)]
    tasks += [lambda m=m: add(m, wall([tb, m, str(threads)], base)[0]) for m in ("alive", "seq")]
    for o, l, r in builds:
        traced = dict(base, LD_PRELOAD=l, LIBTRACE_OUTPUT="@TRACE@", LIBTRACE_QUIET="1")
        tasks.append(lambda o=o, e=traced: run_true(o, e))
        tasks.append(lambda o=o, e=traced: add(o + "preload", wall([true], e)[0]))
        tasks.append(lambda o=o, r=r: add(o + "trace-run",
                                          wall([r, "-q", "-o", "@TRACE@", "--", true], base)[0]))
        for m in ("alive", "seq"):
            tasks.append(lambda o=o, m=m, e=traced: add(o + m + " traced",
                                                        wall([tb, m, str(threads)], e)[0]))
    random.Random(k).shuffle(tasks)
    for task in tasks:
        task()
    for key, path in pending:
        add(key, disk_kib(path))

med = {k: statistics.median(v) for k, v in res.items()}
ms = lambda k: med[k] * 1e3
print("bench/fixed.sh: %d rounds, medians, %s (%d CPUs)" % (
    rounds, "a busy loop per CPU beside" if hog == "1" else "no load of its own", os.cpu_count()))
for o, l, r in builds:
    print("%s%s" % ("other build: " if o else "build: ", os.path.dirname(l)))
    if pairs:
        m = lambda v, i: statistics.median(x[i] for x in alt[v]) * 1e3
        d = lambda i: statistics.median(
            (a[i] - b[i]) for a, b in zip(alt[o], alt[None])) * 1e3
        print("  /bin/true, %d alternating pairs: untraced %.2f ms, traced %.2f ms, extra %.2f ms"
              % (pairs, m(None, 0), m(o, 0), d(0)))
        print("  /bin/true, their CPU time:  untraced %.2f ms, traced %.2f ms, extra %.2f ms"
              % (m(None, 1), m(o, 1), d(1)))
    print("  /bin/true, in the rounds   untraced %7.2f ms   traced %7.2f ms   extra %6.2f ms" % (
        ms("true"), ms(o + "true traced"), ms(o + "true traced") - ms("true")))
    print("  /bin/true, its CPU         untraced %7.2f ms   traced %7.2f ms   extra %6.2f ms" % (
        ms("true cpu"), ms(o + "true traced cpu"), ms(o + "true traced cpu") - ms("true cpu")))
    print("  disk left per process  %d KiB (du -sk of the trace directory)" % med[o + "disk"])
    for m, what in (("alive", "%d alive at once" % threads),
                    ("seq", "%d one after another" % threads)):
        print("  threads, %-22s untraced %7.1f ms   traced %7.1f ms   extra %6.3f ms per thread"
              % (what, ms(m), ms(o + m + " traced"), (ms(o + m + " traced") - ms(m)) / threads))
    print("  trace-run -q -- true   %7.2f ms   LD_PRELOAD %7.2f ms   launcher adds %6.2f ms" % (
        ms(o + "trace-run"), ms(o + "preload"), ms(o + "trace-run") - ms(o + "preload")))
for r in retries:
    print("  run again: " + r)
PY
