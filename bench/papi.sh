#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/papi.sh - what a PAPI counter reading at region boundaries costs
# (LIBTRACE_PAPI_EVENTS): annotated regions (bench_event, one reading per event) traced
# without counters, with one event and with two, side by side.
#
#   bench/papi.sh [BUILD_DIR] [ROUNDS] [EVENTS1] [EVENTS2]
#   (defaults: build, 7, perf::TASK-CLOCK, perf::TASK-CLOCK,perf::CONTEXT-SWITCHES: software
#   events every Linux has; on a machine with a PMU try PAPI_TOT_INS,PAPI_TOT_CYC)
#
# The difference per event is the reading: PAPI_read of the thread's event set plus the
# COUNTERS record.  Through perf_event it is one read() system call.
set -eu
build=${1:-build}
rounds=${2:-7}
ev1=${3:-perf::TASK-CLOCK}
ev2=${4:-perf::TASK-CLOCK,perf::CONTEXT-SWITCHES}
lib=$(cd "$build" && pwd)/libtrace.so
prog=$build/bench/bench_event
[ -f "$lib" ] && [ -x "$prog" ] || { echo "build the project first ($build)" >&2; exit 2; }
ls /usr/lib/*/libpapi.so* >/dev/null 2>&1 || { echo "libpapi is not installed (apt-get install libpapi7.0)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-papi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp

run() { # NAME ENV...: one run; appends "NAME<TAB>loop<TAB>ns"
	local name=$1 dir=$out/libtrace-bench-papi-$$
	shift
	rm -rf "$dir"
	env "$@" LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$dir" LIBTRACE_SAMPLE_PERIOD=0 "$prog" 400000 11 2>"$tmp/err" |
		sed -n "s/^\(event: by handle, 200k bursts\) *median *\([0-9.]*\) ns.*/$name\t\1\t\2/p" >>"$tmp/results"
	if grep -q "PAPI" "$tmp/err"; then
		echo "PAPI said, with $*:" >&2
		grep PAPI "$tmp/err" | sort -u >&2
	fi
	rm -rf "$dir"
}
for r in $(seq "$rounds"); do
	run none
	run one LIBTRACE_PAPI_EVENTS="$ev1"
	run two LIBTRACE_PAPI_EVENTS="$ev2"
done
python3 - "$tmp/results" "$rounds" "$ev1" "$ev2" <<'PY'
import collections, statistics, sys
res = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cfg, loop, v = line.rstrip('\n').split('\t')
    res[cfg].append(float(v))
med = {k: statistics.median(v) for k, v in res.items()}
print(f"bench_event region begin/end (bursts that fit in the ring), {sys.argv[2]} rounds, "
      "medians in ns per event:")
for cfg, label in (('none', 'traced, no counters'), ('one', sys.argv[3]), ('two', sys.argv[4])):
    if cfg in med:
        extra = f"  +{med[cfg] - med['none']:.0f} ns per reading" if cfg != 'none' else ''
        print(f"  {label:<50} {med[cfg]:8.1f}{extra}   (rounds: "
              f"{', '.join(f'{x:.0f}' for x in res[cfg])})")
PY
