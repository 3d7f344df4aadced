# SPDX-License-Identifier: BSD-3-Clause
# bench/common.sh - sourced by the benchmark scripts that need it: a scratch directory
# under TMPDIR removed at exit, and HOG=1's busy loops (one per CPU), stopped at exit.

hogs=()
bench_cleanup() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}

# bench_scratch NAME: tmp, a new directory (TMPDIR/libtrace-NAME.XXXXXX), gone at exit.
bench_scratch() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-$1.XXXXXX")
	trap bench_cleanup EXIT
}

# bench_hogs: with HOG=1, a busy loop per CPU from now until exit (a busy machine).
bench_hogs() {
	[ "${HOG:-0}" = 1 ] || return 0
	for _ in $(seq "$(nproc)"); do
		/usr/bin/python3 -c 'while True: pass' &
		hogs+=($!)
	done
}
