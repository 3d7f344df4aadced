#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""compare_stats.py - the false-alarm rate and the power of trace-report --compare, on
synthetic saved profiles.

    compare_stats.py TRACE_REPORT TEMPLATE.json WORKDIR

TEMPLATE: a profile trace-report saved (its first run gives the metadata).  For each of 20
fixed seeds, two sides of 10 runs of a program with 20 regions (inclusive times from 2 to 80
ms), each run's time drawn with 12 % log-normal noise: identical sides, then the same with
one region 40 % slower.  A method whose family-wise error is 5 % flags identical sides in 2
or fewer of 20 seeds 92 % of the time; this asks for at most 2, and for the slower region
found (and no other) in at least 18 of 20.  Exits 1 with the counts when either fails.
"""
import copy
import json
import math
import os
import random
import subprocess
import sys

REGIONS, RUNS, NOISE, SEEDS, SLOWER = 20, 10, 0.12, 20, 1.4


def side(template, rng, base_ms, slow_index, tag):
    runs = []
    for k in range(RUNS):
        run = copy.deepcopy(template)
        run["trace"] = "%s.%d" % (tag, k)
        regions = []
        for i, ms in enumerate(base_ms):
            t = ms * 1e6 * math.exp(rng.gauss(0, NOISE))
            if i == slow_index:
                t *= SLOWER
            ns = int(t)
            regions.append({"name": "region%02d" % i, "kind": "function", "role": "function",
                            "calls": 1, "inclusive_ns": ns, "exclusive_ns": ns, "min_ns": ns,
                            "mean_ns": ns, "max_ns": ns, "threads": 1, "thread_min_ns": ns,
                            "thread_mean_ns": ns, "thread_max_ns": ns, "imbalance": 1,
                            "max_thread": template["regions"][0]["max_thread"]})
        run["regions"] = regions
        runs.append(run)
    return runs


def compare(tool, doc, rng_seed, slow_index, work):
    rng = random.Random(rng_seed)
    base_ms = [2 + 78 * rng.random() for _ in range(REGIONS)]
    files = []
    for tag, slow in (("base", None), ("cand", slow_index)):
        d = dict(doc)
        d["runs"] = side(doc["runs"][0], rng, base_ms, slow, tag)
        path = os.path.join(work, "%s-%d.json" % (tag, rng_seed))
        with open(path, "w") as f:
            json.dump(d, f)
        files.append(path)
    r = subprocess.run([tool, "--compare", "--json"] + files, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("compare_stats: %s exited %d: %s" % (tool, r.returncode, r.stderr))
    out = json.loads(r.stdout)
    regressed = [x["name"] for x in out["regions"] if x["status"] == "regressed"]
    if (r.returncode == 1) != bool(regressed):
        sys.exit("compare_stats: exit status %d with regressions %s" % (r.returncode, regressed))
    return regressed


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    tool, template, work = argv[1:]
    doc = json.load(open(template))
    false_alarms, found, wrong = 0, 0, 0
    for seed in range(1, SEEDS + 1):
        if compare(tool, doc, seed, None, work):
            false_alarms += 1
        slow = seed % REGIONS
        got = compare(tool, doc, 1000 + seed, slow, work)
        if got == ["region%02d" % slow]:
            found += 1
        elif any(g != "region%02d" % slow for g in got):
            wrong += 1
    print("compare_stats: identical sides flagged in %d of %d seeds; one region %d%% slower "
          "found alone in %d of %d (another region flagged in %d)" % (
              false_alarms, SEEDS, round((SLOWER - 1) * 100), found, SEEDS, wrong))
    if false_alarms > 2 or found < 18:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
