#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-run --local DIR -o SHARED under mpirun: 4 ranks of tests/programs/mpi_patterns.c
# trace into a node-local directory (on another file system when /dev/shm is one: copied;
# on the same: renamed) and each trace-run moves its rank's directory to SHARED: SHARED
# holds the 4 rank directories whole (mpi_rank 0..3, MPI records equal to the program's
# counts), the local directory is left empty, trace-dump and trace2otf2 read SHARED
# (otf2-print -Werror), --convert converts it.  trace-run --gather: a directory left by a
# trace-run killed with SIGKILL stays while its process runs and is moved once it has
# ended (under mpirun too); directories written straight into the local directory move
# with -o; two gatherers at once over 20 finished directories move each exactly once.
. "$(dirname "$0")/lib.sh"
run=$BUILD/trace-run
prog=$SRC/tests/programs/mpi_patterns.c
comp=$BUILD/libtrace-mpi-openmpi.so
launch=(mpirun.openmpi --allow-run-as-root --oversubscribe)
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
	skip "Open MPI missing (apt-get install libopenmpi-dev openmpi-bin)"
[ -f "$comp" ] || skip "$comp was not built (Open MPI's development files missing)"
have_otf2=0
[ -x "$CONVERT" ] && command -v otf2-print >/dev/null && have_otf2=1
host=$(uname -n)
host=${host//[^A-Za-z0-9._-]/_}
ulimit -c 0

# node-local directories: one on another file system than $WORK when /dev/shm is one (the
# copy path), one beside it (the rename path).
locals=("$WORK/node-local")
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	[ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$WORK")" ]; then
	shm=$(mktemp -d /dev/shm/libtrace-e2e.XXXXXX) && locals=("$shm/node-local" "${locals[@]}")
fi
trap 'rm -rf "$WORK" ${shm:+"$shm"}' EXIT

# same_tree A B: A and B hold the same files with the same contents.
same_tree() { diff -r -q -- "$1" "$2" >/dev/null; }

# no_leftovers DIR...: no claim or half copy of a gatherer in DIR.
no_leftovers() {
	local d
	for d; do
		[ -z "$(find "$d" -name '.gathering@*' 2>/dev/null)" ] ||
			fail "leftovers of a gatherer in $d: $(find "$d" -name '.gathering@*')"
	done
}

mpicc.openmpi -O1 -g "$prog" -o "$WORK/pat" || fail "cannot build mpi_patterns.c"

# ---- 4 ranks, each trace-run moving its rank's directory from the local directory.
i=0
for L in "${locals[@]}"; do
	i=$((i + 1))
	S=$WORK/shared$i
	conv=()
	[ $i = ${#locals[@]} ] && [ $have_otf2 = 1 ] && conv=(--convert otf2)
	timeout -s KILL 120 "${launch[@]}" -np 4 "$run" "${conv[@]}" --local "$L" -o "$S" -- \
		"$WORK/pat" >"$WORK/out" 2>"$WORK/err" ||
		fail "$L: mpirun trace-run --local failed: $(cat "$WORK/err")"
	grep -q '^trace-run: warning' "$WORK/err" && fail "$L: warnings: $(cat "$WORK/err")"
	[ "$(grep -c "^trace-run: trace in $S\$" "$WORK/err")" = 1 ] ||
		fail "$L: the summary is not printed once: $(cat "$WORK/err")"
	[ -d "$L" ] && [ -z "$(ls -A "$L")" ] || fail "$L is not empty: $(ls -AR "$L")"
	dirs=$(ls -A "$S")
	[ "$(echo "$dirs" | grep -c "^$host\.[0-9]*\$")" = 4 ] && [ "$(echo "$dirs" | wc -l)" = 4 ] ||
		fail "$S: not 4 rank directories: $dirs"
	for d in "$S"/*/; do
		[ "$(ls -A "$d" | tr '\n' ' ')" = "events meta ring " ] ||
			fail "$d: files $(ls -A "$d")"
		grep -q '^end ' "$d/meta" || fail "$d/meta: no end line"
	done
	ranks=$(awk '/^mpi_rank / { print $2; nextfile }' "$S"/*/meta | sort | tr '\n' ' ')
	[ "$ranks" = "0 1 2 3 " ] || fail "$S: ranks $ranks"
	"$DUMP" "$S" >"$WORK/dump" || fail "$S: trace-dump failed"
	python3 "$SRC/tests/e2e/check_mpi.py" "$S" "$WORK/dump" "$WORK/out" 4 ||
		fail "$S: trace against ground truth"
	if [ $have_otf2 = 1 ]; then
		if [ ${#conv[@]} = 0 ]; then
			"$CONVERT" -q "$S" -o "$S.otf2" || fail "$S: trace2otf2 failed"
		else
			[ "$(grep -c 'OTF2 archive' "$WORK/err")" = 1 ] || fail "$S: $(cat "$WORK/err")"
			grep -q "cut short\|failed" "$WORK/err" && fail "$S: $(cat "$WORK/err")"
		fi
		otf2-print --silent -Werror "$S.otf2/traces.otf2" >"$WORK/otf2.log" 2>&1 || {
			head "$WORK/otf2.log" >&2
			fail "$S: otf2-print -Werror rejects the archive"
		}
	fi
	echo "$L: 4 ranks moved to SHARED whole, the local directory empty," \
		"${conv[*]:-trace2otf2} read it"
done
[ $have_otf2 = 1 ] || echo "no trace2otf2 or otf2-print: the conversions are not tested"

# ---- A trace-run killed (SIGKILL) cannot move its directory: --gather moves it once its
# process has ended (not before), here under mpirun as on a cluster, one per node.
L=${locals[0]}
S=$WORK/killed
coproc TR { exec "$run" --local "$L" -o "$S" -- "$TESTBIN/mark_then" 500 wait 2>/dev/null; }
tr_pid=$TR_PID # bash unsets TR_PID when it reaps the coprocess
read -r word pid <&"${TR[0]}" || fail "mark_then did not start"
[ "$word" = ready ] || fail "mark_then said $word"
kill -KILL "$tr_pid"
wait "$tr_pid" 2>/dev/null
left=("$L"/trace-run.*/"$host.$pid")
[ -d "${left[0]}" ] || fail "the killed run left no directory: $(ls -AR "$L")"
"$run" --gather "$L" >"$WORK/out" 2>"$WORK/err"
status=$?
[ $status = 1 ] || fail "--gather over a running process: status $status, expected 1"
grep -qF "${left[0]} not moved to $S: its process $pid still runs" "$WORK/err" ||
	fail "no warning naming the running process's directory: $(cat "$WORK/err")"
[ -d "${left[0]}" ] && [ ! -e "$S/$host.$pid" ] || fail "moved while its process runs"
kill -TERM "$pid"
for ((t = 0; t < 100; t++)); do # gone, or a zombie (its parent was trace-run)
	grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || [ ! -d "/proc/$pid" ] && break
	sleep 0.1
done
timeout -s KILL 60 "${launch[@]}" -np 1 "$run" --gather "$L" >"$WORK/out" 2>"$WORK/err" ||
	fail "mpirun trace-run --gather: status $?: $(cat "$WORK/err")"
grep -q "^trace-run: $host: 1 process directory moved from $L\$" "$WORK/err" ||
	fail "--gather did not say so: $(cat "$WORK/err")"
[ -z "$(ls -A "$L")" ] || fail "$L is not empty after --gather: $(ls -AR "$L")"
[ "$("$DUMP" "$S" | grep -c 'MARKER "mark"')" = 500 ] || fail "the gathered trace is not whole"
echo "a killed trace-run: its directory stays while its process runs, --gather moves it after"

# ---- Directories written straight into the local directory move with -o only; --gather
# never touches a --local run's directory meant for another trace directory.
traced "$L" "$TESTBIN/exit_with" 0 >/dev/null || fail "exit_with traced into $L"
bare=$(ls "$L")
"$run" --gather "$L" >/dev/null 2>"$WORK/err" &&
	grep -q "1 process directories straight in $L: not touched" "$WORK/err" &&
	[ -d "$L/$bare" ] || fail "--gather without -o over a bare directory: $(cat "$WORK/err")"
mkdir -p "$L/trace-run.1.other/$host.1"
printf 'host %s\npid 1\ndestination %s\n' "$host" "$WORK/other" >"$L/trace-run.1.other/.trace-run"
"$run" --gather "$L" -o "$WORK/bare" >/dev/null 2>"$WORK/err" ||
	fail "--gather -o over a bare directory: $(cat "$WORK/err")"
[ -f "$WORK/bare/$bare/meta" ] && [ ! -e "$L/$bare" ] || fail "the bare directory did not move"
[ -d "$L/trace-run.1.other/$host.1" ] && [ ! -e "$WORK/bare/$host.1" ] ||
	fail "a directory meant for another trace directory moved"
grep -q "1 directories of --local runs .* not touched" "$WORK/err" ||
	fail "not said: $(cat "$WORK/err")"
rm -rf "${L:?}"/*
echo "--gather -o: a bare directory moved, another run's left alone"

# ---- Two gatherers at once over 20 finished process directories (copies of a real one,
# with pids above pid_max: no such process), 10 straight in the local directory, 10 in a
# --local run's directory (its trace-run gone): each moved exactly once, whole.
traced "$WORK/tmpl" "$TESTBIN/exit_with" 0 >/dev/null || fail "exit_with traced"
tmpl=$(ls -d "$WORK"/tmpl/*)
base=$(cat /proc/sys/kernel/pid_max)
round=0
for L in "${locals[@]}"; do
	for _ in 1 2 3; do
		round=$((round + 1))
		S=$WORK/conc$round
		stage=$L/trace-run.$base.round$round
		mkdir -p "$stage"
		printf 'host %s\npid %s\ndestination %s\n' "$host" "$base" "$S" >"$stage/.trace-run"
		for ((k = 1; k <= 20; k++)); do
			if [ $k -le 10 ]; then
				cp -a "$tmpl" "$L/$host.$((base + k))"
			else
				cp -a "$tmpl" "$stage/$host.$((base + k))"
			fi
		done
		"$run" --gather "$L" -o "$S" 2>"$WORK/g1" &
		g1=$!
		"$run" --gather "$L" -o "$S" 2>"$WORK/g2" &
		g2=$!
		wait $g1 || fail "round $round: gatherer 1: status $?: $(cat "$WORK/g1")"
		wait $g2 || fail "round $round: gatherer 2: status $?: $(cat "$WORK/g2")"
		n1=$(awk '/process director/ { print $3 }' "$WORK/g1")
		n2=$(awk '/process director/ { print $3 }' "$WORK/g2")
		[ $((n1 + n2)) = 20 ] || fail "round $round: moved $n1 + $n2, not 20"
		[ "$(ls -A "$S" | wc -l)" = 20 ] || fail "round $round: $S: $(ls -A "$S")"
		for ((k = 1; k <= 20; k++)); do
			same_tree "$tmpl" "$S/$host.$((base + k))" || fail "round $round: $k not whole"
		done
		[ -z "$(ls -A "$L")" ] || fail "round $round: $L: $(ls -AR "$L")"
		no_leftovers "$L" "$S"
		counts+=("$n1+$n2")
	done
done
echo "two gatherers at once, ${#counts[@]} rounds of 20 directories, moved: ${counts[*]}"
echo ok
