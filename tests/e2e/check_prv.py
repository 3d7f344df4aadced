#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_prv.py - a strict checker, independent of the writer, for the Paraver traces trace2otf2
writes: NAME.prv with NAME.pcf and NAME.row beside it, in the layout Extrae writes and
Paraver's paramedir loads (header, state/event/communication records, .pcf types, .row names).

    check_prv.py NAME.prv [options]          check_prv.py --self-test

Fails (exit 1; one 'file:line: what' per problem, at most 20) unless all of this holds:
  header  `#Paraver (<date>):<end>_ns:<res>:<nAppl>:<appl>...[,<nComms>]`, exactly: res is
          `N(c1,..,cN)` or `0`; appl is `T(th1:node1,..)` with nodes 1..N (0 when res is 0);
          `_ns` is required (trace2otf2 writes ns); nComms c:/C:/i:/I: lines follow it.
  body    records 1 (state: 8 fields), 2 (event: 6+2k, k >= 1), 3 (communication: 15) and `#`
          comments; canonical decimal integers, unsigned except the signed int64 event values;
          objects 1-based and declared (cpu 0 = unknown); times in [0, end]; state begin < end;
          sorted by state begin / event time / logical send; states of a thread never overlap
          and cover [0, end] (unless --allow-gaps); no physical receive before its send (unless
          --allow-backward-comms); no blank line, CR or NUL; a final newline.
  .pcf    known sections with well-formed lines; numbers that get labels fit int32 (Paraver
          reads them with std::stoi and drops the line otherwise); every state used is in
          STATES, every event type used has an EVENT_TYPE line, and where its block has VALUES
          (shared by all type lines of the block) every value used is listed.
  .row    `LEVEL <NAME> SIZE <n>` then exactly n non-empty labels; a THREAD level naming every
          header thread; NODE, TASK, APPL and CPU sizes, where present, match the header.

Queries (fail on mismatch): --expect-events TYPE:VALUE=N (type:value pairs; VALUE '*' = any
nonzero), --expect-comms N, --expect-comms-tag TAG=N, --expect-threads N, --expect-tasks N,
--expect-label TYPE=SUBSTR (a VALUES label of TYPE contains it), --expect-state STATE (number or
.pcf label; some thread spends > 0 ns in it). --summary prints the counts as JSON on stdout
(and the ok line on stderr).

Extrae's conventions (fail on mismatch). A "burst" of TYPE on a thread: an event of TYPE with a nonzero
value, lasting until that thread's next event of TYPE (or the end); pairs of one record apply in order.
  --expect-calls TYPE:VALUE=N   (repeatable) N bursts of exactly VALUE (nonzero) of TYPE of positive
          duration, over all threads: Paraver's event-value profile count; the mismatch says how many of
          0 ns (which Paraver drops) there were too.
  --no-zero-calls TYPE[,TYPE..] (repeatable) no burst of these types lasts 0 ns (thread, time, type:value).
  --extrae-names  the THREAD labels of the .row, in header order, are 'THREAD a.t.h' (1-based numbers of
          that thread), except pseudo-threads (GPU streams: a label not starting with 'THREAD '), which
          come after all 'THREAD' threads of their task; no APPL label ends in ' [<digits>]'.
  --expect-pseudo N   N pseudo-threads; implies the THREAD label rules of --extrae-names (not the APPL one).
  --expect-task-pid TASK=PID   (repeatable) thread 1.TASK.1 has an event 40000036 (Process IDentifier)
          of PID, and no thread of another task has one.
  --mpi-extrae    every burst of 50000001..50000005 has a .pcf VALUES label that is a call of MPI_EXTRAE
          (Extrae 5.1.2's encoding), with the table's type:value; one of positive duration is in the
          table's state at its start ([t, t+1)); a VALUES label of those types that names a call of the
          table has the table's value.
  --expect-fork-join  some thread forks (60000001 nonzero); on each thread, time inside a fork (until its
          60000001:0) and outside the outlined function that runs in it (60000018 nonzero, until 0) is in
          state 7 (Scheduling and Fork/Join), but for pthread and MPI calls the runtime makes in it, which
          have their own states; the fork comes strictly before the first outlined function in
          it; each fork is joined. Forks and outlined functions nest (an inner fork inside an outlined
          function: its fork and join time is state 7, the rest of the outer function is not).
  --expect-cpus   the header has a resource model; some event 40000033 (Executing CPU: the CPU within the
          thread's node + 1, within the node's count) exists; once a thread had one at an earlier time,
          each of its records (state begin, event time, either time of its side of a communication) has
          cpu = the CPUs of the nodes before its node + the latest such value (a record at the time of a
          change may have the cpu before or after it).
--self-test runs this checker on the example of extrae.md §3.5, on a trace in Extrae's conventions, and
on broken variants of them.
"""
import argparse
import collections
import json
import os
import re
import sys
from bisect import bisect_left, bisect_right
import tempfile

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
MAX_PROBLEMS = 20
MAX_OBJECTS = 65535  # paraver-kernel's TObjectOrder is uint16_t unless EXTENDED_OBJECTS_ENABLED
PCF_SECTIONS = ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR", "EVENT_TYPE",
                "GRADIENT_COLOR", "GRADIENT_NAMES")
ROW_LEVELS = ("WORKLOAD", "APPL", "TASK", "THREAD", "SYSTEM", "NODE", "CPU")
# DEFAULT_OPTIONS keys and their allowed values (None: an unsigned integer)
PCF_OPTIONS = {"LEVEL": ROW_LEVELS, "UNITS": ("NANOSEC",), "FLAG_ICONS": ("ENABLED", "DISABLED"),
               "LOOK_BACK": None, "SPEED": None, "NUM_OF_STATE_COLORS": None, "YMAX_SCALE": None}
HEADER_RE = re.compile(r"#Paraver \(([^)]*)\):(\d+)(_[a-z]+)?:(.*)")
MODEL_RE = re.compile(r"(0|(\d+)\(([\d,]*)\)):(\d+):((?:\d+\([\d:,]*\))(?::\d+\([\d:,]*\))*)(?:,(\d+))?")
UINTS_RE = re.compile(r"(?:0|[1-9][0-9]*)(?::(?:0|[1-9][0-9]*))*")
COLOR_RE = re.compile(r"(\d+) +\{(\d+),(\d+),(\d+)\}")

# Extrae's event types and states that the Extrae options check
EV_CPU, EV_PID = 40000033, 40000036  # "Executing CPU" (CPU within its node + 1), "Process IDentifier"
EV_FORK, EV_OUTLINED = 60000001, 60000018  # "Parallel (OMP)" (0: join), "Executed OpenMP parallel function"
ST_FORK_JOIN = 7  # "Scheduling and Fork/Join"
MPI_TYPES = range(50000001, 50000006)
MPI_P, MPI_C, MPI_O, MPI_R = 50000001, 50000002, 50000003, 50000004
MPI_STATES = {3: "Waiting a message", 4: "Blocking Send", 6: "Test/Probe", 8: "Wait/WaitAll",
              10: "Immediate Send", 11: "Immediate Receive", 13: "Group Communication", 15: "Others",
              16: "Send Receive", 17: "Memory transfer"}
# name -> (type, value, state) as Extrae 5.1.2 writes them: its MPI event encoding (type of the call's
# class, fixed value per call) and the state its merger puts the thread in during the call
MPI_EXTRAE = {
    "MPI_Send": (MPI_P, 1, 4), "MPI_Recv": (MPI_P, 2, 3), "MPI_Isend": (MPI_P, 3, 10),
    "MPI_Irecv": (MPI_P, 4, 11), "MPI_Wait": (MPI_P, 5, 8), "MPI_Waitall": (MPI_P, 6, 8),
    "MPI_Bcast": (MPI_C, 7, 13), "MPI_Barrier": (MPI_C, 8, 13), "MPI_Reduce": (MPI_C, 9, 13),
    "MPI_Allreduce": (MPI_C, 10, 13), "MPI_Alltoall": (MPI_C, 11, 13), "MPI_Alltoallv": (MPI_C, 12, 13),
    "MPI_Gather": (MPI_C, 13, 13), "MPI_Gatherv": (MPI_C, 14, 13), "MPI_Scatter": (MPI_C, 15, 13),
    "MPI_Scatterv": (MPI_C, 16, 13), "MPI_Allgather": (MPI_C, 17, 13), "MPI_Allgatherv": (MPI_C, 18, 13),
    "MPI_Comm_rank": (MPI_O, 19, 15), "MPI_Comm_size": (MPI_O, 20, 15), "MPI_Comm_create": (MPI_O, 21, 15),
    "MPI_Comm_dup": (MPI_O, 22, 15), "MPI_Comm_split": (MPI_O, 23, 15), "MPI_Comm_group": (MPI_O, 24, 15),
    "MPI_Comm_free": (MPI_O, 25, 15), "MPI_Scan": (MPI_C, 30, 13), "MPI_Init": (MPI_O, 31, 15),
    "MPI_Init_thread": (MPI_O, 31, 15), "MPI_Finalize": (MPI_O, 32, 15), "MPI_Bsend": (MPI_P, 33, 4),
    "MPI_Ssend": (MPI_P, 34, 4), "MPI_Rsend": (MPI_P, 35, 4), "MPI_Ibsend": (MPI_P, 36, 10),
    "MPI_Issend": (MPI_P, 37, 10), "MPI_Irsend": (MPI_P, 38, 10), "MPI_Test": (MPI_O, 39, 8),
    "MPI_Cancel": (MPI_P, 40, 15), "MPI_Sendrecv": (MPI_P, 41, 16), "MPI_Sendrecv_replace": (MPI_P, 42, 16),
    "MPI_Cart_create": (MPI_O, 43, 15), "MPI_Waitany": (MPI_P, 59, 8), "MPI_Waitsome": (MPI_P, 60, 8),
    "MPI_Probe": (MPI_P, 61, 6), "MPI_Iprobe": (MPI_P, 62, 6), "MPI_Win_create": (MPI_R, 63, 15),
    "MPI_Win_free": (MPI_R, 64, 15), "MPI_Put": (MPI_R, 65, 17), "MPI_Get": (MPI_R, 66, 17),
    "MPI_Win_fence": (MPI_R, 68, 17), "MPI_Win_lock": (MPI_R, 74, 15), "MPI_Win_unlock": (MPI_R, 75, 15),
    "MPI_Reduce_scatter": (MPI_C, 80, 13), "MPI_Group_excl": (MPI_O, 85, 15),
    "MPI_Group_free": (MPI_O, 86, 15), "MPI_Group_incl": (MPI_O, 87, 15), "MPI_Abort": (MPI_O, 100, 15),
    "MPI_Request_free": (MPI_O, 115, 15), "MPI_Testall": (MPI_O, 125, 8), "MPI_Testany": (MPI_O, 126, 8),
    "MPI_Testsome": (MPI_O, 128, 8),
    "MPI_Iallreduce": (MPI_C, 155, 13), "MPI_Ireduce": (MPI_C, 154, 13), "MPI_Ibarrier": (MPI_C, 156, 13),
    "MPI_Ibcast": (MPI_C, 157, 13), "MPI_Ialltoall": (MPI_C, 158, 13), "MPI_Iallgather": (MPI_C, 160, 13),
    "MPI_Reduce_scatter_block": (MPI_C, 168, 13), "MPI_Comm_split_type": (MPI_O, 194, 15),
    "MPI_Exscan": (MPI_C, 214, 13),
}


class TooMany(Exception):
    pass


class Problems:
    """Collects 'file:line: what' messages; raises TooMany at MAX_PROBLEMS."""

    def __init__(self):
        self.items = []

    def __call__(self, path, lineno, msg):
        where = "expectation" if path is None else os.path.basename(path)
        self.items.append("%s%s: %s" % (where, ":%d" % lineno if lineno else "", msg))
        if len(self.items) >= MAX_PROBLEMS:
            raise TooMany()


def uint(s):
    """The value of a canonical unsigned decimal (no sign, no leading zero), else None."""
    return int(s) if s.isascii() and s.isdigit() and (s == "0" or s[0] != "0") else None


def sint(s):
    """Like uint, with an optional '-' (but not '-0')."""
    if s.startswith("-"):
        v = uint(s[1:])
        return -v if v else None
    return uint(s)


def read_lines(path, problem):
    """Yields (lineno, text without newline); reports CR, NUL, bad UTF-8 and a missing final newline."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                problem(path, lineno, "no newline at the end of the file (truncated?)")
            raw = raw.rstrip(b"\n")
            if b"\r" in raw or b"\0" in raw:
                problem(path, lineno, "carriage return or NUL byte in the line")
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError:
                problem(path, lineno, "not valid UTF-8")
                yield lineno, raw.decode("utf-8", "replace")


# ---- .prv header ------------------------------------------------------------------------------

class Header:
    """End time, CPUs per node, and per application the (threads, node) of each task."""

    def __init__(self, end, cpus, appls, ncomms):
        self.end, self.cpus, self.appls, self.ncomms = end, cpus, appls, ncomms
        self.total_cpus = sum(cpus)
        self.total_tasks = sum(len(tasks) for tasks in appls)
        self.threads = [(a + 1, t + 1, th + 1) for a, tasks in enumerate(appls)
                        for t, (n, _) in enumerate(tasks) for th in range(n)]

    def object_error(self, cpu, appl, task, thread):
        """Why (cpu, appl, task, thread) is not an object of this header, or None."""
        if cpu > self.total_cpus:
            return "cpu %d is not in the header (%d cpus; 0 means unknown)" % (cpu, self.total_cpus)
        if not 1 <= appl <= len(self.appls):
            return "application %d is not in the header (%d)" % (appl, len(self.appls))
        tasks = self.appls[appl - 1]
        if not 1 <= task <= len(tasks):
            return "task %d.%d is not in the header (%d tasks)" % (appl, task, len(tasks))
        if not 1 <= thread <= tasks[task - 1][0]:
            return "thread %d.%d.%d is not in the header (%d threads)" % (
                appl, task, thread, tasks[task - 1][0])
        return None


def parse_appl(path, a, ntasks, text, nnodes, problem):
    """The (threads, node) of each task of `<ntasks>(<text>)`, application number a."""
    tasks = []
    for t, item in enumerate(text.split(","), 1):
        m = re.fullmatch(r"(\d+):(\d+)", item)
        if not m:
            problem(path, 1, "application %d: task entry %r is not <threads>:<node>" % (a, item))
            continue
        nthreads, node = uint(m[1]), uint(m[2])
        if not nthreads:
            problem(path, 1, "application %d task %d: thread count %r is not positive" % (a, t, m[1]))
        if nnodes and (node is None or not 1 <= node <= nnodes):
            problem(path, 1, "application %d task %d: node %s is not in 1..%d" % (a, t, m[2], nnodes))
        elif not nnodes and node != 0:
            problem(path, 1, "application %d task %d: node %s, but with no resource model (0) the node "
                    "is 0" % (a, t, m[2]))
        tasks.append((nthreads or 0, node))
    if uint(ntasks) != len(tasks):
        problem(path, 1, "application %d declares %s tasks but lists %d" % (a, ntasks, len(tasks)))
    return tasks


def parse_header(path, text, problem):
    m = HEADER_RE.fullmatch(text)
    if not m:
        problem(path, 1, "header %r does not match '#Paraver (<date>):<end>_ns:<res>:<nAppl>:<appl>...'"
                % text[:80])
        return None
    end = uint(m[2])
    if end is None:
        problem(path, 1, "end time %r is not a canonical integer" % m[2])
    if m[3] != "_ns":
        problem(path, 1, "end time %r%s: the unit must be _ns, as trace2otf2 always writes nanoseconds "
                "(with no suffix Paraver reads microseconds)" % (m[2], m[3] or ""))
    model = MODEL_RE.fullmatch(m[4])
    if not model:
        problem(path, 1, "%r does not match <N(c1,..,cN)|0>:<nAppl>:<T(th:node,..)>...[,<nComms>]"
                % m[4][:80])
        return None
    cpus = []
    if model[1] != "0":
        cpus = [uint(c) for c in model[3].split(",")]
        if uint(model[2]) != len(cpus):
            problem(path, 1, "resources declare %s nodes but list %d CPU counts" % (model[2], len(cpus)))
        if not all(cpus):
            problem(path, 1, "CPU counts %r must be positive integers" % model[3])
        cpus = [c or 0 for c in cpus]
    appl_texts = re.findall(r"(\d+)\(([\d:,]*)\)", model[5])
    if uint(model[4]) != len(appl_texts):
        problem(path, 1, "header declares %s applications but lists %d" % (model[4], len(appl_texts)))
    appls = [parse_appl(path, a, nt, text, len(cpus), problem)
             for a, (nt, text) in enumerate(appl_texts, 1)]
    counts = (sum(cpus), sum(map(len, appls)), sum(n for tasks in appls for n, _ in tasks))
    if max(counts) > MAX_OBJECTS:
        problem(path, 1, "%d cpus, %d tasks, %d threads: more than %d of a kind overflow Paraver's "
                "default 16-bit object index" % (*counts, MAX_OBJECTS))
        return None
    return Header(end or 0, cpus, appls, int(model[6] or 0))


def check_communicator(path, lineno, text, header, problem):
    f = text.split(":")
    nums = [uint(x) for x in f[1:]]
    if f[0] not in ("c", "C", "i", "I") or not nums or None in nums:
        problem(path, lineno, "expected a communicator line (c:/C:/i:/I: and integers; the header "
                "announces %d), got %r" % (header.ncomms, text[:60]))
    elif not 1 <= nums[0] <= len(header.appls):
        problem(path, lineno, "communicator of application %d, which is not in the header" % nums[0])
    elif f[0] in "cC" and (len(nums) < 3 or len(nums) != 3 + nums[2]):
        problem(path, lineno, "c-line: task count and task list disagree")
    elif f[0] in "cC" and not all(1 <= t <= len(header.appls[nums[0] - 1]) for t in nums[3:]):
        problem(path, lineno, "c-line names a task that is not in the header")
    elif f[0] in "iI" and len(nums) != 6:
        problem(path, lineno, "i-line needs 6 numbers (appl:intercomm:intra1:leader1:intra2:leader2)")


# ---- .pcf ---------------------------------------------------------------------------------------

class EventBlock:
    """One EVENT_TYPE block: its types and labels, and its VALUES (None when it has none)."""

    def __init__(self, lineno):
        self.lineno, self.labels, self.values = lineno, {}, None


class Pcf:
    def __init__(self):
        self.states, self.colors, self.types, self.blocks = {}, {}, {}, []


def pcf_int32(text, what):
    """(value, None) or (None, why not)."""
    v = sint(text)
    if v is None:
        return None, "%s %r is not a canonical integer" % (what, text)
    if not INT32_MIN <= v <= INT32_MAX:
        return None, "%s %s does not fit int32: Paraver's PCF parser (std::stoi) drops the line" % (
            what, text)
    return v, None


# One function per section: checks a line (tabs made spaces, trimmed), returns why it is bad or None.
def pcf_option(pcf, block, line):
    key, _, value = line.partition(" ")
    value, allowed = value.strip(), PCF_OPTIONS.get(key, ())
    if key not in PCF_OPTIONS:
        return "unknown DEFAULT_OPTIONS key %r" % key
    if allowed is None and uint(value) is None:
        return "%s %r is not an unsigned integer" % (key, value)
    if allowed and value not in allowed:
        return "%s %r is not one of %s" % (key, value, ", ".join(allowed))
    return None


def pcf_semantic(pcf, block, line):
    return None if re.fullmatch(r"[A-Z_]+ +\S.*", line) else "expected '<KEY> <function>'"


def pcf_state(pcf, block, line):
    m = re.fullmatch(r"(\S+) +(\S.*)", line)
    v, err = pcf_int32(m[1], "state") if m else (None, "expected '<state> <label>'")
    if err or v < 0:
        return err or "state %d is negative" % v
    if v in pcf.states:
        return "state %d defined twice" % v
    pcf.states[v] = m[2]
    return None


def pcf_color(pcf, block, line, table="colors"):
    m = COLOR_RE.fullmatch(line)
    if not m:
        return "expected '<n> {r,g,b}'"
    if any(int(c) > 255 for c in m.groups()[1:]):
        return "colour component above 255 in %r" % line
    if table == "colors":
        v, err = pcf_int32(m[1], "state")
        if err or v in pcf.colors:
            return err or "state %d has two colours" % v
        pcf.colors[v] = m.groups()[1:]
    return None


def pcf_event(pcf, block, line):
    if line == "VALUES":
        if block.values is not None:
            return "second VALUES list in one EVENT_TYPE block"
        block.values = {}
        return None if block.labels else "VALUES before any event type line"
    if re.match(r"PRECISION\b", line):
        return None if re.fullmatch(r"PRECISION +\d+", line) else "expected 'PRECISION <n>'"
    if block.values is None:  # '<gradient> <type> <label>' lines, all sharing the VALUES that follow
        m = re.fullmatch(r"(\d+) +(\S+) +(\S.*)", line)
        t, err = pcf_int32(m[2], "event type") if m else (None, "expected '<gradient> <type> <label>'")
        if err or t < 0:
            return err or "event type %d is negative" % t
        if t in pcf.types:
            return "event type %d defined twice (first in the block at line %d)" % (t, pcf.types[t].lineno)
        block.labels[t], pcf.types[t] = m[3], block
        return None
    m = re.fullmatch(r"(\S+) +(\S.*)", line)
    v, err = pcf_int32(m[1], "value label") if m else (None, "expected '<value> <label>'")
    if err or v in block.values:
        return err or "value %d listed twice" % v
    block.values[v] = m[2]
    return None


PCF_LINE = {"DEFAULT_OPTIONS": pcf_option, "DEFAULT_SEMANTIC": pcf_semantic, "STATES": pcf_state,
            "STATES_COLOR": pcf_color, "EVENT_TYPE": pcf_event,
            "GRADIENT_COLOR": lambda pcf, block, line: pcf_color(pcf, block, line, None),
            "GRADIENT_NAMES": lambda pcf, block, line: None if re.fullmatch(r"\d+ +\S.*", line)
            else "expected '<n> <name>'"}


def parse_pcf(path, problem):
    pcf, section, block, seen = Pcf(), None, None, set()
    for lineno, raw in read_lines(path, problem):
        line = raw.replace("\t", " ").strip()
        if not line or line[0] == "#":
            continue
        if line in PCF_SECTIONS:
            if line in seen and line != "EVENT_TYPE":
                problem(path, lineno, "section %s appears twice" % line)
            seen.add(line)
            section, block = line, None
            if line == "EVENT_TYPE":
                block = EventBlock(lineno)
                pcf.blocks.append(block)
        elif re.fullmatch(r"[A-Z][A-Z_]*", line) and not (section == "EVENT_TYPE" and line == "VALUES"):
            problem(path, lineno, "unknown section %r (Paraver would read what follows as part of the "
                    "previous section); known: %s" % (line, " ".join(PCF_SECTIONS)))
            section = "unknown"
        elif section is None:
            problem(path, lineno, "line before the first section")
        elif section != "unknown":
            err = PCF_LINE[section](pcf, block, line)
            if err:
                problem(path, lineno, "%s: %s" % (section, err))
    for b in pcf.blocks:
        if not b.labels:
            problem(path, b.lineno, "EVENT_TYPE block without an event type line")
        elif b.values == {}:
            problem(path, b.lineno, "EVENT_TYPE block with an empty VALUES list")
    return pcf


# ---- .row ---------------------------------------------------------------------------------------

def parse_row(path, header, problem, lines_of=None):
    """Returns {level: labels}, after checking the blocks and their sizes against the header; fills
    lines_of, when given, with {level: [line number of each label]}."""
    levels, where = {}, {}
    lines = read_lines(path, problem)
    for lineno, line in lines:
        if not line or line[0] == "#":
            continue
        m = re.fullmatch(r"LEVEL (\S+) SIZE (\d+)", line)
        if not m:
            problem(path, lineno, "expected 'LEVEL <NAME> SIZE <n>', got %r" % line[:60])
            continue
        name, size = m[1], int(m[2])
        if name not in ROW_LEVELS:
            problem(path, lineno, "unknown level %r (known: %s)" % (name, " ".join(ROW_LEVELS)))
        if name in levels:
            problem(path, lineno, "LEVEL %s appears twice" % name)
        labels = []
        for _ in range(size):
            nxt = next(lines, None)
            if nxt is None:
                problem(path, lineno, "LEVEL %s SIZE %d, but the file ends after %d labels"
                        % (name, size, len(labels)))
                break
            if not nxt[1].strip():
                problem(path, nxt[0], "empty label in LEVEL %s (SIZE %d says %d labels follow)"
                        % (name, size, size))
            labels.append(nxt[1])
            if lines_of is not None:
                lines_of.setdefault(name, []).append(nxt[0])
        levels[name], where[name] = labels, lineno
    expected = {"THREAD": len(header.threads), "TASK": header.total_tasks, "APPL": len(header.appls),
                "NODE": len(header.cpus), "CPU": header.total_cpus}
    if "THREAD" not in levels:
        problem(path, 0, "no LEVEL THREAD: every thread of the header needs a name")
    for name, n in expected.items():
        if name in levels and len(levels[name]) != n:
            problem(path, where[name], "LEVEL %s has %d labels, but the header declares %d"
                    % (name, len(levels[name]), n))
    return levels


# ---- .prv body ----------------------------------------------------------------------------------

class Body:
    """Checks the records in one pass, keeping the counts for the summary and the queries."""

    def __init__(self, path, header, pcf, opts, problem):
        self.path, self.header, self.pcf, self.opts, self.problem = path, header, pcf, opts, problem
        self.records = collections.Counter()
        self.state_time = collections.defaultdict(collections.Counter)  # thread -> state -> ns
        self.events = collections.defaultdict(collections.Counter)  # type -> value -> pairs
        self.comm_tags = collections.Counter()
        self.last_end = {}  # thread -> end of its latest state
        self.reported = set()
        # kept only for the options that need them: per thread, its events of the tracked types
        # [(time, type, value, lineno)], its states [(begin, end, state)], and its records'
        # [(times, cpu, lineno, what)] (--expect-cpus)
        self.tracked = tracked_types(opts)
        self.keep_states = opts.mpi_extrae or opts.expect_fork_join
        self.timeline = collections.defaultdict(list)
        self.thread_states = collections.defaultdict(list)
        self.cpu_records = collections.defaultdict(list)

    def keep_cpu(self, thr, times, cpu, lineno, what):
        if thr and self.opts.expect_cpus:
            self.cpu_records[thr].append((times, cpu, lineno, what))

    def report(self, lineno, msg, once=None):
        """Reports a problem; one with a `once` key (an undefined label) only at its first use."""
        if once is None or once not in self.reported:
            self.reported.add(once)
            self.problem(self.path, lineno, msg + (" (first use)" if once else ""))

    def numbers(self, lineno, fields, what):
        if UINTS_RE.fullmatch(":".join(fields)):  # the fast path
            return list(map(int, fields))
        bad = next(x for x in fields if uint(x) is None)
        self.report(lineno, "%s: %r is not an unsigned decimal integer" % (what, bad))
        return None

    def located(self, lineno, cpu, appl, task, thread, what):
        """(appl, task, thread), or None after reporting why the object is not in the header."""
        err = self.header.object_error(cpu, appl, task, thread)
        if err:
            self.report(lineno, "%s: %s" % (what, err))
            return None
        return (appl, task, thread)

    def in_time(self, lineno, what, *times):
        if max(times) > self.header.end:
            self.report(lineno, "%s: time %d is after the header end time %d"
                        % (what, max(times), self.header.end))

    def state(self, lineno, f):
        if len(f) != 8:
            self.report(lineno, "state record has %d fields, expected 8 "
                        "(1:cpu:appl:task:thread:begin:end:state)" % len(f))
            return None
        v = self.numbers(lineno, f[1:], "state record")
        if v is None:
            return None
        cpu, appl, task, thread, begin, end, state = v
        if state not in self.pcf.states:
            self.report(lineno, "state %d is not defined in the .pcf STATES" % state, ("state", state))
        if begin >= end:
            self.report(lineno, "state begins at %d and ends at %d: begin must be earlier than end"
                        % (begin, end))
        self.in_time(lineno, "state", begin, end)
        thr = self.located(lineno, cpu, appl, task, thread, "state record")
        if thr and begin < end:
            last = self.last_end.get(thr, 0)
            if begin < last:
                self.report(lineno, "state %d-%d on thread %d.%d.%d overlaps the previous state, which ends "
                            "at %d" % (begin, end, *thr, last))
            elif begin > last and not self.opts.allow_gaps:
                self.report(lineno, "thread %d.%d.%d has no state from %d to %d (states must cover [0, end]; "
                            "--allow-gaps allows this)" % (*thr, last, begin))
            self.last_end[thr] = max(last, end)
            self.state_time[thr][state] += end - begin
            if self.keep_states:
                self.thread_states[thr].append((begin, end, state))
        self.keep_cpu(thr, (begin,), cpu, lineno, "state record")
        return begin

    def event(self, lineno, f):
        if len(f) < 8 or len(f) % 2:
            self.report(lineno, "event record has %d fields, expected 6+2k "
                        "(2:cpu:appl:task:thread:time:type:value[:type:value]...)" % len(f))
            return None
        v = self.numbers(lineno, f[1:6], "event record")
        if v is None:
            return None
        thr = self.located(lineno, *v[:4], "event record")
        self.in_time(lineno, "event", v[4])
        self.keep_cpu(thr, (v[4],), v[0], lineno, "event record")
        for typ_s, val_s in zip(f[6::2], f[7::2]):
            typ, val = uint(typ_s), sint(val_s)
            if typ is None or typ > INT32_MAX:
                self.report(lineno, "event type %r is not an unsigned integer below 2^31" % typ_s)
                continue
            if val is None or not INT64_MIN <= val <= INT64_MAX:
                self.report(lineno, "value %r of event type %d is not a signed 64-bit integer" % (val_s, typ))
                continue
            self.events[typ][val] += 1
            if thr and typ in self.tracked:
                self.timeline[thr].append((v[4], typ, val, lineno))
            block = self.pcf.types.get(typ)
            if block is None:
                self.report(lineno, "event type %d has no EVENT_TYPE line in the .pcf" % typ, ("type", typ))
            elif block.values and val not in block.values:  # an empty VALUES list is reported once
                self.report(lineno, "value %d of event type %d is not in the VALUES of its .pcf block (line "
                            "%d)" % (val, typ, block.lineno), ("value", typ, val))
        return v[4]

    def comm(self, lineno, f):
        if len(f) != 15:
            self.report(lineno, "communication record has %d fields, expected 15" % len(f))
            return None
        v = self.numbers(lineno, f[1:], "communication record")
        if v is None:
            return None
        ls, ps, lr, pr, size, tag = v[4], v[5], v[10], v[11], v[12], v[13]
        sender = self.located(lineno, *v[0:4], "communication sender")
        receiver = self.located(lineno, *v[6:10], "communication receiver")
        self.keep_cpu(sender, (ls, ps), v[0], lineno, "communication send side")
        self.keep_cpu(receiver, (lr, pr), v[6], lineno, "communication receive side")
        self.in_time(lineno, "communication", ls, ps, lr, pr)
        # The logical receive is when the receive was posted, which may be before the send.
        if not self.opts.allow_backward_comms and pr < ps:
            self.report(lineno, "received (physical %d) before it was sent (physical %d): a clock bug "
                        "(--allow-backward-comms allows it)" % (pr, ps))
        if lr > pr or ls > ps:
            self.report(lineno, "a logical time after its physical one (send %d > %d or receive %d > %d)"
                        % (ls, ps, lr, pr))
        if size > INT64_MAX or tag > INT64_MAX:
            self.report(lineno, "size or tag does not fit int64")
        self.comm_tags[tag] += 1
        return ls

    def run(self, lines):
        kinds = {"1": ("state", self.state), "2": ("event", self.event), "3": ("comm", self.comm)}
        last = 0
        for lineno, text in lines:
            if not text or text[0] == "#":
                if not text:
                    self.report(lineno, "empty line in the body")
                continue
            f = text.split(":")
            if f[0] not in kinds:
                self.report(lineno, "record type %r is not 1 (state), 2 (event) or 3 (communication)"
                            % f[0][:20])
                continue
            name, check = kinds[f[0]]
            self.records[name] += 1
            key = check(lineno, f)  # the time the record is sorted by
            if key is not None and key < last:
                self.report(lineno, "%s at time %d after a record at time %d: records must be sorted by time"
                            % (name, key, last))
            last = max(last, key or 0)
        for thr in self.header.threads if not self.opts.allow_gaps else ():
            end = self.last_end.get(thr)
            if end is None or end < self.header.end:
                self.report(0, "thread %d.%d.%d has %s: states must cover [0, %d] (--allow-gaps allows "
                            "this)" % (*thr, "no state" if end is None else "no state after %d" % end,
                                       self.header.end))


# ---- Extrae's conventions (the Extrae options) --------------------------------------------------

def tracked_types(opts):
    """The event types whose per-thread timelines the options need."""
    types = {t for t, _, _ in opts.expect_calls} | {t for group in opts.no_zero_calls for t in group}
    if opts.mpi_extrae:
        types |= set(MPI_TYPES)
    if opts.expect_fork_join:
        types |= {EV_FORK, EV_OUTLINED} | NESTED_CALLS
    if opts.expect_task_pid:
        types.add(EV_PID)
    if opts.expect_cpus:
        types.add(EV_CPU)
    return types


def thread_name(thr):
    return "thread %d.%d.%d" % thr


def bursts(events, typ, end):
    """(time, value, duration, lineno) of each burst of one thread: an event of typ with a nonzero value,
    lasting until the thread's next event of typ (or the end of the trace)."""
    mine = [(t, v, ln) for t, ty, v, ln in events if ty == typ]
    for i, (t, v, ln) in enumerate(mine):
        if v:
            yield t, v, (mine[i + 1][0] if i + 1 < len(mine) else end) - t, ln


def state_at(states, begins, t):
    """The state of one thread's sorted states covering [t, t+1), or None."""
    i = bisect_right(begins, t) - 1
    return states[i][2] if i >= 0 and states[i][1] > t else None


def check_calls(opts, header, body, problem):
    for typ, val, n in opts.expect_calls:
        found = collections.Counter(d > 0 for evs in body.timeline.values()
                                    for _, v, d, _ in bursts(evs, typ, header.end) if v == val)
        if found[True] != n:
            problem(None, 0, "%d bursts %d:%d of positive duration (Paraver's count), expected %d; and %d "
                    "of 0 ns (which Paraver drops)" % (found[True], typ, val, n, found[False]))
    zero = sorted({t for group in opts.no_zero_calls for t in group})
    for thr in header.threads:
        for typ in zero:
            for t, v, d, ln in bursts(body.timeline.get(thr, ()), typ, header.end):
                if d == 0:
                    problem(body.path, ln, "%s: %d:%d at %d lasts 0 ns (set and replaced at the same time; "
                            "Paraver drops such a burst)" % (thread_name(thr), typ, v, t))


def check_thread_labels(opts, header, row, labels, linenos, problem):
    """Extrae's THREAD labels: 'THREAD a.t.h', or a pseudo-thread (a GPU stream) after its task's threads."""
    tasks_with_pseudo, npseudo = set(), 0
    for thr, label, lineno in zip(header.threads, labels, linenos):
        if not label.startswith("THREAD "):
            npseudo += 1
            tasks_with_pseudo.add(thr[:2])
            continue
        if label != "THREAD %d.%d.%d" % thr:
            problem(row, lineno, "%s is labelled %r: Extrae labels it 'THREAD %d.%d.%d' (a pseudo-thread, a "
                    "GPU stream, has a label not starting with 'THREAD ')" % (thread_name(thr), label, *thr))
        if thr[:2] in tasks_with_pseudo:
            problem(row, lineno, "%s (%r) comes after a pseudo-thread of task %d.%d: Extrae lists a task's "
                    "THREAD threads first" % (thread_name(thr), label, *thr[:2]))
    if opts.expect_pseudo is not None and npseudo != opts.expect_pseudo:
        problem(None, 0, "%d pseudo-threads (THREAD labels not starting with 'THREAD '), expected %d"
                % (npseudo, opts.expect_pseudo))


def check_names(opts, header, row_files, problem):
    row, levels, lines_of = row_files
    check_thread_labels(opts, header, row, levels.get("THREAD", []), lines_of.get("THREAD", []), problem)
    if opts.extrae_names:
        for label, lineno in zip(levels.get("APPL", []), lines_of.get("APPL", [])):
            if re.search(r" \[\d+\]$", label):
                problem(row, lineno, "APPL label %r ends in ' [<digits>]': Extrae names the application after "
                        "the program, not one process" % label)


def check_pids(opts, body, problem):
    having = collections.defaultdict(set)  # pid -> threads with an event 40000036 of it
    for thr, evs in body.timeline.items():
        for _, typ, v, _ in evs:
            if typ == EV_PID:
                having[v].add(thr)
    for task, pid in opts.expect_task_pid:
        if (1, task, 1) not in having[pid]:
            problem(None, 0, "thread 1.%d.1 has no event %d (Process IDentifier) with value %d"
                    % (task, EV_PID, pid))
        for thr in sorted(thr for thr in having[pid] if thr[:2] != (1, task)):
            problem(None, 0, "%s, not of task 1.%d, has the event %d:%d (Process IDentifier) of task 1.%d"
                    % (thread_name(thr), task, EV_PID, pid, task))


def mpi_label(pcf, typ, val):
    """(label, why it is not Extrae's encoding or None); the label is None when the .pcf has none."""
    block = pcf.types.get(typ)
    label = block.values.get(val) if block and block.values else None
    if label is None:
        return None, "%d:%d has no .pcf label, so it is no MPI call of Extrae's table" % (typ, val)
    if label not in MPI_EXTRAE:
        return label, "%d:%d is labelled %r in the .pcf, which is no MPI call of Extrae's table" % (
            typ, val, label)
    if MPI_EXTRAE[label][:2] != (typ, val):
        return label, "%s is %d:%d in Extrae; here %d:%d" % (label, *MPI_EXTRAE[label][:2], typ, val)
    return label, None


def check_mpi(header, pcf, body, problem):
    pcf_path = body.path[:-4] + ".pcf"
    for typ in MPI_TYPES:
        block = pcf.types.get(typ)
        for val, label in sorted(((block and block.values) or {}).items()):
            if label in MPI_EXTRAE and MPI_EXTRAE[label][1] != val:
                problem(pcf_path, block.lineno, "%s is %d:%d in Extrae; here %d:%d (VALUES of the block at "
                        "this line)" % (label, *MPI_EXTRAE[label][:2], typ, val))
    reported = set()
    for thr in header.threads:
        evs, states = body.timeline.get(thr, ()), body.thread_states.get(thr, [])
        begins = [b for b, _, _ in states]
        for typ in MPI_TYPES:
            for t, val, d, ln in bursts(evs, typ, header.end):
                label, err = mpi_label(pcf, typ, val)
                if err and (typ, val) not in reported:
                    reported.add((typ, val))
                    problem(body.path, ln, err + " (first use)")
                if label not in MPI_EXTRAE or d == 0:
                    continue
                state, want = state_at(states, begins, t), MPI_EXTRAE[label][2]
                if state != want:
                    problem(body.path, ln, "%s: %s (%d:%d) at %d is in state %s, but Extrae's state during %s "
                            "is %d (%s)" % (thread_name(thr), label, typ, val, t, "(none)" if state is None
                                         else state, label, want, MPI_STATES[want]))


# Calls a runtime makes while it forks or joins (creating its threads, taking its locks),
# whose time is in their own states: pthread and MPI calls.
NESTED_CALLS = frozenset((61000000, 50000001, 50000002, 50000003, 50000004))


def fork_join_spans(evs, end, report):
    """The [begin, end, fork time) spans of one thread that Extrae shows in state 7, and its number of forks.
    Frames nest: a fork (60000001 nonzero) pushes F, an outlined function (60000018 nonzero) pushes U or
    replaces a U on top, a 0 pops the topmost frame of its kind; a span is a time with an F on top and
    no pthread or MPI call (NESTED_CALLS) in progress."""
    stack, spans, forks, last, calls = [], [], 0, 0, {}
    for t, typ, v, ln in evs:
        if typ not in (EV_FORK, EV_OUTLINED) and typ not in NESTED_CALLS:
            continue
        if t > last and stack and stack[-1][0] == "F" and not any(calls.values()):
            spans.append((last, t, stack[-1][1]))
        last = t
        if typ in NESTED_CALLS:  # a call the runtime makes while it forks has its own state
            calls[typ] = v != 0
            continue
        kind = "F" if typ == EV_FORK else "U"
        if v == 0:
            mine = [i for i, frame in enumerate(stack) if frame[0] == kind]
            if mine:
                del stack[mine[-1]]
        elif kind == "F":
            stack.append(["F", t, ln, False])
            forks += 1
        elif stack and stack[-1][0] == "U":
            stack[-1][1:3] = t, ln
        else:
            if stack and not stack[-1][3]:
                stack[-1][3] = True  # the first outlined function of that fork
                if stack[-1][1] == t:
                    report(ln, "the fork at %d and the outlined function (%d) inside it start at the same "
                           "time: Extrae's fork comes strictly before the team starts" % (t, EV_OUTLINED))
            stack.append(["U", t, ln, False])
    if end > last and stack and stack[-1][0] == "F":
        spans.append((last, end, stack[-1][1]))
    for frame in stack:
        if frame[0] == "F":
            report(frame[2], "the fork at %d has no join (%d:0) before the end of the trace"
                   % (frame[1], EV_FORK))
    return spans, forks


def not_in_state(states, begins, a, b, want):
    """(the first time in [a, b) not in state want, the state there or None), or None."""
    i, t = max(bisect_right(begins, a) - 1, 0), a
    while t < b:
        while i < len(states) and states[i][1] <= t:
            i += 1
        if i == len(states) or states[i][0] > t:
            return t, None
        if states[i][2] != want:
            return t, states[i][2]
        t = states[i][1]
    return None


def check_fork_join(header, body, problem):
    total = 0
    for thr in header.threads:
        def report(lineno, msg):
            problem(body.path, lineno, "%s: %s" % (thread_name(thr), msg))
        spans, forks = fork_join_spans(body.timeline.get(thr, ()), header.end, report)
        total += forks
        states = body.thread_states.get(thr, [])
        begins, reported = [b for b, _, _ in states], set()
        for a, b, fork in spans:
            bad = not_in_state(states, begins, a, b, ST_FORK_JOIN)
            if bad and fork not in reported:
                reported.add(fork)
                report(0, "at %d, inside the fork at %d and outside its outlined function (%d), state %s: "
                       "Extrae shows that time as state %d (Scheduling and Fork/Join)"
                       % (bad[0], fork, EV_OUTLINED, "(none)" if bad[1] is None else bad[1], ST_FORK_JOIN))
    if not total:
        problem(None, 0, "no OpenMP fork (no event %d with a nonzero value)" % EV_FORK)


def allowed_cpus(changes, times, base, record_times):
    """The CPUs a record at record_times may carry after the thread's 40000033 changes; empty: any."""
    allowed = set()
    for t in record_times:
        i, j = bisect_left(times, t), bisect_right(times, t)
        if i:  # an earlier change; one at the same time may have applied or not
            allowed |= {base + v for _, v, _ in changes[i - 1:j]}
    return allowed


def check_cpus(header, body, problem):
    if not header.cpus:
        return  # reported with the header
    changes = {thr: [(t, v, ln) for t, typ, v, ln in evs if typ == EV_CPU]
               for thr, evs in body.timeline.items()}
    if not any(changes.values()):
        problem(None, 0, "no event %d (Executing CPU)" % EV_CPU)
    for thr in header.threads:
        node = header.appls[thr[0] - 1][thr[1] - 1][1]
        if not 1 <= node <= len(header.cpus):
            continue
        base, mine = sum(header.cpus[:node - 1]), changes.get(thr, [])
        for t, v, ln in mine:
            if not 1 <= v <= header.cpus[node - 1]:
                problem(body.path, ln, "%s: %d:%d at %d is not a CPU of its node %d (1..%d: the CPU within the "
                        "node + 1)" % (thread_name(thr), EV_CPU, v, t, node, header.cpus[node - 1]))
        times = [t for t, _, _ in mine]
        wrong = [(ln, what, cpu, allowed) for rtimes, cpu, ln, what in body.cpu_records.get(thr, ())
                 for allowed in [allowed_cpus(mine, times, base, rtimes)] if allowed and cpu not in allowed]
        if wrong:
            ln, what, cpu, allowed = wrong[0]
            problem(body.path, ln, "%s of %s: cpu %d, but its latest %d event says cpu %s (node %d starts "
                    "after %d cpus); %d records of this thread disagree"
                    % (what, thread_name(thr), cpu, EV_CPU, " or ".join(map(str, sorted(allowed))), node, base,
                       len(wrong)))


def check_extrae(opts, header, pcf, row_files, body, problem):
    check_calls(opts, header, body, problem)
    if opts.extrae_names or opts.expect_pseudo is not None:
        check_names(opts, header, row_files, problem)
    check_pids(opts, body, problem)
    if opts.mpi_extrae:
        check_mpi(header, pcf, body, problem)
    if opts.expect_fork_join:
        check_fork_join(header, body, problem)
    if opts.expect_cpus:
        check_cpus(header, body, problem)


# ---- the check, the summary, the queries --------------------------------------------------------

def make_summary(path, header, levels, body):
    names = levels.get("THREAD", [])

    def by_value(counter):
        return {str(k): n for k, n in sorted(counter.items())}

    return {
        "trace": path, "end_time": header.end, "records": dict(body.records), "tasks": header.total_tasks,
        "thread_names": names,
        "threads": {"%d.%d.%d" % thr: {"name": names[i] if i < len(names) else None,
                                         "states": by_value(body.state_time[thr])}
                    for i, thr in enumerate(header.threads)},
        "events": {str(t): {"total": sum(c.values()), "values": by_value(c)}
                   for t, c in sorted(body.events.items())},
        "comms": {"total": sum(body.comm_tags.values()),
                  "by_tag": by_value(body.comm_tags)},
    }


def check_expectations(opts, header, pcf, body, problem):
    for typ, val, n in opts.expect_events:
        c = body.events.get(typ, {})
        got = sum(k for v, k in c.items() if v != 0) if val == "*" else c.get(int(val), 0)
        if got != n:
            problem(None, 0, "%d events %d:%s, expected %d" % (got, typ, val, n))
    total = sum(body.comm_tags.values())
    if opts.expect_comms is not None and total != opts.expect_comms:
        problem(None, 0, "%d communications, expected %d" % (total, opts.expect_comms))
    for tag, n in opts.expect_comms_tag:
        if body.comm_tags[tag] != n:
            problem(None, 0, "%d communications with tag %d, expected %d" % (body.comm_tags[tag], tag, n))
    if opts.expect_threads is not None and len(header.threads) != opts.expect_threads:
        problem(None, 0, "%d threads, expected %d" % (len(header.threads), opts.expect_threads))
    if opts.expect_tasks is not None and header.total_tasks != opts.expect_tasks:
        problem(None, 0, "%d tasks, expected %d" % (header.total_tasks, opts.expect_tasks))
    for typ, sub in opts.expect_label:
        block = pcf.types.get(typ)
        if not any(sub in label for label in ((block and block.values) or {}).values()):
            problem(None, 0, "no VALUES label of event type %d contains %r" % (typ, sub))
    for state in opts.expect_state:
        ids = [s for s, label in pcf.states.items() if label == state or str(s) == state]
        if not any(body.state_time[thr][s] > 0 for thr in header.threads for s in ids):
            problem(None, 0, "no thread spends time in state %r" % state)


def check(prv, opts):
    """Returns (problems, summary); the summary is None when the check stopped early."""
    problem, summary, base = Problems(), None, prv[:-4]
    try:
        if not prv.endswith(".prv"):
            problem(prv, 0, "the trace must be named NAME.prv")
        for p in (prv, base + ".pcf", base + ".row"):
            if not os.path.isfile(p):
                problem(p, 0, "missing (NAME.pcf and NAME.row must lie beside NAME.prv)")
        if problem.items:
            return problem.items, None
        lines = read_lines(prv, problem)
        header = parse_header(prv, next(lines, (1, ""))[1], problem)
        if header is None:
            return problem.items, None
        if opts.expect_cpus and not header.cpus:
            problem(prv, 1, "no resource model (0) in the header, so no CPU to execute on (--expect-cpus)")
        for _ in range(header.ncomms):
            check_communicator(prv, *next(lines, (0, "")), header, problem)
        pcf = parse_pcf(base + ".pcf", problem)
        row_lines = {}
        levels = parse_row(base + ".row", header, problem, row_lines)
        body = Body(prv, header, pcf, opts, problem)
        body.run(lines)
        summary = make_summary(prv, header, levels, body)
        check_expectations(opts, header, pcf, body, problem)
        check_extrae(opts, header, pcf, (base + ".row", levels, row_lines), body, problem)
    except TooMany:
        problem.items.append("(stopping after %d problems)" % MAX_PROBLEMS)
    return problem.items, summary


# ---- self-test ----------------------------------------------------------------------------------

EXAMPLE = {  # a minimal trace in Extrae's layout, which paramedir loads
    "prv": """#Paraver (22/11/2025 at 12:00):1000000_ns:1(2):1:1(2:1)
1:1:1:1:1:0:100000:1
1:2:1:1:2:0:100000:2
2:1:1:1:1:100000:60000001:1:60000018:1:42000050:0:42000059:0
1:1:1:1:1:100000:400000:1
1:2:1:1:2:100000:150000:7
1:2:1:1:2:150000:850000:1
2:2:1:1:2:150000:60000018:1
2:1:1:1:1:400000:61000000:8
1:1:1:1:1:400000:450000:5
2:1:1:1:1:450000:61000000:0
1:1:1:1:1:450000:900000:1
3:1:1:1:1:500000:500000:2:1:1:2:600000:600000:64:7
2:2:1:1:2:850000:60000018:0:42000050:700000:42000059:1400000
1:2:1:1:2:850000:1000000:0
2:1:1:1:1:900000:60000001:0:60000018:0:42000050:800000:42000059:1000000
1:1:1:1:1:900000:1000000:1
""",
    "pcf": """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
LOOK_BACK           100
SPEED               1
FLAG_ICONS          ENABLED
NUM_OF_STATE_COLORS 1000
YMAX_SCALE          37


DEFAULT_SEMANTIC

THREAD_FUNC          State As Is


STATES
0    Idle
1    Running
2    Not created
5    Synchronization
7    Scheduling and Fork/Join


STATES_COLOR
0    {117,195,255}
1    {0,0,255}
2    {255,255,255}
5    {179,0,0}
7    {255,255,0}


EVENT_TYPE
0    60000001    Parallel (OMP)
VALUES
0      close
1      DO (open)
3      REGION (open)


EVENT_TYPE
0    60000018    Executed OpenMP parallel function
VALUES
0      End
1      main._omp_fn.0 [main.c:12]


EVENT_TYPE
0    61000000    pthread call
VALUES
0      Outside pthread call
8      pthread_mutex_*lock


EVENT_TYPE
7    42000050    PAPI_TOT_INS [Instr completed]
7    42000059    PAPI_TOT_CYC [Total cycles]


GRADIENT_COLOR
0    {0,255,2}
1    {0,244,13}


GRADIENT_NAMES
0    Gradient 0
1    Grad. 1/MPI Events
""",
    "row": """LEVEL CPU SIZE 2
1.node1
2.node1

LEVEL NODE SIZE 1
node1

LEVEL THREAD SIZE 2
main-thread
omp-worker-1
""",
}
EXPECT_OK = ["--expect-events", "60000018:*=2", "--expect-events", "61000000:8=1", "--expect-events",
             "42000050:0=1", "--expect-comms", "1", "--expect-comms-tag", "7=1", "--expect-threads", "2",
             "--expect-tasks", "1", "--expect-state", "5", "--expect-state", "Scheduling and Fork/Join",
             "--expect-label", "60000018=main._omp_fn"]
S1, S2, COMM = "1:1:1:1:1:", "1:2:1:1:2:", "2:1:1:2:600000:600000:64:7"
# (what, file, text in the example, its replacement, options, part of the expected problem or None: passes)
VARIANTS = [
    ("overlapping states", "prv", S1 + "100000:400000:1", S1 + "100000:900000:1", [], "overlaps"),
    ("gap between states", "prv", S1 + "400000:450000:5\n", "", [], "no state from 400000 to 450000"),
    ("gap, --allow-gaps", "prv", S1 + "400000:450000:5\n", "", ["--allow-gaps"], None),
    ("thread stops early", "prv", S1 + "900000:1000000:1\n", "", [], "no state after 900000"),
    ("state past the end", "prv", S1 + "900000:1000000:1", S1 + "900000:1000001:1", [], "after the header"),
    ("empty state", "prv", S2 + "100000:150000:7", S2 + "100000:100000:7", [], "earlier than end"),
    ("thread not in header", "prv", S2 + "850000:1000000:0", "1:2:1:1:3:850000:1000000:0", [],
     "thread 1.1.3 is not in the header"),
    ("cpu not in header", "prv", S2 + "0:100000:2", "1:3:1:1:2:0:100000:2", [], "cpu 3 is not"),
    ("undefined event type", "prv", "61000000:8", "61000001:8", [], "event type 61000001 has no"),
    ("value not in VALUES", "prv", "61000000:8", "61000000:9", [], "value 9 of event type 61000000"),
    ("odd event fields", "prv", "42000059:1400000", "42000059", [], "expected 6+2k"),
    ("value above int64", "prv", "42000059:1400000", "42000059:9223372036854775808", [], "signed 64-bit"),
    ("unsorted records", "prv", "1:450000:61000000:0", "1:350000:61000000:0", [], "must be sorted"),
    ("header without _ns", "prv", "1000000_ns", "1000000", [], "must be _ns"),
    ("header node out of range", "prv", "1:1(2:1)", "1:1(2:2)", [], "node 2 is not in 1..1"),
    ("header task count", "prv", "1:1(2:1)", "1:2(2:1)", [], "declares 2 tasks but lists 1"),
    ("communicator lines", "prv", "1:1(2:1)\n", "1:1(2:1),1\nc:1:1:1:1\n", [], None),
    ("missing communicator line", "prv", "1:1(2:1)\n", "1:1(2:1),1\n", [], "communicator line"),
    ("record type 4", "prv", S1 + "0:100000:1", "4:1:1:1:1:0:100000:1", [], "record type '4'"),
    ("backward communication", "prv", COMM, COMM.replace("600000", "400000"), [], "clock bug"),
    ("backward, allowed", "prv", COMM, COMM.replace("600000", "400000"), ["--allow-backward-comms"], None),
    ("signed time", "prv", S1 + "0:100000:1", S1 + "-0:100000:1", [], "not an unsigned decimal"),
    ("truncated file", "prv", "900000:1000000:1\n", "900000:1000000:1", [], "no newline"),
    ("CRLF", "prv", "0:100000:2\n", "0:100000:2\r\n", [], "carriage return"),
    ("undefined state", "prv", S2 + "100000:150000:7", S2 + "100000:150000:9", [], "state 9 is not defined"),
    ("value label above 2^31", "pcf", "1      DO (open)", "2147483648 DO (open)", [], "does not fit int32"),
    ("type above 2^31", "pcf", "60000001    Parallel", "3000000000 Parallel", [], "does not fit int32"),
    ("unknown pcf section", "pcf", "STATES_COLOR\n", "STATE_COLORS\n", [], "unknown section"),
    ("bad state colour", "pcf", "{179,0,0}", "{179,0,256}", [], "above 255"),
    ("two VALUES lists", "pcf", "3      REGION (open)", "VALUES\n3      REGION (open)", [], "second VALUES"),
    ("type defined twice", "pcf", "0    61000000", "0    60000018", [], "defined twice"),
    ("UNITS not ns", "pcf", "NANOSEC", "MICROSEC", [], "UNITS 'MICROSEC'"),
    ("wrong THREAD size", "row", "SIZE 2\nmain-thread\nomp-worker-1", "SIZE 1\nmain-thread", [],
     "LEVEL THREAD has 1 labels, but the header declares 2"),
    ("row level too short", "row", "omp-worker-1\n", "", [], "file ends after 1 labels"),
    ("empty row label", "row", "2.node1", "", [], "empty label"),
    ("expectation mismatch", "prv", "", "", ["--expect-events", "60000018:1=3"], "2 events 60000018:1"),
    ("§3.5: fork with its outlined function", "prv", "", "", ["--expect-fork-join"], "at the same time"),
    ("§3.5: no CPU events", "prv", "", "", ["--expect-cpus"], "no event 40000033"),
]
# per thread time in each state; paramedir's states profile of this example agrees (extrae.md §3.5)
EXAMPLE_STATES = {"1.1.1": {"1": 950000, "5": 50000},
                  "1.1.2": {"0": 150000, "1": 700000, "2": 100000, "7": 50000}}

# a trace in Extrae's conventions, which the Extrae options accept: 2 tasks on 2 nodes of 2 CPUs; task 1
# forks an OpenMP team (thread 1.1.2 a worker) and migrates to CPU 2 at 500; task 2 has a GPU stream
EXTRAE = {
    "prv": """#Paraver (22/11/2025 at 12:00):1000_ns:2(2,2):1:2(2:1,2:2)
2:1:1:1:1:0:40000036:1111:40000033:1
1:1:1:1:1:0:10:1
2:2:1:1:2:0:40000033:2
1:2:1:1:2:0:110:0
2:3:1:2:1:0:40000036:2222:40000033:1
1:3:1:2:1:0:10:1
1:0:1:2:2:0:1000:0
2:1:1:1:1:10:50000003:31
1:1:1:1:1:10:20:15
2:3:1:2:1:10:50000003:31
1:3:1:2:1:10:20:15
2:1:1:1:1:20:50000003:0
1:1:1:1:1:20:100:1
2:3:1:2:1:20:50000003:0
1:3:1:2:1:20:350:1
2:1:1:1:1:100:60000001:1
1:1:1:1:1:100:110:7
2:2:1:1:2:110:60000018:1
1:2:1:1:2:110:200:1
2:1:1:1:1:110:60000018:1
1:1:1:1:1:110:200:1
2:1:1:1:1:200:60000018:0
1:1:1:1:1:200:210:7
2:2:1:1:2:200:60000018:0
1:2:1:1:2:200:1000:0
2:1:1:1:1:210:60000001:0
1:1:1:1:1:210:300:1
2:1:1:1:1:300:50000001:1
1:1:1:1:1:300:320:4
3:1:1:1:1:300:310:3:1:2:1:400:420:64:1
2:1:1:1:1:320:50000001:0
1:1:1:1:1:320:500:1
2:3:1:2:1:350:50000001:2
1:3:1:2:1:350:420:3
2:3:1:2:1:420:50000001:0
1:3:1:2:1:420:600:1
2:2:1:1:1:500:40000033:2
1:2:1:1:1:500:600:1
2:2:1:1:1:600:50000002:8
1:2:1:1:1:600:650:13
2:3:1:2:1:600:50000002:8
1:3:1:2:1:600:650:13
2:2:1:1:1:650:50000002:0
1:2:1:1:1:650:900:1
2:3:1:2:1:650:50000002:0
1:3:1:2:1:650:900:1
2:3:1:2:1:700:50000002:8:50000002:0
2:2:1:1:1:900:50000003:32
1:2:1:1:1:900:950:15
2:3:1:2:1:900:50000003:32
1:3:1:2:1:900:950:15
2:2:1:1:1:950:50000003:0
1:2:1:1:1:950:1000:1
2:3:1:2:1:950:50000003:0
1:3:1:2:1:950:1000:1
""",
    "pcf": """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC


STATES
0    Idle
1    Running
3    Waiting a message
4    Blocking Send
7    Scheduling and Fork/Join
13   Group Communication
15   Others


EVENT_TYPE
0    40000033    Executing CPU
0    40000036    Process IDentifier


EVENT_TYPE
0    50000001    MPI Point-to-point
VALUES
0      Outside MPI
1      MPI_Send
2      MPI_Recv


EVENT_TYPE
0    50000002    MPI Collective Comm
VALUES
0      Outside MPI
8      MPI_Barrier


EVENT_TYPE
0    50000003    MPI Other
VALUES
0      Outside MPI
31     MPI_Init
32     MPI_Finalize


EVENT_TYPE
0    60000001    Parallel (OMP)
VALUES
0      close
1      Parallel (open)


EVENT_TYPE
0    60000018    Executed OpenMP parallel function
VALUES
0      End
1      main._omp_fn.0 [main.c:12]
""",
    "row": """LEVEL CPU SIZE 4
1.node1
2.node1
3.node2
4.node2

LEVEL NODE SIZE 2
node1
node2

LEVEL APPL SIZE 1
mpi-app

LEVEL TASK SIZE 2
1.1
1.2

LEVEL THREAD SIZE 4
THREAD 1.1.1
THREAD 1.1.2
THREAD 1.2.1
CUDA-D1.S1
""",
}
EXTRAE_OK = ["--expect-calls", "50000001:1=1", "--expect-calls", "50000002:8=2", "--expect-calls",
             "60000018:1=2", "--no-zero-calls", "50000001,50000003", "--no-zero-calls", "60000018",
             "--extrae-names", "--expect-pseudo", "1", "--expect-task-pid", "1=1111", "--expect-task-pid",
             "2=2222", "--mpi-extrae", "--expect-fork-join", "--expect-cpus"]
T1_UF = "2:1:1:1:1:110:60000018:1\n1:1:1:1:1:110:200:1\n"  # thread 1.1.1 runs the outlined function
NESTED = """2:1:1:1:1:110:60000018:1
1:1:1:1:1:110:130:1
2:1:1:1:1:130:60000001:1
1:1:1:1:1:130:140:7
2:1:1:1:1:140:60000018:1
1:1:1:1:1:140:160:1
2:1:1:1:1:160:60000018:0
1:1:1:1:1:160:170:7
2:1:1:1:1:170:60000001:0
1:1:1:1:1:170:200:1
"""  # ... and forks an inner team in it: the inner fork and join are state 7, the rest of the function is not
EXTRAE_VARIANTS = [
    ("calls: 0 ns bursts not counted", "prv", "", "", ["--expect-calls", "50000002:8=3"],
     "2 bursts 50000002:8 of positive duration (Paraver's count), expected 3; and 1 of 0 ns"),
    ("calls: a value never set", "prv", "", "", ["--expect-calls", "50000001:5=1"], "0 bursts 50000001:5"),
    ("calls: overridden in one record", "prv", "", "", ["--no-zero-calls", "60000018,50000002"],
     "thread 1.2.1: 50000002:8 at 700 lasts 0 ns"),
    ("names: another thread's label", "row", "THREAD 1.1.2", "THREAD 1.1.3", ["--extrae-names"],
     "labelled 'THREAD 1.1.3'"),
    ("names: thread after a stream", "row", "THREAD 1.2.1\nCUDA-D1.S1", "CUDA-D1.S1\nTHREAD 1.2.2",
     ["--extrae-names"], "comes after a pseudo-thread of task 1.2"),
    ("names: application of a pid", "row", "mpi-app", "mpi-app [4242]", ["--extrae-names"],
     "ends in ' [<digits>]'"),
    ("pseudo: APPL not its business", "row", "mpi-app", "mpi-app [4242]", ["--expect-pseudo", "1"], None),
    ("pseudo: count", "row", "", "", ["--expect-pseudo", "2"], "1 pseudo-threads"),
    ("pseudo: stream named a thread", "row", "CUDA-D1.S1", "THREAD 1.2.2", ["--expect-pseudo", "1"],
     "0 pseudo-threads"),
    ("pseudo: implies the labels", "row", "THREAD 1.1.2", "THREAD 1.1.3", ["--expect-pseudo", "1"],
     "labelled 'THREAD 1.1.3'"),
    ("pid: of another task", "prv", "", "", ["--expect-task-pid", "1=2222"],
     "thread 1.1.1 has no event 40000036"),
    ("pid: on two tasks", "prv", "40000036:2222", "40000036:1111", ["--expect-task-pid", "1=1111"],
     "thread 1.2.1, not of task 1.1, has the event 40000036:1111"),
    ("pid: task not in the header", "prv", "", "", ["--expect-task-pid", "3=1111"], "thread 1.3.1 has no"),
    ("mpi: MPI_Send's value", "pcf", "1      MPI_Send", "7      MPI_Send", ["--mpi-extrae"],
     "MPI_Send is 50000001:1 in Extrae; here 50000001:7"),
    ("mpi: MPI_Barrier's type", "pcf", "31     MPI_Init", "31     MPI_Barrier", ["--mpi-extrae"],
     "MPI_Barrier is 50000002:8 in Extrae; here 50000003:31"),
    ("mpi: not Extrae's MPI call", "pcf", "2      MPI_Recv", "2      MPI_Recv_init", ["--mpi-extrae"],
     "is labelled 'MPI_Recv_init' in the .pcf, which is no MPI call"),
    ("mpi: MPI_Send's state", "prv", "1:1:1:1:1:300:320:4", "1:1:1:1:1:300:320:1", ["--mpi-extrae"],
     "MPI_Send (50000001:1) at 300 is in state 1, but Extrae's state during MPI_Send is 4 (Blocking Send)"),
    ("fork: join not state 7", "prv", "1:1:1:1:1:200:210:7", "1:1:1:1:1:200:210:1", ["--expect-fork-join"],
     "at 200, inside the fork at 100 and outside its outlined function (60000018), state 1"),
    ("fork: as the team starts", "prv", "2:1:1:1:1:100:60000001:1\n1:1:1:1:1:100:110:7\n",
     "1:1:1:1:1:100:110:7\n2:1:1:1:1:110:60000001:1\n", ["--expect-fork-join"],
     "the fork at 110 and the outlined function (60000018) inside it start at the same"),
    ("fork: none", "prv", "2:1:1:1:1:100:60000001:1\n", "", ["--expect-fork-join"], "no OpenMP fork"),
    ("fork: no join", "prv", "2:1:1:1:1:210:60000001:0\n", "", ["--expect-fork-join"],
     "the fork at 100 has no join"),
    ("fork: nested", "prv", T1_UF, NESTED, ["--expect-fork-join"], None),
    ("fork: nested join not state 7", "prv", T1_UF, NESTED.replace("160:170:7", "160:170:1"),
     ["--expect-fork-join"], "at 160, inside the fork at 130"),
    ("cpus: after migrating", "prv", "1:2:1:1:1:900:950:15", "1:1:1:1:1:900:950:15", ["--expect-cpus"],
     "state record of thread 1.1.1: cpu 1, but its latest 40000033 event says cpu 2"),
    ("cpus: receiver", "prv", ":3:1:2:1:400:420:64:1", ":4:1:2:1:400:420:64:1", ["--expect-cpus"],
     "communication receive side of thread 1.2.1: cpu 4, but its latest 40000033 event says cpu 3"),
    ("cpus: old cpu as it migrates", "prv", "1:2:1:1:1:500:600:1", "1:1:1:1:1:500:600:1", ["--expect-cpus"],
     None),
    ("cpus: not in the node", "prv", "40000036:2222:40000033:1", "40000036:2222:40000033:3", ["--expect-cpus"],
     "40000033:3 at 0 is not a CPU of its node 2"),
    ("cpus: no resource model", "prv", "1000_ns:2(2,2):1:2(2:1,2:2)", "1000_ns:0:1:2(2:0,2:0)",
     ["--expect-cpus"], "no resource model"),
]


def self_test():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        prv = os.path.join(tmp, "t.prv")

        def run(files, args):
            for ext, text in files.items():
                with open(os.path.join(tmp, "t." + ext), "w", newline="") as f:
                    f.write(text)
            return check(prv, parse_args([prv] + args))

        for args in ([], ["--allow-gaps"], EXPECT_OK):
            problems, summary = run(EXAMPLE, args)
            states = summary and {k: t["states"] for k, t in summary["threads"].items()}
            if problems or states != EXAMPLE_STATES:
                failures += 1
                print("FAIL: the valid example %s: %s %s" % (args, problems, states))
        for args in ([], EXTRAE_OK):
            problems, _ = run(EXTRAE, args)
            if problems:
                failures += 1
                print("FAIL: the valid Extrae example %s: %s" % (args, problems))
        cases = [(EXAMPLE, v) for v in VARIANTS] + [(EXTRAE, v) for v in EXTRAE_VARIANTS]
        for example, (what, ext, old, new, args, expected) in cases:
            files = dict(example)
            assert not old or files[ext].count(old) == 1, what
            files[ext] = files[ext].replace(old, new)
            problems, _ = run(files, args)
            if expected is None and problems or expected and not any(expected in p for p in problems):
                failures += 1
                print("FAIL: %s: expected %s, got %s" % (what, expected and "a problem with %r" % expected
                                                         or "no problem", problems))
            else:
                shown = next(p for p in problems if expected in p) if expected else "passes"
                print("ok: %s: %s" % (what, shown))
    print("check_prv self-test: %d of %d cases failed" % (failures, len(cases) + 5))
    return 1 if failures else 0


# ---- command line -------------------------------------------------------------------------------

def matching(pattern, convert):
    """An argparse type: the text must match pattern; convert makes the value from the match."""
    def parse(text):
        m = re.fullmatch(pattern, text)
        if not m:
            raise argparse.ArgumentTypeError("%r does not match %s" % (text, pattern))
        return convert(m)
    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prv", nargs="?", help="NAME.prv (NAME.pcf and NAME.row beside it)")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--summary", action="store_true")
    p.add_argument("--allow-gaps", action="store_true")
    p.add_argument("--allow-backward-comms", action="store_true")
    p.add_argument("--expect-events", action="append", default=[], metavar="TYPE:VALUE=N",
                   type=matching(r"(\d+):(\*|-?\d+)=(\d+)", lambda m: (int(m[1]), m[2], int(m[3]))))
    p.add_argument("--expect-comms", type=int, metavar="N")
    p.add_argument("--expect-comms-tag", action="append", default=[], metavar="TAG=N",
                   type=matching(r"(\d+)=(\d+)", lambda m: (int(m[1]), int(m[2]))))
    p.add_argument("--expect-threads", type=int, metavar="N")
    p.add_argument("--expect-tasks", type=int, metavar="N")
    p.add_argument("--expect-label", action="append", default=[], metavar="TYPE=SUBSTRING",
                   type=matching(r"(\d+)=(.+)", lambda m: (int(m[1]), m[2])))
    p.add_argument("--expect-state", action="append", default=[], metavar="STATE")
    p.add_argument("--expect-calls", action="append", default=[], metavar="TYPE:VALUE=N",
                   type=matching(r"(\d+):(-?[1-9]\d*)=(\d+)", lambda m: (int(m[1]), int(m[2]), int(m[3]))))
    p.add_argument("--no-zero-calls", action="append", default=[], metavar="TYPE[,TYPE...]",
                   type=matching(r"\d+(,\d+)*", lambda m: [int(t) for t in m[0].split(",")]))
    p.add_argument("--extrae-names", action="store_true")
    p.add_argument("--expect-pseudo", type=int, metavar="N")
    p.add_argument("--expect-task-pid", action="append", default=[], metavar="TASK=PID",
                   type=matching(r"(\d+)=(-?\d+)", lambda m: (int(m[1]), int(m[2]))))
    p.add_argument("--mpi-extrae", action="store_true")
    p.add_argument("--expect-fork-join", action="store_true")
    p.add_argument("--expect-cpus", action="store_true")
    opts = p.parse_args(argv)
    if not opts.self_test and not opts.prv:
        p.error("NAME.prv is required")
    return opts


def main(argv):
    opts = parse_args(argv)
    if opts.self_test:
        return self_test()
    problems, summary = check(opts.prv, opts)
    if opts.summary and summary:
        print(json.dumps(summary, indent=1, sort_keys=True))
    for p in problems:
        print("check_prv: " + p, file=sys.stderr)
    if problems:
        return 1
    r = summary["records"]
    print("check_prv: %s ok: %d threads, %d records (%d states, %d events, %d communications), end %d ns"
          % (opts.prv, len(summary["threads"]), sum(r.values()), r.get("state", 0), r.get("event", 0),
             r.get("comm", 0), summary["end_time"]), file=sys.stderr if opts.summary else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
