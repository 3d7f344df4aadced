#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Kokkos end to end.
#  1. tests/programs/kokkos_app.cpp, built by CMake against Debian's Kokkos 3.4 (Serial),
#     run with the library preloaded and nothing else set: same output as untraced, and
#     an archive (otf2-print -Werror, check_otf2.py) whose kernels, regions, sections,
#     allocations, deep copies, memory metric and metadata are what the program did
#     (check_kokkos.py); a clean run lists no leak, only Kokkos's own scratch memory; a
#     run with "leak" lists the View it never freed, by label and size.
#  2. tests/programs/kokkos4_driver.c drives the callbacks as Kokkos 4.6 does (interface
#     20240906, device ids of >= 3.6, demangled names, two host threads, OpenMP inside
#     kernels): it finds the tool only through the KOKKOS_TOOLS_LIBS the library set.
#     Its memory: a free whose allocation the tool never saw (Kokkos 4 starts its backends
#     before it loads the tool) leaves the metric alone, which stays the sum of the live
#     allocations seen (peak 1 MiB + 155264 of scratch, not 13696 below); a View never
#     freed is a leak whatever its label ("Kokkos::SortImpl::..."); memory freed after
#     finalize is Kokkos's own, not a leak.
#  3. A tool the user named in the variable runs behind the library, both record, said
#     once (tests/e2e/kokkos-tool.sh checks the forwarding); one named with
#     --kokkos-tools-library is left alone, said once; naming libtrace.so itself (by any
#     path to the same file) is said nothing about.
. "$(dirname "$0")/lib.sh"
need_converter
KCHECK="/usr/bin/python3 $SRC/tests/e2e/check_kokkos.py"
APP=$TESTBIN/kokkos_app
[ -x "$APP" ] || skip "kokkos_app was not built: Debian's Kokkos is missing (apt-get install libtrilinos-kokkos-dev)"
unset KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY KOKKOS_TOOLS_ARGS
mkdir -p "$WORK/in"
N=1000
STEPS=6
B=$((N * 8))

# kokkos_checked NAME ARCHIVE [check_kokkos expectations]
kokkos_checked() {
	local name=$1 archive=$2
	shift 2
	$KCHECK "$archive/traces.otf2" "$@" >"$WORK/kokkos.log" 2>&1 || {
		cat "$WORK/kokkos.log" >&2
		fail "check_kokkos $name"
	}
	tail -1 "$WORK/kokkos.log" | grep -q '^check_kokkos: ok$' || fail "check_kokkos printed no verdict"
	echo "$name: $(head -1 "$WORK/kokkos.log")"
}

# ---- 1. Debian's Kokkos 3.4, clean and leaking ----
for mode in clean leak; do
	args=("$N" "$STEPS")
	[ $mode = leak ] && args+=(leak)
	same_behaviour "app-$mode" "$APP" "${args[@]}" >"$WORK/same.log"
	grep -q 'exit status 0$' "$WORK/same.log" || fail "app-$mode: $(cat "$WORK/same.log" "$WORK/plain.err")"
	grep -q '^dot ' "$WORK/plain.out" || fail "app-$mode printed no result"
	views=4 leaks=0 live=11264 # Kokkos::Serial::scratch_mem, never freed by Kokkos 3.4
	if [ $mode = leak ]; then
		views=5 leaks=1 live=$((11264 + B))
	fi
	converted "$WORK/app-$mode.trace" "$WORK/app-$mode.otf2" --processes 1 --locations 1 \
		--markers "Kokkos profile event=2" \
		--markers "Kokkos runtime memory kept past finalize=1" \
		--markers "Kokkos memory never freed=$leaks"
	kokkos_checked "app-$mode" "$WORK/app-$mode.otf2" \
		--enters solve=1 --enters step=$STEPS --inside step=solve \
		--enters axpy=$STEPS --inside axpy=step --role axpy=PARALLEL --device axpy=Serial \
		--enters dot=$STEPS --inside dot=step --role dot=PARALLEL \
		--enters prefix=1 --enters "fill grid=1" --enters "sum grid=1" --enters 1D=1 \
		--matching 'main::\{lambda\(int\)#\d+\}=1' --enters "Functor/MyTag=1" \
		--matching 'Kokkos::View::initialization \[.*\]='$views \
		--enters io=3 --role io=CODE --role solve=FUNCTION \
		--alloc x=$B:1 --alloc y=$B:1 --alloc y_host=$B:1 --alloc grid=800:1 \
		--freed x=1 --freed y=1 --freed y_host=1 --freed grid=1 \
		--alloc Kokkos::Serial::scratch_mem=11264:1 --freed Kokkos::Serial::scratch_mem=0 \
		--copy y:y_host=$B:1 --copy y_host:y_host=0:1 --role "Kokkos::deep_copy Host->Host=DATA_TRANSFER" \
		--live Host=$live \
		--property KOKKOS::CASE=kokkos_app --property KOKKOS::KOKKOS_VERSION=3.4.1
	# No GPU runtime in the process: Kokkos's fences around the callbacks are turned off.
	grep -qx 'kokkos_fence 0' "$WORK/app-$mode.trace"/*/meta || fail "app-$mode: global fencing not off"
	# The converter's summary: leaks by label and size, Kokkos's own memory apart.
	rm -rf "$WORK/summary.otf2"
	"$CONVERT" "$WORK/app-$mode.trace" -o "$WORK/summary.otf2" 2>"$WORK/summary.txt" ||
		fail "trace2otf2 app-$mode"
	grep -q 'kept by Kokkos itself past finalize (runtime-internal, not leaks): 1, 11264 bytes' \
		"$WORK/summary.txt" || fail "app-$mode: scratch memory not listed apart: $(cat "$WORK/summary.txt")"
	if [ $mode = leak ]; then
		grep -q "never freed (leaks): 1, $B bytes" "$WORK/summary.txt" &&
			grep -q "\"leaky\" $B bytes in Host" "$WORK/summary.txt" ||
			fail "the leak is not listed: $(cat "$WORK/summary.txt")"
	elif grep -q 'never freed' "$WORK/summary.txt"; then
		fail "a clean run lists a leak: $(cat "$WORK/summary.txt")"
	fi
	echo "app-$mode: summary: $(grep -c '^trace2otf2:   ' "$WORK/summary.txt") allocations listed"
done

# ---- 2. Kokkos 4 as the callbacks see it ----
gcc -O2 -g -fopenmp -Wall -Wextra -Werror "$SRC/tests/programs/kokkos4_driver.c" \
	-o "$WORK/kokkos4_driver" -lpthread >"$WORK/cc.log" 2>&1 || fail "building kokkos4_driver: $(cat "$WORK/cc.log")"
"$WORK/kokkos4_driver" >/dev/null 2>"$WORK/err" && fail "kokkos4_driver ran without a tool"
grep -q 'KOKKOS_TOOLS_LIBS is not set' "$WORK/err" || fail "kokkos4_driver: $(cat "$WORK/err")"
K=5
traced "$WORK/k4.trace" "$WORK/kokkos4_driver" $K >"$WORK/out" 2>"$WORK/err" ||
	fail "kokkos4_driver under the tracer: $(cat "$WORK/err")"
converted "$WORK/k4.trace" "$WORK/k4.otf2" --processes 1 \
	--markers "Kokkos DualView=2" --markers "Kokkos profile event=1" \
	--markers "Regions closed by the converter=0" --markers "Kokkos memory never freed=1" \
	--markers "Kokkos runtime memory kept past finalize=1"
L='main(int, char**)::<lambda(int)>'
kokkos_checked kokkos4 "$WORK/k4.otf2" \
	--enters "$L=$((2 * K))" --enters "Functor/MyTag=2" \
	--nested '!\$omp parallel .*='"$L:$((2 * K))" \
	--enters "HostSpace fence=$((2 * K))" --inside "HostSpace fence=$L" \
	--role "HostSpace fence=BARRIER" --role "$L=PARALLEL" --role scan=PARALLEL \
	--device "Functor/MyTag=Cuda device 1 instance 3" --device scan="OpenMP instance 1" \
	--device "Kokkos::fence: Unnamed Global Fence=OpenMP (global fence)" \
	--device "Kokkos::deep_copy: post copy fence=OpenMP (deep copy resources)" \
	--enters "init section=2" --role "init section=CODE" --inside "init section=driver" \
	--enters A=1 --enters B=2 --nested B=A:1 --nested B=driver:1 --inside A=driver \
	--alloc v=4096:1 --freed v=1 --copy v:w=4096:1 \
	--alloc big=1048576:1 --freed big=1 --alloc Kokkos::OpenMP::scratch_mem=155264:1 \
	--freed Kokkos::OpenMP::scratch_mem=2 --unseen-frees 1=13696 \
	--peak Host=$((1048576 + 155264)) --live Host=4096 \
	--property KOKKOS::CASE=kokkos4_driver --property KOKKOS::KOKKOS_VERSION=4.6.1
# The summary: the BinSort's View is a leak, the scratch freed after finalize is Kokkos's.
rm -rf "$WORK/summary.otf2"
"$CONVERT" "$WORK/k4.trace" -o "$WORK/summary.otf2" 2>"$WORK/summary.txt" || fail "trace2otf2 k4"
grep -q 'never freed (leaks): 1, 4096 bytes' "$WORK/summary.txt" &&
	grep -q '"Kokkos::SortImpl::BinSortFunctor::bin_count" 4096 bytes in Host' "$WORK/summary.txt" ||
	fail "kokkos4: the BinSort View is not listed as a leak: $(cat "$WORK/summary.txt")"
grep -q 'kept by Kokkos itself past finalize (runtime-internal, not leaks): 1, 155264 bytes' \
	"$WORK/summary.txt" || fail "kokkos4: the scratch freed after finalize: $(cat "$WORK/summary.txt")"
grep -q 'allocated before Kokkos loaded the tool (left out of the memory metric): 1, 13696 bytes' \
	"$WORK/summary.txt" || fail "kokkos4: the unseen free is not noted: $(cat "$WORK/summary.txt")"
grep -q 'damaged' "$WORK/summary.txt" && fail "kokkos4: reported as damage: $(cat "$WORK/summary.txt")"
# Each host thread's kernels carry its own instance.
otf2-print "$WORK/k4.otf2/traces.otf2" | grep -A1 'ENTER .*lambda(int)>' | grep -o '"OpenMP instance [0-9]*"' |
	sort | uniq -c >"$WORK/inst"
[ "$(awk '{print $1}' "$WORK/inst" | tr '\n' ' ')" = "$K $K " ] || fail "instances: $(cat "$WORK/inst")"
# LIBTRACE_KOKKOS_FENCE=on leaves Kokkos's fencing on.
LIBTRACE_KOKKOS_FENCE=on traced "$WORK/k4on.trace" "$WORK/kokkos4_driver" 1 >/dev/null 2>&1 ||
	fail "kokkos4_driver with LIBTRACE_KOKKOS_FENCE=on"
grep -qx 'kokkos_fence 1' "$WORK/k4on.trace"/*/meta || fail "LIBTRACE_KOKKOS_FENCE=on: fencing not on"
# With the kokkos module off, the library names itself nowhere.
LIBTRACE_MODULES=pthread traced "$WORK/k4off.trace" "$WORK/kokkos4_driver" 1 >/dev/null 2>"$WORK/err" &&
	fail "LIBTRACE_MODULES=pthread still registered the Kokkos tool"
grep -q 'KOKKOS_TOOLS_LIBS is not set' "$WORK/err" || fail "modules off: $(cat "$WORK/err")"
echo "kokkos4: instances per host thread: $(tr -s ' \n' ' ' <"$WORK/inst")"

# ---- 3. a Kokkos older than 3.7 that a dlopen brings gets KOKKOS_PROFILE_LIBRARY; a
# successful dlopen leaves dlerror() as it was ----
cat >"$WORK/late.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	if (!dlopen("libm.so.6", RTLD_NOW))
		return 3;
	const char *e = dlerror();
	printf("dlerror after a good dlopen: %s\n", e ? e : "none");
	printf("before: %s\n", getenv("KOKKOS_PROFILE_LIBRARY") ? "set" : "unset");
	if (!dlopen("libtrilinos_kokkoscore.so.13.2", RTLD_NOW))
		return 4;
	const char *v = getenv("KOKKOS_PROFILE_LIBRARY");
	printf("after: %s\n", v ? v : "unset");
	return 0;
}
EOF
gcc -O2 "$WORK/late.c" -o "$WORK/late" || fail "building late.c"
traced "$WORK/late.trace" "$WORK/late" >"$WORK/late.out" 2>&1 || fail "late: $(cat "$WORK/late.out")"
grep -qx 'dlerror after a good dlopen: none' "$WORK/late.out" || fail "dlerror changed: $(cat "$WORK/late.out")"
grep -qx 'before: unset' "$WORK/late.out" && grep -qx "after: $(realpath "$LIB")" "$WORK/late.out" ||
	fail "a dlopen'ed Kokkos 3.4: $(cat "$WORK/late.out")"
echo "late Kokkos: $(tr '\n' ';' <"$WORK/late.out")"

# ---- 4. a tool of the user's: behind the library (variable), left alone (argument) ----
cat >"$WORK/other.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
void kokkosp_init_library(int seq, uint64_t version, uint32_t n, void *info)
{
	(void)seq, (void)n, (void)info;
	printf("other tool: init %llu\n", (unsigned long long)version);
}
void kokkosp_begin_parallel_for(const char *name, uint32_t dev, uint64_t *id)
{
	(void)dev;
	*id = 1;
	if (name[0] == 'a')
		printf("other tool: %s\n", name);
}
EOF
gcc -shared -fPIC -O2 "$WORK/other.c" -o "$WORK/libother.so" || fail "building the other tool"
for how in variable argument; do
	rm -rf "$WORK/other.trace"
	if [ $how = variable ]; then
		KOKKOS_PROFILE_LIBRARY=$WORK/libother.so "$APP" 100 2 >"$WORK/plain.out" 2>&1
		KOKKOS_PROFILE_LIBRARY=$WORK/libother.so LIBTRACE_QUIET=0 traced "$WORK/other.trace" "$APP" 100 2 \
			>"$WORK/traced.out" 2>"$WORK/traced.err"
	else
		"$APP" --kokkos-tools-library="$WORK/libother.so" 100 2 >"$WORK/plain.out" 2>&1
		traced "$WORK/other.trace" "$APP" --kokkos-tools-library="$WORK/libother.so" 100 2 \
			>"$WORK/traced.out" 2>"$WORK/traced.err"
	fi
	[ $? = 0 ] || fail "other tool ($how): exit status: $(cat "$WORK/traced.err")"
	grep -q '^other tool: axpy' "$WORK/plain.out" || fail "the other tool did not run ($how): $(cat "$WORK/plain.out")"
	cmp -s "$WORK/plain.out" "$WORK/traced.out" || fail "other tool ($how): output differs under the tracer"
	said='another Kokkos tool is set'
	[ $how = variable ] && said='loaded behind libtrace; its callbacks are forwarded'
	[ "$(grep -c "$said" "$WORK/traced.err")" = 1 ] ||
		fail "other tool ($how): not said once: $(cat "$WORK/traced.err")"
	records=$("$DUMP" "$WORK/other.trace" | grep -c ' KOKKOS_BEGIN')
	if [ $how = variable ]; then
		[ "$records" -gt 0 ] || fail "other tool ($how): no Kokkos records in the trace"
	else
		[ "$records" = 0 ] || fail "other tool ($how): Kokkos records in the trace"
	fi
	echo "other tool ($how): $records Kokkos begins, said once: $(grep -o "kokkos: .*$said" "$WORK/traced.err" | cut -c1-80)"
done
# The same through Kokkos 4's --kokkos-tools-libs= (the driver loads the other tool, which
# lacks callbacks: only the message matters here).
LIBTRACE_DEBUG=1 traced "$WORK/other4.trace" "$WORK/kokkos4_driver" --kokkos-tools-libs="$WORK/libother.so" 1 \
	>/dev/null 2>"$WORK/traced.err"
[ "$(grep -c 'another Kokkos tool is set' "$WORK/traced.err")" = 1 ] ||
	fail "other tool (--kokkos-tools-libs): not said once: $(cat "$WORK/traced.err")"

# ---- 5. the tool named is libtrace.so itself: recorded, and nothing said about another
# tool (a symbolic link names the same file) ----
ln -s "$LIB" "$WORK/libalias.so"
for how in libs-argument library-argument variable; do
	rm -rf "$WORK/self.trace"
	case $how in
	libs-argument)
		LIBTRACE_DEBUG=1 traced "$WORK/self.trace" "$WORK/kokkos4_driver" \
			--kokkos-tools-libs="$WORK/libalias.so" 1 >/dev/null 2>"$WORK/traced.err" ;;
	library-argument)
		LIBTRACE_DEBUG=1 traced "$WORK/self.trace" "$APP" --kokkos-tools-library="$WORK/libalias.so" \
			100 2 >/dev/null 2>"$WORK/traced.err" ;;
	variable)
		KOKKOS_PROFILE_LIBRARY=$WORK/libalias.so LIBTRACE_DEBUG=1 traced "$WORK/self.trace" "$APP" \
			100 2 >/dev/null 2>"$WORK/traced.err" ;;
	esac
	[ $? = 0 ] || fail "self ($how): exit status: $(cat "$WORK/traced.err")"
	grep -q 'another Kokkos tool' "$WORK/traced.err" && fail "self ($how): $(cat "$WORK/traced.err")"
	grep -q 'kokkos: recording' "$WORK/traced.err" || fail "self ($how): not recording: $(cat "$WORK/traced.err")"
	"$DUMP" "$WORK/self.trace" | grep -q ' KOKKOS_BEGIN' || fail "self ($how): no Kokkos records"
	echo "self ($how): recorded, nothing said about another tool"
done
echo "kokkos: ok"
