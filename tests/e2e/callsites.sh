#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Call sites: the pthread, OpenMP and process calls of tests/programs/callsites.c resolve, in
# the OTF2 archive, to the lines that made them (found by their CS_* markers); depth 0 records none;
# depth 4 adds the callers (a CallingContext chain through outer() and main()); a frame
# named as a recorded call stays a function, apart from the call's region.
. "$(dirname "$0")/lib.sh"
CONVERT=$BUILD/trace2otf2
[ -x "$CONVERT" ] || skip "trace2otf2 was not built"
command -v otf2-print >/dev/null || skip "otf2-print missing (apt-get install otf2-tools)"
prog=$SRC/tests/programs/callsites.c
gcc -g -O1 -fno-omit-frame-pointer -fopenmp "$prog" -o "$WORK/callsites" -lpthread ||
	skip "cannot build callsites.c with gcc -fopenmp"
line() { grep -n "CS_$1\b" "$prog" | cut -d: -f1; }

# run DEPTH: traces, converts, prints the archive's events and definitions.
run() {
	rm -rf "$WORK/t$1" "$WORK/a$1"
	LIBTRACE_CALLSITE_DEPTH=$1 traced "$WORK/t$1" "$WORK/callsites" >/dev/null ||
		fail "depth $1: the program failed"
	"$CONVERT" -q "$WORK/t$1" -o "$WORK/a$1" 2>/dev/null || fail "depth $1: trace2otf2 failed"
	otf2-print -Werror "$WORK/a$1/traces.otf2" >"$WORK/ev$1" 2>&1 ||
		fail "depth $1: otf2-print -Werror rejects the archive"
	otf2-print -G "$WORK/a$1/traces.otf2" >"$WORK/def$1" 2>&1
}

# site DEPTH REGION: the CallSite attribute ("file:line") of the first Enter of REGION.
site() {
	grep -A1 "^ENTER .*Region: \"$2\"" "$WORK/ev$1" | head -2 |
		sed -n 's/.*"CallSite" <[0-9]*>; SOURCE_CODE_LOCATION; "\([^"]*\)".*/\1/p'
}

run 1
for c in "pthread_mutex_lock LOCK" "pthread_mutex_unlock UNLOCK" '!$omp barrier BARRIER' \
	"fork FORK" "dlopen DLOPEN" "dlclose DLCLOSE"; do
	region=${c% *} marker=${c##* }
	want="callsites.c:$(line "$marker")"
	got=$(site 1 "$region")
	[[ $got == */$want ]] || fail "depth 1: $region called from '$got', expected $want"
	echo "depth 1: $region at ${got##*/}"
done
! grep -q '"CallPath"' "$WORK/ev1" || fail "depth 1: a call path"

run 0
! grep -q '"CallSite"' "$WORK/ev0" || fail "depth 0: call sites recorded"
echo "depth 0: no call sites"

run 4
[[ $(site 4 pthread_mutex_lock) == */callsites.c:$(line LOCK) ]] || fail "depth 4: lock site"
for m in OUTER MAIN; do
	grep -q "^CALLING_CONTEXT .*callsites.c:$(line $m)\"" "$WORK/def4" ||
		fail "depth 4: no calling context at callsites.c:$(line $m)"
done
grep -A1 "^ENTER .*Region: \"pthread_mutex_lock\"" "$WORK/ev4" | grep -q '"CallPath"' ||
	fail "depth 4: the lock has no call path"
echo "depth 4: lock_it <- outer (line $(line OUTER)) <- main (line $(line MAIN))"

# Paraver: the callers of pthread_mutex_lock (61000000 value 8) and of the OpenMP barrier
# (60000005), by depth, resolved through the .pcf's value labels.
"$CONVERT" -q -f paraver "$WORK/t4" -o "$WORK/p4" 2>/dev/null || fail "paraver: trace2otf2 failed"
python3 "$SRC/tests/e2e/check_prv.py" "$WORK/p4.prv" >/dev/null || fail "paraver: check_prv"
python3 - "$WORK/p4" "$(line LOCK)" "$(line OUTER)" "$(line MAIN)" "$(line BARRIER)" <<'PY' ||
import re, sys
name, lock, outer, main, barrier = sys.argv[1], *sys.argv[2:]
labels, cur = {}, None
for line in open(name + '.pcf'):
    m = re.match(r'0\s+(\d+)\s', line)
    if m:
        cur = int(m.group(1))
        labels[cur] = {}
    m = re.match(r'(\d+)\s+(.*)', line)
    if m and cur is not None and not line.startswith('0 '):
        labels[cur][int(m.group(1))] = m.group(2).strip()
def callers(pairs):
    return {t: labels[t][v] for t, v in pairs.items() if 70000000 < t < 90000000}
want = {
    (61000000, 8): {70000001: 'lock_it', 80000001: lock + ' (callsites.c)',
                    70000002: 'outer', 80000002: outer + ' (callsites.c)',
                    70000003: 'main', 80000003: main + ' (callsites.c)'},
    (60000005, 1): {70000001: 'main._omp_fn.0', 80000001: barrier + ' (callsites.c)'},  # Extrae's Begin
}
found = {}
for line in open(name + '.prv'):
    f = line.split(':')
    if f[0] != '2':
        continue
    pairs = {int(f[i]): int(f[i + 1]) for i in range(6, len(f) - 1, 2)}
    for (t, v), w in want.items():
        if pairs.get(t) == v and (t, v) not in found:
            found[(t, v)] = callers(pairs)
for key, w in want.items():
    got = found.get(key)
    assert got is not None, 'no event %d:%d' % key
    for t, label in w.items():
        assert got.get(t) == label, 'event %d:%d: caller %d is %r, expected %r' % (*key, t, got.get(t), label)
    print('paraver: %d:%d called from %s' % (*key, got[80000001]))
PY
	fail "paraver: caller events"

# A frame named as a recorded call (frame_named_call.c's own static pthread_create, met in a
# call path before the real call): a function region of its own; the real call keeps its
# pthread region and, in Paraver, Extrae's pthread_create event (61000000 value 2).
gcc -g -O1 -fno-omit-frame-pointer "$SRC/tests/programs/frame_named_call.c" -o "$WORK/fnc" \
	-ldl || fail "cannot build frame_named_call.c"
LIBTRACE_CALLSITE_DEPTH=2 traced "$WORK/tf" "$WORK/fnc" || fail "frame_named_call failed"
"$CONVERT" -q "$WORK/tf" -o "$WORK/af" 2>/dev/null || fail "frame named as a call: otf2 failed"
otf2-print -G "$WORK/af/traces.otf2" >"$WORK/deff"
grep -q '^REGION .*Name: "pthread_create".*Role: FUNCTION, Paradigm: USER' "$WORK/deff" ||
	fail "frame named as a call: no function region pthread_create"
grep -q '^REGION .*Name: "pthread_create".*Role: THREAD_CREATE, Paradigm: "POSIX threads"' \
	"$WORK/deff" || fail "frame named as a call: the call lost its pthread region"
"$CONVERT" -q -f paraver "$WORK/tf" -o "$WORK/pf" 2>/dev/null || fail "frame named: paraver failed"
grep -Eq ':61000000:2(:|$)' "$WORK/pf.prv" ||
	fail "frame named as a call: no pthread_create event in the .prv"
echo "frame named as a call: a function region beside the pthread call's"
echo ok
