#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A setuid program is never traced, even with the library preloaded the way ld.so allows it
# for setuid programs (a setuid-bit library in a system directory, named without a slash).
# Needs root (to make a setuid program and put the library in a system directory).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: cannot set up a setuid program"
id nobody >/dev/null 2>&1 || skip "no user nobody"
sysdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
[ -d "$sysdir" ] && [ -w "$sysdir" ] || skip "$sysdir is not writable"
name=libtrace-setuid-test-$$.so
install -m 4755 "$LIB" "$sysdir/$name" || skip "cannot install into $sysdir"
trap 'rm -f "$sysdir/$name"; rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
mkdir -m 1777 "$WORK/pub"
cp "$TESTBIN/exit_with" "$WORK/suid"
cp "$TESTBIN/exit_with" "$WORK/plain"
chown nobody "$WORK/suid"
chmod 4755 "$WORK/suid"

# Control: the same preload into the ordinary copy is traced.
LD_PRELOAD=$name LIBTRACE_OUTPUT=$WORK/pub/control LIBTRACE_QUIET=1 "$WORK/plain" 0 >/dev/null ||
	fail "control run failed"
ls "$WORK"/pub/control/*/meta >/dev/null 2>&1 || fail "control: the library was not loaded"
# The setuid copy runs with euid nobody: AT_SECURE.  It could create the trace in pub/.
out=$(LD_PRELOAD=$name LIBTRACE_OUTPUT=$WORK/pub/secure "$WORK/suid" 5 hello 2>"$WORK/err")
status=$?
[ $status = 5 ] && [ "$out" = $'5\nhello' ] || fail "the setuid program changed: status $status, $out"
[ ! -e "$WORK/pub/secure" ] || fail "a setuid process was traced"
[ ! -s "$WORK/err" ] || fail "the setuid process printed: $(cat "$WORK/err")"
echo "setuid program untraced; control traced"
echo ok
