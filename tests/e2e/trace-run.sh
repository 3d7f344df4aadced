#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-run: traces into -o DIR, passes arguments, the exit status and death by a signal
# through exactly (the trace complete in every case), passes on the signals it gets, says
# where the trace went and how to convert it, converts it with --convert, has an option for
# every LIBTRACE_* variable of src/core/config.c and checks their values, and refuses what
# the loader would not preload into (statically linked, setuid) with status 127.
. "$(dirname "$0")/lib.sh"
run=$BUILD/trace-run
mark=$TESTBIN/mark_then
n=2000
ulimit -c 0

# marks DIR: how many markers of mark_then the trace in DIR holds.
marks() {
	"$DUMP" "$1" >"$WORK/dump" || fail "trace-dump $1: exit status $?"
	grep -c 'MARKER "mark"' "$WORK/dump"
}

# pystatus CMD...: CMD's return code as Python's subprocess gives it: -S for death by signal S.
pystatus() {
	python3 -c 'import subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(r.returncode)' "$@"
}

# Arguments, status, the location line and the commands to go on with; nothing from the
# library itself.
out=$("$run" -o "$WORK/t" "$TESTBIN/exit_with" 3 "two words" 2>"$WORK/err")
status=$?
[ $status = 3 ] || fail "exit status $status, expected 3"
[ "$out" = $'3\ntwo words' ] || fail "arguments not passed through: $out"
grep -q "^trace-run: trace in $WORK/t\$" "$WORK/err" || fail "no location line: $(cat "$WORK/err")"
grep -v -q '^trace-run: ' "$WORK/err" && fail "more than trace-run's lines: $(cat "$WORK/err")"
grep -q "trace2otf2 $WORK/t\$" "$WORK/err" || fail "no OTF2 command: $(cat "$WORK/err")"
grep -q "trace2otf2 --format=paraver $WORK/t\$" "$WORK/err" || fail "no Paraver command"
grep -q "trace-report $WORK/t\$" "$WORK/err" || fail "no trace-report command"
ls "$WORK"/t/*/meta >/dev/null || fail "no trace"
"$run" -q -o "$WORK/q" "$TESTBIN/exit_with" 0 >/dev/null 2>"$WORK/err" || fail "-q run failed"
[ ! -s "$WORK/err" ] || fail "-q still printed: $(cat "$WORK/err")"
"$run" -o "$WORK/m" -m user "$TESTBIN/count_events" 1 10 >/dev/null 2>&1 || fail "-m run failed"
grep -q '^config LIBTRACE_MODULES=user$' "$WORK"/m/*/meta || fail "-m user not applied"
! "$DUMP" "$WORK/m" | grep -q pthread_create || fail "-m user still recorded pthread calls"

# Exit statuses, 139 included (an exit status, not a signal), exactly; the trace complete.
for s in 0 1 42 139; do
	"$run" -q -o "$WORK/e$s" "$mark" $n $s >/dev/null
	status=$?
	[ $status = $s ] || fail "exit $s: trace-run exit status $status"
	py=$(pystatus "$run" -q -o "$WORK/p$s" "$mark" $n $s)
	[ "$py" = $s ] || fail "exit $s: Python sees $py"
	got=$(marks "$WORK/e$s")
	[ "$got" = $n ] || fail "exit $s: $got markers, expected $n"
	echo "exit $s: status $s, $n markers"
done
# Death by a signal: trace-run dies of the same one; the trace complete.
for s in 11 9 6; do
	"$run" -q -o "$WORK/s$s" "$mark" $n -$s >/dev/null 2>&1
	status=$?
	[ $status = $((128 + s)) ] || fail "signal $s: trace-run status $status, expected $((128 + s))"
	py=$(pystatus "$run" -q -o "$WORK/ps$s" "$mark" $n -$s)
	[ "$py" = -$s ] || fail "signal $s: Python sees $py, expected -$s (death by signal $s)"
	for d in s$s ps$s; do
		got=$(marks "$WORK/$d")
		[ "$got" = $n ] || fail "signal $s: $got markers, expected $n"
	done
	echo "signal $s: trace-run died of signal $s, $n markers"
done

# Signals sent to trace-run alone reach the program: it dies of them, and so does trace-run;
# no orphan is left.  With a terminal, ^C reaches the program once (the terminal sends it to
# the whole group; trace-run does not send it again).
python3 - "$run" "$mark" "$WORK" $n <<'EOF' || fail "signals sent to trace-run"
import os, signal, subprocess, sys, time
run, mark, work, n = sys.argv[1:5]
dfl = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    p = subprocess.Popen([run, "-q", "-o", f"{work}/f{sig.name}", mark, n, "wait"],
                         stdout=subprocess.PIPE, preexec_fn=dfl)
    pid = int(p.stdout.readline().split()[1])
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        os.kill(pid, signal.SIGKILL)
        sys.exit(f"{sig.name}: trace-run still runs after 60 s")
    try:
        os.kill(pid, 0)
        sys.exit(f"{sig.name}: the program {pid} is still alive")
    except ProcessLookupError:
        pass
    if rc != -sig:
        sys.exit(f"{sig.name}: trace-run returned {rc}, expected {-sig}")
    print(f"{sig.name} to trace-run: the program and trace-run died of it")
try:
    pid, fd = os.forkpty()
except OSError as e:
    print(f"no pseudo-terminal ({e}): the ^C case is not run")
    sys.exit(0)
counter = ("import signal, sys, time\nn = 0\ndef h(s, f):\n    global n\n    n += 1\n"
           "signal.signal(signal.SIGINT, h)\nprint('ready', flush=True)\ntime.sleep(1)\n"
           "print('got', n, flush=True)\n")
if pid == 0:
    os.execv(run, [run, "-q", "-o", f"{work}/tty", sys.executable, "-c", counter])
buf = b""
while b"ready" not in buf:
    buf += os.read(fd, 100)
os.write(fd, b"\x03")
_, st = os.waitpid(pid, 0)
try:
    while True:
        d = os.read(fd, 1000)
        if not d:
            break
        buf += d
except OSError:
    pass
if b"got 1" not in buf or os.waitstatus_to_exitcode(st) != 0:
    sys.exit(f"^C on a terminal: status {st}, output {buf!r}")
print("^C on a terminal: the program got one SIGINT")
EOF
for sig in SIGTERM SIGINT SIGHUP; do
	got=$(marks "$WORK/f$sig")
	[ "$got" = $n ] || fail "$sig: $got markers, expected $n"
done

# Options: --name=value forms, --env, the environment's LIBTRACE_* variables, --, program
# arguments that look like options, a program path and arguments with spaces.
LIBTRACE_BUFFER_SIZE=128K "$run" -q --output="$WORK/o1" --modules=user "$TESTBIN/exit_with" 0 \
	>/dev/null || fail "--name=value run failed"
grep -q '^config LIBTRACE_MODULES=user$' "$WORK"/o1/*/meta || fail "--modules=user not applied"
grep -q '^config LIBTRACE_BUFFER_SIZE=131072$' "$WORK"/o1/*/meta ||
	fail "LIBTRACE_BUFFER_SIZE not passed on"
"$run" -q -o "$WORK/o2" -b 256K --overflow drop --clock=monotonic --kokkos-fence off --debug 0 \
	--env LIBTRACE_MODULES=proc "$TESTBIN/exit_with" 0 >/dev/null || fail "all-options run failed"
for kv in BUFFER_SIZE=262144 OVERFLOW=drop CLOCK=monotonic KOKKOS_FENCE=off DEBUG=0 MODULES=proc; do
	grep -q "^config LIBTRACE_$kv\$" "$WORK"/o2/*/meta || fail "LIBTRACE_$kv not applied"
done
out=$("$run" -qo "$WORK/o3" -- "$TESTBIN/exit_with" 5 -q --help -- 2>&1)
[ $? = 5 ] && [ "$out" = $'5\n-q\n--help\n--' ] || fail "-- and the program's own options: $out"
out=$("$run" -o"$WORK/o4" "$TESTBIN/exit_with" 6 -o x 2>/dev/null)
[ $? = 6 ] && [ "$out" = $'6\n-o\nx' ] || fail "options after the program must be its own: $out"
mkdir "$WORK/dir with space"
cp "$TESTBIN/exit_with" "$WORK/dir with space/exit with"
out=$(cd "$WORK/dir with space" && "$run" "./exit with" 7 " a  b " 2>"$WORK/err")
[ $? = 7 ] && [ "$out" = $'7\n a  b ' ] || fail "a program with spaces: $out"
trace=$(ls -d "$WORK/dir with space"/libtrace-exit_with-*) ||
	fail "no default directory: $(cat "$WORK/err")"
grep -qF "trace in $trace" "$WORK/err" || fail "default directory not told: $(cat "$WORK/err")"
grep -qF "trace2otf2 ${trace// /\\ }" "$WORK/err" ||
	fail "the command is not quoted: $(cat "$WORK/err")"
ls "$trace"/*/meta >/dev/null || fail "no trace from the program with spaces"
echo "options, --, the environment, spaces: ok"

# Bad values: refused with a clear message before anything runs.
for bad in "--overflow foo" "--clock=sundial" "--kokkos-fence maybe" "-m user,bogus" "-b 1K" \
	"--buffer-size=2G" "--debug x" "--env LIBTRACE_OVERFLOW=lots" "--env PATH=/x" "--nope" "-x"; do
	# shellcheck disable=SC2086 # the option and its value as two words
	out=$("$run" -o "$WORK/bad" $bad "$TESTBIN/exit_with" 0 2>"$WORK/err")
	status=$?
	[ $status = 127 ] || fail "$bad: status $status, expected 127"
	[ -z "$out" ] && [ ! -e "$WORK/bad" ] || fail "$bad: the program ran"
	grep -q "^trace-run: .*${bad%%[ =]*}" "$WORK/err" ||
		fail "$bad: no clear message: $(cat "$WORK/err")"
done
echo "bad values refused: $(head -1 "$WORK/err")"

# --help names every LIBTRACE_* variable of the runtime's table.
"$run" --help >"$WORK/help" || fail "--help failed"
vars=$(grep -o '{"LIBTRACE_[A-Z_]*"' "$SRC/src/core/config.c" | tr -d '{"')
[ -n "$vars" ] || fail "no LIBTRACE_ variable found in config.c"
for v in $vars; do
	grep -q "($v)" "$WORK/help" || fail "--help does not document $v"
done
for w in 127 125 --convert --env Example; do
	grep -q -- "$w" "$WORK/help" || fail "--help does not mention $w"
done
echo "--help documents the $(echo "$vars" | wc -w) variables of config.c"

# --convert: after a normal end and after a kill; a failed conversion gives 125 only when
# the program exited 0.
if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null; then
	"$run" -q --convert otf2 -o "$WORK/c" "$mark" $n 0 >/dev/null || fail "--convert otf2: status $?"
	otf2-print --silent -Werror "$WORK/c.otf2/traces.otf2" >/dev/null ||
		fail "otf2-print rejects the archive"
	"$run" --convert otf2 -o "$WORK/ck" "$mark" $n -9 >/dev/null 2>"$WORK/err"
	status=$?
	[ $status = 137 ] || fail "--convert after SIGKILL: status $status"
	otf2-print --silent -Werror "$WORK/ck.otf2/traces.otf2" >/dev/null ||
		fail "otf2-print rejects the killed run's archive"
	grep -q "trace-run: .*$WORK/ck.otf2/traces.otf2" "$WORK/err" ||
		fail "archive not told: $(cat "$WORK/err")"
	if "$CONVERT" --help | grep -q -- '--format'; then
		"$run" -q --convert paraver -o "$WORK/cp" "$mark" $n 0 >/dev/null || fail "--convert paraver: $?"
		[ -s "$WORK/cp.prv" ] && [ -s "$WORK/cp.pcf" ] && [ -s "$WORK/cp.row" ] || fail "no Paraver files"
	else
		echo "trace2otf2 without --format: --convert paraver is not tested"
	fi
	mkdir "$WORK/cf.otf2" "$WORK/cf3.otf2" # the converter will not overwrite them
	"$run" -q --convert otf2 -o "$WORK/cf" "$mark" 10 0 >/dev/null 2>"$WORK/err"
	status=$?
	[ $status = 125 ] || fail "failed conversion after exit 0: status $status, expected 125"
	grep -q "converting to otf2 failed" "$WORK/err" || fail "failure not told: $(cat "$WORK/err")"
	"$run" -q --convert otf2 -o "$WORK/cf3" "$mark" 10 3 >/dev/null 2>&1
	status=$?
	[ $status = 3 ] || fail "failed conversion after exit 3: status $status, expected 3"
	echo "--convert: archives after exit 0 and SIGKILL; 125 / 3 when the conversion fails"
else
	echo "no trace2otf2 or otf2-print: --convert is not tested"
fi

# Set-id programs: refused when the set-id bit changes the effective user (the loader
# ignores LD_PRELOAD then); one that keeps the caller's user runs traced.
cp "$TESTBIN/exit_with" "$WORK/own-suid"
chmod 4755 "$WORK/own-suid"
out=$("$run" -q -o "$WORK/own" "$WORK/own-suid" 8 2>"$WORK/err")
[ $? = 8 ] && [ "$out" = 8 ] || fail "a setuid program of the caller's own: $out $(cat "$WORK/err")"
ls "$WORK"/own/*/meta >/dev/null 2>&1 || fail "a setuid program of the caller's own was not traced"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod 755 "$WORK"
	cp "$TESTBIN/exit_with" "$WORK/suid"
	chown nobody "$WORK/suid"
	chmod 4755 "$WORK/suid"
	out=$("$run" -o "$WORK/su" "$WORK/suid" 0 2>"$WORK/err")
	status=$?
	[ $status = 127 ] && [ -z "$out" ] && [ ! -e "$WORK/su" ] ||
		fail "setuid nobody: status $status, ran: $out"
	grep -q "is setuid" "$WORK/err" || fail "setuid: no clear message: $(cat "$WORK/err")"
	cp "$TESTBIN/exit_with" "$WORK/sgid"
	chgrp "$(id -g nobody)" "$WORK/sgid"
	chmod 2755 "$WORK/sgid"
	if [ "$(id -g nobody)" != "$(id -rg)" ]; then
		out=$("$run" -o "$WORK/sg" "$WORK/sgid" 0 2>"$WORK/err")
		status=$?
		[ $status = 127 ] && [ -z "$out" ] || fail "setgid: status $status, ran: $out"
		grep -q "is setgid" "$WORK/err" || fail "setgid: no clear message: $(cat "$WORK/err")"
	fi
	echo "setuid/setgid programs of another user refused: $(cat "$WORK/err")"
else
	echo "not root: the setuid refusal is not tested (a program of another owner is needed)"
fi

if [ -x "$TESTBIN/exit_with_static" ]; then
	"$run" -o "$WORK/s" "$TESTBIN/exit_with_static" 0 >/dev/null 2>"$WORK/err"
	status=$?
	[ $status = 127 ] || fail "static program: status $status, expected 127"
	grep -q "statically linked" "$WORK/err" || fail "no clear message: $(cat "$WORK/err")"
	echo "static program refused"
else
	echo "no static libc here: the static-program case is not run"
fi
printf '#!/bin/sh\necho "script $*"\nexit 9\n' >"$WORK/script"
chmod +x "$WORK/script"
out=$("$run" -q -o "$WORK/sc" "$WORK/script" a b)
[ $? = 9 ] && [ "$out" = "script a b" ] || fail "a #! script: $out"
ls "$WORK"/sc/*/meta >/dev/null 2>&1 || fail "the script's interpreter was not traced"
"$run" -o "$WORK/x" no-such-program-here >/dev/null 2>"$WORK/err"
[ $? = 127 ] || fail "a missing program must give 127"
grep -q "command not found" "$WORK/err" || fail "no clear message for a missing program"
echo ok
