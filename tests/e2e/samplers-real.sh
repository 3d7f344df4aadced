#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The samplers on this machine's own hardware sources: RAPL energy (powercap or perf's power
# events), temperatures (hwmon, thermal zones) and memory per NUMA node (two nodes or more).
# Each part runs where the machine has the source and says why it skips otherwise; the test
# skips (77) only when no part could run.  The same samplers on a fake tree: samplers.sh.
. "$(dirname "$0")/lib.sh"
need_converter
PY=/usr/bin/python3
ran=0

T=$WORK/real.trace
traced "$T" "$TESTBIN/steady" 1 100 1 >/dev/null || fail "steady under the samplers: exit status $?"
rm -rf "$WORK/real.otf2"
"$CONVERT" -q "$T" -o "$WORK/real.otf2" || fail "trace2otf2: exit status $?"
otf2-print --silent -Werror "$WORK/real.otf2/traces.otf2" >"$WORK/otf2-print.log" 2>&1 || {
	head "$WORK/otf2-print.log" >&2
	fail "otf2-print -Werror rejects the archive"
}
$PY - "$WORK/real.otf2/traces.otf2" >"$WORK/metrics.txt" <<'EOF' || fail "reading the archive"
import sys, otf2
vals = {}
with otf2.reader.open(sys.argv[1]) as tr:
    for loc, ev in tr.events:
        if isinstance(ev, otf2.events.Metric):
            vals.setdefault(ev.metric.members[0].name, []).append(ev.values[0])
for name, v in sorted(vals.items()):
    print("%s\t%d\t%r\t%r" % (name, len(v), v[0], v[-1]))
EOF
off() { # the meta file's reason why sampler $1 is off
	sed -n "s/^sampler_off $1 //p" "$T"/*/meta | head -1 | sed 's/\\x20/ /g'
}

# Energy.
if ls /sys/class/powercap/intel-rapl:*/energy_uj >/dev/null 2>&1 || [ -e /sys/bus/event_source/devices/power ]; then
	if grep -q '^RAPL' "$WORK/metrics.txt"; then
		awk -F'\t' '/^RAPL/ && ($2 < 50 || $4 < $3) {bad=1} END {exit bad}' "$WORK/metrics.txt" ||
			fail "RAPL totals: $(grep '^RAPL' "$WORK/metrics.txt")"
		echo "energy: $(grep -c '^RAPL' "$WORK/metrics.txt") RAPL domains sampled"
		ran=1
	else
		why=$(off energy)
		[ -n "$why" ] || fail "RAPL is here, no energy metric and no reason why"
		echo "SKIP (energy): the sampler says: $why"
	fi
else
	echo "SKIP (energy): no /sys/class/powercap/intel-rapl:* and no perf power PMU on this machine"
	[ -n "$(off energy)" ] || fail "no RAPL here, and the sampler did not say so"
fi

# Temperatures.
if ls /sys/class/hwmon/hwmon*/temp*_input /sys/class/thermal/thermal_zone*/temp >/dev/null 2>&1; then
	[ "$(awk -F'\t' '$2 >= 50 && $3 > -50 && $3 < 150' "$WORK/metrics.txt" | grep -vc '^RAPL\|^Resident\|^Memory\|^CPU\|^NUMA\|^steady')" -gt 0 ] ||
		fail "temperature sensors here, no plausible temperature metric: $(cat "$WORK/metrics.txt")"
	echo "temperature: sampled"
	ran=1
else
	echo "SKIP (temperature): no hwmon temp*_input and no thermal zone on this machine"
	[ -n "$(off temperature)" ] || fail "no sensor here, and the sampler did not say so"
fi

# Memory per NUMA node.
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -ge 2 ]; then
	[ "$(grep -c '^Memory on NUMA node' "$WORK/metrics.txt")" -eq "$nodes" ] ||
		fail "$nodes NUMA nodes, metrics: $(grep '^Memory' "$WORK/metrics.txt")"
	awk -F'\t' '/^Memory on NUMA node/ {s += $4} /^Resident/ {r = $4} END {exit !(s > 0 && s < 4 * r + 100000000)}' \
		"$WORK/metrics.txt" || fail "memory per node does not add up: $(cat "$WORK/metrics.txt")"
	echo "memory per node: $nodes nodes sampled"
	ran=1
else
	echo "SKIP (memory per NUMA node): this machine has $nodes NUMA node(s); the fake tree of samplers.sh covers it"
	[ -n "$(off memory-per-node)" ] || fail "one node, and the sampler did not say why it does not sample per node"
fi

[ $ran = 1 ] || skip "no RAPL, no temperature sensor, one NUMA node on this machine (see above)"
echo "samplers-real: ok"
