#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fork, fork+exec, posix_spawn, system() and dlopen under the tracer: each process has its
# own directory and complete trace, and the parent's events are not duplicated in children;
# a child forked after the program wrote over its argument strings has the arguments too.
. "$(dirname "$0")/lib.sh"

# A program that writes over its argument strings (a process title) before it forks: the
# child's meta file has the arguments the process started with, as the parent's.
traced "$WORK/title" "$TESTBIN/procs" title one "two words" >/dev/null || fail "procs title failed"
[ "$(ls "$WORK/title" | wc -l)" = 2 ] || fail "procs title: not two processes: $(ls "$WORK/title")"
for m in "$WORK"/title/*/meta; do
	[ "$(grep '^arg ' "$m" | cut -d' ' -f2- | tr '\n' '|')" = "$TESTBIN/procs|title|one|two\\x20words|" ] ||
		fail "$m: arguments $(grep '^arg ' "$m" | tr '\n' '|')"
done

out=$(traced "$WORK/t" "$TESTBIN/procs") || fail "procs failed: $out"
[ "$out" = ok ] || fail "procs: $out"
summary=$($CHECK "$WORK/t" --no-lost) || fail "$summary"
echo "$summary"
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed"
dirs=$(ls "$WORK/t")
ndirs=$(echo "$dirs" | wc -l)
# parent, forked child, its exec'd image (.N), the vfork child's image, spawned child, the
# shell of system().
[ "$ndirs" -ge 6 ] || fail "$ndirs process directories, expected at least 5: $dirs"

count() { grep -c "$1" "$WORK/dump" || true; }
parent=$(awk '/COUNTER "parent"/ {print $1}' "$WORK/dump" | sort -u)
[ "$(echo "$parent" | wc -l)" = 1 ] || fail "parent values in several processes: $parent"
[ "$(count 'COUNTER "parent"')" = 100 ] || fail "parent values: $(count 'COUNTER "parent"')"
[ "$(count 'COUNTER "forked"')" = 100 ] || fail "forked values: $(count 'COUNTER "forked"')"
[ "$(count 'COUNTER "forked_thread"')" = 50 ] || fail "forked thread values"
[ "$(count 'COUNTER "child"')" = 35 ] || fail "exec'd and spawned values: $(count 'COUNTER "child"')"
# The vfork child's exec is not in the parent's stream (it would be unbalanced there).
[ "$(grep -c "^$parent .*CALL_ENTER execve" "$WORK/dump")" = 0 ] || fail "an exec in the parent's stream"
forked=$(awk '/COUNTER "forked"/ {print $1; exit}' "$WORK/dump")
[ "$forked" != "$parent" ] || fail "the forked child wrote into the parent's trace"
# The forked child names its parent, and its fork call is balanced.
grep -q "^parent " "$WORK/t/$forked/meta" || fail "the forked child's meta has no parent line"
grep -q "^$forked 0 .* CALL_LEAVE fork ret=0" "$WORK/dump" || fail "no fork return in the child"
# exec: the new image has <host>.<pid>.1 next to <host>.<pid>.
ls -d "$WORK"/t/*.*.1 >/dev/null 2>&1 || fail "no directory of an exec'd image"
grep -q "CALL_ENTER execve path=\"/proc/self/exe\"" "$WORK/dump" || fail "exec not recorded"
grep -q "CALL_ENTER posix_spawn path=\"/proc/self/exe\"" "$WORK/dump" || fail "spawn not recorded"
grep -q 'CALL_ENTER dlopen path="libm.so.6"' "$WORK/dump" || fail "dlopen not recorded"
grep -q '^dlopen libm.so.6' "$WORK/t/$parent/meta" || fail "dlopen not in the meta file"
grep -q '^map .*libm.so.6' "$WORK/t/$parent/meta" || fail "libm's mapping not in the meta file"
# Every process's meta is whole and says how it ended.
for d in "$WORK"/t/*/; do
	head -1 "$d/meta" | grep -q '^libtrace-meta 2\.' || fail "$d: bad meta"
	grep -qE '^(end|exec) ' "$d/meta" || fail "$d: no end line"
done
echo ok
