#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 under an MPI launcher (mpirun -np N trace2otf2): one trace of many kinds of
# processes (4 MPI ranks of mpi_patterns, omp_bots built by gcc with stack samples and by
# clang with call paths, callsites, the processes procs forks and execs, mark_then's
# markers, and one killed mid-run) converted serially and by 2, 3 and 5 converter ranks
# (more ranks than some processes' sizes: a rank may convert nothing).  Each archive passes
# otf2-print -Werror; its global definitions are the serial archive's, line for line
# (otf2-print -G); its marker file too, byte for byte; trace-report reads the same profile
# from it; every
# location holds the same events (compare_otf2.py, through the mapping tables, with every
# definition resolved).  --core-view is refused under the launcher; Paraver is written by
# rank 0 alone, the same as serially.  Skips without Open MPI or the MPI module.
. "$(dirname "$0")/lib.sh"
need_converter
module=$BUILD/libtrace-convert-mpi.so
[ -f "$module" ] || skip "no $module (libopenmpi-dev at build time)"
command -v mpirun.openmpi >/dev/null || skip "mpirun.openmpi missing (openmpi-bin)"
command -v mpicc.openmpi >/dev/null || skip "mpicc.openmpi missing (libopenmpi-dev)"
ldd "$module" | grep -q libmpi.so.40 || skip "the module is not Open MPI's"
mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe)
P=$SRC/tests/programs
T=$WORK/t
export LIBTRACE_QUIET=1

# The trace: every kind of definition a conversion makes.
mpicc.openmpi -O1 -g "$P/mpi_patterns.c" -o "$WORK/pat" || fail "cannot build mpi_patterns"
comp=$BUILD/libtrace-mpi-openmpi.so
timeout 120 "${mpirun[@]}" -np 4 -x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$T" \
	-x LIBTRACE_QUIET=1 "$WORK/pat" >/dev/null || fail "the traced MPI run failed"
gcc -O1 -g -fopenmp "$P/omp_bots.c" -o "$WORK/bots" || fail "cannot build omp_bots"
OMP_NUM_THREADS=4 LIBTRACE_STACK_SAMPLING=200us traced "$T" "$WORK/bots" >/dev/null ||
	fail "omp_bots (gcc) failed"
if clang -O1 -g -fopenmp "$P/omp_bots.c" -o "$WORK/bots_clang" 2>/dev/null; then
	OMP_NUM_THREADS=3 LIBTRACE_CALLSITE_DEPTH=4 traced "$T" "$WORK/bots_clang" >/dev/null ||
		fail "omp_bots (clang) failed"
fi
gcc -O1 -g -pthread "$P/callsites.c" -o "$WORK/callsites" || fail "cannot build callsites"
LIBTRACE_CALLSITE_DEPTH=3 traced "$T" "$WORK/callsites" >/dev/null || fail "callsites failed"
gcc -O1 -g -pthread -I"$SRC/include" "$P/procs.c" -o "$WORK/procs" -L"$BUILD" \
	-ltrace-annotate -Wl,-rpath,"$BUILD" || fail "cannot build procs"
traced "$T" "$WORK/procs" >/dev/null || fail "procs failed"
gcc -O1 -g -I"$SRC/include" "$P/mark_then.c" -o "$WORK/mark_then" -L"$BUILD" \
	-ltrace-annotate -Wl,-rpath,"$BUILD" || fail "cannot build mark_then"
traced "$T" "$WORK/mark_then" 20 0 >/dev/null || fail "mark_then failed"
traced "$T" "$WORK/mark_then" 5 -9 >/dev/null 2>&1
n=$(ls "$T" | wc -l)
[ "$n" -ge 12 ] || fail "$n processes in the trace, want 12 or more"

"$CONVERT" -q "$T" -o "$WORK/serial.otf2" || fail "the serial conversion failed: $?"
otf2-print -G "$WORK/serial.otf2/traces.otf2" >"$WORK/serial.defs"
# Markers (otf2-print shows none): their file, byte for byte, and what trace-report reads.
[ -s "$WORK/serial.otf2/traces.marker" ] || fail "the serial archive has no markers to compare"
"$BUILD/trace-report" "$WORK/serial.otf2" 2>&1 | sed "s|$WORK/serial.otf2|ARCHIVE|g" >"$WORK/serial.report" ||
	fail "trace-report of the serial archive failed"
grep -Eq 'killed|died|cut' "$WORK/serial.report" || fail "the report shows no killed process"
grep -q '^CALLING_CONTEXT ' "$WORK/serial.defs" || fail "no calling contexts to compare"
grep -q '^COMM .*Thread team' "$WORK/serial.defs" || fail "no OpenMP teams to compare"
grep -q '^COMM .*MPI_COMM_WORLD' "$WORK/serial.defs" || fail "no MPI communicators to compare"
for np in 2 3 5; do
	a=$WORK/par$np.otf2
	timeout 300 "${mpirun[@]}" -np $np "$CONVERT" -q "$T" -o "$a" 2>"$WORK/par.err" ||
		{ cat "$WORK/par.err" >&2; fail "$np ranks: the conversion failed"; }
	otf2-print --silent -Werror "$a/traces.otf2" >"$WORK/print.log" 2>&1 ||
		{ head "$WORK/print.log" >&2; fail "$np ranks: otf2-print -Werror rejects the archive"; }
	otf2-print -G "$a/traces.otf2" | cmp -s - "$WORK/serial.defs" || {
		otf2-print -G "$a/traces.otf2" | diff "$WORK/serial.defs" - | head >&2
		fail "$np ranks: the global definitions differ from the serial conversion's"
	}
	cmp -s "$a/traces.marker" "$WORK/serial.otf2/traces.marker" ||
		fail "$np ranks: the markers differ from the serial conversion's"
	"$BUILD/trace-report" "$a" 2>&1 | sed "s|$a|ARCHIVE|g" >"$WORK/par.report"
	cmp -s "$WORK/par.report" "$WORK/serial.report" || {
		diff "$WORK/serial.report" "$WORK/par.report" | head >&2
		fail "$np ranks: trace-report reads another profile from the archive"
	}
	otf2-print -M "$a/traces.otf2" | grep -q '^MAPPING_TABLE' ||
		fail "$np ranks: no location has a mapping table (were all ids the same?)"
	/usr/bin/python3 "$SRC/tests/e2e/compare_otf2.py" "$WORK/serial.otf2/traces.otf2" \
		"$a/traces.otf2" >"$WORK/cmp.log" || { tail "$WORK/cmp.log" >&2; fail "$np ranks: events differ"; }
	echo "$np ranks: $(grep -c '^location' "$WORK/cmp.log") locations, $(tail -1 "$WORK/cmp.log")"
done

# What is refused, and what rank 0 does alone.
"${mpirun[@]}" -np 2 "$CONVERT" -q --core-view "$T" -o "$WORK/cv.otf2" >/dev/null 2>"$WORK/cv.err" &&
	fail "--core-view under the launcher was accepted"
grep -q 'core-view needs every process' "$WORK/cv.err" || fail "--core-view: no reason given"
[ ! -e "$WORK/cv.otf2" ] || fail "--core-view under the launcher left an output"
"$CONVERT" -q -f paraver "$T" -o "$WORK/serial" || fail "serial Paraver conversion"
"${mpirun[@]}" -np 2 "$CONVERT" -f paraver "$T" -o "$WORK/par" 2>"$WORK/prv.err" ||
	fail "Paraver under the launcher failed"
grep -q 'rank 0 converts alone' "$WORK/prv.err" || fail "Paraver under the launcher: no note"
for e in prv pcf row; do
	# the header's date is the conversion's
	cmp -s <(sed 1d "$WORK/serial.$e") <(sed 1d "$WORK/par.$e") ||
		fail "Paraver under the launcher: .$e differs from the serial one"
done
echo "convert-parallel: ok"
