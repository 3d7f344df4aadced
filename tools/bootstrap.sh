#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/bootstrap.sh - from a fresh Debian 12 machine to a working libtrace, in one command.
#
#   tools/bootstrap.sh demo   install what is needed, build, trace examples/pthread_pipeline,
#                             print its first records, convert it to OTF2 and say where
#                             everything is
#   tools/bootstrap.sh test   install what is needed, build with -Werror, run the whole test
#                             suite, then the unit tests again under ASan+UBSan and the
#                             buffer stress test under TSan
#
# Run it as root (or with sudo available): it installs Debian packages with apt-get.
# Build directories: build/ (demo), build-ci/, build-asan/ and build-tsan/ (test).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case $mode in
demo | test) ;;
*)
	echo "usage: tools/bootstrap.sh demo|test" >&2
	exit 2
	;;
esac

# Build and test dependencies, all from Debian's archive.
packages=(build-essential dpkg-dev cmake pkg-config python3 binutils
	libotf2-trace-dev otf2-tools python3-otf2 libpapi-dev libnuma-dev binutils-dev libunwind-dev
	pigz xz-utils sysbench strace clang-format clang libomp-dev
	imagemagick-6.q16 graphicsmagick python3-numpy libopenblas0-openmp gdb
	libtrilinos-kokkos-dev libopenmpi-dev openmpi-bin libmpich-dev mpich gfortran
	hpcc scalapack-mpi-test libamdhip64-dev man-db groff-base chromium python3-websocket)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	echo "bootstrap: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
jobs=$(nproc 2>/dev/null || echo 2)

if [ "$mode" = demo ]; then
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build -j"$jobs" >/dev/null
	out=$PWD/libtrace-demo
	rm -rf "$out"
	echo "bootstrap: tracing: build/examples/pthread_pipeline 4 64 20000"
	build/trace-run -o "$out" build/examples/pthread_pipeline 4 64 20000
	echo
	echo "bootstrap: the trace, process by process ($out):"
	ls -l "$out"/*/
	echo
	echo "bootstrap: its first records (build/trace-dump $out | sed -n 1,25p):"
	build/trace-dump "$out" | sed -n 1,25p # reads all: head would make trace-dump die of SIGPIPE
	echo "..."
	echo "bootstrap: records by type:"
	build/trace-dump "$out" | awk '{print $4}' | sort | uniq -c | sort -rn
	echo
	rm -rf "$out.otf2"
	echo "bootstrap: converting for Vampir: build/trace2otf2 $out"
	build/trace2otf2 "$out"
	echo "bootstrap: the archive's threads and regions (otf2-print -G):"
	otf2-print -G "$out.otf2/traces.otf2" | grep -E '^(LOCATION|REGION) ' | cut -c1-110
	otf2-print --silent -Werror "$out.otf2/traces.otf2" >/dev/null && echo "bootstrap: otf2-print -Werror accepts it"
	echo
	rm -f "$out.json" "$out.html"
	echo "bootstrap: without Vampir: build/trace2otf2 --format=chrome $out (Perfetto UI, speedscope)"
	build/trace2otf2 -q --format=chrome "$out"
	echo "bootstrap: and one self-contained page: build/trace-report --html -o $out.html $out"
	build/trace-report -q --html -o "$out.html" "$out"
	echo "bootstrap: the call tree (build/trace-report --tree $out):"
	build/trace-report -q --tree "$out" | sed -n 3,14p
	echo
	echo "bootstrap: done. Library: build/libtrace.so, launcher: build/trace-run,"
	echo "           converter: build/trace2otf2, reader: build/trace-dump,"
	echo "           trace: $out, OTF2 archive for Vampir: $out.otf2/traces.otf2,"
	echo "           Trace Event JSON: $out.json, HTML report: $out.html (open it in a browser)"
	exit 0
fi

# The viewer e2e.viewers opens Trace Event JSON in: speedscope, from the npm registry (npm
# from Debian where node has none), kept in ~/.cache so that the suite itself runs offline.
if [ "$mode" = test ]; then
	viewers=${LIBTRACE_VIEWERS:-$HOME/.cache/libtrace-viewers}
	if [ ! -f "$viewers/node_modules/speedscope/dist/release/index.html" ]; then
		if ! command -v npm >/dev/null; then
			[ "$(id -u)" = 0 ] && apt-get install -y -qq --no-install-recommends npm >/dev/null
		fi
		mkdir -p "$viewers"
		npm install --prefix "$viewers" --no-audit --no-fund --silent speedscope@1.25.0 >/dev/null ||
			echo "bootstrap: speedscope could not be installed: e2e.viewers will skip"
	fi
fi

# test: the unit tests and the converter's damaged-input suite under ASan+UBSan (and
# trace-report, on MPI traces), the reader fuzzed for 60 s, the buffer stress test under
# TSan, then the whole suite with warnings as errors (last, so that its summary closes the
# output).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIBTRACE_WERROR=ON \
	-DLIBTRACE_SANITIZE=address,undefined -DLIBTRACE_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target test_config test_buffer test_secure test_pack test_print test_maps \
	trace-dump fuzz_reader_replay trace2otf2 trace-report trace trace-annotate count_events exit_with
(cd build-asan && ctest --output-on-failure -L unit)
# The converter under ASan+UBSan on the damaged-input suite, on MPI traces (messages,
# communicators, clock alignment) where an MPI companion is built, and on GPU traces
# (synthetic ones, and the stand-in CUPTI's where CUDA's headers are) (the traced programs
# are not instrumented).
targets=$(cmake --build build-asan --target help)
mpi_targets=$(grep -oE 'trace-mpi-(openmpi|mpich)$' <<<"$targets" | sort -u || true)
[ -z "$mpi_targets" ] || cmake --build build-asan -j"$jobs" --target $mpi_targets
if grep -q 'mock_cupti$' <<<"$targets"; then
	cmake --build build-asan -j"$jobs" --target mock_cupti cupti_app
fi
# trace-report's call tree, memory, timelines and HTML page, and the Trace Event JSON, too.
cmake --build build-asan -j"$jobs" --target slow_region pthread_pipeline
if grep -q 'kokkos_app$' <<<"$targets"; then cmake --build build-asan -j"$jobs" --target kokkos_app; fi
(cd build-asan && LSAN_OPTIONS=suppressions=$PWD/../tests/lsan.supp \
	ctest --output-on-failure -R 'e2e\.(convert-damaged|mpi|gpu-convert|cupti-mock|report-tree|chrome|report-html)$')
# The reader's fuzz target for a minute (tools/fuzz/run.sh; clang and libFuzzer).
bash tools/fuzz/run.sh 60 build-fuzz 2>&1 | tail -12
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DLIBTRACE_WERROR=ON \
	-DLIBTRACE_SANITIZE=thread -DLIBTRACE_BENCH=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target test_buffer
(cd build-tsan && ctest --output-on-failure -R 'unit\.(clean|buffer)')
cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBTRACE_WERROR=ON >/dev/null
cmake --build build-ci -j"$jobs"
(cd build-ci && ctest --output-on-failure -j"$jobs")
