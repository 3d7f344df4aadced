#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What users open without Vampir, in a real viewer: the Trace Event JSON of a pthread, an
# OpenMP, an MPI, a Kokkos and a GPU trace (viewer_traces.sh) opened in speedscope (the npm
# package, installed offline by tools/bootstrap.sh test) in headless Chromium, through the
# DevTools protocol (browser.py): no console error, one profile per thread, a flame chart
# drawn, and in the profiles speedscope made (its export) one frame per region name and the
# OpenMP parallel regions (omp_parallel's successive ones) at the depth the file nests them
# at, not a staircase (speedscope_check.py).  Skips without Chromium, python3-websocket or
# speedscope.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/viewer_traces.sh"
[ -x "$CONVERT" ] || skip "trace2otf2 was not built"
command -v chromium >/dev/null || skip "chromium missing (apt-get install chromium)"
/usr/bin/python3 -c 'import websocket' 2>/dev/null || skip "python3-websocket missing (apt-get install python3-websocket)"
release=${LIBTRACE_VIEWERS:-$HOME/.cache/libtrace-viewers}/node_modules/speedscope/dist/release
[ -f "$release/index.html" ] || skip "speedscope missing ($release: tools/bootstrap.sh test installs it from npm)"
viewer_traces "$WORK"
files=()
for t in $VIEWER_TRACES; do
	"$CONVERT" -q -f chrome "$WORK/$t" -o "$WORK/$t.json" || fail "$t: trace2otf2 -f chrome: $?"
	files+=("$WORK/$t.json")
done
mkdir -p "$WORK/shots"
/usr/bin/python3 "$SRC/tests/e2e/speedscope_check.py" "$release" "$WORK/shots" "${files[@]}" ||
	fail "speedscope"
# Screenshots for people to look at: kept where LIBTRACE_TEST_ARTIFACTS says.
if [ -n "${LIBTRACE_TEST_ARTIFACTS:-}" ]; then
	mkdir -p "$LIBTRACE_TEST_ARTIFACTS" && cp "$WORK"/shots/*.png "$LIBTRACE_TEST_ARTIFACTS"/
fi
echo "viewers: ok"
