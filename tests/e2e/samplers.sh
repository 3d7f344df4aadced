#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The sampler thread (LIBTRACE_SAMPLERS) on a fake tree under LIBTRACE_SYSFS_ROOT with known
# values: two RAPL zones (the package's counter wraps at max_energy_range_uj mid-run), a
# hwmon sensor that disappears mid-run, a thermal zone, two NUMA nodes with numa_maps and
# statm.  The converted archive (python3-otf2) and the Paraver trace hold exactly those
# values.  Then the real /proc sources (resident set, each thread's CPU), and a thread that
# moves itself from CPU 0 to CPU 1: its CPU changes inside the region around the call.  The
# RAPL perf path reads a real kernel counter named in a fake power PMU.
# RAPL, temperatures and NUMA nodes of the machine itself: tests/e2e/samplers-real.sh.
. "$(dirname "$0")/lib.sh"
need_converter
PRVCHECK="python3 $SRC/tests/e2e/check_prv.py"
PY=/usr/bin/python3

# ---- the fake tree ----
R=$WORK/root
put() {
	mkdir -p "$(dirname "$R/$1")"
	printf '%s\n' "$2" >"$R/$1"
}
put sys/class/powercap/intel-rapl:0/name package-0
put sys/class/powercap/intel-rapl:0/energy_uj 999000
put sys/class/powercap/intel-rapl:0/max_energy_range_uj 1000000
put sys/class/powercap/intel-rapl:0:0/name dram
put sys/class/powercap/intel-rapl:0:0/energy_uj 5000
put sys/class/powercap/intel-rapl:0:0/max_energy_range_uj 262143328850
put sys/class/hwmon/hwmon0/name coretemp
put sys/class/hwmon/hwmon0/temp1_input 45000
put sys/class/hwmon/hwmon0/temp1_label "Package id 0"
put sys/class/thermal/thermal_zone0/type x86_pkg_temp
put sys/class/thermal/thermal_zone0/temp 52500
put sys/devices/system/node/node0/cpulist 0
put sys/devices/system/node/node1/cpulist 1-3
put proc/self/statm "1000 250 10 5 0 100 0"
# node 0: 3 + 4 pages of 4 KiB = 28672 B; node 1: 6 pages of 4 KiB + 1 of 2 MiB = 2121728 B
printf '%s\n' "00400000 default file=/bin/x mapped=3 N0=3 kernelpagesize_kB=4" \
	"7f0000000000 default anon=10 dirty=10 N0=4 N1=6 kernelpagesize_kB=4" \
	"7f1000000000 default huge anon=1 dirty=1 N1=1 kernelpagesize_kB=2048" >"$R/proc/self/numa_maps"
ln -s /proc/self/task "$R/proc/self/task" # the cpu sampler's threads are real ones

# steady runs 2 s; once the samplers' first readings are in (the live trace shows them),
# the package counter wraps (999000 -> 2000: +3000 uJ), the DRAM one gains exactly 1 J, and
# the hwmon sensor goes away.  (A fixed delay here lost the race on a loaded machine.)
T=$WORK/fake.trace
LIBTRACE_SYSFS_ROOT=$R traced "$T" "$TESTBIN/steady" 2 100 2 >/dev/null &
pid=$!
for _ in $(seq 300); do
	"$DUMP" --sampler "$T" 2>/dev/null >"$WORK/live.dump" || true
	grep -q 'METRIC "RAPL package-0 dram"' "$WORK/live.dump" &&
		grep -q 'METRIC "coretemp Package id 0"' "$WORK/live.dump" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
grep -q 'METRIC "coretemp Package id 0"' "$WORK/live.dump" ||
	fail "no first readings of the samplers while the program ran"
printf '2000\n' >"$R/sys/class/powercap/intel-rapl:0/energy_uj"
printf '1005000\n' >"$R/sys/class/powercap/intel-rapl:0:0/energy_uj"
rm "$R/sys/class/hwmon/hwmon0/temp1_input"
wait $pid || fail "steady under the samplers: exit status $?"
grep -q '^sampler [0-9]' "$T"/*/meta || fail "no sampler line in the meta file"
grep -q '^sampler_off temperature .*stopped\\x20answering' "$T"/*/meta ||
	fail "the sensor that disappeared was not reported"

rm -rf "$WORK/fake.otf2"
"$CONVERT" "$T" -o "$WORK/fake.otf2" 2>"$WORK/convert.err" || {
	cat "$WORK/convert.err" >&2
	fail "trace2otf2: exit status $?"
}
grep -q 'trace2otf2: sampler temperature: sensor coretemp Package id 0 .* stopped answering' \
	"$WORK/convert.err" || fail "trace2otf2 did not tell why a sensor stopped"
otf2-print --silent -Werror "$WORK/fake.otf2/traces.otf2" >"$WORK/otf2-print.log" 2>&1 || {
	head "$WORK/otf2-print.log" >&2
	fail "otf2-print -Werror rejects the archive"
}
$PY - "$WORK/fake.otf2/traces.otf2" <<'EOF' || fail "fake-tree values in the OTF2 archive"
import sys, otf2
vals, locs, modes = {}, {}, {}
with otf2.reader.open(sys.argv[1]) as tr:
    for m in tr.definitions.metric_members:
        modes[m.name] = (str(m.metric_mode), m.unit)
    for loc, ev in tr.events:
        if isinstance(ev, otf2.events.Metric):
            name = ev.metric.members[0].name
            vals.setdefault(name, []).append((ev.time, ev.values[0]))
            locs.setdefault(name, set()).add((loc.name, str(loc.type)))
def check(cond, what):
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        sys.exit(1)
want = {"RAPL package-0": "J", "RAPL package-0 dram": "J", "coretemp Package id 0": "C",
        "x86_pkg_temp (thermal_zone0)": "C", "Resident set size": "B",
        "Memory on NUMA node 0": "B", "Memory on NUMA node 1": "B"}
for name, unit in want.items():
    check(name in vals, "metric %r missing (have %s)" % (name, sorted(vals)))
    check(modes[name][1] == unit, "%s: unit %r" % (name, modes[name][1]))
    check(all("METRIC" in t for _, t in locs[name]), "%s not on a METRIC location: %s" % (name, locs[name]))
for name in ("RAPL package-0", "RAPL package-0 dram"):
    check("ACCUMULATED_START" in modes[name][0], "%s: mode %s" % (name, modes[name][0]))
    v = [x for _, x in vals[name]]
    check(all(b >= a for a, b in zip(v, v[1:])), "%s: the running total decreases" % name)
check(abs(vals["RAPL package-0"][-1][1] - 0.003) < 1e-9,
      "package energy after the wrap: %r J, want 0.003" % vals["RAPL package-0"][-1][1])
check(abs(vals["RAPL package-0 dram"][-1][1] - 1.0) < 1e-9,
      "DRAM energy: %r J, want 1.0" % vals["RAPL package-0 dram"][-1][1])
check(all(x == 45.0 for _, x in vals["coretemp Package id 0"]), "hwmon values")
check(all(x == 52.5 for _, x in vals["x86_pkg_temp (thermal_zone0)"]), "thermal zone values")
hw, tz = vals["coretemp Package id 0"], vals["x86_pkg_temp (thermal_zone0)"]
check(len(tz) >= 30, "thermal zone: only %d samples in 1 s at 10 ms" % len(tz))
check(len(hw) < len(tz) - 10 and hw[-1][0] < tz[-1][0],
      "the removed sensor kept being sampled (%d vs %d samples)" % (len(hw), len(tz)))
check(all(x == 1024000 for _, x in vals["Resident set size"]), "RSS: 250 pages of 4 KiB")
check(all(x == 28672 for _, x in vals["Memory on NUMA node 0"]), "memory on node 0")
check(all(x == 2121728 for _, x in vals["Memory on NUMA node 1"]), "memory on node 1")
check("CPU" in vals and "NUMA node" in vals, "no CPU / NUMA node metrics on the threads")
check(all("CPU_THREAD" in t for _, t in locs["CPU"]), "CPU metric not on the threads")
cpus = set(x for _, x in vals["CPU"])
nodes = set(x for _, x in vals["NUMA node"])
check(nodes <= {0 if c == 0 else 1 for c in cpus}, "NUMA nodes %s of CPUs %s" % (nodes, cpus))
print("fake tree: %d metrics, %d thermal samples, %d hwmon samples before it vanished"
      % (len(vals), len(tz), len(hw)))
EOF

rm -f "$WORK/fake.prv" "$WORK/fake.pcf" "$WORK/fake.row"
"$CONVERT" -q -f paraver "$T" -o "$WORK/fake" || fail "trace2otf2 -f paraver: exit status $?"
$PRVCHECK "$WORK/fake.prv" >"$WORK/prv.log" 2>&1 || {
	tail "$WORK/prv.log" >&2
	fail "check_prv rejects the Paraver trace"
}
for label in "RAPL package-0 \[1/1000 J\]" "Resident set size \[B\]" "Memory on NUMA node 1 \[B\]" \
	"x86_pkg_temp (thermal_zone0) \[1/1000 C\]"; do
	grep -q "^7 *6400[0-9]* *$label" "$WORK/fake.pcf" || fail "no Paraver event type for $label"
done
# The DRAM total at the end: 1 J, as 1000 thousandths.
type=$(sed -n 's/^7 *\(6400[0-9]*\) *RAPL package-0 dram .*/\1/p' "$WORK/fake.pcf")
grep -q ":$type:1000$" "$WORK/fake.prv" || grep -q ":$type:1000:" "$WORK/fake.prv" ||
	fail "Paraver: no DRAM energy of 1000 mJ (type $type)"
echo "paraver: $(tail -1 "$WORK/prv.log")"

# ---- real /proc sources, and a migration ----
if [ "$(nproc)" -lt 2 ]; then
	echo "SKIP (migration): this machine has one CPU"
else
	T=$WORK/migrate.trace
	traced "$T" "$TESTBIN/migrate" 30 >"$WORK/migrate.out" || fail "migrate: exit status $? ($(cat "$WORK/migrate.out"))"
	rm -rf "$WORK/migrate.otf2"
	"$CONVERT" -q --core-view "$T" -o "$WORK/migrate.otf2" || fail "trace2otf2 --core-view: exit status $?"
	otf2-print --silent -Werror "$WORK/migrate.otf2/traces.otf2" >"$WORK/otf2-print.log" 2>&1 || {
		head "$WORK/otf2-print.log" >&2
		fail "otf2-print -Werror rejects the --core-view archive"
	}
	$PY - "$WORK/migrate.otf2/traces.otf2" <<'EOF' || fail "the migration in the OTF2 archive"
import sys, otf2
cpu, regions, rss, cores = {}, {}, [], {}
with otf2.reader.open(sys.argv[1]) as tr:
    for loc, ev in tr.events:
        if isinstance(ev, otf2.events.Metric):
            n = ev.metric.members[0].name
            if n == "CPU":
                cpu.setdefault(loc.name, []).append((ev.time, ev.values[0]))
            elif n == "Resident set size":
                rss.append(ev.values[0])
        elif isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
            if loc.name.startswith("CPU "):
                cores.setdefault(loc.name, set()).add(ev.region.name)
            elif ev.region.name in ("move", "move-pthread"):
                regions.setdefault((loc.name, ev.region.name), []).append(ev.time)
def check(cond, what):
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        sys.exit(1)
check(len(regions) == 2, "move regions: %s" % regions)
for (thread, name), (enter, leave) in regions.items():
    seq = cpu.get(thread, [])
    before = [v for t, v in seq if t <= enter]
    check(before and before[-1] == 0, "%s: CPU before %s is %s, want 0" % (thread, name, before[-1:]))
    to1 = [t for t, v in seq if v == 1 and t > enter]
    check(to1 and to1[0] <= leave,
          "%s: the move to CPU 1 is not inside %s [%d, %d]: %s" % (thread, name, enter, leave, seq))
    print("%s: CPU 0 -> 1 at %d, inside %s [%d, %d]" % (thread, to1[0], name, enter, leave))
check(rss and min(rss) > 100000, "real resident set size: %s" % rss[:3])
check("CPU 0" in cores and "CPU 1" in cores, "--core-view locations: %s" % sorted(cores))
check(any("Master thread" in r for r in cores["CPU 0"]) and any("Master thread" in r for r in cores["CPU 1"]),
      "--core-view: the main thread on CPU 0 and CPU 1: %s" % cores)
print("core view: %s" % {k: sorted(v) for k, v in cores.items()})
EOF
fi

# ---- RAPL through perf's power PMU (where energy_uj is root-only) ----
# No power PMU here: a fake tree names the software PMU (type 1) and its cpu-clock event
# (config 0, ns) with a scale of 1e-9 in its place, so the perf path opens, reads and scales a
# real CPU-wide kernel counter: "RAPL package 0" then counts CPU 0's clock in seconds,
# about the run's wall time, rising.
P=$WORK/perfroot
mkdir -p "$P/sys/bus/event_source/devices/power/events"
printf '1\n' >"$P/sys/bus/event_source/devices/power/type"
printf '0\n' >"$P/sys/bus/event_source/devices/power/cpumask"
printf 'event=0x00\n' >"$P/sys/bus/event_source/devices/power/events/energy-pkg"
printf '1e-09\n' >"$P/sys/bus/event_source/devices/power/events/energy-pkg.scale"
T=$WORK/perf.trace
LIBTRACE_SAMPLERS=energy LIBTRACE_SYSFS_ROOT=$P traced "$T" "$TESTBIN/steady" 1 10 1 >/dev/null ||
	fail "steady with the perf energy source"
if grep -q '^sampler_off energy' "$T"/*/meta; then
	echo "perf path not tested: $(grep '^sampler_off energy' "$T"/*/meta) (needs root or perf_event_paranoid <= 0)"
else
	rm -rf "$WORK/perf.otf2"
	"$CONVERT" -q "$T" -o "$WORK/perf.otf2" || fail "trace2otf2 (perf energy)"
	otf2-print "$WORK/perf.otf2/traces.otf2" | sed -n 's/.*"RAPL package 0" <[0-9]*>; DOUBLE; \([0-9.e+-]*\)).*/\1/p' >"$WORK/perf.vals"
	python3 - "$WORK/perf.vals" <<'PY' || fail "RAPL through perf"
import sys
v = [float(x) for x in open(sys.argv[1])]
assert len(v) >= 20, 'only %d readings of RAPL package 0 in 1 s at 10 ms' % len(v)
assert v == sorted(v), 'the running total decreased: %s' % v
assert 0.5 <= v[-1] <= 1.5, 'total %.3f "J" (CPU 0 clock seconds), want about 1' % v[-1]
print('RAPL through perf (cpu-clock standing in): %d readings, rising to %.3f' % (len(v), v[-1]))
PY
fi

# ---- when the sampler thread starts ----
# proc_pid TRACE: the pid of the traced process whose directory appears first in TRACE (its
# name is HOST.PID), once its meta file is there; empty after 15 s.
proc_pid() {
	local m
	for _ in $(seq 300); do
		m=$(ls "$1"/*/meta 2>/dev/null | head -1)
		[ -n "$m" ] && break
		sleep 0.05
	done
	[ -n "$m" ] || return 0
	m=${m%/meta}
	echo "${m##*.}"
}
# A single-threaded process that records little stays single-threaded: no sampler thread,
# and, since it lived longer than a period, a note that says why it has no samples.
T=$WORK/single.trace
traced "$T" sleep 1.5 &
job=$!
pid=$(proc_pid "$T")
sleep 0.2 # 20 sample periods past the start: a sampler started at once would be there
tasks=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
wait $job || fail "sleep under the tracer: exit status $?"
[ -n "$pid" ] || fail "the traced sleep made no trace"
[ "$tasks" != 0 ] || fail "the traced sleep had ended before its threads were counted"
[ "$tasks" = 1 ] || fail "a traced sleep had $tasks threads, want 1 (no sampler thread)"
! grep -q '^sampler [0-9]' "$T"/*/meta || fail "a single-threaded sleep started the sampler"
grep -q '^sampler_off all not\\x20started:' "$T"/*/meta ||
	fail "no note that the sampler was not started: $(grep sampler "$T"/*/meta)"
"$CONVERT" "$T" -o "$WORK/single.otf2" 2>"$WORK/single.err" || fail "trace2otf2 (single)"
grep -q 'sampler all: not started: the process stayed single-threaded' "$WORK/single.err" ||
	fail "trace2otf2 does not say why there are no samples: $(cat "$WORK/single.err")"
# Samples asked for (LIBTRACE_SAMPLE_PERIOD set, LIBTRACE_SAMPLER_START left at auto) are
# taken in a single-threaded process too: before, it had none, and only a note said why.
T=$WORK/asked.trace
LIBTRACE_SAMPLE_PERIOD=10ms traced "$T" sleep 0.2 || fail "sleep, a sample period set"
grep -q '^sampler [0-9]' "$T"/*/meta || fail "LIBTRACE_SAMPLE_PERIOD=10ms started no sampler"
"$DUMP" --sampler "$T" | grep -q 'METRIC "Resident set size"' ||
	fail "LIBTRACE_SAMPLE_PERIOD=10ms: no memory samples of a single-threaded sleep"
T=$WORK/asked2.trace
LIBTRACE_SAMPLERS=memory traced "$T" sleep 0.2 || fail "sleep, samplers set"
"$DUMP" --sampler "$T" | grep -q 'METRIC "Resident set size"' ||
	fail "LIBTRACE_SAMPLERS=memory: no memory samples of a single-threaded sleep"
# LIBTRACE_SAMPLER_START=now samples it all the same.
T=$WORK/now.trace
LIBTRACE_SAMPLER_START=now traced "$T" sleep 0.2 || fail "sleep, sampler started now"
grep -q '^sampler [0-9]' "$T"/*/meta || fail "LIBTRACE_SAMPLER_START=now started no sampler"
"$DUMP" --sampler "$T" | grep -q 'METRIC "Resident set size"' ||
	fail "LIBTRACE_SAMPLER_START=now: no memory samples of a single-threaded sleep"
# A single-threaded process whose trace fills a chunk starts the writer, and the writer the
# sampler (8 KiB chunks; 20,000 markers are 320 KB of records).
T=$WORK/filling.trace
LIBTRACE_BUFFER_SIZE=64K traced "$T" "$TESTBIN/mark_then" 20000 wait >"$WORK/filling.out" &
job=$!
pid=$(proc_pid "$T")
for _ in $(seq 300); do
	grep -q '^ready' "$WORK/filling.out" && grep -q '^sampler [0-9]' "$T"/*/meta && break
	sleep 0.05
done
[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null
wait $job # killed by SIGTERM, as asked
grep -q '^ready' "$WORK/filling.out" || fail "mark_then 20000 wait did not get ready"
grep -q '^sampler [0-9]' "$T"/*/meta || fail "a single thread that filled chunks started no sampler"
! grep -q '^sampler_off all' "$T"/*/meta || fail "a sampler_off all line beside a started sampler"
# A single-threaded process that forks right after its trace filled a chunk forks with one
# thread: the writer, joined before the fork, may have started the sampler, which steps
# aside too (procs fork: see procs.c).

# ---- off switches ----
T=$WORK/off.trace
LIBTRACE_SAMPLE_PERIOD=0 traced "$T" "$TESTBIN/steady" 1 10 0 >/dev/null || fail "steady, samplers off"
! grep -q '^sampler ' "$T"/*/meta || fail "LIBTRACE_SAMPLE_PERIOD=0 still started a sampler thread"
T=$WORK/none.trace
# (one second: a process shorter than a sample period has no samples and no sampler_off)
LIBTRACE_SYSFS_ROOT=$WORK/empty traced "$T" "$TESTBIN/steady" 1 10 1 >/dev/null || fail "steady, empty root"
for s in energy temperature memory cpu; do
	grep -q "^sampler_off $s " "$T"/*/meta || fail "no sampler_off line for $s under an empty root"
done
echo "samplers: ok"
