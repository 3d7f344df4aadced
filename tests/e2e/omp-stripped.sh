#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A stripped shared library's OpenMP parallel regions (gcc, libgomp): its outlined functions
# are local symbols, gone with strip --strip-unneeded, so each region is named after the
# exported function that forked it, "!$omp parallel striplib_sums (outlined)", never
# "libomp_striplib.so+0x...", and its two regions stay two.  Call sites and regions without
# file or line have no source location in the archive: no "":0, no "file.c:0".
. "$(dirname "$0")/lib.sh"
need_converter
command -v gcc >/dev/null || skip "gcc missing"
command -v strip >/dev/null || skip "strip missing (binutils)"
echo 'int main(void) { return 0; }' >"$WORK/probe.c"
gcc -fopenmp "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null || skip "gcc cannot build OpenMP programs"

gcc -fopenmp -O2 -g -fPIC -shared -Wall -Wextra -Werror "$SRC/tests/programs/omp_striplib.c" \
	-o "$WORK/libomp_striplib.so" || fail "building the library failed"
strip --strip-unneeded "$WORK/libomp_striplib.so" || fail "strip failed"
nm "$WORK/libomp_striplib.so" 2>&1 | grep -q '_omp_fn' && fail "the library is not stripped"
nm -D --defined-only "$WORK/libomp_striplib.so" | grep -q ' T striplib_sums$' ||
	fail "the stripped library does not export striplib_sums"
gcc -fopenmp -O2 -g -Wall -Wextra -Werror "$SRC/tests/programs/omp_stripmain.c" \
	-o "$WORK/omp_stripmain" -L"$WORK" -lomp_striplib -Wl,-rpath,"$WORK" ||
	fail "building the program failed"

out=$(OMP_NUM_THREADS=2 traced "$WORK/t" "$WORK/omp_stripmain") || fail "the program failed"
[ "$out" = "3.74996e+09 1" ] || fail "the program printed '$out'"
converted "$WORK/t" "$WORK/t.otf2" --processes 1

/usr/bin/python3 - "$WORK/t.otf2/traces.otf2" <<'PY' || fail "the archive's names or locations"
import re, sys
import otf2

bad = []
with otf2.reader.open(sys.argv[1]) as r:
    d = r.definitions
    outlined = {}
    for g in d.regions:
        print(f"region {g.name!r} aka {g.canonical_name!r} descr {g.description!r} "
              f"file {g.source_file!r}:{g.begin_line_number}")
        if re.search(r"[^ /]+\.so[.0-9]*\+0x[0-9a-f]+$", g.name):
            bad.append(f"region named by its address: {g.name}")
        if g.source_file and g.source_file not in ("PTHREAD", "PROCESS", "KOKKOS") and \
                not g.begin_line_number:
            bad.append(f"region {g.name} at {g.source_file}:0")
        if g.name == "!$omp parallel striplib_sums (outlined)":
            outlined[g.description] = g
    scls = list(d.source_code_locations)
    for s in scls:
        print(f"source code location {s.file!r}:{s.line_number}")
        if not s.file or not s.line_number:
            bad.append(f"source code location {s.file!r}:{s.line_number}")
    if not any(s.file and s.file.endswith("omp_stripmain.c") and s.line_number for s in scls):
        bad.append("no call site in omp_stripmain.c with its line")
    if sorted(outlined) != sorted(k for k in outlined
                                  if re.fullmatch(r"libomp_striplib\.so\+0x[0-9a-f]+", k or "")) \
            or len(outlined) != 2:
        bad.append(f"{len(outlined)} regions '!$omp parallel striplib_sums (outlined)' "
                   f"described {sorted(map(str, outlined))}, expected 2 described by address")
    if not any(re.fullmatch(r"!\$omp parallel @omp_stripmain\.c:[0-9]+", g.name)
               for g in d.regions):
        bad.append("no region '!$omp parallel @omp_stripmain.c:LINE'")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# trace-report and the Paraver labels use the same names.
"$BUILD/trace-report" "$WORK/t" >"$WORK/report.txt" || fail "trace-report failed"
[ "$(grep -c 'openmp *!\$omp parallel striplib_sums (outlined)$' "$WORK/report.txt")" = 2 ] ||
	fail "trace-report does not list the two outlined regions"
"$CONVERT" -q -f paraver "$WORK/t" -o "$WORK/pv" || fail "trace2otf2 -f paraver failed"
[ "$(grep -c '^[0-9]* *!\$omp parallel striplib_sums (outlined)$' "$WORK/pv.pcf")" = 2 ] ||
	fail "the .pcf does not label the two outlined regions"
! grep -E ':0(\]|\)|$)' "$WORK/pv.pcf" "$WORK/report.txt" || fail "a location at line 0"
echo ok
