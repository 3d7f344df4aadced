#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-report --html: the page of a pthread, an OpenMP, an MPI and a Kokkos trace (and a
# GPU one) opened in headless Chromium (html_check.py): no console error, not blank, the
# timeline drawn, the profile table showing trace-report's regions, calls and times (as its
# table formats them), the call tree's heaviest root first, memory's high-water marks, and
# the MPI matrix holding every message the Trace Event JSON has a flow for.  The page is one
# file that needs nothing else: no http, no src= or href= out of it.  Screenshots go to
# LIBTRACE_TEST_ARTIFACTS when set, for people to look at.  Skips without Chromium or
# python3-websocket.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/viewer_traces.sh"
REPORT=$BUILD/trace-report
[ -x "$REPORT" ] || skip "trace-report was not built"
command -v chromium >/dev/null || skip "chromium missing (apt-get install chromium)"
/usr/bin/python3 -c 'import websocket' 2>/dev/null || skip "python3-websocket missing (apt-get install python3-websocket)"
viewer_traces "$WORK"
mkdir -p "$WORK/shots"
for t in $VIEWER_TRACES; do
	"$REPORT" -q --html -o "$WORK/$t.html" "$WORK/$t" || fail "$t: trace-report --html: $?"
	"$REPORT" -q --json -o "$WORK/$t.prof.json" "$WORK/$t" || fail "$t: trace-report --json: $?"
	! grep -Eq '(src|href)=|https?://' "$WORK/$t.html" || fail "$t: the page refers to something outside it"
	extra=()
	case $t in
	kokkos | gpu) extra=(--memory) ;;
	mpi)
		"$BUILD/trace2otf2" -q -f chrome "$WORK/$t" -o "$WORK/$t.json" || fail "mpi: trace2otf2 -f chrome"
		n=$(grep -c '"ph":"s",.*"cat":"message"' "$WORK/$t.json")
		extra=(--messages "$n")
		;;
	esac
	/usr/bin/python3 "$SRC/tests/e2e/html_check.py" "$WORK/$t.html" "$WORK/$t.prof.json" \
		"$WORK/shots/$t-report.png" "${extra[@]}" || fail "$t: html_check"
done
if [ -n "${LIBTRACE_TEST_ARTIFACTS:-}" ]; then
	mkdir -p "$LIBTRACE_TEST_ARTIFACTS" && cp "$WORK"/shots/*.png "$LIBTRACE_TEST_ARTIFACTS"/
fi
# Refusals.
"$REPORT" --html --json "$WORK/pthread" >/dev/null 2>"$WORK/err" && fail "--html --json accepted"
grep -q 'choose one' "$WORK/err" || fail "--html --json: $(cat "$WORK/err")"
echo "report-html: ok"
