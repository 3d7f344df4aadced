#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Selective recording drops exactly what it should (tests/programs/selective.c, whose
# traffic is known call by call):
# - no setting: everything is there (the counts below are the program's);
# - LIBTRACE_EXCLUDE globs, LIBTRACE_INCLUDE globs, and a Score-P filter file: the filtered
#   names leave no record, nothing else changes, and each thread's "dropped" count in the
#   meta file is exactly what was left out;
# - LIBTRACE_MIN_DURATION=1ms: every pair kept lasts at least 1 ms, kept + dropped is what
#   the program did, the regions that sleep and the one holding a marker stay, the empty
#   ones go (but for the odd one a busy machine stretched), the calls that do not block go;
# - ltr_trace_pause/resume, LIBTRACE_TOGGLE_SIGNAL and LIBTRACE_START_PAUSED: what happens
#   while paused leaves no record, the rest is whole, a marker tells each pause and resume;
# - the exit's copy of chunks whose threads take short regions back meanwhile is whole;
# - the traces convert (otf2-print -Werror, check_otf2.py, the strict Paraver parser) and
#   trace-report shows each thread's counts.
. "$(dirname "$0")/lib.sh"
export LIBTRACE_SAMPLE_PERIOD=0
PROG=$TESTBIN/selective
DUMP=$BUILD/trace-dump
[ -x "$PROG" ] || skip "selective was not built"

# check TRACE MODE: the counts of TRACE for the scenario MODE.
check() {
	"$DUMP" "$1" >"$WORK/dump" || fail "trace-dump $1: $?"
	/usr/bin/python3 - "$WORK/dump" "$1" "$2" <<'PY' || fail "$2: wrong records"
import collections, glob, sys
dump, trace, mode = sys.argv[1:]
regions = collections.Counter()  # (thread, name) -> enters
leaves = collections.Counter()
calls = collections.Counter()    # (thread, fn) -> CALL_ENTER or CALL
markers = collections.Counter()
open_at = {}
short_ok = True
pairs = 0
for line in open(dump):
    f = line.split()
    th, ns, rec = int(f[1]), int(f[2]), f[3]
    if rec == "REGION_ENTER":
        regions[th, f[4].strip('"')] += 1
        open_at.setdefault(th, []).append(ns)
    elif rec == "REGION_LEAVE":
        leaves[th, f[4].strip('"')] += 1
        d = ns - open_at[th].pop()
        pairs += 1
        # "marked" stays: it holds a marker, which is not dropped with it.
        if mode == "short" and d < 1000000 and f[4] != '"marked"':
            sys.exit("%s: a region of %d ns was kept: %s" % (mode, d, line.strip()))
    elif rec in ("CALL_ENTER", "CALL"):
        calls[th, f[4]] += 1
        if rec == "CALL_ENTER":
            open_at.setdefault(th, []).append(ns)
    elif rec == "CALL_LEAVE":
        d = ns - open_at[th].pop()
        # pthread_create and pthread_join stay: the creation and the join are recorded
        # inside them (the records of a thread's relations are never dropped).
        if mode == "short" and d < 1000000 and f[4] not in ("pthread_create", "pthread_join"):
            sys.exit("%s: a call of %d ns was kept: %s" % (mode, d, line.strip()))
    elif rec == "MARKER":
        markers[" ".join(f[4:]).strip('"')] += 1
assert regions == leaves, "%s: enters and leaves differ" % mode
dropped = collections.Counter()
for meta in glob.glob(trace + "/*/meta"):
    for line in open(meta):
        w = line.split()
        if w[0] == "dropped":
            dropped[int(w[1]), int(w[2])] += int(w[3])
SHORT, FILTER = 0, 1
# What the program does (selective.c): thread 0 is main, thread 1 the holder.
R = {"long": 3, "short": 1000, "outer_short": 100, "inner_short": 140, "outer_long": 4,
     "marked": 5, "skip_me": 50, "hidden": 20, "after": 1}
C0 = {"pthread_mutex_lock": 2003, "pthread_mutex_unlock": 2003, "pthread_barrier_wait": 6,
      "pthread_create": 1, "pthread_join": 1}
C1 = {"pthread_mutex_lock": 3, "pthread_mutex_unlock": 3, "pthread_barrier_wait": 6}
def expect(got, want, what):
    got = {k: v for k, v in got.items() if v}
    want = {k: v for k, v in want.items() if v}
    assert got == want, "%s: %s: got %s, want %s" % (mode, what, sorted(got.items()), sorted(want.items()))
def regions_of(th):
    return {n: c for (t, n), c in regions.items() if t == th}
def calls_of(th):
    return {n: c for (t, n), c in calls.items() if t == th}
PAUSED, RESUMED = "libtrace: recording paused", "libtrace: recording resumed"
if mode in ("all", "api", "signal"):
    want = dict(R)
    if mode != "all":
        want["hidden"] = 0
        expect({k: markers[k] for k in (PAUSED, RESUMED)}, {PAUSED: 1, RESUMED: 1}, "pause markers")
    expect(regions_of(0), want, "regions")
    expect(calls_of(0), C0, "main's calls")
    expect(calls_of(1), C1, "the holder's calls")
    expect(dropped, {}, "dropped counts")
elif mode == "exclude":
    expect(regions_of(0), dict(R, skip_me=0), "regions")
    expect(calls_of(0), dict(C0, pthread_mutex_lock=0, pthread_mutex_unlock=0), "main's calls")
    expect(calls_of(1), dict(C1, pthread_mutex_lock=0, pthread_mutex_unlock=0), "holder's calls")
    expect(dropped, {(0, FILTER): 50 + 2003 + 2003, (1, FILTER): 6}, "dropped counts")
elif mode == "include":
    keep = ("long", "outer_long", "outer_short")
    expect(regions_of(0), {k: R[k] for k in keep}, "regions")
    expect(calls, {}, "calls")
    assert markers["inside"] == 5, "markers are not filtered"
    expect(dropped, {(0, FILTER): sum(R.values()) - 107 + sum(C0.values()),
                     (1, FILTER): sum(C1.values())}, "dropped counts")
elif mode == "file":
    expect(regions_of(0), {"long": 3, "marked": 5}, "regions")
    expect(calls_of(0), {"pthread_barrier_wait": 6}, "main's calls")
    expect(calls_of(1), {"pthread_barrier_wait": 6}, "holder's calls")
    expect(dropped, {(0, FILTER): sum(R.values()) - 8 + sum(C0.values()) - 6,
                     (1, FILTER): sum(C1.values()) - 6}, "dropped counts")
elif mode == "short":
    for name in ("long", "outer_long", "marked"):
        assert regions[0, name] == R[name], "%s: %s regions dropped" % (mode, name)
    assert regions[0, "hidden"] == 0, "paused regions recorded"
    stretched = sum(regions[0, n] for n in ("short", "outer_short", "inner_short", "after"))
    assert stretched <= 20, "%s: %d empty regions kept" % (mode, stretched)
    for fn in ("pthread_mutex_unlock",):
        assert calls[0, fn] == 0 and calls[1, fn] == 0, "calls that do not block were kept"
    did0 = sum(R.values()) - R["hidden"] + sum(C0.values())
    did1 = sum(C1.values())
    kept0 = sum(regions_of(0).values()) + sum(calls_of(0).values())
    kept1 = sum(calls_of(1).values())
    expect({0: kept0 + dropped[0, SHORT], 1: kept1 + dropped[1, SHORT]}, {0: did0, 1: did1},
           "kept + dropped")
    assert dropped[0, FILTER] == 0 and dropped[1, FILTER] == 0
elif mode == "start-paused":
    expect(regions, {(0, "after"): 1}, "regions")
    expect(calls, {}, "calls")
    assert markers[RESUMED] == 1 and markers[PAUSED] == 0, "markers: %s" % markers
else:
    sys.exit("unknown mode " + mode)
print("%s: ok (%d regions kept, dropped %s)" % (mode, sum(regions.values()), dict(dropped)))
PY
}

run() {
	local name=$1
	shift
	rm -rf "$WORK/$name"
	env "$@" LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/$name" LIBTRACE_QUIET=1 "$PROG" \
		${ARG:-} >"$WORK/$name.out" 2>"$WORK/$name.err" || fail "$name: exit status $?"
	grep -q '^selective done$' "$WORK/$name.out" || fail "$name: the program did not finish"
	if [ -s "$WORK/$name.err" ]; then
		cat "$WORK/$name.err" >&2
		fail "$name: the tracer said something"
	fi
}

ARG= run all
check "$WORK/all" all
ARG= run exclude LIBTRACE_EXCLUDE="skip_me, pthread_mutex_*"
check "$WORK/exclude" exclude
ARG= run include LIBTRACE_INCLUDE="long,outer_*"
check "$WORK/include" include
cat >"$WORK/regions.filter" <<'EOF'
# Score-P's syntax: the last rule that matches wins.
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE long
          marked   # a rule goes on over lines
  INCLUDE pthread_barrier_*
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */lib/*
SCOREP_FILE_NAMES_END
EOF
ARG= run file LIBTRACE_EXCLUDE="$WORK/regions.filter"
check "$WORK/file" file
ARG=api run short LIBTRACE_MIN_DURATION=1ms
check "$WORK/short" short
ARG=api run api
check "$WORK/api" api
ARG=signal run signal LIBTRACE_TOGGLE_SIGNAL=SIGUSR2
check "$WORK/signal" signal
ARG=api run start-paused LIBTRACE_START_PAUSED=1
check "$WORK/start-paused" start-paused

# The exit copies the chunks of threads still at work; with a minimum duration they keep
# taking short regions back meanwhile.  Such a copy is checked and made again when torn
# (before, about one exit in a hundred left records out of time order): every trace of 20
# exits is whole.
for i in $(seq 20); do
	rm -rf "$WORK/storm"
	LIBTRACE_MIN_DURATION=1ms LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/storm" LIBTRACE_QUIET=1 \
		"$PROG" exit-storm || fail "exit-storm: exit status $?"
	/usr/bin/python3 "$SRC/tests/e2e/check_trace.py" --dump "$DUMP" "$WORK/storm" \
		>"$WORK/storm.log" 2>&1 || {
		tail -3 "$WORK/storm.log" >&2
		fail "exit-storm $i: the exit's copy of a chunk taken back meanwhile is torn"
	}
done
echo "exit-storm: 20 exits beside threads taking short regions back, every trace whole"

# Kokkos kernels by name (kokkos_app 1000 6: 6 "axpy" and 6 "dot" kernels), where Debian's
# Kokkos was there to build it.
if [ -x "$TESTBIN/kokkos_app" ]; then
	rm -rf "$WORK/kokkos"
	LIBTRACE_EXCLUDE=axpy LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/kokkos" LIBTRACE_QUIET=1 \
		"$TESTBIN/kokkos_app" 1000 6 >/dev/null || fail "kokkos_app: $?"
	"$DUMP" "$WORK/kokkos" >"$WORK/kokkos.dump" || fail "trace-dump kokkos: $?"
	axpy=$(grep -c 'KOKKOS_BEGIN "Kokkos::parallel_for" "axpy"' "$WORK/kokkos.dump" || true)
	dot=$(grep -c 'KOKKOS_BEGIN "Kokkos::parallel_reduce" "dot"' "$WORK/kokkos.dump" || true)
	ends=$(grep -c 'KOKKOS_END "Kokkos::parallel_' "$WORK/kokkos.dump" || true)
	begins=$(grep -c 'KOKKOS_BEGIN "Kokkos::parallel_' "$WORK/kokkos.dump" || true)
	[ "$axpy" = 0 ] && [ "$dot" = 6 ] && [ "$ends" = "$begins" ] ||
		fail "kokkos: axpy $axpy (want 0), dot $dot (want 6), $begins kernels begun, $ends ended"
	grep -q '^dropped 0 1 6$' "$WORK"/kokkos/*/meta || fail "kokkos: the 6 axpy kernels not counted"
	echo "kokkos: the 6 axpy kernels left out and counted, the 6 dot kernels kept"
else
	echo "kokkos: not checked (kokkos_app was not built)"
fi

# A bad setting is named, and the default used.
rm -rf "$WORK/bad"
LIBTRACE_TOGGLE_SIGNAL=SIGKILL LIBTRACE_MIN_DURATION=5 LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/bad" \
	LIBTRACE_QUIET=1 /bin/true 2>"$WORK/bad.err" || fail "a bad setting broke /bin/true"
grep -q 'LIBTRACE_TOGGLE_SIGNAL="SIGKILL" is not valid' "$WORK/bad.err" || fail "SIGKILL not refused"
grep -q 'LIBTRACE_MIN_DURATION="5" is not valid' "$WORK/bad.err" || fail "a duration without unit not refused"

# trace-report shows the counts, per thread and in all.
"$BUILD/trace-report" "$WORK/short" >"$WORK/short.report" || fail "trace-report: $?"
"$BUILD/trace-report" --json -o "$WORK/short.json" "$WORK/short" || fail "trace-report --json: $?"
/usr/bin/python3 - "$WORK/short" "$WORK/short.report" "$WORK/short.json" <<'PY' || fail "trace-report's counts"
import collections, glob, json, re, sys
trace, text, js = sys.argv[1:]
want = collections.Counter()
for meta in glob.glob(trace + "/*/meta"):
    for line in open(meta):
        w = line.split()
        if w[0] == "dropped":
            want[int(w[1]), int(w[2])] += int(w[3])
run = json.load(open(js))["runs"][0]
got = collections.Counter()
for p in run["processes"]:
    for t in p["threads"]:
        got[t["index"], 0] += t["dropped_short"]
        got[t["index"], 1] += t["dropped_filtered"]
got = +got
assert got == want, "JSON: %s, meta: %s" % (got, want)
assert run["totals"]["dropped_short"] == sum(v for (t, c), v in want.items() if c == 0)
report = open(text).read()
rows = {}
section = report.split("not recorded on purpose")[1]
for m in re.finditer(r"^\s+\S+/(\d+)\s+(\d+)\s+(\d+)$", section, re.M):
    rows[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
for (t, c), v in want.items():
    assert rows[t][c] == v, "table: thread %d: %s" % (t, rows.get(t))
assert "left out on purpose" in report
print("trace-report: per-thread counts as in the meta files")
PY

# The traces convert: OTF2 (otf2-print -Werror, python3-otf2) and Paraver (strict parser).
if "$CONVERT" --help | grep -q '^  otf2 ' && command -v otf2-print >/dev/null &&
	/usr/bin/python3 -c 'import otf2' 2>/dev/null; then
	for name in short api start-paused exclude; do
		converted "$WORK/$name" "$WORK/$name.otf2"
	done
	# A pause and a resume are Score-P's MeasurementOnOff too (Vampir's measurement gap),
	# in time order on the thread that made them; started paused, the main thread is off
	# from its begin.
	/usr/bin/python3 - "$WORK/api.otf2/traces.otf2" "$WORK/start-paused.otf2/traces.otf2" <<'PY' ||
import sys, otf2
def onoff(path):
    seen = []
    with otf2.reader.open(path) as tr:
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.MeasurementOnOff):
                seen.append((loc.name, str(ev.measurement_mode).split(".")[-1]))
    return seen
api, start = onoff(sys.argv[1]), onoff(sys.argv[2])
assert [m for _, m in api] == ["OFF", "ON"], "api: %s" % api
assert len({l for l, _ in api}) == 1, "api: not one location: %s" % api
assert [m for _, m in start] == ["OFF", "ON"], "start-paused: %s" % start
print("MeasurementOnOff: api %s, start-paused %s" % (api, start))
PY
		fail "no MeasurementOnOff for the pause and the resume"
else
	echo "OTF2 checks not run: no OTF2 converter, otf2-print or python3-otf2"
fi
for name in short signal api start-paused; do
	"$CONVERT" -q --format=paraver "$WORK/$name" -o "$WORK/$name" || fail "paraver $name: $?"
	/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/$name.prv" >"$WORK/prv.log" 2>&1 || {
		tail "$WORK/prv.log" >&2
		fail "check_prv $name.prv"
	}
done
# In Paraver a pause is Extrae's state 14, Tracing Disabled, from the pause (or the start,
# started paused) to the resume.
for name in api start-paused; do
	n=$(grep -c '^1:[0-9]*:[0-9]*:[0-9]*:[0-9]*:[0-9]*:[0-9]*:14$' "$WORK/$name.prv")
	[ "$n" = 1 ] || fail "$name.prv: $n intervals in state Tracing Disabled, not 1"
	grep -q '^14 *Tracing Disabled' "$WORK/$name.pcf" || fail "$name.pcf names no state 14"
done
echo "selective recording: ok"
