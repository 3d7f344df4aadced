#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/size.sh - what a traced lock/unlock pair and an annotated region enter/leave pair
# cost on disk and in CPU time, the writer thread included; side by side with LTTng-UST's
# pthread wrapper on the same loop where LTTng is installed.
#
#   bench/size.sh [BUILD_DIR] [ROUNDS] [PAIRS]        (defaults: build, 5, 1000000)
#   BASE_LIB=OTHER/libtrace.so bench/size.sh ...      adds a column for another build
#
# For each configuration and round, bench_pairs runs PAIRS pairs in one thread (and 0 pairs,
# for the start-up cost):
#   disk      bytes allocated on disk by the whole process directory (events + ring + meta,
#             du --block-size=1), divided by PAIRS
#   cpu       (CPU time of the whole process with PAIRS pairs - with 0) / PAIRS: user +
#             system time of every thread, the writer's included (wait4's rusage)
#   steady    (CPU time with 4 x PAIRS pairs - with PAIRS) / (3 x PAIRS): a pair past the
#             first pass over the ring (its pages, the start, the exit are in "cpu")
#   writer    the writer thread's CPU time (meta "writer_cpu") / PAIRS
# and bench_mutex / bench_event give the cost in the program's thread alone (bursts that
# fit the ring), bench_floor the least a traced pair can cost here, untraced: the program's
# thread stamping and storing both records into a ring nobody reads, plus the tracer's
# packer over those records from its cache (each half without the other's traffic).  LTTng: a user-space session recording lttng_ust_pthread:*, its trace
# directory's bytes, and the CPU time of the program plus that of the session and consumer
# daemons during the run (they do the writing).  Medians over the rounds.  Traces go to
# TMPDIR (default /tmp): the disk is what is measured, not /dev/shm.
set -eu
build=${1:-build}
rounds=${2:-5}
pairs=${3:-1000000}
lib=$(cd "$build" && pwd)/libtrace.so
bp=$build/bench/bench_pairs
mx=$build/bench/bench_mutex
ev=$build/bench/bench_event
fl=$build/bench/bench_floor
[ -x "$bp" ] && [ -x "$mx" ] && [ -x "$ev" ] && [ -x "$fl" ] && [ -f "$lib" ] ||
	{ echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-size.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

wrapper=
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
	for f in "$d"/liblttng-ust-pthread-wrapper.so "$d"/liblttng-ust-pthread-wrapper.so.1; do
		[ -f "$f" ] && { wrapper=$f; break 2; }
	done
done
lttng_ok=
if ! command -v lttng >/dev/null; then
	echo "LTTng column skipped: lttng (lttng-tools) is not installed" >&2
elif [ -z "$wrapper" ]; then
	echo "LTTng column skipped: liblttng-ust-pthread-wrapper.so (liblttng-ust1) not found" >&2
else
	lttng_ok=1
fi

/usr/bin/python3 - "$tmp" "$rounds" "$pairs" "$lib" "${BASE_LIB:-}" "$bp" "$mx" "$ev" \
	"$wrapper" "$lttng_ok" "$fl" <<'PY'
import os, re, statistics, subprocess, sys, shutil

tmp, rounds, pairs, lib, base_lib, bp, mx, ev, wrapper, lttng_ok, fl = sys.argv[1:]
rounds, pairs = int(rounds), int(pairs)


def du(path):
    total = 0
    for root, dirs, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(root, f)).st_blocks * 512
    return total


def run(cmd, env):
    """CPU seconds (user + system, all threads) of one run."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        sys.exit("failed: %s" % " ".join(cmd))
    return ru.ru_utime + ru.ru_stime


def daemons_cpu():
    """CPU seconds of the LTTng daemons so far (they write an LTTng trace)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
            if not comm.startswith("lttng-"):
                continue
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


def libtrace(name, so, mode):
    out = {}
    env = dict(os.environ, LD_PRELOAD=so, LIBTRACE_QUIET="1")
    d0, d = os.path.join(tmp, name + "-0"), os.path.join(tmp, name)
    for p in (d0, d):
        shutil.rmtree(p, ignore_errors=True)
    c0 = run([bp, mode, "0"], dict(env, LIBTRACE_OUTPUT=d0))
    c = run([bp, mode, str(pairs)], dict(env, LIBTRACE_OUTPUT=d))
    out["disk"] = du(d) / pairs
    out["cpu"] = (c - c0) * 1e9 / pairs
    # Past the first pass over the ring: what each further pair costs (4 x PAIRS).
    d4 = d + "-4"
    c4 = run([bp, mode, str(4 * pairs)], dict(env, LIBTRACE_OUTPUT=d4))
    out["steady"] = (c4 - c) * 1e9 / (3 * pairs)
    shutil.rmtree(d4, ignore_errors=True)
    writer = None
    for root, dirs, files in os.walk(d):
        if "meta" in files:
            for line in open(os.path.join(root, "meta")):
                if line.startswith("writer_cpu "):
                    writer = int(line.split()[1])
    out["writer"] = writer / pairs if writer is not None else None
    shutil.rmtree(d0, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    return out


def lttng():
    d = os.path.join(tmp, "lttng")
    shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ, LTTNG_HOME=tmp)
    q = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["lttng", "create", "size", "--output=" + d], check=True, **q)
    subprocess.run(["lttng", "enable-event", "-u", "lttng_ust_pthread:*"], check=True, **q)
    subprocess.run(["lttng", "start"], check=True, **q)
    pre = dict(env, LD_PRELOAD=wrapper)
    c0 = run([bp, "lock", "0"], pre)
    d_before = daemons_cpu()
    c = run([bp, "lock", str(pairs)], pre)
    subprocess.run(["lttng", "stop"], check=True, **q)
    d_after = daemons_cpu()
    subprocess.run(["lttng", "destroy"], check=True, **q)
    out = {"disk": du(d) / pairs, "cpu": (c - c0 + d_after - d_before) * 1e9 / pairs,
           "writer": (d_after - d_before) * 1e9 / pairs}
    shutil.rmtree(d, ignore_errors=True)
    return out


def bench_line(cmd, env, pattern):
    text = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    m = re.search(re.escape(pattern) + r" *median *([0-9.]+) ns", text)
    return float(m.group(1)) if m else None


configs = [("libtrace", lib)] + ([("base", base_lib)] if base_lib else [])
res = {}
if lttng_ok:
    # A session daemon of our own, under LTTNG_HOME=tmp, for the whole run.
    subprocess.run(["lttng-sessiond", "--daemonize"], env=dict(os.environ, LTTNG_HOME=tmp),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for r in range(rounds):
        for name, so in configs:
            for mode in ("lock", "region"):
                for k, v in libtrace(name, so, mode).items():
                    res.setdefault((name, mode, k), []).append(v)
            env = dict(os.environ, LD_PRELOAD=so, LIBTRACE_QUIET="1",
                       LIBTRACE_OUTPUT=os.path.join(tmp, "hot"))
            res.setdefault((name, "lock", "thread"), []).append(
                bench_line([mx, "2000000", "5"], env, "mutex pair, 50k bursts"))
            res.setdefault((name, "region", "thread"), []).append(
                2 * bench_line([ev, "2000000", "5"], env, "event: by handle, 200k bursts"))
            shutil.rmtree(os.path.join(tmp, "hot"), ignore_errors=True)
        if lttng_ok:
            for k, v in lttng().items():
                res.setdefault(("lttng", "lock", k), []).append(v)
        c = run([bp, "lock", str(pairs)], dict(os.environ))
        res.setdefault(("plain", "lock", "cpu"), []).append(c * 1e9 / pairs)
        plain = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        for key, line in (("producer", "producer: 2 x (rdtsc + 24 B record)"),
                          ("packer", "pack cache: 1 MiB chunk, per pair")):
            res.setdefault(("floor", key), []).append(bench_line([fl, "2000000", "3"], plain, line))
finally:
    if lttng_ok:
        # Our session daemon: the one whose LTTNG_HOME is ours.
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                envs = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
                comm = open("/proc/%s/comm" % pid).read().strip()
            except OSError:
                continue
            if comm == "lttng-sessiond" and ("LTTNG_HOME=" + tmp).encode() in envs:
                os.kill(int(pid), 15)


def med(key):
    v = [x for x in res.get(key, []) if x is not None]
    return statistics.median(v) if v else None


def fmt(v, unit):
    return "-" if v is None else ("%.1f %s" % (v, unit))


cols = [n for n, _ in configs] + (["lttng"] if lttng_ok else [])
print("%d pairs in one thread, medians of %d rounds" % (pairs, rounds))
print("| per pair | " + " | ".join(cols) + " |")
print("|---|" + "---|" * len(cols))
rows = [("lock+unlock: bytes on disk", "lock", "disk", "B"),
        ("lock+unlock: CPU, whole process", "lock", "cpu", "ns"),
        ("lock+unlock: CPU, whole process, past PAIRS (4 x PAIRS)", "lock", "steady", "ns"),
        ("lock+unlock: CPU, writer (LTTng: daemons)", "lock", "writer", "ns"),
        ("lock+unlock: program's thread (bursts)", "lock", "thread", "ns"),
        ("region enter+leave: bytes on disk", "region", "disk", "B"),
        ("region enter+leave: CPU, whole process", "region", "cpu", "ns"),
        ("region enter+leave: CPU, whole process, past PAIRS", "region", "steady", "ns"),
        ("region enter+leave: CPU, writer", "region", "writer", "ns"),
        ("region enter+leave: program's thread (bursts)", "region", "thread", "ns")]
for label, mode, k, unit in rows:
    print("| %s | %s |" % (label, " | ".join(fmt(med((c, mode, k)), unit) for c in cols)))
print("untraced lock+unlock pair, whole process: %s" % fmt(med(("plain", "lock", "cpu")), "ns"))
fp, fk = med(("floor", "producer")), med(("floor", "packer"))
if fp is not None and fk is not None:
    print("floor of a traced pair here (bench_floor, untraced): the program's thread %.1f ns"
          " + the packer %.1f ns = %.1f ns" % (fp, fk, fp + fk))
PY
