#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/make.sh - what tracing costs a build made of many short processes: `make -j NPROC`
# compiling FILES small C files with gcc (gcc, cc1 and as for each: three processes a
# file), untraced and with libtrace.so preloaded into make and everything it starts, in
# alternating rounds; the extra wall time per traced process and the disk the trace keeps.
#
#   [HOG=1] bench/make.sh [BUILD_DIR] [ROUNDS] [FILES]       (build, 5, 200)
#
# With HOG=1 a busy loop per CPU runs beside the builds (a busy machine).  The build
# directory and the traces go to TMPDIR (default /tmp): the disk is what is measured.
set -eu
build=${1:-build}
rounds=${2:-5}
files=${3:-200}
lib=$(cd "$build" && pwd)/libtrace.so
[ -f "$lib" ] || { echo "build the project first ($build)" >&2; exit 2; }
command -v make >/dev/null && command -v gcc >/dev/null ||
	{ echo "make and gcc are needed (apt-get install make gcc)" >&2; exit 2; }
. "$(dirname "$0")/common.sh"
bench_scratch make
mkdir "$tmp/src"
for i in $(seq "$files"); do
	echo "int f$i(int x) { return x * $i; }" >"$tmp/src/f$i.c"
done
cat >"$tmp/src/Makefile" <<'EOF'
OBJS := $(patsubst %.c,%.o,$(wildcard f*.c))
all: $(OBJS)
%.o: %.c
	@gcc -O0 -c $< -o $@
EOF
bench_hogs
/usr/bin/python3 - "$tmp" "$rounds" "$lib" "$files" <<'PY'
import os, shutil, statistics, subprocess, sys, time
tmp, rounds, lib, files = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
src = os.path.join(tmp, "src")
base = {k: v for k, v in os.environ.items() if not k.startswith("LIBTRACE_") and k != "LD_PRELOAD"}
jobs = str(os.cpu_count())
res = {"untraced": [], "traced": []}
procs, disk = [], []
for r in range(rounds):
    for name in (("untraced", "traced") if r % 2 == 0 else ("traced", "untraced")):
        for f in os.listdir(src):
            if f.endswith(".o"):
                os.unlink(os.path.join(src, f))
        env = dict(base)
        trace = os.path.join(tmp, "t%d" % r)
        if name == "traced":
            env.update(LD_PRELOAD=lib, LIBTRACE_OUTPUT=trace, LIBTRACE_QUIET="1")
        t = time.perf_counter()
        subprocess.run(["make", "-s", "-j", jobs], cwd=src, env=env, check=True)
        res[name].append(time.perf_counter() - t)
        if name == "traced":
            procs.append(len(os.listdir(trace)))
            disk.append(int(subprocess.run(["du", "-sk", trace], capture_output=True,
                                           text=True).stdout.split()[0]))
            shutil.rmtree(trace)
u, t = statistics.median(res["untraced"]), statistics.median(res["traced"])
n = statistics.median(procs)
print("bench/make.sh: make -j %s of %d files, %d rounds, medians, %s" % (
    jobs, files, rounds, "a busy loop per CPU beside" if os.environ.get("HOG") == "1"
    else "no load of its own"))
print("  untraced %.2f s   traced %.2f s   extra %.2f s: %.2f ms per traced process (%d)" % (
    u, t, t - u, (t - u) * 1e3 / n, n))
print("  disk left per process %.0f KiB" % (statistics.median(disk) / n))
PY
