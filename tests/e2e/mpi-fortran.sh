#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# MPI from Fortran: tests/programs/mpi_patterns.f90 (`use mpi` and mpif.h: ping-pong, a ring
# with MPI_SENDRECV, non-blocking exchanges completed by MPI_WAITALL with and without
# statuses (300 requests once), MPI_WAIT, MPI_TEST, MPI_WAITANY, MPI_TESTALL, MPI_TESTANY,
# MPI_WAITSOME, collectives with MPI_IN_PLACE, MPI_COMM_SPLIT and MPI_COMM_FREE) on 4 ranks,
# traced through the companion library: the program's output is the same as untraced; every
# rank's messages, bytes and collectives in the trace equal what the program counted itself
# and every send is matched by one receive (check_mpi.py); each call is one region (no call
# recorded twice through both bindings); the OTF2 archive is valid and says the same
# (check_mpi_otf2.py).  Open MPI's Fortran bindings call PMPI_* (the companion wraps
# mpi_send_ and its other spellings); MPICH's call the C MPI_* functions (its companion's C
# wrappers see them: checked too, when MPICH's Fortran compiler is there).
. "$(dirname "$0")/lib.sh"
prog=$SRC/tests/programs/mpi_patterns.f90
command -v gfortran >/dev/null || skip "no Fortran compiler (apt-get install gfortran)"
tested=0
for abi in openmpi mpich; do
	comp=$BUILD/libtrace-mpi-$abi.so
	if [ $abi = openmpi ]; then
		fc=mpifort.openmpi
		run=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 4)
		env_args() { printf '%s\n' -x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$1" -x LIBTRACE_QUIET=1; }
	else
		fc=mpifort.mpich
		run=(mpiexec.mpich -n 4)
		env_args() { printf '%s\n' -env LD_PRELOAD "$LIB:$comp" -env LIBTRACE_OUTPUT "$1" -env LIBTRACE_QUIET 1; }
	fi
	if [ ! -f "$comp" ] || ! command -v $fc >/dev/null || ! command -v "${run[0]}" >/dev/null; then
		echo "$abi: not tested (companion library, $fc or ${run[0]} missing)"
		continue
	fi
	# MPICH's `use mpi` has no interfaces for choice buffers: gfortran warns of the
	# differing buffer types, which is how MPICH means it.
	$fc -O1 -g "$prog" -o "$WORK/f_$abi" 2>"$WORK/$abi.fc" || {
		cat "$WORK/$abi.fc" >&2
		fail "$abi: cannot build mpi_patterns.f90"
	}
	T=$WORK/$abi.trace
	mapfile -t extra < <(env_args "$T")
	timeout -s KILL 120 "${run[@]}" "$WORK/f_$abi" | sort >"$WORK/$abi.plain" ||
		fail "$abi: the untraced run failed"
	timeout -s KILL 120 "${run[@]}" "${extra[@]}" "$WORK/f_$abi" | sort >"$WORK/$abi.out" ||
		fail "$abi: the traced run failed"
	cmp -s "$WORK/$abi.plain" "$WORK/$abi.out" || {
		diff "$WORK/$abi.plain" "$WORK/$abi.out" >&2
		fail "$abi: output differs under the tracer"
	}
	[ "$(ls "$T" | wc -l)" = 4 ] || fail "$abi: $(ls "$T" | wc -l) process directories, want 4"
	"$DUMP" "$T" >"$WORK/$abi.dump" || fail "$abi: trace-dump failed"
	python3 "$SRC/tests/e2e/check_mpi.py" "$T" "$WORK/$abi.dump" "$WORK/$abi.out" 4 ||
		fail "$abi: trace against ground truth"
	# One region per call: the calls every rank makes a known number of times.
	python3 - "$WORK/$abi.dump" <<'PY' || fail "$abi: regions"
import collections, sys
want = {'MPI_Init': 1, 'MPI_Finalize': 1, 'MPI_Comm_rank': 2, 'MPI_Comm_size': 2,
        'MPI_Sendrecv': 1, 'MPI_Waitall': 3, 'MPI_Wait': 1, 'MPI_Waitany': 2, 'MPI_Barrier': 4,
        'MPI_Bcast': 1, 'MPI_Reduce': 1, 'MPI_Allreduce': 3, 'MPI_Gather': 1,
        'MPI_Alltoall': 1, 'MPI_Comm_split': 1, 'MPI_Comm_free': 1}
got = collections.defaultdict(collections.Counter)
depth = collections.Counter()
for line in open(sys.argv[1]):
    f = line.split()
    if f[3:4] == ['MPI_ENTER']:
        got[f[0]][f[4].strip('"')] += 1
        depth[f[0], f[1]] += 1
        assert depth[f[0], f[1]] == 1, '%s: %s inside another MPI region' % (f[0], f[4])
    elif f[3:4] == ['MPI_LEAVE']:
        depth[f[0], f[1]] -= 1
assert len(got) == 4, 'MPI regions in %d processes' % len(got)
for proc, names in got.items():
    for name, n in want.items():
        assert names[name] == n, '%s: %d %s regions, the program made %d calls' % (proc, names[name], name, n)
    for name in ('MPI_Test', 'MPI_Testall', 'MPI_Testany', 'MPI_Waitsome'):
        assert names[name] >= 1, '%s: no %s region' % (proc, name)
print('each call one region, none nested: %s' % dict(sorted(next(iter(got.values())).items())))
PY
	# The archive: valid (otf2-print -Werror, check_otf2.py), its messages matched and its
	# per-rank counts the program's (check_mpi_otf2.py, python3-otf2).
	if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null && /usr/bin/python3 -c 'import otf2' 2>/dev/null; then
		converted "$T" "$WORK/$abi.otf2"
		/usr/bin/python3 "$SRC/tests/e2e/check_mpi_otf2.py" "$WORK/$abi.otf2/traces.otf2" \
			--dump "$WORK/$abi.dump" --trace "$T" --truth "$WORK/$abi.out" ||
			fail "$abi: archive"
	fi
	echo "$abi: ok"
	tested=$((tested + 1))
done
[ $tested -gt 0 ] || skip "no MPI with a Fortran compiler to test (apt-get install libopenmpi-dev openmpi-bin libmpich-dev mpich gfortran)"
echo ok
