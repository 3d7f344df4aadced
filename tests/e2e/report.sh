#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-report: a profile agrees with the raw records (calls, inclusive and exclusive time
# computed independently from trace-dump's output); the table, CSV and JSON are well formed
# and the JSON has exactly the members docs/profiles-and-ci.md documents; lost events are said; --compare
# finds a region slowed twofold and nothing else, passes identical programs, 3 runs against
# 3, a saved baseline, tells appeared and vanished regions, and exits 2 for another program
# and 3 for unreadable input.  An OTF2 archive converted from a trace profiles as the trace
# did, on either side of --compare; a damaged archive exits 3.
. "$(dirname "$0")/lib.sh"
REPORT=$BUILD/trace-report
SLOW=$TESTBIN/slow_region
[ -x "$REPORT" ] || skip "trace-report was not built"
[ -x "$SLOW" ] || skip "tests/programs/slow_region was not built"
CHK="python3 $SRC/tests/e2e/check_report.py"
SCHEMA="$CHK schema --readme $SRC/docs/profiles-and-ci.md"

# report_status WANT ARGS...: runs trace-report ARGS, output in $WORK/out, stderr in
# $WORK/err, and requires exit status WANT.
report_status() {
	local want=$1
	shift
	"$REPORT" "$@" >"$WORK/out" 2>"$WORK/err"
	local got=$?
	[ "$got" = "$want" ] || {
		cat "$WORK/out" "$WORK/err" | tail -30 >&2
		fail "trace-report $*: exit status $got, expected $want"
	}
}

# ---- A profile agrees with the records ----
# count_events: user regions, mutex calls (blocking and not), create/join, 4 threads.
traced "$WORK/count.trace" "$TESTBIN/count_events" 3 1000 >/dev/null || fail "count_events failed"
report_status 0 --json -o "$WORK/count.json" "$WORK/count.trace"
$CHK totals --dump "$DUMP" "$WORK/count.trace" "$WORK/count.json" || fail "count: totals"
$SCHEMA "$WORK/count.json" || fail "count: JSON schema"
# The example: condition variables, rwlocks, semaphores, a barrier, a named thread.
traced "$WORK/pipe.trace" "$BUILD/examples/pthread_pipeline" >/dev/null || fail "example failed"
report_status 0 --json -o "$WORK/pipe.json" "$WORK/pipe.trace"
$CHK totals --dump "$DUMP" "$WORK/pipe.trace" "$WORK/pipe.json" || fail "pipeline: totals"
# slow_region with "extra": a region entered three times recursively counts its inclusive
# time once (the outermost call), its calls three times.
traced "$WORK/extra.trace" "$SLOW" 1 2 sleep extra || fail "slow_region extra failed"
report_status 0 --json -o "$WORK/extra.json" "$WORK/extra.trace"
$CHK totals --dump "$DUMP" "$WORK/extra.trace" "$WORK/extra.json" || fail "extra: totals"
python3 - "$WORK/extra.json" <<'EOF' || fail "recursion: inclusive time counted more than once"
import json, sys
r = {g["name"]: g for g in json.load(open(sys.argv[1]))["runs"][0]["regions"]}
e = r["extra"]
assert e["calls"] == 3 and e["threads"] == 1, e
assert e["inclusive_ns"] == e["max_ns"] and e["exclusive_ns"] <= e["inclusive_ns"], e
assert 200000 <= e["inclusive_ns"] < 100000000, e
c = r["compute"]
assert c["calls"] == 8 and c["threads"] == 2 and c["max_thread"].endswith(("/1", "/2")), c
assert c["inclusive_ns"] >= 8 * 6000000, c
EOF
# Metadata: what ran.
python3 - "$WORK/extra.json" "$SLOW" <<'EOF' || fail "metadata"
import json, sys
m = json.load(open(sys.argv[1]))["runs"][0]["metadata"]
assert m["program"] == "slow_region" and m["executable"] == sys.argv[2], m
assert m["arguments"] == ["1", "2", "sleep", "extra"], m
assert m["processes"] == 1 and m["threads"] == 3 and m["ranks"] == 1, m
assert m["start"].endswith("Z") and m["duration_ns"] > 0, m
EOF

# A thread still waiting when the process ends normally (a daemon thread blocked on a lock
# until exit) waited, and lived, until the process's end, not until its last record; the
# archive says the same.
traced "$WORK/wait.trace" python3 -c 'import threading, time
l = threading.Lock(); l.acquire()
threading.Thread(target=l.acquire, daemon=True).start(); time.sleep(0.3)' ||
	fail "python3 with a waiting thread failed"
report_status 0 --json -o "$WORK/wait.json" "$WORK/wait.trace"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]
assert r["totals"]["unclosed_regions"] >= 1, r["totals"]
p = r["processes"][-1]
t = [t for t in p["threads"] if t["index"] == 1]
assert p["ended"] and t and t[0]["lifetime_ns"] >= 250000000, (p["name"], p["threads"])
assert t[0]["in_regions_ns"] >= 250000000, t' "$WORK/wait.json" ||
	fail "a thread waiting until exit ends at its last record"
if [ -x "$CONVERT" ]; then
	"$CONVERT" -q "$WORK/wait.trace" -o "$WORK/wait.otf2" || fail "trace2otf2 wait: exit status $?"
	report_status 0 --json -o "$WORK/wait-otf2.json" "$WORK/wait.otf2"
	$CHK same "$WORK/wait.json" "$WORK/wait-otf2.json" || fail "wait: the archive's profile differs"
fi

# ---- Table, CSV, JSON of several runs ----
report_status 0 "$WORK/count.trace"
cp "$WORK/out" "$WORK/count.txt"
$CHK table "$WORK/count.txt" "$WORK/count.json" --top 20 || fail "table"
report_status 0 --top 3 "$WORK/count.trace"
$CHK table "$WORK/out" "$WORK/count.json" --top 3 || fail "table --top 3"
grep -q -- '--all for all' "$WORK/out" || fail "--top 3 does not say how to see all"
report_status 0 --all "$WORK/extra.trace"
$CHK table "$WORK/out" "$WORK/extra.json" || fail "table --all"
report_status 0 --csv -o "$WORK/count.csv" "$WORK/count.trace"
$CHK csv "$WORK/count.csv" "$WORK/count.json" || fail "CSV"
# A process directory alone is a run; a saved profile prints as the trace did.
report_status 0 --json "$(ls -d "$WORK"/count.trace/*/)"
$SCHEMA "$WORK/out" || fail "a process directory's JSON"
report_status 0 "$WORK/count.json"
diff <(sed 1d "$WORK/count.txt") <(sed 1d "$WORK/out") >&2 || fail "a saved profile prints differently"

# Names are printed with their control bytes escaped (\xNN, as trace-dump does), and the
# columns of names fit the longest (at most 40 characters, cut with "...").
python3 - "$WORK/count.json" "$WORK/esc.json" <<'EOF' || fail "cannot make esc.json"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
r["regions"][0]["name"] = "bad\x1b[31mred\x07"
r["metadata"]["host"] = "a-very-long-host-name.example.internal.cluster.local"
for p in r["processes"]:
    p["name"] = "a-very-long-host-name.example.internal.cluster.local.4242"
    p["program"] = "prog\x1bname"
r["totals"]["anomalies"] = 7
json.dump(d, open(sys.argv[2], "w"))
EOF
report_status 0 "$WORK/esc.json"
grep -q $'\x1b' "$WORK/out" && fail "a control byte is printed raw"
grep -q '^!! 7 anomalies' "$WORK/out" || fail "the table does not say there were anomalies"
grep -qF 'bad\x1b[31mred\x07' "$WORK/out" || fail "a region name is not escaped"
grep -qF 'prog\x1bname' "$WORK/out" || fail "a program name is not escaped"
grep -q '^  a-very-long-host-name.example.inter\.\.\./1 ' "$WORK/out" ||
	fail "a long thread name is not cut: $(grep very-long "$WORK/out")"
grep -q '^  process  *pid program  *threads  *lifetime  *in regions (sum over threads)' "$WORK/out" ||
	fail "the processes' header: $(grep -A1 '^Processes' "$WORK/out")"
python3 -c 'import sys; lines = open(sys.argv[1]).read().splitlines()
head = lines.index("Threads:") + 1
end = lines[head].index(" tid") + 4
rows = [l for l in lines[head + 1:] if l.startswith("  a-very")]
assert rows and all(len(l.split()[0]) <= 40 for l in rows), rows
assert all(l.index(" " + l.split()[1] + " ") + 1 + len(l.split()[1]) == end for l in rows), rows
' "$WORK/out" || fail "the threads' rows are not aligned with their header"

# ---- Lost events are said, loudly ----
cp -a "$WORK/count.trace" "$WORK/lost.trace"
echo "lost 1 3 12345" >>"$(ls -d "$WORK"/lost.trace/*/)meta"
report_status 0 "$WORK/lost.trace"
grep -q 'WARNING.*12345 events were lost' "$WORK/err" || fail "no warning on stderr for lost events"
grep -q '12345 EVENTS WERE LOST' "$WORK/out" || fail "the table does not say events were lost"
report_status 0 --json "$WORK/lost.trace"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]
assert r["totals"]["lost_events"] == 12345, r["totals"]
assert sum(t["lost_events"] for p in r["processes"] for t in p["threads"]) == 12345' "$WORK/out" ||
	fail "lost events not in the JSON"

# ---- An OTF2 archive is a run: the profile of the trace it was converted from ----
if [ -x "$CONVERT" ]; then
	# count_events (locks, create/join, 4 threads) and slow_region (recursion, start
	# routines), by the anchor file and by the directory holding it.
	for t in count extra; do
		"$CONVERT" -q "$WORK/$t.trace" -o "$WORK/$t.otf2" || fail "trace2otf2 $t: exit status $?"
		report_status 0 --json -o "$WORK/$t-otf2.json" "$WORK/$t.otf2/traces.otf2"
		$CHK same "$WORK/$t.json" "$WORK/$t-otf2.json" || fail "$t: the archive's profile differs"
		report_status 0 --json -o "$WORK/$t-otf2dir.json" "$WORK/$t.otf2"
		$CHK same "$WORK/$t.json" "$WORK/$t-otf2dir.json" ||
			fail "$t: the archive's directory profiles differently"
	done
	$SCHEMA "$WORK/extra-otf2.json" || fail "an archive's JSON schema"
	# The samplers' metric locations and --core-view's CPUs are not threads of the program.
	"$CONVERT" -q --core-view "$WORK/extra.trace" -o "$WORK/cores.otf2" ||
		fail "trace2otf2 --core-view: exit status $?"
	report_status 0 --json -o "$WORK/cores.json" "$WORK/cores.otf2"
	$CHK same "$WORK/extra.json" "$WORK/cores.json" || fail "--core-view: CPUs profiled as threads"
	report_status 0 "$WORK/extra.otf2/traces.otf2"
	grep -q 'clock unknown' "$WORK/out" || fail "an archive's table does not say the clock is unknown"
	# Either side of --compare.
	report_status 0 --compare "$WORK/extra.otf2/traces.otf2" "$WORK/extra.trace"
	grep -q '^Verdict: OK' "$WORK/out" || fail "archive against its trace: no OK verdict"
	report_status 0 --compare "$WORK/extra.trace,$WORK/extra.json" "$WORK/extra.otf2"
	# Losses travel as markers.
	"$CONVERT" -q "$WORK/lost.trace" -o "$WORK/lost.otf2" || fail "trace2otf2 lost: exit status $?"
	report_status 0 --json -o "$WORK/lost-otf2.json" "$WORK/lost.otf2/traces.otf2"
	grep -q 'WARNING.*12345 events were lost' "$WORK/err" || fail "archive: lost events not said"
	"$REPORT" --json -q -o "$WORK/lost.json" "$WORK/lost.trace" || fail "lost.trace: exit status $?"
	$CHK same "$WORK/lost.json" "$WORK/lost-otf2.json" || fail "lost: the archive's profile differs"
	# A damaged archive: exit 3, naming the file, never a crash.
	cp -a "$WORK/count.otf2" "$WORK/cut.otf2"
	head -c 40 "$WORK/count.otf2/traces.otf2" >"$WORK/cut.otf2/traces.otf2"
	report_status 3 --json "$WORK/cut.otf2/traces.otf2"
	grep -q 'cut.otf2/traces.otf2: ' "$WORK/err" || fail "a cut anchor file: $(cat "$WORK/err")"
	rm -rf "$WORK/cut.otf2" && cp -a "$WORK/count.otf2" "$WORK/cut.otf2"
	evt=$(ls "$WORK"/cut.otf2/traces/*.evt | head -1)
	head -c $(($(stat -c %s "$evt") / 2)) "$WORK/count.otf2/traces/${evt##*/}" >"$evt"
	report_status 3 --compare "$WORK/cut.otf2" "$WORK/count.trace"
	grep -q 'cut.otf2/traces.otf2: .*events' "$WORK/err" || fail "a cut event file: $(cat "$WORK/err")"
	rm "$WORK/cut.otf2/traces.def"
	report_status 3 "$WORK/cut.otf2"
	grep -q 'cut.otf2/traces.otf2: .*definitions' "$WORK/err" ||
		fail "no definitions: $(cat "$WORK/err")"
else
	echo "SKIP: trace2otf2 was not built: no archive is compared with its trace"
fi
# Garbage named *.otf2 is a damaged archive (or, without OTF2, one that cannot be read).
head -c 3000 /dev/urandom >"$WORK/garbage.otf2"
report_status 3 "$WORK/garbage.otf2"
grep -q 'garbage.otf2: ' "$WORK/err" || fail "a garbage archive: $(cat "$WORK/err")"

# ---- Compare ----
# A trace with itself: nothing changed.
report_status 0 --compare "$WORK/extra.trace" "$WORK/extra.trace"
grep -q '^Verdict: OK' "$WORK/out" || fail "self-compare: no OK verdict"
# Five runs of each, interleaved so that a change of load on the machine hits both
# sides: the default knob (base, same) and compute slowed twofold (slow).  Five: the rank
# test, Holm-corrected over the regions tested, cannot find anything with 3 against 3.
for i in 1 2 3 4 5; do
	traced "$WORK/base$i.trace" "$SLOW" || fail "slow_region failed"
	traced "$WORK/same$i.trace" "$SLOW" || fail "slow_region failed"
	traced "$WORK/slow$i.trace" "$SLOW" 2 || fail "slow_region 2 failed"
done
list() { echo "$WORK/$1"{1,2,3,4,5}.trace | tr ' ' ,; }
BASE=$(list base)
SAME=$(list same)
SLOWED=$(list slow)
# Nothing changed: the thresholds are wide enough that load on a shared machine (a region
# of 100 us taking 250 us in one run) never reads as a regression, while compute's 48 ms
# more below is caught with the defaults.
QUIET="--threshold 30% --min-diff 5ms"
report_status 0 --compare $QUIET "$BASE" "$SAME"
report_status 0 --compare $QUIET --json -o "$WORK/same.json" "$BASE" "$SAME"
$SCHEMA "$WORK/same.json" || fail "comparison JSON schema"
$CHK compare "$WORK/same.json" --verdict ok --status unchanged=compute --status unchanged=io ||
	fail "5 runs against 5 of the same program"
report_status 1 --compare "$BASE" "$SLOWED"
grep -q '^Verdict: REGRESSION.* compute +' "$WORK/out" || fail "the verdict does not name compute"
report_status 1 --compare --json -o "$WORK/slow.json" "$BASE" "$SLOWED"
$CHK compare "$WORK/slow.json" --verdict regression --status regressed=compute ||
	fail "compute slowed twofold"
# io did not change: with the wider thresholds, compute alone is found.
report_status 1 --compare $QUIET "$BASE" "$SLOWED"
sed -n '/^Regressions/,/^$/p' "$WORK/out" | grep -qw io && fail "io is listed as a regression"
report_status 1 --compare $QUIET --json -o "$WORK/slow-quiet.json" "$BASE" "$SLOWED"
$CHK compare "$WORK/slow-quiet.json" --status regressed=compute --status unchanged=io ||
	fail "io did not change"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
c=[r for r in d["regions"] if r["name"]=="compute"][0]
assert d["min_diff"] == 1000000 and d["threshold"] == 0.05, d["min_diff"]
assert d["noise_test"] and 1.8 < c["ratio"] < 2.2 and c["p_adjusted"] <= 0.05, c
assert c["ci_low"] > 0.5 and c["ci_high"] < 1.5 and c["ci_low"] <= c["ratio"] - 1 <= c["ci_high"], c
assert len(c["baseline_values"]) == 5 and len(c["candidate_values"]) == 5, c' "$WORK/slow.json" ||
	fail "compute's numbers"
# 5 runs against 5 cannot reach p <= 0.001 (their smallest p is 1/252): said, in the text
# and the JSON.
report_status 0 --compare --alpha 0.001 "$BASE" "$SLOWED"
grep -q 'with 5 runs against 5 the rank test cannot reach p <= ' "$WORK/out" ||
	fail "--alpha 0.001 with 5 runs against 5: no note"
report_status 0 --compare --alpha 0.001 --json "$BASE" "$SLOWED"
grep -q 'cannot reach p <= ' "$WORK/out" || fail "--alpha 0.001: no note in the JSON"
report_status 1 --compare --alpha 0.05 "$BASE" "$SLOWED"
grep -q 'cannot reach' "$WORK/out" && fail "--alpha 0.05: a note that the test cannot find anything"
# Medians of 2 runs are halves, written exactly (not 7.47456e+07).
report_status 1 --compare --json "$WORK/base1.trace,$WORK/base2.trace" \
	"$WORK/slow1.trace,$WORK/slow2.trace"
python3 -c 'import json,sys; text=open(sys.argv[1]).read(); d=json.loads(text)
assert "e+" not in text and "E+" not in text, "a number in exponent notation"
for r in d["regions"]:
    for side in ("baseline", "candidate"):
        v = r[side + "_values"]
        assert all(isinstance(x, int) for x in v), r
        assert r[side + "_median"] * 2 == sum(v), r
    assert r["diff"] == r["candidate_median"] - r["baseline_median"], r' "$WORK/out" ||
	fail "medians of 2 runs are not exact"
# Exclusive time and calls are metrics too: compute's calls did not change.
report_status 1 --compare --metric exclusive "$BASE" "$SLOWED"
report_status 0 --compare --metric calls "$BASE" "$SLOWED"
# A baseline saved as one JSON profile of 5 runs, against 5 new trace directories.
report_status 0 --json -o "$WORK/baseline.json" $(echo "$BASE" | tr , ' ')
$SCHEMA "$WORK/baseline.json" || fail "baseline JSON schema"
report_status 0 --compare $QUIET "$WORK/baseline.json" "$SAME"
grep -q 'Baseline: 5 runs' "$WORK/out" || fail "the baseline's 5 runs are not named"
report_status 1 --compare $QUIET --json -o "$WORK/slow2.json" "$WORK/baseline.json" "$SLOWED"
$CHK compare "$WORK/slow2.json" --status regressed=compute --status unchanged=io ||
	fail "saved baseline against the slowed runs"
# A region only in the candidate appeared, never a reason to refuse (and the reverse).
# Only appearance matters: the calls per run, which load does not change.
report_status 0 --compare --metric calls --json -o "$WORK/appeared.json" "$WORK/base1.trace" \
	"$WORK/extra.trace"
$CHK compare "$WORK/appeared.json" --status appeared=extra || fail "extra did not appear"
report_status 0 --compare --metric calls "$WORK/base1.trace" "$WORK/extra.trace"
sed -n '/^Appeared/,/^$/p' "$WORK/out" | grep -qw extra || fail "the text does not list extra"
report_status 0 --compare --metric calls --json -o "$WORK/vanished.json" "$WORK/extra.trace" \
	"$WORK/base1.trace"
$CHK compare "$WORK/vanished.json" --status vanished=extra || fail "extra did not vanish"
# A start routine whose line moved in its file is one region; one in another file is not.
sed 's/"work @slow_region\.c:\([0-9]*\)"/"work @slow_region.c:9\1"/' "$WORK/baseline.json" \
	>"$WORK/moved.json"
sed 's/"work @slow_region\.c:\([0-9]*\)"/"work @other.c:\1"/' "$WORK/baseline.json" \
	>"$WORK/renamed.json"
grep -q '"work @slow_region.c:9' "$WORK/moved.json" || fail "no start routine work in the profile"
report_status 0 --compare $QUIET --json -o "$WORK/moved-cmp.json" "$WORK/baseline.json" \
	"$WORK/moved.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
w=[r for r in d["regions"] if r["name"].startswith("work @")]
assert len(w) == 1 and w[0]["status"] == "unchanged" and w[0]["candidate_name"].startswith(
    "work @slow_region.c:9"), w' "$WORK/moved-cmp.json" || fail "a moved line is not one region"
report_status 0 --compare $QUIET --json -o "$WORK/renamed-cmp.json" "$WORK/baseline.json" \
	"$WORK/renamed.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
w={r["name"].split(":")[0]: r for r in d["regions"] if r["name"].startswith("work @")}
assert w["work @slow_region.c"]["status"] == "vanished", w
assert w["work @other.c"]["status"] == "appeared", w
assert not any("candidate_name" in r for r in w.values()), w' "$WORK/renamed-cmp.json" ||
	fail "a start routine of another file matched"
# Another program: not comparable, unless forced.
report_status 2 --compare "$WORK/base1.trace" "$WORK/count.trace"
grep -q 'NOT COMPARABLE' "$WORK/out" || fail "not comparable: no verdict"
report_status 2 --compare --json "$BASE" "$WORK/count.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["verdict"] == "not comparable"' \
	"$WORK/out" || fail "not comparable: JSON verdict"
# A saved profile's run is named by the file and by the trace it was made of: the trace
# path reused for another program reads apart.
cp -a "$WORK/base1.trace" "$WORK/sb.trace"
report_status 0 --json -o "$WORK/sb.json" "$WORK/sb.trace"
rm -rf "$WORK/sb.trace" && cp -a "$WORK/count.trace" "$WORK/sb.trace"
report_status 2 --compare "$WORK/sb.json" "$WORK/sb.trace"
grep -qF "NOT COMPARABLE - $WORK/sb.json#0 ($WORK/sb.trace) ran slow_region, $WORK/sb.trace ran count_events" \
	"$WORK/out" || fail "a saved profile's run is not named by its file: $(cat "$WORK/out")"
"$REPORT" --compare --force "$WORK/base1.trace" "$WORK/count.trace" >/dev/null 2>&1
[ $? -lt 2 ] || fail "--force did not compare"

# ---- The gate's statistics: false alarms and power on synthetic profiles ----
/usr/bin/python3 "$SRC/tests/e2e/compare_stats.py" "$REPORT" "$WORK/baseline.json" "$WORK" ||
	fail "compare: false alarms or power (compare_stats.py)"

# ---- A suite: 3 programs x 5 runs a side, one region of one program 2x slower ----
# The knob is in the environment: runs pair by program and arguments.  slow_region's main
# thread does the work itself (0 threads): with exclusive time, compute alone changes (with
# threads, the main thread's pthread_join would wait longer too).
mkdir -p "$WORK/suite-base" "$WORK/suite-new"
for i in 1 2 3 4 5; do
	for side in base new; do
		f=1
		[ $side = new ] && f=2
		SLOW_REGION_FACTOR=$f traced "$WORK/suite-$side/slow.$i" "$SLOW" 1 0 ||
			fail "slow_region failed"
		traced "$WORK/suite-$side/count.$i" "$TESTBIN/count_events" 2 500 >/dev/null ||
			fail "count_events failed"
		traced "$WORK/suite-$side/deep.$i" "$TESTBIN/deep_regions" 2000 ||
			fail "deep_regions failed"
	done
done
report_status 1 --compare $QUIET --metric exclusive --junit "$WORK/suite.xml" --markdown "$WORK/suite.md" \
	"$WORK/suite-base" "$WORK/suite-new"
grep -q '^Verdict: REGRESSION - 1 of 3 programs slower: slow_region 1 0 (compute +' "$WORK/out" ||
	fail "suite: the verdict does not name slow_region's compute: $(grep Verdict "$WORK/out")"
report_status 1 --compare $QUIET --metric exclusive --json -o "$WORK/suite.json" "$WORK/suite-base" "$WORK/suite-new"
python3 - "$WORK/suite.json" "$WORK/suite.xml" "$WORK/suite.md" <<'PY' || fail "suite outputs"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
assert d["schema"] == "libtrace-compare-suite/1" and d["exit_status"] == 1, d["schema"]
progs = {" ".join([p["baseline"]["runs"][0]["program"]] + p["baseline"]["runs"][0]["arguments"]): p
         for p in d["programs"]}
assert sorted(progs) == ["count_events 2 500", "deep_regions 2000", "slow_region 1 0"], sorted(progs)
for name, p in progs.items():
    assert len(p["baseline"]["runs"]) == 5 and len(p["candidate"]["runs"]) == 5, name
    bad = [r["name"] for r in p["regions"] if r["status"] == "regressed"]
    assert bad == (["compute"] if name.startswith("slow_region") else []), (name, bad)
    assert p["verdict"] == ("regression" if bad else "ok"), name
# JUnit: one failing case, slow_region's compute; the others pass.
root = ET.parse(sys.argv[2]).getroot()
assert root.tag == "testsuites" and root.get("failures") == "1", root.attrib
cases = [(s.get("name"), c.get("name"), c.find("failure") is not None)
         for s in root.findall("testsuite") for c in s.findall("testcase")]
failed = [(s, c) for s, c, f in cases if f]
assert failed == [("slow_region 1 0", "user compute")], cases
assert len(cases) == 3, cases
# Markdown: the table of programs and the regression with its confidence interval.
md = open(sys.argv[3]).read()
assert md.startswith("## Performance: regression"), md[:80]
assert "| slow\\_region 1 0 | 5 vs 5 | 1 |" in md, md
rows = [l for l in md.splitlines() if l.startswith("| slow\\_region 1 0 | compute |")]
assert len(rows) == 1 and "[+" in rows[0], rows
print("suite: slow_region's compute regressed alone; JUnit and Markdown agree")
PY
# The same suite against itself: nothing.
report_status 0 --compare $QUIET "$WORK/suite-base" "$WORK/suite-base"

# ---- Errors: exit 3, naming the file and what is wrong ----
report_status 3 --compare "$WORK/nothing-here" "$BASE"
grep -q 'nothing-here' "$WORK/err" || fail "a missing directory is not named"
report_status 3 "$WORK/nothing-here"
head -c 700 "$WORK/baseline.json" >"$WORK/cut.json"
report_status 3 --compare "$WORK/cut.json" "$SAME"
grep -q 'cut.json: not valid JSON: line [0-9]*, column [0-9]*' "$WORK/err" ||
	fail "a cut JSON: $(cat "$WORK/err")"
sed 's/"calls": /"calls": -/' "$WORK/baseline.json" >"$WORK/negative.json"
report_status 3 --compare "$WORK/negative.json" "$SAME"
grep -q 'negative.json: runs\[0\]\.regions\[0\]: "calls" must be a non-negative integer' \
	"$WORK/err" || fail "a negative count: $(cat "$WORK/err")"
sed 's/libtrace-profile\/1/libtrace-profile\/2/' "$WORK/baseline.json" >"$WORK/v2.json"
report_status 3 --compare "$WORK/v2.json" "$SAME"
grep -q 'not supported' "$WORK/err" || fail "another schema version: $(cat "$WORK/err")"
printf '{"schema": "libtrace-profile/1", "runs": [], }' >"$WORK/comma.json"
report_status 3 "$WORK/comma.json"
grep -q 'trailing comma' "$WORK/err" || fail "a trailing comma: $(cat "$WORK/err")"
report_status 3 --compare "$WORK/same.json" "$SAME"
grep -q 'not a profile' "$WORK/err" || fail "a comparison taken for a profile: $(cat "$WORK/err")"
report_status 3 --compare --threshold lots "$BASE" "$SAME"
report_status 3 --compare --metric calls --min-diff 5ms "$BASE" "$SAME"
report_status 3 --compare "$BASE"
report_status 3 --bogus "$BASE"
[ "$(wc -l <"$WORK/err")" -eq 2 ] && grep -q "^try 'trace-report --help'" "$WORK/err" ||
	fail "a usage error: $(cat "$WORK/err")"
# An empty element of a list is an error that names it, never skipped.
report_status 3 --compare "$WORK/base1.trace," "$WORK/base2.trace"
grep -q 'element 2 of the list is empty' "$WORK/err" || fail "a trailing comma: $(cat "$WORK/err")"
report_status 3 --compare "$WORK/base1.trace" ",$WORK/base2.trace"
grep -q 'element 1 of the list is empty' "$WORK/err" || fail "a leading comma: $(cat "$WORK/err")"
report_status 3 -o /nonexistent/dir/x.json --json "$WORK/count.trace"
echo ok
