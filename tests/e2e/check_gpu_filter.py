#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The name filters over GPU calls, checked against an unfiltered run of the same program.

    check_gpu_filter.py ALL_DUMP FILTERED_DUMP FILTERED_TRACE EXCLUDE INCLUDE

ALL_DUMP and FILTERED_DUMP are trace-dump's output of two runs of one program, without
and with LIBTRACE_EXCLUDE=EXCLUDE and LIBTRACE_INCLUDE=INCLUDE (comma-separated globs, ""
for none), only the GPU module on.  The rules, as the settings table gives them: the
exclude globs, then the include globs, the last that matches decides; with include globs,
a name no rule matches is left out.  A call goes by its function's name, a launch by its
kernel's when that is known.  Checked, thread by thread (the threads' call sequences as a
multiset, their indices aside):
 - the filtered run's calls are the unfiltered run's calls that the rules keep, in order,
   each with its LEAVE;
 - each thread's `dropped THREAD 1 COUNT` line in the meta file counts the calls left out;
 - the device's kernel runs (GPU_ACTIVITY kernel) are those of the kernels kept.
"""
import collections
import fnmatch
import glob
import re
import sys


def rules(exclude, include):
    r = [(g, False) for g in exclude.split(",") if g]
    r += [(g, True) for g in include.split(",") if g]
    default_in = not any(keep for _, keep in r)
    def kept(name):
        verdict = default_in
        for g, keep in r:
            if fnmatch.fnmatchcase(name, g):
                verdict = keep
        return verdict
    return kept


def calls(dump):
    """thread -> [(name the filter sees, call, op, kernel)], kernel runs, open calls."""
    seq = collections.defaultdict(list)
    runs = collections.Counter()
    depth = collections.Counter()
    for line in open(dump, errors="replace"):
        f = line.split()
        if len(f) < 6:
            continue
        th = int(f[1])
        if f[3] == "GPU_ENTER":
            call = f[6].strip('"')
            m = re.search(r' kernel="([^"]*)"', line)
            kernel = m.group(1) if m else None
            seq[th].append((kernel or call, call, f[5], kernel))
            depth[th] += 1
        elif f[3] == "GPU_LEAVE":
            depth[th] -= 1
        elif f[3] == "GPU_ACTIVITY" and f[4] == "kernel":
            runs[f[5].strip('"')] += 1
    return seq, runs, {th: d for th, d in depth.items() if d}


def main():
    all_dump, filt_dump, trace, exclude, include = sys.argv[1:6]
    kept = rules(exclude, include)
    all_seq, all_runs, all_open = calls(all_dump)
    got_seq, got_runs, got_open = calls(filt_dump)
    problems = []
    if all_open or got_open:
        problems.append("calls without their LEAVE: %s %s" % (all_open, got_open))
    dropped = collections.Counter()
    for meta in glob.glob(trace + "/*/meta"):
        for line in open(meta, errors="replace"):
            w = line.split()
            if w[:1] == ["dropped"] and w[2] == "1":
                dropped[int(w[1])] += int(w[3])
    want = sorted(tuple(c for c in s if kept(c[0])) for s in all_seq.values())
    left_out = sorted(sum(1 for c in s if not kept(c[0])) for s in all_seq.values())
    got = sorted(tuple(s) for s in got_seq.values() if s)
    want_nonempty = [s for s in want if s]
    if got != want_nonempty:
        problems.append("the calls recorded are not those the rules keep:\n  want %s\n  got  %s"
                        % (want_nonempty, got))
    # Threads are matched by what they did: the counts as a multiset, zeros included.
    counts = sorted(dropped.values()) + [0] * (len(all_seq) - len(dropped))
    if sorted(counts) != left_out:
        problems.append("dropped counts %s, the calls left out %s" % (sorted(counts), left_out))
    want_runs = collections.Counter({k: n for k, n in all_runs.items() if kept(k)})
    if got_runs != want_runs:
        problems.append("kernel runs %s, expected %s" % (dict(got_runs), dict(want_runs)))
    if not sum(left_out) or not any(want):
        problems.append("the rules keep all or nothing of %d calls: nothing is tested"
                        % sum(len(s) for s in all_seq.values()))
    if problems:
        sys.exit("\n".join(problems))
    total = sum(len(s) for s in all_seq.values())
    print("%d of %d calls kept, %d counted as left out, %d kernel runs kept"
          % (sum(len(s) for s in got), total, sum(left_out), sum(got_runs.values())))


if __name__ == "__main__":
    main()
