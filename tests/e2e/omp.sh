#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# OpenMP end to end: the tests/programs/omp_*.c programs, built here with gcc (libgomp: the
# GOMP_* wrappers) and with clang (LLVM libomp: OMPT), run with 1, 2 and 4 threads, behave
# as untraced, convert to an archive that otf2-print -Werror and check_otf2.py accept, and
# hold exactly the constructs the programs ran (check_omp.py).  The counts below follow
# the comments at the top of each program; where gcc and libomp differ, each has its own.
. "$(dirname "$0")/lib.sh"
need_converter
OMPCHECK="/usr/bin/python3 $SRC/tests/e2e/check_omp.py"
PROGS="omp_parallel omp_sync omp_tasks omp_nested omp_bots"
CFLAGS="-fopenmp -O2 -g -Wall -Wextra -Werror"
NPROC=$(nproc)
mkdir -p "$WORK/in"

# The checkers' model of OTF2's task events: a task that moves passes, each misuse is caught.
/usr/bin/python3 "$SRC/tests/e2e/otf2_tasks.py" --self-test >"$WORK/self.log" 2>&1 || {
	tail -20 "$WORK/self.log" >&2
	fail "otf2_tasks.py --self-test"
}

# build TAG CC [LDFLAGS...]: compiles the programs into $WORK/TAG; 1 when one fails.
build() {
	local tag=$1 cc=$2
	shift 2
	mkdir -p "$WORK/$tag"
	for p in $PROGS; do
		$cc $CFLAGS "$SRC/tests/programs/$p.c" -o "$WORK/$tag/$p" "$@" \
			>"$WORK/$tag/$p.log" 2>&1 || return 1
	done
}

# omp_run TAG PROG T RUNS [check_omp expectations...]: runs PROG with T threads RUNS times,
# each traced and not (same output), converted and checked.
omp_run() {
	local tag=$1 prog=$2 t=$3 runs=$4 r
	shift 4
	local name=$tag-$prog-$t
	export OMP_NUM_THREADS=$t
	if [ "$t" -gt "$NPROC" ]; then
		export OMP_WAIT_POLICY=passive # spinning waiters would starve the others
	else
		unset OMP_WAIT_POLICY
	fi
	for ((r = 1; r <= runs; r++)); do
		rm -rf "$WORK/$name.trace"
		same_behaviour "$name" "$WORK/$tag/$prog" >"$WORK/same.log"
		grep -q 'exit status 0$' "$WORK/same.log" ||
			fail "$name: $(cat "$WORK/same.log" "$WORK/plain.err")"
		[ -s "$WORK/plain.out" ] || fail "$name: printed nothing"
		grep -q WRONG "$WORK/plain.out" && fail "$name: wrong result: $(cat "$WORK/plain.out")"
		converted "$WORK/$name.trace" "$WORK/$name.otf2" --processes 1 $LOCS >/dev/null
		$OMPCHECK "$WORK/$name.otf2/traces.otf2" "$@" >"$WORK/omp.log" 2>&1 || {
			tail -30 "$WORK/omp.log" >&2
			fail "check_omp $name (run $r)"
		}
		tail -1 "$WORK/omp.log" | grep -q '^check_omp: ok$' || fail "check_omp printed no verdict"
	done
	echo "$name: ok ($runs run$([ "$runs" = 1 ] || echo s)): $(grep '^total:' "$WORK/omp.log")"
}

# check TAG: every program with 1, 2 and 4 threads, with the expectations for TAG.
check() {
	local tag=$1 t loops barriers implicit atomics locks taskgroups named tbarriers resumed
	for t in 1 2 4; do
		# omp_parallel: P = 5 plain regions, 4 combined loops (dynamic twice, guided,
		# runtime), a static reduction loop, the orphan region, a parallel sections: 12
		# forks.  Loops: gcc sees those that call libgomp (not the 2 static ones),
		# libomp all 7.  Barriers: 6 explicit; gcc's GOMP_barrier also ends the orphan
		# static loop and the single without nowait (libomp: implicit ones).  Implicit
		# barriers: gcc the orphan dynamic loop's and sections' ends (GOMP_loop_end,
		# GOMP_sections_end) and every member's at the end of each of the 12 regions
		# (from its part's end to the join, where libgomp runs the tasks left); libomp
		# also the static loop's and the single's, and, in a team of more than one,
		# every member's at the end of each of the 12 regions.
		case $tag in
		gcc) loops=5 barriers=8 implicit=14 ;;
		clang) loops=7 barriers=6 implicit=$((t > 1 ? 16 : 4)) ;;
		esac
		LOCS="--locations $t"
		omp_run "$tag" omp_parallel $t 1 \
			--kind ThreadFork=12 --kind ThreadJoin=12 --fork-locations 1 \
			--kind ThreadTeamBegin=$((12 * t)) --team-size $t=$((12 * t)) \
			--team-locations $t --per-location-role PARALLEL=12 \
			--name-prefix "!\$omp parallel @omp_parallel.c:=$((12 * t))" \
			--role LOOP=$((loops * t)) --per-location-role LOOP=$loops \
			--role SECTIONS=$((2 * t)) --role SINGLE=$((2 * t)) \
			--role BARRIER=$((barriers * t)) --per-location-role BARRIER=$barriers \
			--role IMPLICIT_BARRIER=$((implicit * t)) \
			--role CRITICAL=0 --role TASK_CREATE=0 --kind ThreadAcquireLock=0

		# omp_sync: one region; CRIT unnamed + CRIT named + LOCKS critical(tests) =
		# 96 critical entries (96 / T on each thread), ATOM = 24 long double atomics
		# (gcc: GOMP_atomic_start; clang calls libatomic, no OpenMP region), an ordered
		# loop of 50 iterations, 3 explicit barriers, the lock API: 17 omp_set_lock, 33
		# omp_unset_lock, 16 + T - 1 omp_test_lock (T - 1 fail), 32 omp_set_nest_lock,
		# 48 omp_unset_nest_lock, 16 omp_test_nest_lock.  Lock acquisitions: critical
		# 96, the lock API 17 + 16 + 32 + 16 = 81, gcc's atomics 24, libomp's ordered
		# 50 (libomp reports ordered as a mutex; the GOMP wrappers give it no object).
		case $tag in
		gcc) atomics=24 locks=$((96 + 81 + 24)) ;;
		clang) atomics=0 locks=$((96 + 81 + 50)) ;;
		esac
		omp_run "$tag" omp_sync $t 1 \
			--kind ThreadFork=1 --role PARALLEL=$t --team-locations $t \
			--role CRITICAL=96 --name-prefix '!$omp critical=96' \
			--per-location-role CRITICAL=$((96 / t)) \
			--role ATOMIC=$atomics --role ORDERED=50 --role LOOP=$t \
			--role BARRIER=$((3 * t)) --per-location-role BARRIER=3 \
			--name omp_set_lock=17 --name omp_unset_lock=33 \
			--name omp_test_lock=$((16 + t - 1)) \
			--name omp_set_nest_lock=32 --name omp_unset_nest_lock=48 \
			--name omp_test_nest_lock=16 --role WRAPPER=$((161 + t)) \
			--kind ThreadAcquireLock=$locks --kind ThreadReleaseLock=$locks

		# omp_tasks, run 3 times (scheduling varies): NTASK 20 + DEPS 6 + GROUP 4 +
		# taskloop 100 / grainsize 10 + fib(8) 2 * 33 + detach 3 = 109 tasks; 36
		# taskwaits (1 + 1 + 33 in fib + 1); one taskgroup, and libomp reports the
		# taskloop's own.  Dependences: each task of the chain after the first waits for
		# the one before (5), the detach region's last task for the detached one (1).
		# Two regions: T threads, then 2, each with a single (gcc: a GOMP_barrier after
		# it).  libomp reports task switches: a task that runs another in its taskwait
		# stays one region, the other nested in its taskwait (no resumption); libomp
		# names the taskloop's tasks after __kmpc_taskloop, where it creates them.
		case $tag in
		gcc) taskgroups=1 named=109 tbarriers=$((t + 2)) ;;
		clang) taskgroups=2 named=99 tbarriers=0 ;;
		esac
		resumed=0
		LOCS="--locations $((t > 2 ? t : 2))"
		omp_run "$tag" omp_tasks $t 3 \
			--kind ThreadFork=2 --role PARALLEL=$((t + 2)) \
			--tasks 109 --task-resumptions $resumed --role TASK_CREATE=109 \
			--task-dependent 6 --task-edges 6 \
			--name-prefix '!$omp create task=109' \
			--name-prefix "!\$omp create task @omp_tasks.c:=$named" \
			--name '!$omp taskwait=36' --name "!\$omp taskgroup=$taskgroups" \
			--role TASK_WAIT=$((36 + taskgroups)) --name '!$omp taskloop=1' \
			--role SINGLE=$((t + 2)) --role BARRIER=$tbarriers

		# omp_bots (the task patterns of BOTS): 952 tasks, each one region, entered once.
		# gcc reports no task switch; libomp's are followed: a tied task's region lasts
		# however often it was suspended (the tasks run meanwhile nest in its taskwait).
		# The 464 untied tasks have task events (ThreadTaskCreate/Switch/Complete): a
		# switch to each where it begins and away where it ends, more where libomp
		# suspends it, and one that moves to another thread goes on there with what it
		# had open (otf2_tasks.py checks each task's own stack).  464 taskwaits and 1
		# taskgroup, each as long as the tasks it waited for; every task inside its
		# parallel region (libgomp runs the single nowait's 16 tasks in the barrier that
		# ends the region); a pool thread's time between teams is no function; nothing
		# the converter had to close or pass over.
		LOCS="--locations $t"
		omp_run "$tag" omp_bots $t 1 \
			--tasks 952 --role TASK_CREATE=952 --task-resumptions 0 \
			--task-switches 928+ \
			--name '!$omp taskwait=464' --name '!$omp taskgroup=1' \
			--tasks-in-parallel --waits-cover-tasks --no-runtime-functions
		"$BUILD/trace-report" --json -o "$WORK/bots.json" "$WORK/$tag-omp_bots-$t.trace" ||
			fail "trace-report $tag omp_bots $t"
		/usr/bin/python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["runs"][0]["totals"]
sys.exit("anomalies %d, closed by the converter %d" % (t["anomalies"], t["unclosed_regions"])
         if t["anomalies"] or t["unclosed_regions"] else 0)' "$WORK/bots.json" ||
			fail "$tag omp_bots $t threads: not a clean conversion"

		# omp_nested: an outer team of T, each member forking an inner team of T.
		LOCS="--locations $((t * t))"
		OMP_MAX_ACTIVE_LEVELS=2 omp_run "$tag" omp_nested $t 1 \
			--kind ThreadFork=$((1 + t)) --kind ThreadJoin=$((1 + t)) \
			--fork-locations $t --team-locations $((t * t)) \
			--role PARALLEL=$((t + t * t)) --team-size $t=$((t + t * t))
	done
}

# usable CC [LDFLAGS...]: CC builds and links an OpenMP program.
usable() {
	local cc=$1
	shift
	command -v "$cc" >/dev/null &&
		printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n' |
		$cc -fopenmp -x c - -o "$WORK/probe" "$@" >/dev/null 2>&1
}

usable gcc || skip "gcc -fopenmp cannot build an OpenMP program (libgomp missing?)"
build gcc gcc || fail "gcc: $(cat "$WORK/gcc/"*.log | head -20)"
check gcc

# clang links LLVM's libomp (libomp-14-dev on Debian 12); the long double atomics of
# omp_sync need libatomic there.
if ! usable clang; then
	echo "clang -fopenmp cannot build an OpenMP program: the libomp (OMPT) part is skipped"
elif ! ldd "$WORK/probe" | grep -q 'libomp\.so'; then
	echo "clang's OpenMP programs do not use libomp: the libomp (OMPT) part is skipped"
else
	build clang clang -latomic || fail "clang: $(cat "$WORK/clang/"*.log | head -20)"
	check clang
	# A gcc-built program run on libomp's GOMP compatibility layer: recorded once, through
	# OMPT (the GOMP wrappers stay quiet): 12 forks, 2 team members each.
	libomp=$(ldd "$WORK/probe" | awk '/libomp\.so/ {print $3; exit}')
	LD_PRELOAD="$libomp:$LIB" LIBTRACE_OUTPUT=$WORK/layer.trace LIBTRACE_QUIET=1 OMP_NUM_THREADS=2 \
		"$WORK/gcc/omp_parallel" >"$WORK/layer.out" || fail "omp_parallel on libomp's GOMP layer failed"
	"$DUMP" "$WORK/layer.trace" >"$WORK/layer.dump" || fail "trace-dump of the GOMP-layer run"
	forks=$(grep -c ' OMP_FORK ' "$WORK/layer.dump")
	teams=$(grep -c ' OMP_TEAM_BEGIN ' "$WORK/layer.dump")
	[ "$forks" = 12 ] && [ "$teams" = 24 ] ||
		fail "gcc program on libomp's GOMP layer: $forks forks, $teams team begins (expected 12, 24)"
	grep -q '^openmp ompt' "$WORK"/layer.trace/*/meta || fail "the GOMP-layer run was not recorded through OMPT"
	echo "gcc omp_parallel on libomp's GOMP layer: 12 forks, 24 team begins, through OMPT"
fi
echo ok
