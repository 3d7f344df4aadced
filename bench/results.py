# SPDX-License-Identifier: BSD-3-Clause
"""results.py - what the bench scripts' summaries share (imported by omp.sh, mpi.sh, gpu.sh).

Each run appends "CONFIG<TAB>NAME<TAB>VALUE" to TMP/results; the scripts note the load
average in TMP/load.start and TMP/load.end.
"""
import collections
import os
import statistics


def read(tmp):
    """(res, med, names): every value per (config, name), their medians, names in order."""
    res = collections.defaultdict(list)
    names = []
    with open(os.path.join(tmp, 'results')) as f:
        for line in f:
            cfg, name, v = line.rstrip('\n').split('\t')
            res[(cfg, name)].append(float(v))
            if name not in names:
                names.append(name)
    med = {k: statistics.median(v) for k, v in res.items()}
    return res, med, names


def load(tmp, when):
    """The load average noted at 'start' or 'end'."""
    with open(os.path.join(tmp, 'load.' + when)) as f:
        return f.read().strip()
