# SPDX-License-Identifier: BSD-3-Clause
# viewer_traces.sh - sourced by the tests of what users look at without Vampir (e2e.chrome,
# e2e.viewers): viewer_traces DIR makes the traces DIR/pthread (examples/pthread_pipeline),
# DIR/omp (omp_parallel, gcc's libgomp), DIR/mpi (4 Open MPI ranks of mpi_patterns, where
# Open MPI is installed), DIR/kokkos (kokkos_app with Debian's Kokkos, where built) and
# DIR/gpu (a CUDA program's streams under CUPTI, written from format.h: no GPU here), and
# sets VIEWER_TRACES to the names made.
viewer_traces() {
	local d=$1 P=$SRC/tests/programs
	VIEWER_TRACES="pthread omp"
	traced "$d/pthread" "$BUILD/examples/pthread_pipeline" 4 32 2000 >/dev/null ||
		fail "pthread_pipeline failed"
	gcc -O1 -g -fopenmp "$P/omp_parallel.c" -o "$WORK/omp_parallel" || fail "cannot build omp_parallel"
	OMP_NUM_THREADS=3 traced "$d/omp" "$WORK/omp_parallel" >/dev/null || fail "omp_parallel failed"
	local comp=$BUILD/libtrace-mpi-openmpi.so
	if [ -f "$comp" ] && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
		mpicc.openmpi -O1 -g "$P/mpi_patterns.c" -o "$WORK/pat" || fail "cannot build mpi_patterns"
		timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 \
			-x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$d/mpi" -x LIBTRACE_QUIET=1 \
			"$WORK/pat" >/dev/null || fail "the traced MPI run failed"
		VIEWER_TRACES+=" mpi"
	else
		echo "mpi: not tested (Open MPI or libtrace-mpi-openmpi.so missing)"
	fi
	if [ -x "$TESTBIN/kokkos_app" ]; then
		(unset KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY KOKKOS_TOOLS_ARGS
		 traced "$d/kokkos" "$TESTBIN/kokkos_app" 1000 6 >/dev/null) || fail "kokkos_app failed"
		VIEWER_TRACES+=" kokkos"
	else
		echo "kokkos: not tested (kokkos_app not built: libtrilinos-kokkos-dev missing)"
	fi
	local exe=$TESTBIN/count_events off
	off=$(nm "$exe" 2>/dev/null | awk '$3 == "main" { print $1 }')
	python3 "$SRC/tests/e2e/mk_gpu_trace.py" "$d/gpu" "$exe" "${off:-0}" cupti ||
		fail "writing the GPU trace"
	VIEWER_TRACES+=" gpu"
}
