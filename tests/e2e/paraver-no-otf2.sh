#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Each output format builds on its own: the converter configured without OTF2
# (-DLIBTRACE_WITH_OTF2=OFF) builds with warnings as errors, offers Paraver (the default) and
# the Trace Event JSON only, refuses
# otf2 as an unknown format, and passes e2e.paraver.  ~35 s to build on a 2-core VM.
. "$(dirname "$0")/lib.sh"

command -v cmake >/dev/null || skip "cmake missing"
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
cmake -S "$SRC" -B "$WORK/b" -DLIBTRACE_WITH_OTF2=OFF -DLIBTRACE_WERROR=ON \
	${cc:+-DCMAKE_C_COMPILER="$cc"} >"$WORK/cmake.log" 2>&1 || {
	tail "$WORK/cmake.log" >&2
	fail "configuring without OTF2 failed"
}
make -C "$WORK/b" -j2 trace2otf2 >"$WORK/make.log" 2>&1 || {
	grep -E 'error|warning' "$WORK/make.log" | head >&2
	fail "trace2otf2 does not build without OTF2"
}
conv=$WORK/b/trace2otf2
"$conv" --help | grep -q '^  paraver ' || fail "no paraver in a build without OTF2"
"$conv" --help | grep -q '^  otf2 ' && fail "otf2 offered by a build without OTF2"
traced "$WORK/t.trace" "$TESTBIN/count_events" 2 10 >/dev/null || fail "count_events failed"
"$conv" -q -f otf2 "$WORK/t.trace" 2>"$WORK/err"
[ $? = 1 ] && grep -q 'unknown format (paraver or chrome)' "$WORK/err" || fail "otf2 without OTF2: $(cat "$WORK/err")"
"$conv" -q "$WORK/t.trace" -o "$WORK/t" && [ -s "$WORK/t.prv" ] ||
	fail "the default format of a build without OTF2 is not Paraver"
CONVERT=$conv bash "$SRC/tests/e2e/paraver.sh" || fail "e2e.paraver with the converter built without OTF2"
echo "paraver-no-otf2: ok"
