#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/convert.sh - the converter's speed and memory.
#
#   bench/convert.sh [BUILD_DIR] [ROUNDS] [SMALL] [LARGE] [FORMATS]
#   (defaults: build, 3, 10M, 100M, "otf2 paraver")
#
# Records two enter/leave-only traces (SMALL and LARGE region events, one thread, with
# bench_event --record), then converts each ROUNDS times to each format, alternating, pinned
# to one core (taskset -c 0), and reports per size and format the median wall time, events
# converted per second and the peak RSS.  The traces and outputs go to $TMPDIR (1.6 GB of
# trace per 100M events, about as much again per output).
set -eu
build=${1:-build}
rounds=${2:-3}
small=${3:-10000000}
large=${4:-100000000}
formats=${5:-otf2 paraver}
conv=$build/trace2otf2
lib=$(cd "$build" && pwd)/libtrace.so
[ -x "$conv" ] && [ -x "$build/bench/bench_event" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-convert.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for n in $small $large; do
	LD_PRELOAD=$lib LIBTRACE_OUTPUT=$tmp/t$n LIBTRACE_QUIET=1 "$build/bench/bench_event" --record $n
done

# measure OUT CMD...: runs CMD, appends "<wall s> <max rss KiB>" to OUT.
measure() {
	local out=$1
	shift
	python3 - "$out" "$@" <<'PY'
import os, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t
if status != 0:
    sys.exit("benchmark command failed: %r" % cmd)
with open(out, "a") as f:
    f.write("%.3f %d\n" % (wall, ru.ru_maxrss))
PY
}

for r in $(seq "$rounds"); do
	for n in $small $large; do
		for f in $formats; do
			rm -rf "$tmp/a$n.$f"*
			measure "$tmp/r$n.$f" taskset -c 0 "$conv" -q -f "$f" "$tmp/t$n" -o "$tmp/a$n.$f"
		done
	done
done
records() { "$conv" "$tmp/t$1" -o "$tmp/count$1" 2>&1 | sed -n 's/.* events from \([0-9]*\) records.*/\1/p'; rm -rf "$tmp/count$1"; }

echo "trace2otf2, enter/leave-only traces, one core (taskset -c 0), median of $rounds:"
for n in $small $large; do
	for f in $formats; do
		python3 - "$tmp/r$n.$f" "$n" "$(du -sb "$tmp/t$n" | cut -f1)" "$(du -cb "$tmp/a$n.$f"* | tail -1 | cut -f1)" "$f" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
n, tbytes, abytes, fmt = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
wall = statistics.median(r[0] for r in rows)
rss = max(r[1] for r in rows) / 1024
print("  %-7s %11d events: %7.2f s  %6.2f M events/s  peak RSS %6.1f MiB  (walls: %s; trace %.0f MB, output %.0f MB)"
      % (fmt, n, wall, n / wall / 1e6, rss, ", ".join("%.2f" % r[0] for r in rows), tbytes / 1e6, abytes / 1e6))
PY
	done
done
echo "  records in the traces: $(records $small), $(records $large)"
