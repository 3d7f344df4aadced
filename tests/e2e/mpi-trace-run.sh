#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-run under an MPI launcher (mpirun -np 2 trace-run -- ./app): it preloads the
# companion library matching the MPI the program is linked with (Open MPI, MPICH), and
# none into a program without MPI; the ranks trace into one directory (-o DIR, or the
# default one, named after the job), whose MPI records equal the program's own counts
# (check_mpi.py); rank 0 alone says where the trace went, and alone converts it with
# --convert; without the companion library, one warning and a trace without MPI records.
# LD_PRELOAD=libtrace.so alone gets the companion too: libtrace.so starts each rank again
# with it (same pid: one directory per rank); a companion that does not load is tried once.
. "$(dirname "$0")/lib.sh"
run=$BUILD/trace-run
prog=$SRC/tests/programs/mpi_patterns.c
tested=0
for abi in openmpi mpich; do
	if [ $abi = openmpi ]; then
		cc=mpicc.openmpi
		launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2)
	else
		cc=mpicc.mpich
		launch=(mpiexec.mpich -n 2)
	fi
	if [ ! -f "$BUILD/libtrace-mpi-$abi.so" ] || ! command -v $cc >/dev/null ||
		! command -v "${launch[0]}" >/dev/null; then
		echo "$abi: not tested (companion library, $cc or ${launch[0]} missing)"
		continue
	fi
	app=$WORK/pat_$abi
	$cc -O1 -g "$prog" -o "$app" || fail "$abi: cannot build mpi_patterns.c"

	# -o DIR: one trace, a directory per rank, the MPI records right; one summary.
	T=$WORK/$abi.trace
	timeout -s KILL 120 "${launch[@]}" "$run" -o "$T" -- "$app" >"$WORK/out" 2>"$WORK/err" ||
		fail "$abi: mpirun trace-run -o failed: $(cat "$WORK/err")"
	[ "$(ls "$T" | wc -l)" = 2 ] || fail "$abi: $(ls "$T" | wc -l) process directories, want 2"
	grep -q "^mpi_library $abi$" "$T"/*/meta || fail "$abi: the companion was not preloaded"
	"$DUMP" "$T" >"$WORK/dump" || fail "$abi: trace-dump failed"
	python3 "$SRC/tests/e2e/check_mpi.py" "$T" "$WORK/dump" "$WORK/out" 2 ||
		fail "$abi: trace against ground truth"
	[ "$(grep -c '^trace-run: trace in ' "$WORK/err")" = 1 ] ||
		fail "$abi: the summary is not printed once: $(cat "$WORK/err")"
	grep -q "^trace-run: trace in $T\$" "$WORK/err" || fail "$abi: no location line"

	# libtrace.so alone: every rank is started again with the companion, nothing said.
	T=$WORK/$abi.alone
	if [ $abi = openmpi ]; then
		env=(-x "LD_PRELOAD=$LIB" -x "LIBTRACE_OUTPUT=$T" -x LIBTRACE_QUIET=1)
	else
		env=(-env LD_PRELOAD "$LIB" -env LIBTRACE_OUTPUT "$T" -env LIBTRACE_QUIET 1)
	fi
	timeout -s KILL 120 "${launch[@]}" "${env[@]}" "$app" >"$WORK/out" 2>"$WORK/err" ||
		fail "$abi: LD_PRELOAD=libtrace.so alone failed: $(cat "$WORK/err")"
	[ -s "$WORK/err" ] && fail "$abi: LD_PRELOAD=libtrace.so alone: $(cat "$WORK/err")"
	[ "$(ls "$T" | wc -l)" = 2 ] || fail "$abi: alone: $(ls "$T" | wc -l) process directories, want 2"
	[ "$(grep -lx "mpi_library $abi" "$T"/*/meta | wc -l)" = 2 ] ||
		fail "$abi: LD_PRELOAD=libtrace.so alone: not every rank has the companion"
	"$DUMP" "$T" >"$WORK/dump" || fail "$abi: trace-dump failed"
	python3 "$SRC/tests/e2e/check_mpi.py" "$T" "$WORK/dump" "$WORK/out" 2 ||
		fail "$abi: LD_PRELOAD=libtrace.so alone: trace against ground truth"
	echo "$abi: LD_PRELOAD=libtrace.so alone: both ranks started again with the companion"

	# No -o: the ranks agree on one default directory, named after the job.
	mkdir "$WORK/cwd_$abi"
	(cd "$WORK/cwd_$abi" && timeout -s KILL 120 "${launch[@]}" "$run" -q -- "$app" >/dev/null) ||
		fail "$abi: mpirun trace-run without -o failed"
	dirs=("$WORK/cwd_$abi/libtrace-pat_$abi-job"*)
	[ ${#dirs[@]} = 1 ] && [ -d "${dirs[0]}" ] ||
		fail "$abi: default directories: $(ls "$WORK/cwd_$abi")"
	[ "$(ls "${dirs[0]}" | wc -l)" = 2 ] || fail "$abi: ${dirs[0]}: not 2 process directories"
	echo "$abi: -o DIR and the default directory $(basename "${dirs[0]}"): 2 ranks, MPI records right"

	# --convert: rank 0 converts once the other rank has ended; one archive.
	if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null; then
		timeout -s KILL 120 "${launch[@]}" "$run" --convert otf2 -o "$WORK/$abi.c" -- "$app" \
			>/dev/null 2>"$WORK/err" || fail "$abi: --convert under mpirun: $(cat "$WORK/err")"
		otf2-print --silent -Werror "$WORK/$abi.c.otf2/traces.otf2" >/dev/null ||
			fail "$abi: otf2-print rejects the archive"
		grep -q "cut short\|failed" "$WORK/err" && fail "$abi: $(cat "$WORK/err")"
		[ "$(grep -c 'OTF2 archive' "$WORK/err")" = 1 ] || fail "$abi: $(cat "$WORK/err")"
		echo "$abi: --convert otf2 by rank 0 alone, the archive whole"
	fi
	tested=$((tested + 1))
done
[ $tested -gt 0 ] || skip "no MPI to test (apt-get install libopenmpi-dev openmpi-bin libmpich-dev mpich)"

# A program without MPI gets no companion (its map lines name the libraries it loaded).
"$run" -q -o "$WORK/plain" "$TESTBIN/exit_with" 0 >/dev/null || fail "exit_with under trace-run"
grep -q '^map .*libtrace\.so$' "$WORK"/plain/*/meta || fail "no libtrace.so in the map lines"
grep -q '^map .*libtrace-mpi' "$WORK"/plain/*/meta && fail "a companion preloaded without MPI"

# Without the companion beside libtrace.so: one warning (rank 0's), a trace without MPI.
mkdir "$WORK/inst"
cp "$run" "$LIB" "$WORK/inst/"
app=$(ls "$WORK"/pat_* | head -1)
abi=${app##*pat_}
if [ $abi = openmpi ]; then
	launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2)
else
	launch=(mpiexec.mpich -n 2)
fi
timeout -s KILL 120 "${launch[@]}" "$WORK/inst/trace-run" -o "$WORK/nocomp" -- "$app" \
	>/dev/null 2>"$WORK/err" || fail "without the companion: $(cat "$WORK/err")"
[ "$(grep -c '^libtrace\[[0-9]*\]: .*libtrace-mpi-.*not traced' "$WORK/err")" = 1 ] ||
	fail "without the companion, not one warning: $(cat "$WORK/err")"
[ "$(ls "$WORK/nocomp" | wc -l)" = 2 ] || fail "without the companion: not 2 process directories"
"$DUMP" "$WORK/nocomp" | grep -q MPI_ && fail "MPI records without the companion"
echo "without the companion: $(grep 'not traced' "$WORK/err")"

# A companion there that does not load (not a library): each rank is started again once,
# not over and over; the loader says why, rank 0 that MPI is not traced; the program's
# output is whole.
echo "not a library" >"$WORK/inst/libtrace-mpi-$abi.so"
timeout -s KILL 120 "${launch[@]}" "$WORK/inst/trace-run" -o "$WORK/badcomp" -- "$app" \
	>"$WORK/out" 2>"$WORK/err" || fail "with a broken companion: $(cat "$WORK/err")"
[ "$(grep -c '^libtrace\[[0-9]*\]: .*libtrace-mpi-.*could not be preloaded.*not traced' \
	"$WORK/err")" = 1 ] || fail "with a broken companion, not one warning: $(cat "$WORK/err")"
[ "$(grep -c 'libtrace-mpi-.*cannot be preloaded' "$WORK/err")" = 2 ] ||
	fail "with a broken companion, not one loader error per rank: $(cat "$WORK/err")"
[ "$(ls "$WORK/badcomp" | wc -l)" = 2 ] || fail "with a broken companion: not 2 process directories"
"$DUMP" "$WORK/badcomp" | grep -q MPI_ && fail "MPI records with a broken companion"
[ -s "$WORK/out" ] || fail "with a broken companion: the program printed nothing"
echo "a companion that does not load: each rank started again once," \
	"$(grep -c . "$WORK/out") output lines"
echo ok
