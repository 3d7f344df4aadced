# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers of the end-to-end tests.  CTest sets BUILD, SRC and TESTBIN.
set -u
LIB=$BUILD/libtrace.so
DUMP=$BUILD/trace-dump
CHECK="python3 $SRC/tests/e2e/check_trace.py --dump $DUMP"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-e2e.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# traced DIR CMD...: runs CMD with the library preloaded, tracing into DIR.
traced() {
	local dir=$1
	shift
	LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$dir LIBTRACE_QUIET=${LIBTRACE_QUIET:-1} "$@"
}

# live_threads TRACE N PID: waits (15 s at most) until the live trace of the running process
# PID shows records of N threads, so that a test that kills it knows what it killed; a
# fixed delay loses that race on a loaded machine.
live_threads() {
	local n=0
	for _ in $(seq 300); do
		n=$("$DUMP" "$1" 2>/dev/null | awk '{ print $1, $2 }' | sort -u | wc -l)
		[ "$n" -ge "$2" ] && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.05
	done
	fail "the running process showed $n threads, expected $2"
}

# same_behaviour NAME CMD...: runs CMD plain and traced (each in a scratch directory with
# the same inputs, prepared by the caller in $WORK/in), compares stdout, stderr, exit status
# and the files the program leaves behind.  The trace goes to $WORK/NAME.trace.
same_behaviour() {
	local name=$1
	shift
	rm -rf "$WORK/plain" "$WORK/traced"
	cp -a "$WORK/in" "$WORK/plain"
	cp -a "$WORK/in" "$WORK/traced"
	(cd "$WORK/plain" && "$@" >"$WORK/plain.out" 2>"$WORK/plain.err")
	local s1=$?
	(cd "$WORK/traced" && traced "$WORK/$name.trace" "$@" >"$WORK/traced.out" 2>"$WORK/traced.err")
	local s2=$?
	[ $s1 = $s2 ] || fail "$name: exit status $s1 untraced, $s2 traced"
	cmp -s "$WORK/plain.out" "$WORK/traced.out" || fail "$name: stdout differs under the tracer"
	cmp -s "$WORK/plain.err" "$WORK/traced.err" || {
		diff "$WORK/plain.err" "$WORK/traced.err" | head >&2
		fail "$name: stderr differs under the tracer"
	}
	diff -r "$WORK/plain" "$WORK/traced" >/dev/null || fail "$name: output files differ under the tracer"
	echo "$name: same output, same files, exit status $s1"
}

# The converter and its independent checks (python3-otf2 imports with Debian's python3).
CONVERT=${CONVERT:-$BUILD/trace2otf2} # another build's: e2e.paraver-no-otf2
OTF2CHECK="/usr/bin/python3 $SRC/tests/e2e/check_otf2.py"

need_converter() {
	[ -x "$CONVERT" ] || skip "trace2otf2 was not built"
	"$CONVERT" --help | grep -q '^  otf2 ' ||
		skip "trace2otf2 was built without OTF2 (apt-get install libotf2-trace-dev)"
	command -v otf2-print >/dev/null || skip "otf2-print missing (apt-get install otf2-tools)"
	/usr/bin/python3 -c 'import otf2' 2>/dev/null || skip "python3-otf2 missing (apt-get install python3-otf2)"
}

# converted TRACE ARCHIVE [EXPECTATIONS...]: converts TRACE (exit status 0 required; options
# in $CONVERT_OPTS),
# validates the archive with otf2-print -Werror and check_otf2.py with the expectations.
converted() {
	local trace=$1 archive=$2
	shift 2
	rm -rf "$archive"
	"$CONVERT" -q ${CONVERT_OPTS:-} "$trace" -o "$archive" || fail "trace2otf2 $trace: exit status $?"
	otf2-print --silent -Werror "$archive/traces.otf2" >"$WORK/otf2-print.log" 2>&1 || {
		head "$WORK/otf2-print.log" >&2
		fail "otf2-print -Werror rejects $archive"
	}
	$OTF2CHECK "$archive/traces.otf2" "$@" >"$WORK/check.log" 2>&1 || {
		tail -20 "$WORK/check.log" >&2
		fail "check_otf2 $archive"
	}
	tail -1 "$WORK/check.log" | grep -q '^check_otf2: ok$' || fail "check_otf2 printed no verdict"
	grep '^total:' "$WORK/check.log"
}

# no_gpu_dependency: libtrace.so needs no CUDA, CUPTI or HIP symbol at load time, so that
# LD_BIND_NOW=1 runs of programs without a GPU runtime work (one undefined symbol would
# make every such program fail to start).
no_gpu_dependency() {
	local undefined out
	undefined=$(nm -D --undefined-only "$LIB" | grep -i -E 'hip|cuda|cupti' || true)
	[ -z "$undefined" ] || fail "libtrace.so needs GPU symbols at load time: $undefined"
	LD_BIND_NOW=1 LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/bindnow LIBTRACE_QUIET=1 /bin/true ||
		fail "LD_BIND_NOW=1 /bin/true fails under the tracer"
	out=$(printf 'b\na\n' | LD_BIND_NOW=1 LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/bindnow \
		LIBTRACE_QUIET=1 sort | tr '\n' ' ')
	[ "$out" = "a b " ] || fail "LD_BIND_NOW=1 sort misbehaves under the tracer: $out"
	echo "no GPU symbol needed at load time; LD_BIND_NOW=1 programs run"
}

# gpu_filters MODULE EXCLUDE CMD...: the name filters over GPU calls.  CMD runs traced with
# only MODULE on, then with LIBTRACE_EXCLUDE=EXCLUDE, then with LIBTRACE_EXCLUDE='*' and
# LIBTRACE_INCLUDE=the first kernel's name (the first launch of the full run); each
# filtered run is held against the full one by check_gpu_filter.py (the calls the rules
# keep, in order, and the counts of those left out).
gpu_filters() {
	local module=$1 exclude=$2 name ex in said kernel
	shift 2
	LIBTRACE_MODULES=$module traced "$WORK/gf-all" "$@" >/dev/null 2>&1 ||
		fail "filters: the unfiltered run failed"
	"$DUMP" "$WORK/gf-all" >"$WORK/gf-all.dump" || fail "filters: trace-dump failed"
	kernel=$(grep -m1 -o ' GPU_ENTER .* kernel="[^"]*"' "$WORK/gf-all.dump" |
		sed 's/.*kernel="//; s/"$//')
	[ -n "$kernel" ] || fail "filters: no launch with a kernel's name in the full run"
	for name in exclude include; do
		ex=$exclude in=
		[ $name = include ] && ex='*' in=$kernel
		LIBTRACE_MODULES=$module LIBTRACE_EXCLUDE=$ex LIBTRACE_INCLUDE=$in \
			traced "$WORK/gf-$name" "$@" >/dev/null 2>&1 || fail "filters: the $name run failed"
		"$DUMP" "$WORK/gf-$name" >"$WORK/gf-$name.dump" || fail "filters: trace-dump failed"
		said=$(/usr/bin/python3 "$SRC/tests/e2e/check_gpu_filter.py" "$WORK/gf-all.dump" \
			"$WORK/gf-$name.dump" "$WORK/gf-$name" "$ex" "$in") ||
			fail "filters: LIBTRACE_EXCLUDE='$ex' LIBTRACE_INCLUDE='$in': not what they keep"
		echo "filters, EXCLUDE='$ex' INCLUDE='$in': $said"
	done
}
