#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 --format=chrome: the Trace Event JSON of a pthread, an OpenMP, an MPI, a Kokkos
# and a GPU trace (viewer_traces.sh), each checked by check_chrome.py against the OTF2
# archive of the same trace (per thread the same regions, names and times to the
# nanosecond; begins and ends nesting, ends never going back; metadata; flows paired
# and inside their slices): thread creation flows for pthreads, fork flows for OpenMP,
# message flows for MPI, call-to-device flows for the GPU.  Then --min-duration and
# --from/--to leave out and cut exactly what the archive says they should, and the options
# are refused with other formats and with bad values.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/viewer_traces.sh"
need_converter
CHROME="/usr/bin/python3 $SRC/tests/e2e/check_chrome.py"
viewer_traces "$WORK"

declare -A flows=([pthread]="--expect-flows thread=4" [omp]="--expect-flows fork=2"
	[mpi]="--expect-flows message=10" [kokkos]="" [gpu]="--expect-flows gpu=3")
for t in $VIEWER_TRACES; do
	"$CONVERT" -q -f chrome "$WORK/$t" -o "$WORK/$t.json" || fail "$t: trace2otf2 -f chrome: $?"
	"$CONVERT" -q "$WORK/$t" -o "$WORK/$t.otf2" || fail "$t: trace2otf2: $?"
	# shellcheck disable=SC2086
	$CHROME "$WORK/$t.json" --otf2 "$WORK/$t.otf2/traces.otf2" ${flows[$t]} >"$WORK/check.log" 2>&1 || {
		tail -20 "$WORK/check.log" >&2
		fail "check_chrome $t"
	}
	tail -1 "$WORK/check.log" | grep -q '^check_chrome: ok$' || fail "$t: check_chrome printed no verdict"
	echo "$t: $(grep -c . "$WORK/check.log") lines, $(grep '^flows:' "$WORK/check.log")"
done

# Kokkos: kernels and deep copies carry their attributes.
if [[ " $VIEWER_TRACES " == *" kokkos "* ]]; then
	/usr/bin/python3 - "$WORK/kokkos.json" <<'PY' || fail "kokkos attributes"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
# Regions: their ends, and those of no duration (instant events that are no markers).
x = [e for e in ev if e["ph"] == "E" or (e["ph"] == "i" and e["cat"] != "marker")]
axpy = [e for e in x if e["name"] == "axpy"]
copies = [e for e in x if e["name"].startswith("Kokkos::deep_copy")]
assert len(axpy) == 6 and all(e["args"].get("device") == "Serial" for e in axpy), axpy[:1]
real = [e for e in copies if e["args"]["src_view"] != e["args"]["dst_view"]]
assert real and all(e["args"]["bytes"] > 0 for e in real), copies[:1]
# A host mirror of a host view is the view: that copy moves nothing.
same = [e for e in copies if e["args"]["src_view"] == e["args"]["dst_view"]]
assert len(same) == 1 and same[0]["args"]["bytes"] == 0, same
alloc = [e for e in x if e["args"].get("role") == "allocate" and e["args"].get("view") == "x"]
assert len(alloc) == 1 and alloc[0]["args"]["bytes"] == 8000, alloc
# Markers, also those that come after their thread ended (memory Kokkos kept past finalize).
marks = sorted(e["args"]["category"] for e in ev if e["ph"] == "i" and e["cat"] == "marker")
assert marks == ["Kokkos profile event"] * 2 + ["Kokkos runtime memory kept past finalize"], marks
print("kokkos: axpy x6 on Serial, %d deep copies with bytes, View x allocated 8000 bytes, "
      "the 3 markers" % len(copies))
PY
fi
# MPI: ranks are named, calls carry peer, tag and bytes.
if [[ " $VIEWER_TRACES " == *" mpi "* ]]; then
	/usr/bin/python3 - "$WORK/mpi.json" <<'PY' || fail "mpi attributes"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name")
assert names == ["MPI Rank %d" % i for i in range(4)], names
sends = [e for e in ev if e["ph"] == "E" and e["name"] == "MPI_Send"]
assert sends and all({"peer", "tag", "bytes"} <= set(e["args"]) for e in sends), sends[:1]
print("mpi: ranks named, %d MPI_Send with peer, tag and bytes" % len(sends))
PY
fi

# trace-report reads the MPI archive (its messages counted as the location's events) without a
# warning, to the trace's profile.
if [[ " $VIEWER_TRACES " == *" mpi "* ]]; then
	"$BUILD/trace-report" --json -o "$WORK/mpi-archive.json" "$WORK/mpi.otf2" 2>"$WORK/err" ||
		fail "trace-report on the MPI archive: $?"
	[ ! -s "$WORK/err" ] || fail "trace-report on the MPI archive: $(head -3 "$WORK/err")"
	"$BUILD/trace-report" -q --json -o "$WORK/mpi-trace.json" "$WORK/mpi" || fail "trace-report on the MPI trace"
	/usr/bin/python3 - "$WORK/mpi-trace.json" "$WORK/mpi-archive.json" <<'PY' || fail "the MPI archive's profile"
import json, sys
a, b = (json.load(open(p))["runs"][0] for p in sys.argv[1:3])
key = lambda r: sorted((x["name"], x["calls"], x["inclusive_ns"]) for x in r["regions"])
assert a["totals"] == b["totals"] and key(a) == key(b), (a["totals"], b["totals"])
print("mpi: trace-report reads the archive quietly, the trace's profile")
PY
fi

# Thinning: --min-duration and a window, against the archive's truth.
t=pthread
"$CONVERT" -q -f chrome --min-duration 20us "$WORK/$t" -o "$WORK/short.json" || fail "--min-duration: $?"
$CHROME "$WORK/short.json" --otf2 "$WORK/$t.otf2/traces.otf2" --min-duration 20000 >"$WORK/check.log" 2>&1 ||
	{ tail "$WORK/check.log" >&2; fail "check_chrome --min-duration"; }
# A region's end ("E"), or the instant event of one of no duration (a marker is none).
regions() { grep -E '"ph":"(E|i)"' "$1" | grep -vc '"cat":"marker"'; }
all=$(regions "$WORK/$t.json")
short=$(regions "$WORK/short.json")
dropped=$(grep -o '"left_out_short":[0-9]*' "$WORK/short.json" | cut -d: -f2)
[ "$short" -lt "$all" ] && [ $((short + dropped)) = "$all" ] ||
	fail "--min-duration 20us: $short kept + $dropped left out != $all"
echo "--min-duration 20us: $short of $all regions kept, $dropped counted as left out"
"$CONVERT" -q -f chrome --from 2ms --to 4.5ms "$WORK/$t" -o "$WORK/window.json" || fail "--from/--to: $?"
$CHROME "$WORK/window.json" --otf2 "$WORK/$t.otf2/traces.otf2" --window 2000000 4500000 >"$WORK/check.log" 2>&1 ||
	{ tail "$WORK/check.log" >&2; fail "check_chrome --from/--to"; }
win=$(regions "$WORK/window.json")
[ "$win" -gt 0 ] && [ "$win" -lt "$all" ] || fail "--from 2ms --to 4.5ms kept $win of $all regions"
echo "--from 2ms --to 4.5ms: $win of $all regions, cut to the window"

# Refusals.
"$CONVERT" -q --min-duration 1ms "$WORK/$t" -o "$WORK/x.otf2" 2>"$WORK/err" && fail "--min-duration with otf2 accepted"
grep -q 'is for --format=chrome' "$WORK/err" || fail "--min-duration with otf2: $(cat "$WORK/err")"
"$CONVERT" -q -f chrome --from 5 "$WORK/$t" -o "$WORK/x" 2>"$WORK/err" && fail "--from 5 accepted"
grep -q 'expected a duration' "$WORK/err" || fail "--from 5: $(cat "$WORK/err")"
"$CONVERT" -q -f chrome --from 5ms --to 1ms "$WORK/$t" -o "$WORK/x" 2>"$WORK/err" && fail "--to before --from accepted"
grep -q 'must come after' "$WORK/err" || fail "--to before --from: $(cat "$WORK/err")"
[ ! -e "$WORK/x.json" ] || fail "a refused conversion left x.json"
echo "chrome: ok"
