#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/fuzz/run.sh SECONDS [BUILD_DIR] - fuzzes the trace reader with libFuzzer (clang)
# for SECONDS, starting from seed traces made here (small runs of the test programs, one
# killed) and the inputs that once failed (tests/fuzz-regressions).  A failing input is
# left in BUILD_DIR/fuzz (crash-*, leak-*) and the exit status is non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:?usage: tools/fuzz/run.sh SECONDS [BUILD_DIR]}
build=${2:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz: clang is not installed" >&2; exit 2; }
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DLIBTRACE_FUZZ=ON \
	-DLIBTRACE_TESTS=ON -DLIBTRACE_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_reader trace count_events steady \
	pthread_pipeline >/dev/null
work=$build/fuzz
rm -rf "$work/seeds" "$work/traces"
mkdir -p "$work/seeds" "$work/corpus" "$work/traces"
lib=$PWD/$build/libtrace.so
run() { LD_PRELOAD=$lib LIBTRACE_OUTPUT=$work/traces/$1 LIBTRACE_QUIET=1 LIBTRACE_BUFFER_SIZE=64K "${@:2}"; }
run count "$build/tests/count_events" 1 30 >/dev/null
run pipeline "$build/examples/pthread_pipeline" >/dev/null
run steady "$build/tests/steady" 2 2000 60 &
pid=$!
sleep 0.3
kill -KILL $pid
wait $pid 2>/dev/null || true
for t in "$work"/traces/*/*/; do
	python3 tools/fuzz/pack_trace.py "$t" "$work/seeds/$(basename "$(dirname "$t")")"
done
cp tests/fuzz-regressions/* "$work/seeds/"
cd "$work"
exec ./../fuzz_reader -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 corpus seeds
