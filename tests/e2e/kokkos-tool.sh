#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A Kokkos tool of the user's beside the tracer: the stand-in tool
# tests/programs/kokkos_counting_tool.c (counts the callbacks it receives, checks that the
# kernel and fence ids it gets back are its own) named in the variable Kokkos reads.
#  1. tests/programs/kokkos_app.cpp against Debian's Kokkos 3.4 (Debian ships only shared
#     libraries of it, so it is linked dynamically), KOKKOS_PROFILE_LIBRARY=tool: the tool's
#     counts under the tracer are those of the untraced run, where Kokkos loads it itself;
#     the trace holds the same Kokkos kernels, regions, copies and allocations as a traced
#     run without the tool, and the counts of the tool; said once on stderr.
#  2. tests/programs/kokkos4_driver.c, which like a statically linked Kokkos exports no
#     Kokkos symbol, KOKKOS_TOOLS_LIBS=tool: the same, against the trace (the driver needs
#     a tool with all 28 callbacks, which the stand-in is not, so there is no untraced run);
#     and KOKKOS_TOOLS_LIBS="libtrace.so;tool", the list a traced process leaves its children.
#  Both: Kokkos's fencing, off without the tool, is on with one that does not ask for it off.
. "$(dirname "$0")/lib.sh"
APP=$TESTBIN/kokkos_app
[ -x "$APP" ] || skip "kokkos_app was not built: Debian's Kokkos is missing (apt-get install libtrilinos-kokkos-dev)"
unset KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY KOKKOS_TOOLS_ARGS
TOOL=$WORK/libcounting.so
gcc -shared -fPIC -O2 -Wall -Wextra -Werror "$SRC/tests/programs/kokkos_counting_tool.c" -o "$TOOL" \
	>"$WORK/cc.log" 2>&1 || fail "building the counting tool: $(cat "$WORK/cc.log")"
gcc -O2 -fopenmp "$SRC/tests/programs/kokkos4_driver.c" -o "$WORK/kokkos4_driver" -lpthread \
	>"$WORK/cc.log" 2>&1 || fail "building kokkos4_driver: $(cat "$WORK/cc.log")"

# kokkos_counts TRACE: what the trace holds, in the tool's names ("name count" lines).
kokkos_counts() {
	"$DUMP" "$1" | awk '
	/ KOKKOS_BEGIN "Kokkos::parallel_for"/ { n["begin_parallel_for"]++ }
	/ KOKKOS_END "Kokkos::parallel_for"/ { n["end_parallel_for"]++ }
	/ KOKKOS_BEGIN "Kokkos::parallel_reduce"/ { n["begin_parallel_reduce"]++ }
	/ KOKKOS_END "Kokkos::parallel_reduce"/ { n["end_parallel_reduce"]++ }
	/ KOKKOS_BEGIN "Kokkos::parallel_scan"/ { n["begin_parallel_scan"]++ }
	/ KOKKOS_END "Kokkos::parallel_scan"/ { n["end_parallel_scan"]++ }
	/ KOKKOS_BEGIN "Kokkos::fence"/ { n["begin_fence"]++ }
	/ KOKKOS_END "Kokkos::fence"/ { n["end_fence"]++ }
	/ KOKKOS_BEGIN "Kokkos::Profiling::pushRegion"/ { n["push_profile_region"]++ }
	/ KOKKOS_END "Kokkos::Profiling::pushRegion"/ { n["pop_profile_region"]++ }
	/ KOKKOS_ALLOC alloc / { n["allocate_data"]++ }
	/ KOKKOS_ALLOC free / { n["deallocate_data"]++ }
	/ KOKKOS_COPY / { n["begin_deep_copy"]++ }
	/ KOKKOS_END "Kokkos::deep_copy"/ { n["end_deep_copy"]++ }
	END { for (k in n) print k, n[k] }' | sort
}

# kokkos_records TRACE: its Kokkos records without times, ids and addresses, counted.
kokkos_records() {
	"$DUMP" "$1" | grep -o ' KOKKOS_.*' | sed -E 's/ (id|ptr)=[^ ]*//g; s/(:|p0=)0x[0-9a-f]+/\1/g' | sort | uniq -c
}

# tool_counts FILE [NAME...]: the tool's counts but those of NAMEs (and of none), in the
# same form.
tool_counts() {
	local f=$1 skip='^(init_library|finalize_library|bad_ids|open) | 0$'
	shift
	for n in "$@"; do skip="$skip|^$n "; done
	grep -Ev "$skip" "$f" | sort
}

# with_tool NAME VARIABLE=VALUE CMD...: CMD traced with the tool named so, then checked
# against a run without it.
with_tool() {
	local name=$1 var=$2
	shift 2
	rm -f "$WORK/$name.counts"
	traced "$WORK/$name-alone.trace" "$@" >"$WORK/$name-alone.out" 2>&1 ||
		fail "$name without the tool: $(cat "$WORK/$name-alone.out")"
	env "$var" KP_COUNT_FILE="$WORK/$name.counts" LIBTRACE_QUIET=0 \
		LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/$name.trace" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		fail "$name with the tool: $(cat "$WORK/$name.err")"
	[ -s "$WORK/$name.counts" ] || fail "$name: the tool was never finalized: $(cat "$WORK/$name.err")"
	grep -qx 'init_library 1' "$WORK/$name.counts" || fail "$name: tool not initialized once: $(cat "$WORK/$name.counts")"
	grep -qx 'bad_ids 0' "$WORK/$name.counts" && grep -qx 'open 0' "$WORK/$name.counts" ||
		fail "$name: the tool got ids it did not give: $(cat "$WORK/$name.counts")"
	[ "$(grep -c "Kokkos tool $TOOL loaded behind libtrace; its callbacks are forwarded" "$WORK/$name.err")" = 1 ] ||
		fail "$name: not said once: $(cat "$WORK/$name.err")"
	kokkos_records "$WORK/$name-alone.trace" >"$WORK/$name-alone.records"
	kokkos_records "$WORK/$name.trace" >"$WORK/$name.records"
	[ -s "$WORK/$name-alone.records" ] || fail "$name: no Kokkos records without the tool"
	diff "$WORK/$name-alone.records" "$WORK/$name.records" >"$WORK/diff" ||
		fail "$name: the trace with the tool differs: $(head -20 "$WORK/diff")"
	# No GPU runtime: fencing off without the tool; the tool says nothing of it, so
	# Kokkos's preset (on) stands for it.
	grep -qx 'kokkos_fence 0' "$WORK/$name-alone.trace"/*/meta &&
		grep -qx 'kokkos_fence 1' "$WORK/$name.trace"/*/meta ||
		fail "$name: global fencing not off alone, on with the tool"
	echo "$name: $(wc -l <"$WORK/$name.records") kinds of Kokkos record, the same with the tool"
}

# ---- 1. Debian's Kokkos 3.4 ----
N=200
STEPS=4
KP_COUNT_FILE=$WORK/plain.counts KOKKOS_PROFILE_LIBRARY=$TOOL "$APP" $N $STEPS >"$WORK/plain.out" 2>&1 ||
	fail "kokkos_app with the tool, untraced: $(cat "$WORK/plain.out")"
grep -qx "push_profile_region $((STEPS + 1))" "$WORK/plain.counts" ||
	fail "the untraced tool's counts: $(cat "$WORK/plain.counts")"
with_tool app KOKKOS_PROFILE_LIBRARY="$TOOL" "$APP" $N $STEPS
cmp -s "$WORK/plain.counts" "$WORK/app.counts" || {
	diff "$WORK/plain.counts" "$WORK/app.counts" >&2
	fail "app: the tool's counts under the tracer are not those without it"
}
cmp -s "$WORK/plain.out" "$WORK/app.out" || fail "app: output differs under the tracer"
kokkos_counts "$WORK/app.trace" >"$WORK/app.trace-counts"
tool_counts "$WORK/app.counts" >"$WORK/app.tool-counts"
cmp -s "$WORK/app.trace-counts" "$WORK/app.tool-counts" || {
	diff "$WORK/app.trace-counts" "$WORK/app.tool-counts" >&2
	fail "app: the tool's counts are not the trace's"
}
echo "app: tool counts $(tr '\n' ' ' <"$WORK/app.tool-counts")"

# ---- 2. no Kokkos symbol exported (a static Kokkos), Kokkos 4's KOKKOS_TOOLS_LIBS ----
# Also a list that starts with the library already (what a traced process leaves its
# children): the entry after it is loaded behind it.
K=3
for how in tool list; do
	value=$TOOL
	[ $how = list ] && value="$LIB;$TOOL"
	with_tool k4-$how KOKKOS_TOOLS_LIBS="$value" "$WORK/kokkos4_driver" $K
	grep -qx "begin_parallel_for $((2 * K + 1))" "$WORK/k4-$how.counts" ||
		fail "k4-$how: the tool's kernels: $(cat "$WORK/k4-$how.counts")"
	# The driver frees Kokkos's scratch after finalize_library: the trace has it, the
	# tool's count (written at its finalize) cannot.
	kokkos_counts "$WORK/k4-$how.trace" | grep -v '^deallocate_data' >"$WORK/k4.trace-counts"
	tool_counts "$WORK/k4-$how.counts" deallocate_data >"$WORK/k4.tool-counts"
	cmp -s "$WORK/k4.trace-counts" "$WORK/k4.tool-counts" || {
		diff "$WORK/k4.trace-counts" "$WORK/k4.tool-counts" >&2
		fail "k4-$how: the tool's counts are not the trace's"
	}
	echo "k4-$how: tool counts $(tr '\n' ' ' <"$WORK/k4.tool-counts")"
done
echo "kokkos-tool: ok"
