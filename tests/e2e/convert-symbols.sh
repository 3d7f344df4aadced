#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Start routines named post mortem: in a PIE and a non-PIE executable, a linked shared
# library and a library dlopen'ed mid-run, all built with -g, each thread's outermost
# region is "function @file.c:line"; a stripped executable whose debug information sits in
# a separate file (.gnu_debuglink) still resolves to file and line; stripped without it,
# the names come from the dynamic symbol table or are module+0xOFFSET, never bare
# addresses; and Debian's stripped real programs (pigz, xz, sysbench) follow that rule.
. "$(dirname "$0")/lib.sh"
need_converter
PLUG=$TESTBIN/libsymplug.so

for prog in symbolic symbolic_nopie; do
	out=$(traced "$WORK/$prog.trace" "$TESTBIN/$prog" "$PLUG") || fail "$prog failed"
	[ "$out" = ok ] || fail "$prog: $out"
	converted "$WORK/$prog.trace" "$WORK/$prog.otf2" --locations 4 --created 3 --waited 3 \
		--outer-has 'exe_work @symbolic\.c:[0-9]+' \
		--outer-has 'lib_work @symlib\.c:[0-9]+' \
		--outer-has 'plug_work @symplug\.c:[0-9]+' \
		--outer '(exe|lib|plug)_work @sym(bolic|lib|plug)\.c:[0-9]+' \
		--location-name 'exe-worker \(thread 1\)'
done
# The line is exe_work's own (its first line of code: with -O2 the loop's): between its
# opening line and its closing brace in the source.
first=$(grep -n '^static void \*exe_work' "$SRC/tests/programs/symbolic.c" | cut -d: -f1)
last=$(awk -v f="$first" 'NR > f && /^}/ { print NR; exit }' "$SRC/tests/programs/symbolic.c")
line=$(otf2-print -G "$WORK/symbolic.otf2/traces.otf2" | sed -n 's/.*"exe_work @symbolic\.c:\([0-9]*\)".*/\1/p' | head -1)
[ -n "$line" ] && [ "$line" -ge "$first" ] && [ "$line" -le "$last" ] ||
	fail "exe_work at symbolic.c:${line:-?}, not within lines $first-$last"

# Stripped, with the debug information in a separate file found through .gnu_debuglink.
command -v objcopy >/dev/null || skip "objcopy missing (binutils)"
mkdir -p "$WORK/bin"
cp "$TESTBIN/symbolic" "$WORK/bin/symbolic"
(cd "$WORK/bin" && objcopy --only-keep-debug symbolic symbolic.debug &&
	objcopy --strip-all --add-gnu-debuglink=symbolic.debug symbolic) || fail "objcopy failed"
nm "$WORK/bin/symbolic" 2>&1 | grep -q exe_work && fail "the copy is not stripped"
out=$(LD_LIBRARY_PATH=$TESTBIN traced "$WORK/debuglink.trace" "$WORK/bin/symbolic" "$PLUG")
[ "$out" = ok ] || fail "stripped symbolic: $out"
converted "$WORK/debuglink.trace" "$WORK/debuglink.otf2" --locations 4 \
	--outer-has 'exe_work @symbolic\.c:[0-9]+'
# The same debug file found by build-id instead, under a debug directory's .build-id/.
id=$(readelf -n "$WORK/bin/symbolic" | sed -n 's/.*Build ID: *//p')
[ -n "$id" ] || fail "symbolic has no build-id"
mkdir -p "$WORK/dbg/.build-id/${id:0:2}"
mv "$WORK/bin/symbolic.debug" "$WORK/dbg/.build-id/${id:0:2}/${id:2}.debug"
CONVERT_OPTS="--debug-dir $WORK/dbg" converted "$WORK/debuglink.trace" "$WORK/buildid.otf2" \
	--locations 4 --outer-has 'exe_work @symbolic\.c:[0-9]+'
# Stripped, and the debug file gone: exe_work is static, so only module+0xOFFSET can name it.
converted "$WORK/debuglink.trace" "$WORK/nodebug.otf2" --locations 4 \
	--outer-has 'symbolic\+0x[0-9a-f]+' --outer-has 'lib_work @symlib\.c:[0-9]+' \
	--no-outer '(0x)?[0-9a-f]+'

# Debian's stripped programs: worker start routines never named by a bare address.
for tool in pigz xz sysbench; do
	command -v $tool >/dev/null || skip "$tool is not installed (tools/bootstrap.sh installs it)"
done
head -c 3000000 /dev/urandom >"$WORK/data"
traced "$WORK/pigz.trace" pigz -p 2 -k "$WORK/data" || fail "pigz failed"
traced "$WORK/xz.trace" xz -T2 --block-size=1MiB -k "$WORK/data" || fail "xz failed"
traced "$WORK/sb.trace" sysbench threads --threads=2 --events=100 --time=0 run >/dev/null ||
	fail "sysbench failed"
# sysbench mutex: 2 threads x 2000 locks of contended mutexes; every lock of a worker is an
# acquisition and a release by the same thread, with that acquisition's order number.
traced "$WORK/sbm.trace" sysbench mutex --threads=2 --mutex-locks=2000 --time=0 run >/dev/null ||
	fail "sysbench mutex failed"
converted "$WORK/sbm.trace" "$WORK/sbm.otf2" --processes 1 --locations 3 --created 2 --waited 2
acq=$(grep -E '^Pthread thread [12] ' "$WORK/check.log" | grep -o 'ThreadAcquireLock=[0-9]*' | cut -d= -f2)
for n in $acq; do [ "$n" -ge 2000 ] || fail "sysbench mutex: a worker with $n lock acquisitions"; done
[ "$(echo "$acq" | wc -w)" = 2 ] || fail "sysbench mutex: lock events on $(echo "$acq" | wc -w) workers"
named='([A-Za-z_][A-Za-z0-9_:.<>~, ()*&-]*( @[^ ]+:[0-9]+)?|[^ /]+\+0x[0-9a-f]+)'
for t in pigz xz sb; do
	converted "$WORK/$t.trace" "$WORK/$t.otf2" --processes 1 --outer "$named" \
		--no-outer '(0x)?[0-9a-f]+'
	echo "$t: $(otf2-print -G "$WORK/$t.otf2/traces.otf2" | grep -c '^REGION') regions; start routines:" \
		"$(otf2-print -G "$WORK/$t.otf2/traces.otf2" | grep 'Role: FUNCTION' | sed 's/.*Name: "\([^"]*\)".*/\1/' | sort -u | tr '\n' ' ')"
done
echo ok
