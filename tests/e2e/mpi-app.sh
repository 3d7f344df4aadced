#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Real MPI applications we did not write, from Debian's packages, traced through the
# companion library of the MPI they link:
#   hpcc (HPC Challenge 1.5: HPL, PTRANS, MPI RandomAccess, MPI FFT, b_eff; Open MPI),
#       4 ranks on a 2 x 2 grid, N = 128;
#   ScaLAPACK's xdqr test driver (scalapack-mpi-test: QR, QL, LQ, RQ, QP and TZ
#       factorizations), one build per MPI: Open MPI on 4 ranks, MPICH on 2 (MPICH's ch4
#       busy-polls without yielding: 4 ranks on 2 cores take a minute instead of a second).
# Each runs untraced and traced on the same ranks; its numeric results must be identical
# (hpcc: the summary's norms, residuals, error counts and sizes; xdqr: its whole output with
# the two timing columns masked.  Both are deterministic for a fixed rank count; hpcc's
# StarDGEMM residual is not (a time-seeded local matrix) and is left out, and neither are
# the MPI RandomAccess update counts: hpcc times 1% of the updates and cuts the run to what
# its 60 s bound allows, so a rank held up for half a second in that sample (2 cores, other
# tests beside) executes fewer.  Those runs are checked on their own: no error, and no more
# updates than the default).  The trace then
# has one directory per rank saying its rank, size and MPI; every rank has MPI calls,
# point-to-point messages and collectives; no LOST record; every send recorded is matched
# by exactly one receive (communicator, world ranks, tag, bytes).  The OTF2 archive passes
# otf2-print -Werror and check_otf2.py with one "MPI Rank N" process per rank; the Paraver
# conversion passes check_prv.py with one task per rank.
#
#   tests/e2e/mpi-app.sh [BUILD_DIR]     (CTest sets BUILD and SRC instead)
#
# Skips (77) when no application or companion library is there:
#   apt-get install hpcc scalapack-mpi-test
[ $# -ge 1 ] && BUILD=$(cd "$1" && pwd)
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -n "${BUILD:-}" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
. "$(dirname "$0")/lib.sh"

# The BLAS both link may be OpenBLAS's OpenMP build: its threads would spin against the ranks.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
SCALAPACK=/usr/lib/x86_64-linux-gnu/scalapack

# hpcc's input: HPL on a P x Q grid, tiny; HPCC sizes its other kernels from HPL's N.
hpcc_input() { # DIR P Q
	cat >"$1/hpccinf.txt" <<EOF
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
128          Ns
1            # of NBs
16           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
$2            Ps
$3            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
}

# hpcc's results: the summary's deterministic keys, the residual and error lines.
hpcc_results() { # DIR
	local f=$1/hpccoutf.txt
	[ -f "$f" ] || return 1
	sed -n '/^Begin of Summary section/,/^End of Summary section/p' "$f" |
		grep -E '^(Success|CommWorldProcs|HPL_(RnormI|Anorm1|AnormI|Xnorm1|XnormI|BnormI|N|NB|nprow|npcol)|PTRANS_(residual|n|nb)|MPIRandomAccess(_LCG)?_(N|Errors|ErrorsFraction)|RandomAccess(_LCG)?_N|DGEMM_N|STREAM_VectorSize|FFT_N|MPIFFT_(N|maxErr|Procs))='
	grep -E '^(\|\|Ax-b\|\||Found [0-9]+ errors|Solution Validates|Node\(s\) with error)' "$f"
}

hpcc_ok() { # RESULTS NP
	grep -qx 'Success=1' "$1" && grep -qx "CommWorldProcs=$2" "$1" &&
		grep -q '^||Ax-b||.* PASSED$' "$1" && grep -qx 'PTRANS_residual=0' "$1" &&
		grep -qx 'MPIRandomAccess_Errors=0' "$1" && grep -q '^MPIFFT_maxErr=' "$1"
}

# Each run's time-bound updates: some executed, none beyond 4 per table entry (the default).
hpcc_updates_ok() { # DIR
	awk -F= '/^MPIRandomAccess(_LCG)?_N=/ { n[substr($1, 1, length($1) - 2)] = $2 }
		/^MPIRandomAccess(_LCG)?_ExeUpdates=/ { u[substr($1, 1, length($1) - 11)] = $2 }
		END { k = 0
			for (b in u) { if (!(b in n) || u[b] <= 0 || u[b] > 4 * n[b]) exit 1; k++ }
			exit k == 2 ? 0 : 1 }' "$1/hpccoutf.txt"
}

# xdqr's input: three problem sizes, two blockings, the grids given.
xdqr_input() { # DIR "P values" "Q values"
	cat >"$1/QR.dat" <<EOF
'ScaLAPACK, Orthogonal factorizations input file'
'MPI machine'
'QR.out'			output file name (if any)
6				device out
6				number of factorizations
'QR' 'QL' 'LQ' 'RQ' 'QP' 'TZ'	factorizations: QR, QL, LQ, RQ, QP, TZ
3				number of problems sizes
13 26 60			values of M
17 20 50			values of N
2				number of blocking sizes
3 5				values of MB
7 5				values of NB
2				number of process grids (ordered pairs P & Q)
$2				values of P
$3				values of Q
5.0				threshold
EOF
}

# xdqr's results: its standard output, "Fact Time" and "MFLOPS" masked.
xdqr_results() { # DIR
	awk '$1 == "WALL" || $1 == "CPU" { $8 = "t"; $9 = "f" } { print }' "$1/stdout"
}

xdqr_ok() { # RESULTS NP
	grep -Eq '^ +[1-9][0-9]* tests completed and passed residual checks' "$1" &&
		grep -Eq '^ +0 tests completed and failed residual checks' "$1" && grep -q PASSED "$1"
}

tested=0
# app NAME ABI NP INPUT-COMMAND RESULTS-FUNCTION OK-FUNCTION PROGRAM...
app() {
	local name=$1 abi=$2 np=$3 input=$4 results=$5 ok=$6
	shift 6
	local comp=$BUILD/libtrace-mpi-$abi.so run trace=$WORK/$name.trace
	if [ $abi = openmpi ]; then
		run=(mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np"
			-x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS)
	else
		run=(mpiexec.mpich -n "$np")
	fi
	if [ ! -x "$1" ]; then
		echo "$name: not tested ($1 missing: apt-get install hpcc scalapack-mpi-test)"
		return
	fi
	if [ ! -f "$comp" ] || ! command -v "${run[0]}" >/dev/null; then
		echo "$name: not tested (${comp##*/} or ${run[0]} missing)"
		return
	fi
	local traced_env
	if [ $abi = openmpi ]; then
		traced_env=(-x "LD_PRELOAD=$LIB:$comp" -x "LIBTRACE_OUTPUT=$trace" -x LIBTRACE_QUIET=1)
	else
		traced_env=(-env LD_PRELOAD "$LIB:$comp" -env LIBTRACE_OUTPUT "$trace" -env LIBTRACE_QUIET 1)
	fi
	local mode
	for mode in plain traced; do
		local dir=$WORK/$name.$mode extra=()
		[ $mode = traced ] && extra=("${traced_env[@]}")
		mkdir -p "$dir"
		$input "$dir"
		local status=0
		(cd "$dir" && timeout 120 "${run[@]}" "${extra[@]}" "$@" >stdout 2>stderr) || status=$?
		[ $status = 0 ] || { tail -5 "$dir/stderr" >&2; fail "$name: the $mode run failed (exit status $status)"; }
		$results "$dir" >"$WORK/$name.$mode.results" || fail "$name: no results from the $mode run"
		if [ $results = hpcc_results ] && ! hpcc_updates_ok "$dir"; then
			grep -E '^MPIRandomAccess(_LCG)?_(N|ExeUpdates)=' "$dir/hpccoutf.txt" >&2
			fail "$name: the $mode run's MPI RandomAccess update counts are out of range"
		fi
	done
	$ok "$WORK/$name.plain.results" "$np" || {
		head -40 "$WORK/$name.plain.results" >&2
		fail "$name: the untraced run did not pass its own checks"
	}
	diff "$WORK/$name.plain.results" "$WORK/$name.traced.results" >&2 ||
		fail "$name: results differ under the tracer"
	echo "$name: $(wc -l <"$WORK/$name.plain.results") result lines identical traced and untraced"

	local dirs
	dirs=$(find "$trace" -mindepth 1 -maxdepth 1 -type d | wc -l)
	[ "$dirs" = "$np" ] || fail "$name: $dirs process directories, want $np"
	"$DUMP" "$trace" >"$WORK/$name.dump" || fail "$name: trace-dump failed"
	python3 - "$trace" "$WORK/$name.dump" "$np" "$abi" "$name" <<'PY' || fail "$name: trace"
import collections, glob, os, sys
trace, dump, np, abi, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rank_of = {}
for meta in glob.glob(os.path.join(trace, '*', 'meta')):
    kv = {}
    for line in open(meta, errors='replace'):
        k, _, v = line.rstrip('\n').partition(' ')
        kv.setdefault(k, v)
    proc = os.path.basename(os.path.dirname(meta))
    assert kv.get('mpi_size') == str(np), '%s: mpi_size %s, want %d' % (meta, kv.get('mpi_size'), np)
    assert kv.get('mpi_library') == abi, '%s: mpi_library %s, want %s' % (meta, kv.get('mpi_library'), abi)
    rank_of[proc] = int(kv['mpi_rank'])
assert sorted(rank_of.values()) == list(range(np)), 'ranks %s' % sorted(rank_of.values())
calls = {r: collections.Counter() for r in range(np)}
n = {r: collections.Counter() for r in range(np)}
members = {1: list(range(np))}            # communicator id -> world ranks
sends, recvs = [], []
lost = 0
for line in open(dump):
    f = line.split()
    if len(f) < 4 or f[0] not in rank_of:
        continue
    rank, kind = rank_of[f[0]], f[3]
    if kind == 'LOST':
        lost += 1
    elif kind == 'MPI_ENTER':
        calls[rank][f[4].strip('"')] += 1
    elif kind == 'MPI_COMM':
        kv = dict(x.split('=', 1) for x in f[4:] if '=' in x)
        members[int(kv['comm'], 16)] = [int(x) for x in kv['ranks'].split(',')][:int(kv['size'])]
    elif kind == 'MPI_COLL':
        n[rank]['collectives'] += 1
    elif kind == 'MPI_P2P':
        kv = dict(x.split('=', 1) for x in f[5:] if '=' in x)
        key = (int(kv['comm'], 16), int(kv['peer']), int(kv['tag']), int(kv['bytes']))
        if f[4] in ('send', 'isend'):
            n[rank]['sends'] += 1
            sends.append((rank,) + key)
        elif f[4] in ('recv', 'irecv_done'):
            n[rank]['receives'] += 1
            recvs.append((rank,) + key)
assert lost == 0, '%d LOST records' % lost
for r in range(np):
    for k in ('sends', 'receives', 'collectives'):
        assert n[r][k] > 0, 'rank %d: no %s recorded' % (r, k)
    assert sum(calls[r].values()) > 0, 'rank %d: no MPI call' % r
# A send (comm, from world rank, to comm rank) matches a receive (comm, from comm rank, at
# world rank): both translated to world ranks through the recorded members.
def world(comm, r):
    assert comm in members, 'communicator %#x never recorded' % comm
    return members[comm][r]
s = collections.Counter((c, a, world(c, p), t, b) for a, c, p, t, b in sends)
q = collections.Counter((c, world(c, p), a, t, b) for a, c, p, t, b in recvs)
assert s == q, 'unmatched: sends %s, receives %s' % (dict(list((s - q).items())[:5]), dict(list((q - s).items())[:5]))
top = collections.Counter()
for r in range(np):
    top.update(calls[r])
print('%s: %d ranks; %d MPI calls (%s); %d messages, each send matched by its receive; %d collectives; %d communicators' % (
    name, np, sum(top.values()), ', '.join('%s %d' % kv for kv in top.most_common(4)),
    sum(s.values()), sum(n[r]['collectives'] for r in range(np)), len(members)))
PY
	if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null && /usr/bin/python3 -c 'import otf2' 2>/dev/null; then
		converted "$trace" "$WORK/$name.otf2" --processes "$np" >/dev/null
		local groups want
		groups=$(otf2-print -G "$WORK/$name.otf2/traces.otf2" |
			sed -n 's/^LOCATION_GROUP .*Name: "MPI Rank \([0-9]*\)".*Type: PROCESS.*/\1/p' | sort -n | xargs)
		want=$(seq 0 $((np - 1)) | xargs)
		[ "$groups" = "$want" ] || fail "$name: the archive's MPI Rank groups are '$groups', want '$want'"
		"$CONVERT" -q -f paraver "$trace" -o "$WORK/$name" || fail "$name: paraver conversion"
		python3 "$SRC/tests/e2e/check_prv.py" --expect-tasks "$np" "$WORK/$name.prv" >/dev/null 2>"$WORK/prv.log" ||
			{ head "$WORK/prv.log" >&2; fail "$name: check_prv"; }
		echo "$name: OTF2 archive (otf2-print -Werror, check_otf2, $np MPI Rank groups) and Paraver trace (check_prv) ok"
	else
		echo "$name: not converted (trace2otf2, otf2-print or python3-otf2 missing)"
	fi
	tested=$((tested + 1))
}

hpcc_2x2() { hpcc_input "$1" 2 2; }
xdqr_4() { xdqr_input "$1" "2 1" "2 4"; } # grids 2 x 2 and 1 x 4
xdqr_2() { xdqr_input "$1" "1 2" "2 1"; } # grids 1 x 2 and 2 x 1
app hpcc-openmpi openmpi 4 hpcc_2x2 hpcc_results hpcc_ok /usr/bin/hpcc
app xdqr-openmpi openmpi 4 xdqr_4 xdqr_results xdqr_ok $SCALAPACK/openmpi-tests/xdqr
app xdqr-mpich mpich 2 xdqr_2 xdqr_results xdqr_ok $SCALAPACK/mpich-tests/xdqr
[ $tested -gt 0 ] || skip "no MPI application to trace (apt-get install hpcc scalapack-mpi-test; the companion libraries need libopenmpi-dev or libmpich-dev)"
echo ok
