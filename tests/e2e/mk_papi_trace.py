#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mk_papi_trace.py OUT - writes a trace directory of two processes whose PAPI readings
come before metrics the converter meets later: a process reads two PAPI events at the
enter and leave of a region, and in between a counter of the annotation API and a sampled
metric appear for the first time; a second process reads another PAPI set.  From format.h
alone, with mk_gpu_trace.py's writer: e2e.papi-classes."""
import os, sys

from mk_gpu_trace import esc, rec, write_process

BEGIN, END, ENTER, LEAVE, COUNTER, METRIC, COUNTERS = 2, 3, 9, 10, 12, 31, 34
INT64 = 0
SAMPLER = 0xfffffff0


def process(out, pid, papi, counter, T0):
    strings = {}

    def sid(text):
        return strings.setdefault(text, len(strings) + 1)

    n = len(papi)
    mask = (1 << n) - 1
    main = [rec(T0 + 1000, BEGIN, 0, 0, [0, 0xffffffff << 32 | pid])]
    for k in range(3):  # three regions, readings growing
        at = T0 + 10000 * (k + 1)
        main.append(rec(at, COUNTERS, mask, 0, [100 * (k + 1) * (i + 1) for i in range(n)]))
        main.append(rec(at, ENTER, 0, sid("solve")))
        main.append(rec(at + 2000, COUNTER, INT64, sid(counter), [k + 7]))
        main.append(rec(at + 5000, COUNTERS, mask, 0, [150 * (k + 1) * (i + 1) for i in range(n)]))
        main.append(rec(at + 5000, LEAVE, 0, sid("solve")))
    main.append(rec(T0 + 50000, END, 0, 0))
    sampler = [rec(T0 + 25000, METRIC, INT64, 1, [4096 * 1024]),
               rec(T0 + 35000, METRIC, INT64, 1, [8192 * 1024])]
    meta = ["libtrace-meta 1.5", "pid %d" % pid, "ppid 1", "host papihost",
            "exe /usr/bin/solver", "arg /usr/bin/solver", "clock monotonic",
            "clock_hz 1000000000", "sync %d %d %d" % (T0, T0, 1_700_000_000_000_000_000),
            "sampler %d" % SAMPLER, "metric 1 process absolute B memory\\x20resident"]
    meta += ["papi %d %s" % (i, name) for i, name in enumerate(papi)]
    meta += ["papi_modules user"]
    meta += ["string %d %s" % (i, esc(s)) for s, i in strings.items()]
    meta += ["end %d exit" % (T0 + 60000)]
    write_process(os.path.join(out, "papihost.%d" % pid), pid, meta,
                  {0: (pid, main), SAMPLER: (pid + 1, sampler)})


def main():
    out = sys.argv[1]
    process(out, 5151, ["PAPI_TOT_INS", "PAPI_TOT_CYC"], "iterations", 5_000_000_000)
    process(out, 5252, ["PAPI_L1_DCM"], "residual", 5_000_100_000)


if __name__ == "__main__":
    main()
