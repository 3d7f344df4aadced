#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A rank killed mid-run: tests/programs/mpi_kill.c on 4 ranks, rank 2 dying of SIGKILL after
# N acknowledged sends to rank 3 while ranks 0 and 1 block in MPI_Barrier and rank 3 in a
# receive; the launcher then kills the job.  Rank 2's trace (no end line) holds its N sends
# (tag i, 100 + i bytes) and N acknowledgements in order, every MPI region closed, and the
# marker it left just before raise(SIGKILL); rank 3's holds the N receives; trace2otf2
# converts the whole trace (exit status 0: killed processes are converted up to their end)
# and otf2-print -Werror accepts the archive.  With Open MPI and MPICH, each when its
# companion and launcher are there.
. "$(dirname "$0")/lib.sh"
prog=$SRC/tests/programs/mpi_kill.c
n=25
tested=0
for abi in openmpi mpich; do
	comp=$BUILD/libtrace-mpi-$abi.so
	if [ $abi = openmpi ]; then
		cc=mpicc.openmpi
		run=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 4)
		env_args() { printf '%s\n' -x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$1" -x LIBTRACE_QUIET=1; }
	else
		cc=mpicc.mpich
		run=(mpiexec.mpich -n 4)
		env_args() { printf '%s\n' -env LD_PRELOAD "$LIB:$comp" -env LIBTRACE_OUTPUT "$1" -env LIBTRACE_QUIET 1; }
	fi
	if [ ! -f "$comp" ] || ! command -v $cc >/dev/null || ! command -v "${run[0]}" >/dev/null; then
		echo "$abi: not tested (companion library, $cc or ${run[0]} missing)"
		continue
	fi
	$cc -O1 -g -I"$SRC/include" "$prog" -o "$WORK/kill_$abi" -L"$BUILD" -ltrace-annotate \
		-Wl,-rpath,"$BUILD" || fail "$abi: cannot build mpi_kill.c"
	T=$WORK/$abi.trace
	mapfile -t extra < <(env_args "$T")
	# The launcher ends the job with a failure; should it hang, the ranks' alarm() and the
	# timeout end it.
	timeout -s KILL 90 "${run[@]}" "${extra[@]}" "$WORK/kill_$abi" $n >"$WORK/$abi.out" \
		2>"$WORK/$abi.err"
	status=$?
	[ $status != 0 ] || fail "$abi: the job exited 0 although rank 2 was killed"
	# No rank outlives the job (each process directory is named host.pid).
	for ((i = 0; i < 100; i++)); do
		alive=()
		for d in "$T"/*/; do
			pid=${d%/}
			pid=${pid##*.}
			read -r stat <"/proc/$pid/stat" 2>/dev/null || continue
			stat=${stat##*) }
			[ "${stat:0:1}" = Z ] || alive+=("$pid") # a zombie is dead, not yet reaped
		done
		[ ${#alive[@]} = 0 ] && break
		sleep 0.1
	done
	if [ ${#alive[@]} != 0 ]; then
		kill -KILL "${alive[@]}" 2>/dev/null
		fail "$abi: ranks ${alive[*]} still alive 10 s after the launcher ended"
	fi
	grep -q "^rank 2 sent $n$" "$WORK/$abi.out" || fail "$abi: rank 2 did not get to its end: $(cat "$WORK/$abi.out" "$WORK/$abi.err")"
	[ "$(ls "$T" | wc -l)" = 4 ] || fail "$abi: $(ls "$T" | wc -l) process directories, want 4"
	"$DUMP" "$T" >"$WORK/$abi.dump" || fail "$abi: trace-dump of the killed job: exit status $?"
	python3 - "$T" "$WORK/$abi.dump" $n <<'PY' || fail "$abi: the killed rank's trace"
import collections, glob, os, sys
trace, dump, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
proc = {}
for meta in glob.glob(os.path.join(trace, '*', 'meta')):
    lines = open(meta, errors='replace').read().splitlines()
    rank = [int(l.split()[1]) for l in lines if l.startswith('mpi_rank ')]
    proc[rank[0]] = os.path.basename(os.path.dirname(meta))
    if rank[0] == 2:
        assert not any(l.startswith('end ') for l in lines), 'rank 2 was killed: no end line'
assert sorted(proc) == [0, 1, 2, 3], proc
recs = collections.defaultdict(list)
for line in open(dump):
    f = line.split()
    if len(f) >= 4:
        recs[f[0]].append(f[3:])
r2 = [r for r in recs[proc[2]] if r[0] in ('MPI_ENTER', 'MPI_LEAVE', 'MPI_P2P', 'MARKER')]
kv = lambda r: dict(x.split('=', 1) for x in r if '=' in x)
sends = [kv(r) for r in r2 if r[:2] == ['MPI_P2P', 'send']]
assert [(s['peer'], s['tag'], s['bytes']) for s in sends] == [('3', str(i), str(100 + i)) for i in range(n)], sends
acks = [kv(r) for r in r2 if r[:2] == ['MPI_P2P', 'recv']]
assert [(a['peer'], a['tag']) for a in acks] == [('3', str(1000 + i)) for i in range(n)], acks
enters = sum(r[0] == 'MPI_ENTER' for r in r2)
assert enters == sum(r[0] == 'MPI_LEAVE' for r in r2) == 2 * n + 3, 'rank 2: %d MPI_ENTER' % enters
assert r2[-1][:2] == ['MARKER', '"dying"'], 'rank 2 ends with %s, not its last marker' % r2[-1]
got = [kv(r) for r in recs[proc[3]] if r[:2] == ['MPI_P2P', 'recv'] and kv(r)['peer'] == '2']
assert [(g['tag'], g['bytes']) for g in got] == [(str(i), str(100 + i)) for i in range(n)], got
print('rank 2: %d sends, %d acknowledgements, %d regions closed, its last marker; rank 3: '
      '%d receives' % (len(sends), len(acks), enters, len(got)))
PY
	if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null; then
		"$CONVERT" "$T" -o "$WORK/$abi.otf2" 2>"$WORK/$abi.conv"
		status=$?
		[ $status = 0 ] || fail "$abi: trace2otf2 exit status $status: $(cat "$WORK/$abi.conv")"
		grep -q 'ended abruptly' "$WORK/$abi.conv" ||
			fail "$abi: the converter does not say a process ended abruptly"
		otf2-print --silent -Werror "$WORK/$abi.otf2/traces.otf2" >/dev/null 2>&1 ||
			fail "$abi: otf2-print -Werror rejects the archive"
		echo "$abi: $(head -1 "$WORK/$abi.conv")"
	fi
	echo "$abi: ok"
	tested=$((tested + 1))
done
[ $tested -gt 0 ] || skip "no MPI to test (apt-get install libopenmpi-dev openmpi-bin libmpich-dev mpich)"
echo ok
