#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Where the trace goes: the default directory name and modes, LIBTRACE_OUTPUT checks
# (a symlink, a file, a foreign-owned directory are refused and the program runs untraced),
# the exit line (once, silenced by LIBTRACE_QUIET, never into a file that took fd 2), and
# LIBTRACE_MODULES=none.
. "$(dirname "$0")/lib.sh"

prog=$TESTBIN/count_events
cd "$WORK" || fail "cd"

# Default: ./libtrace-<program>-<date>-<pid>, 0700, files 0600; one line on stderr.
mkdir run && cd run || fail "mkdir"
LD_PRELOAD=$LIB "$prog" 1 10 >/dev/null 2>"$WORK/err" || fail "traced run failed"
dir=$(ls -d libtrace-count_events-*) || fail "no default trace directory"
[[ $dir =~ ^libtrace-count_events-[0-9]{8}-[0-9]{6}-[0-9]+$ ]] || fail "bad default name $dir"
[ "$(stat -c %a "$dir")" = 700 ] || fail "$dir is not 0700"
for f in "$dir"/*/*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is not 0600"
done
[ "$(stat -c %a "$dir"/*/)" = 700 ] || fail "process directory is not 0700"
[ "$(cat "$WORK/err")" = "libtrace: trace written to $PWD/$dir" ] ||
	fail "exit line: $(cat "$WORK/err")"
LD_PRELOAD=$LIB LIBTRACE_QUIET=1 "$prog" 1 10 >/dev/null 2>"$WORK/err" || fail "quiet run"
[ ! -s "$WORK/err" ] || fail "LIBTRACE_QUIET=1 still printed: $(cat "$WORK/err")"
cd "$WORK" || fail "cd"

# A program that closes stderr and reuses fd 2 for its own file (the exit line is on): it
# runs as untraced, and its file holds its data alone.
mkdir -p "$WORK/in"
LIBTRACE_QUIET=0 same_behaviour closer "$TESTBIN/stderr_closer" own
[ "$(cat "$WORK/traced/own")" = "program data" ] || fail "the tracer wrote into the program's file"
$CHECK "$WORK/closer.trace" --calls pthread_mutex_lock=1 >/dev/null || fail "stderr_closer trace"

# Refused outputs: a symlink, a regular file.  The program runs, untraced, same output.
mkdir "$WORK/target"
ln -s "$WORK/target" "$WORK/link"
out=$(LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/link "$prog" 1 10 2>"$WORK/err") ||
	fail "program failed with a symlinked output"
[ "$out" = "shared=2" ] || fail "program output changed: $out"
grep -q "refusing trace directory $WORK/link: it is a symbolic link" "$WORK/err" ||
	fail "no clear message for a symlink: $(cat "$WORK/err")"
[ -z "$(ls "$WORK/target")" ] || fail "something was written through the symlink"
touch "$WORK/afile"
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/afile "$prog" 1 10 >/dev/null 2>"$WORK/err" ||
	fail "program failed with a file as output"
grep -q "not a directory" "$WORK/err" || fail "no clear message for a file: $(cat "$WORK/err")"

# A directory owned by someone else (needs root to make one).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir "$WORK/foreign" && chown nobody "$WORK/foreign"
	LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/foreign "$prog" 1 10 >/dev/null 2>"$WORK/err" ||
		fail "program failed with a foreign output"
	grep -q "owned by uid" "$WORK/err" || fail "no clear message: $(cat "$WORK/err")"
	[ -z "$(ls "$WORK/foreign")" ] || fail "wrote into a foreign directory"
	echo "foreign-owned directory refused"
else
	echo "not root: the foreign-owned directory case is not run"
fi

# Nested output path: parents are created.
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/a/b/c LIBTRACE_QUIET=1 "$prog" 1 10 >/dev/null ||
	fail "nested output"
ls "$WORK"/a/b/c/*/meta >/dev/null || fail "no trace in a nested output path"

# A parent that is our own symbolic link is followed (its target walked by the same rule),
# and a chain of them.
ln -s "$WORK/target" "$WORK/link2" && ln -s "$WORK/link2" "$WORK/link3"
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/link3/t LIBTRACE_QUIET=1 "$prog" 1 10 >/dev/null ||
	fail "output under a symbolic link"
ls "$WORK"/target/t/*/meta >/dev/null || fail "no trace through our own symbolic links"

# A directory right under the root (root only may make one there).
if [ "$(id -u)" = 0 ]; then
	top=/libtrace-outdir-test.$$
	rm -rf "$top"
	LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$top "$prog" 1 10 >/dev/null 2>"$WORK/err" ||
		fail "program failed with an output under /"
	ok=0
	ls "$top"/*/meta >/dev/null 2>&1 && ok=1
	rm -rf "$top"
	[ $ok = 1 ] || fail "no trace in $top: $(cat "$WORK/err")"
fi

# Nothing to record: no directory at all.
mkdir "$WORK/none" && cd "$WORK/none" || fail "cd"
LD_PRELOAD=$LIB LIBTRACE_MODULES=none "$prog" 1 10 >/dev/null 2>&1 || fail "modules=none run"
[ -z "$(ls)" ] || fail "LIBTRACE_MODULES=none still created $(ls)"
echo ok
