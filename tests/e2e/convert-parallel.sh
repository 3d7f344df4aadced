#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A parallel conversion (trace2otf2 -j N; mpirun -np N trace2otf2 with Open MPI and MPICH): one
# trace of many kinds of processes (4 MPI ranks of mpi_patterns, omp_bots built by gcc with
# stack samples and by clang with call paths, callsites, the processes procs forks and
# execs, mark_then's markers, one killed mid-run, a CUDA program's GPU streams written from
# format.h on another host) converted serially, with -j 2, 3 and
# 5, by 2 and 3 Open MPI ranks and by 2 MPICH ranks.  Each archive passes otf2-print -Werror; its global
# definitions are the serial archive's, line for line (otf2-print -G); its marker file too,
# byte for byte; trace-report reads the same profile from it; every location holds the same
# events (compare_otf2.py, through the mapping tables, with every definition resolved).
# The Paraver trace of -j 2, 3, 5 and of 2 and 3 MPI ranks is the serial one, byte for
# byte.  --core-view is refused under the launcher and converts in one process with -j; a
# converter a rank runs (not the launcher) converts alone.  The MPI part skips without Open MPI or
# the MPI module.
. "$(dirname "$0")/lib.sh"
need_converter
module=$BUILD/libtrace-convert-mpi-openmpi.so
mpi=1
if [ ! -f "$module" ]; then
	echo "MPI: not tested (no $module: libopenmpi-dev at build time)"
	mpi=0
elif ! command -v mpirun.openmpi >/dev/null || ! command -v mpicc.openmpi >/dev/null; then
	echo "MPI: not tested (mpirun.openmpi or mpicc.openmpi missing)"
	mpi=0
elif ! ldd "$module" | grep -q libmpi.so.40; then
	echo "MPI: not tested (the module is not Open MPI's)"
	mpi=0
fi
mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe)
P=$SRC/tests/programs
T=$WORK/t
export LIBTRACE_QUIET=1

# The trace: every kind of definition a conversion makes.
if [ $mpi = 1 ]; then
	mpicc.openmpi -O1 -g "$P/mpi_patterns.c" -o "$WORK/pat" || fail "cannot build mpi_patterns"
	comp=$BUILD/libtrace-mpi-openmpi.so
	timeout 120 "${mpirun[@]}" -np 4 -x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$T" \
		-x LIBTRACE_QUIET=1 "$WORK/pat" >/dev/null || fail "the traced MPI run failed"
fi
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
# A CUDA program under CUPTI, on another host (GPU streams, RMA windows, a leak), written
# from format.h alone (no GPU here).
exe=$TESTBIN/count_events
main_off=$(nm "$exe" 2>/dev/null | awk '$3 == "main" { print $1 }')
python3 "$SRC/tests/e2e/mk_gpu_trace.py" "$WORK/gpu" "$exe" "${main_off:-0}" cupti ||
	fail "writing the GPU process"
cp -r "$WORK/gpu"/* "$T"/ || fail "copying the GPU process"
n=$(ls "$T" | wc -l)
[ "$n" -ge $((9 + 4 * mpi)) ] || fail "$n processes in the trace, want $((9 + 4 * mpi)) or more"

"$CONVERT" -q "$T" -o "$WORK/serial.otf2" || fail "the serial conversion failed: $?"
otf2-print -G "$WORK/serial.otf2/traces.otf2" >"$WORK/serial.defs"
# Markers (otf2-print shows none): their file, byte for byte, and what trace-report reads.
[ -s "$WORK/serial.otf2/traces.marker" ] || fail "the serial archive has no markers to compare"
"$BUILD/trace-report" "$WORK/serial.otf2" 2>&1 | sed "s|$WORK/serial.otf2|ARCHIVE|g" >"$WORK/serial.report" ||
	fail "trace-report of the serial archive failed"
grep -Eq 'killed|died|cut' "$WORK/serial.report" || fail "the report shows no killed process"
grep -q '^CALLING_CONTEXT ' "$WORK/serial.defs" || fail "no calling contexts to compare"
grep -q '^COMM .*Thread team' "$WORK/serial.defs" || fail "no OpenMP teams to compare"
grep -q '^RMA_WIN ' "$WORK/serial.defs" || fail "no GPU windows to compare"
[ $mpi = 0 ] || grep -q '^COMM .*MPI_COMM_WORLD' "$WORK/serial.defs" ||
	fail "no MPI communicators to compare"
ways=("-j 2" "-j 3" "-j 5")
[ $mpi = 0 ] || ways+=("mpirun 2" "mpirun 3")
if [ -f "$BUILD/libtrace-convert-mpi-mpich.so" ] && command -v mpiexec.mpich >/dev/null; then
	ways+=("mpich 2")
else
	echo "MPICH: not tested (no libtrace-convert-mpi-mpich.so or mpiexec.mpich)"
fi
for way in "${ways[@]}"; do
	np=${way#* } a=$WORK/par${way/ /}.otf2
	if [ "${way% *}" = -j ]; then
		timeout 300 "$CONVERT" -q -j $np "$T" -o "$a" 2>"$WORK/par.err"
	elif [ "${way% *}" = mpich ]; then
		timeout 300 mpiexec.mpich -n $np "$CONVERT" -q "$T" -o "$a" 2>"$WORK/par.err"
	else
		timeout 300 "${mpirun[@]}" -np $np "$CONVERT" -q "$T" -o "$a" 2>"$WORK/par.err"
	fi || { cat "$WORK/par.err" >&2; fail "$way: the conversion failed"; }
	otf2-print --silent -Werror "$a/traces.otf2" >"$WORK/print.log" 2>&1 ||
		{ head "$WORK/print.log" >&2; fail "$way: otf2-print -Werror rejects the archive"; }
	otf2-print -G "$a/traces.otf2" | cmp -s - "$WORK/serial.defs" || {
		otf2-print -G "$a/traces.otf2" | diff "$WORK/serial.defs" - | head >&2
		fail "$way: the global definitions differ from the serial conversion's"
	}
	cmp -s "$a/traces.marker" "$WORK/serial.otf2/traces.marker" ||
		fail "$way: the markers differ from the serial conversion's"
	"$BUILD/trace-report" "$a" 2>&1 | sed "s|$a|ARCHIVE|g" >"$WORK/par.report"
	cmp -s "$WORK/par.report" "$WORK/serial.report" || {
		diff "$WORK/serial.report" "$WORK/par.report" | head >&2
		fail "$way: trace-report reads another profile from the archive"
	}
	otf2-print -M "$a/traces.otf2" | grep -q '^MAPPING_TABLE' ||
		fail "$way: no location has a mapping table (were all ids the same?)"
	/usr/bin/python3 "$SRC/tests/e2e/compare_otf2.py" "$WORK/serial.otf2/traces.otf2" \
		"$a/traces.otf2" >"$WORK/cmp.log" || { tail "$WORK/cmp.log" >&2; fail "$way: events differ"; }
	echo "$way: $(grep -c '^location' "$WORK/cmp.log") locations, $(tail -1 "$WORK/cmp.log")"
done

# What is refused, and what rank 0 does alone.
"$CONVERT" -j 2 --core-view "$T" -o "$WORK/cvj.otf2" 2>"$WORK/cvj.err" || fail "-j 2 --core-view failed"
grep -q 'core-view converts in one process' "$WORK/cvj.err" || fail "-j 2 --core-view: no note"
otf2-print --silent -Werror "$WORK/cvj.otf2/traces.otf2" >/dev/null 2>&1 || fail "-j 2 --core-view: a bad archive"
# Paraver: every rank sorts its processes' records, rank 0 merges them: the same files.
"$CONVERT" -q -f paraver "$T" -o "$WORK/serial" || fail "serial Paraver conversion"
python3 "$SRC/tests/e2e/check_prv.py" "$WORK/serial.prv" >/dev/null || fail "check_prv rejects the serial .prv"
same_paraver() {
	for e in prv pcf row; do
		cmp -s "$WORK/serial.$e" "$WORK/$1.$e" || {
			diff "$WORK/serial.$e" "$WORK/$1.$e" | head -5 >&2
			fail "Paraver, $2: .$e differs from the serial one"
		}
	done
	! ls "$WORK"/*.sort-* >/dev/null 2>&1 || fail "Paraver, $2: a scratch file was left"
	echo "Paraver, $2: the serial conversion's .prv, .pcf and .row"
}
for j in 2 3 5; do
	"$CONVERT" -q -j $j -f paraver "$T" -o "$WORK/prvj$j" || fail "Paraver with -j $j failed"
	same_paraver prvj$j "-j $j"
done
if [ $mpi = 0 ]; then
	echo "convert-parallel: ok (without MPI)"
	exit 0
fi
# A converter that a rank runs (a job script, trace-run converting after the run) inherits
# the rank's MPI environment but is no converter rank: it converts alone, as always.
"${mpirun[@]}" -np 2 bash -c '"$0" -q "$1" -o "$2.$OMPI_COMM_WORLD_RANK"; exit $?' "$CONVERT" \
	"$T" "$WORK/inherited" || fail "a converter run by a rank failed"
for r in 0 1; do
	/usr/bin/python3 "$SRC/tests/e2e/compare_otf2.py" "$WORK/serial.otf2/traces.otf2" \
		"$WORK/inherited.$r/traces.otf2" >/dev/null || fail "a converter run by rank $r: events differ"
done
# Ranks started with different arguments (another output each) are refused, none writes.
"${mpirun[@]}" -np 2 bash -c 'exec "$0" -q "$1" -o "$2.$OMPI_COMM_WORLD_RANK"' "$CONVERT" "$T" \
	"$WORK/differ" >/dev/null 2>"$WORK/differ.err" && fail "ranks with different arguments were accepted"
grep -q 'other arguments than rank 0' "$WORK/differ.err" || fail "different arguments: no reason given"
[ ! -e "$WORK/differ.0" ] && [ ! -e "$WORK/differ.1" ] || fail "different arguments: an output was left"
"${mpirun[@]}" -np 2 "$CONVERT" -q --core-view "$T" -o "$WORK/cv.otf2" >/dev/null 2>"$WORK/cv.err" &&
	fail "--core-view under the launcher was accepted"
grep -q 'core-view needs every process' "$WORK/cv.err" || fail "--core-view: no reason given"
[ ! -e "$WORK/cv.otf2" ] || fail "--core-view under the launcher left an output"
for np in 2 3; do
	"${mpirun[@]}" -np $np "$CONVERT" -q -f paraver "$T" -o "$WORK/prvm$np" ||
		fail "Paraver with $np MPI ranks failed"
	same_paraver prvm$np "mpirun -np $np"
done
echo "convert-parallel: ok"
