#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/omp.sh - what tracing adds to OpenMP constructs, with libgomp and with libomp.
#
#   bench/omp.sh [BUILD_DIR] [ROUNDS] [POLICIES]    (defaults: build, 5, "default passive")
#
# Builds bench/omp.c with gcc (libgomp: the tracer wraps GOMP_*) and with clang (libomp: the
# tracer is its OMPT tool) into a scratch directory, then for each OMP_WAIT_POLICY in
# POLICIES ("default" leaves it unset: libgomp and libomp spin a while before sleeping)
# runs, round after round, gcc plain, gcc traced, clang plain, clang traced, so that machine
# noise hits them alike.  Each run reports the median of 11 repetitions; the table gives
# the median over the rounds and what tracing added.  The team's two threads pin themselves
# to CPUs 0 and 1 (bench/omp.c); no SCHED_FIFO here: spinning FIFO threads would starve the
# tracer's writer.  Traces go to /dev/shm when it exists; the record counts are those of the
# last round's traced runs (trace-dump --stats).
set -eu
build=${1:-build}
rounds=${2:-5}
policies=${3:-default passive}
lib=$(cd "$build" && pwd)/libtrace.so
dump=$build/trace-dump
src=$(cd "$(dirname "$0")" && pwd)
[ -f "$lib" ] && [ -x "$dump" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-omp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp

compilers=()
for cc in gcc clang; do
	if command -v $cc >/dev/null &&
		$cc -O2 -fopenmp -I"$src" "$src/omp.c" -o "$tmp/omp-$cc" 2>"$tmp/$cc.log"; then
		compilers+=($cc)
	else
		echo "omp.sh: no OpenMP build with $cc: $(head -1 "$tmp/$cc.log" 2>/dev/null)" \
			"(clang needs libomp-dev)" >&2
	fi
done
[ ${#compilers[@]} -gt 0 ] || exit 2
for cc in "${compilers[@]}"; do
	echo "$cc: $(ldd "$tmp/omp-$cc" | awk '/lib(g|i)?omp/ { print $1 }' | tr '\n' ' ')"
done
if ! nm -D "$lib" | grep -q ' T GOMP_parallel$'; then
	echo "omp.sh: $lib has no OpenMP module (no GOMP_parallel): traced = preloaded only" >&2
fi

# run CFG ENV... -- CMD...: appends "CFG<TAB>name<TAB>ns" for each result line; a traced
# run leaves its record counts in $tmp/CFG.stats (the slashes of CFG made underscores).
run() {
	local cfg=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local dir=$out/libtrace-bench-omp-$$
	rm -rf "$dir"
	env "${envs[@]}" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$@" |
		sed -n "s|^\(.*[^ ]\) *median *\([0-9.]*\) ns.*|$cfg\t\1\t\2|p" >>"$tmp/results"
	if [ -d "$dir" ]; then "$dump" --stats "$dir" >"$tmp/${cfg//\//_}.stats" 2>&1 || true; fi
	rm -rf "$dir"
}

for policy in $policies; do
	penv=()
	regions=20000
	# Passive: every fork wakes a sleeping thread (a futex, tens of microseconds).
	[ "$policy" = default ] || { penv=(OMP_WAIT_POLICY="$policy"); regions=2000; }
	for r in $(seq "$rounds"); do
		for cc in "${compilers[@]}"; do
			run "$policy/$cc/plain" "${penv[@]}" -- "$tmp/omp-$cc" $regions 11
			run "$policy/$cc/traced" "${penv[@]}" LD_PRELOAD="$lib" -- "$tmp/omp-$cc" $regions 11
		done
	done
done

PYTHONPATH="$(dirname "$0")" python3 - "$tmp" "$rounds" "$policies" "${compilers[@]}" <<'PY'
import collections, os, re, sys
import results
tmp, rounds, policies, compilers = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
res, med, names = results.read(tmp)
runtime = {'gcc': 'gcc/libgomp', 'clang': 'clang/libomp'}
print(f"OpenMP constructs, ns (median of {rounds} rounds, each the median of 11 repetitions)")
for policy in policies:
    print(f"\nOMP_WAIT_POLICY={policy if policy != 'default' else '(unset)'}")
    head = ''.join(f"  {runtime.get(cc, cc):^28}" for cc in compilers)
    print(f"{'':<40}{head}")
    print(f"{'':<40}" + ''.join(f"  {'plain':>8} {'traced':>9} {'added':>9}" for _ in compilers))
    for name in names:
        row = ''
        for cc in compilers:
            p, t = (med.get((f"{policy}/{cc}/{k}", name)) for k in ('plain', 'traced'))
            if p is None or t is None:
                row += f"  {'-':>8} {'-':>9} {'-':>9}"
            else:
                row += f"  {p:8.1f} {t:9.1f} {t - p:+9.1f}"
        print(f"{name:<40}{row}")
    for cc in compilers:
        for k in ('plain', 'traced'):
            for name in names:
                v = res.get((f"{policy}/{cc}/{k}", name), [])
                print(f"  rounds {cc:<5} {k:<6} {name[:38]:<38} {', '.join(f'{x:.1f}' for x in v)}")
    for cc in compilers:
        f = os.path.join(tmp, f"{policy}_{cc}_traced.stats")
        if not os.path.exists(f):
            continue
        kinds = collections.Counter()
        for line in open(f):
            for k, v in re.findall(r'(\w+)=(\d+)', line):
                kinds[k] += int(v)
        omp = ', '.join(f"{k}={v}" for k, v in sorted(kinds.items()) if k.startswith('OMP_'))
        print(f"  records, {cc} traced (last round): {kinds['records']} in all;",
              omp or 'no OMP_ record')
PY
