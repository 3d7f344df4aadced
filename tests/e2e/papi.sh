#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PAPI counters with the kernel's software events: per thread, at region enter and leave,
# monotonic, the task clock consistent with the thread's CPU time (a spinning thread counts
# about its wall time, a sleeping one about nothing); an event this machine cannot count
# and a made-up one are each named once, and the run goes on with the others.
. "$(dirname "$0")/lib.sh"
CONVERT=$BUILD/trace2otf2
grep -q 'libpapi.so' "$LIB" || skip "libtrace.so was built without the counters module (LIBTRACE_WITH_PAPI=OFF)"
ls /usr/lib/*/libpapi.so* >/dev/null 2>&1 || skip "libpapi is not installed (apt-get install libpapi7.0)"
cat >"$WORK/spin.c" <<'C'
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <libtrace/annotate.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *spin(void *a) { (void)a; for (int i = 0; i < 10; i++) { ltr_region_begin("spin"); double e = now() + 0.01; while (now() < e) ; ltr_region_end("spin"); } return 0; }
static void *nap(void *a) { (void)a; for (int i = 0; i < 10; i++) { ltr_region_begin("nap"); usleep(10000); ltr_region_end("nap"); } return 0; }
int main(void) { pthread_t a, b; pthread_create(&a, 0, spin, 0); pthread_create(&b, 0, nap, 0); pthread_join(a, 0); pthread_join(b, 0); return 0; }
C
gcc -O1 -I"$SRC/include" "$WORK/spin.c" -o "$WORK/spin" -L"$BUILD" -ltrace-annotate -lpthread \
	-Wl,-rpath,"$BUILD" || fail "cannot build the test program"
LIBTRACE_PAPI_EVENTS=perf::TASK-CLOCK,PAPI_TOT_INS,perf::CONTEXT-SWITCHES,LIBTRACE_NO_SUCH_EVENT \
	traced "$WORK/t" "$WORK/spin" 2>"$WORK/err" || fail "the traced program failed"
cat "$WORK/err"
grep -q "papi 0 perf::TASK-CLOCK" "$WORK"/t/*/meta ||
	skip "PAPI cannot count perf::TASK-CLOCK here: $(head -3 "$WORK/err")"
[ "$(grep -c 'LIBTRACE_NO_SUCH_EVENT' "$WORK/err")" = 1 ] || fail "no single message for the made-up event"
grep -q "papi 1 perf::CONTEXT-SWITCHES" "$WORK"/t/*/meta || fail "CONTEXT-SWITCHES left out"
if ! grep -q "papi . PAPI_TOT_INS" "$WORK"/t/*/meta; then
	[ "$(grep -c 'PAPI_TOT_INS' "$WORK/err")" = 1 ] || fail "PAPI_TOT_INS left out without one message"
fi
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed"
python3 - "$WORK/dump" <<'PY' || fail "readings"
import collections, re, sys
vals = collections.defaultdict(list)   # thread -> [(region, task-clock ns, region)]
pending = {}
for line in open(sys.argv[1]):
    f = line.split()
    th = f[1]
    if f[3] == 'COUNTERS':
        pending[th] = int(re.search(r'perf::TASK-CLOCK=(\d+)', line).group(1))
    elif f[3] in ('REGION_ENTER', 'REGION_LEAVE'):
        assert th in pending, 'a region boundary without a reading: ' + line
        vals[th].append((f[3], f[4], pending.pop(th)))
for th, v in vals.items():
    clocks = [c for _, _, c in v]
    assert clocks == sorted(clocks), 'thread %s: not monotonic' % th
    name = v[0][1]
    inside = sum(v[i + 1][2] - v[i][2] for i in range(0, len(v) - 1, 2)) / 1e6
    print('thread %s %s: %d readings, task clock inside the regions %.1f ms' % (th, name, len(v), inside))
    if name == '"spin"':
        # its CPU time: about its 100 ms of wall time, less when a loaded machine preempts it
        assert 40 <= inside <= 130, 'a spinning thread (10 x 10 ms) counted %.1f ms' % inside
    else:
        assert inside <= 10, 'a sleeping thread counted %.1f ms' % inside
assert len(vals) == 2, 'readings of %d threads' % len(vals)
PY
if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null; then
	"$CONVERT" -q "$WORK/t" -o "$WORK/a" 2>/dev/null || fail "trace2otf2 failed"
	otf2-print -Werror "$WORK/a/traces.otf2" >"$WORK/ev" 2>&1 || fail "otf2-print -Werror rejects the archive"
	otf2-print -G "$WORK/a/traces.otf2" | grep -q '^METRIC_CLASS .*SYNCHRONOUS.*perf::TASK-CLOCK' ||
		fail "no synchronous PAPI metric class"
	grep -q '^METRIC .*"perf::TASK-CLOCK"' "$WORK/ev" || fail "no PAPI Metric events"
	echo "OTF2: synchronous metric class, Metric events"
	# Paraver: Extrae's convention, each counter a delta since the thread's previous reading
	# (44000000 + hash for native events), so the deltas of a thread add up to its last reading.
	"$CONVERT" -q -f paraver "$WORK/t" -o "$WORK/p" 2>/dev/null || fail "paraver: trace2otf2 failed"
	python3 "$SRC/tests/e2e/check_prv.py" "$WORK/p.prv" >/dev/null || fail "paraver: check_prv"
	python3 - "$WORK/p" "$WORK/dump" <<'PY' || fail "paraver: counter deltas"
import collections, re, sys
name, dump = sys.argv[1:]
ty = None
for line in open(name + '.pcf'):
    m = re.match(r'7\s+(4[24]\d{6})\s+perf::TASK-CLOCK ', line)
    if m:
        ty = m.group(1)
assert ty, 'no .pcf type for perf::TASK-CLOCK'
sums = collections.Counter()
for line in open(name + '.prv'):
    f = line.rstrip().split(':')
    if f[0] == '2':
        for i in range(6, len(f) - 1, 2):
            if f[i] == ty:
                assert int(f[i + 1]) >= 0, 'a negative delta: ' + line
                sums[':'.join(f[2:5])] += int(f[i + 1])  # appl:task:thread (not the CPU it ran on)
last = {}
for line in open(dump):
    m = re.search(r'perf::TASK-CLOCK=(\d+)', line)
    if m:
        last[line.split()[1]] = int(m.group(1))
assert sorted(sums.values()) == sorted(last.values()), (sorted(sums.values()), sorted(last.values()))
print('paraver: type %s, per-thread sums of deltas %s equal the last readings' % (ty, sorted(sums.values())))
PY
	# A preset (no PMU here to count one): the same trace with event 0 said to be
	# PAPI_TOT_INS's code 0x80000032 gets Extrae's type 42000050, which IPC views use.
	cp -r "$WORK/t" "$WORK/tp"
	sed -i 's/^papi_code 0 .*/papi_code 0 0x80000032/' "$WORK"/tp/*/meta
	"$CONVERT" -q -f paraver "$WORK/tp" -o "$WORK/pp" 2>/dev/null || fail "paraver: preset"
	grep -q '^7 *42000050 *perf::TASK-CLOCK ' "$WORK/pp.pcf" && grep -q ':42000050:' "$WORK/pp.prv" ||
		fail "paraver: a preset's code does not give type 42000000 + (code & 0xffff)"
	echo "paraver: preset code 0x80000032 -> type 42000050"
fi
echo ok
