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
          and cover [0, end] (unless --allow-gaps); no receive before its send (unless
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
--self-test runs this checker on the example of extrae.md §3.5 and on broken variants of it.
"""
import argparse
import collections
import json
import os
import re
import sys
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

def parse_row(path, header, problem):
    """Returns {level: labels}, after checking the blocks and their sizes against the header."""
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
        return begin

    def event(self, lineno, f):
        if len(f) < 8 or len(f) % 2:
            self.report(lineno, "event record has %d fields, expected 6+2k "
                        "(2:cpu:appl:task:thread:time:type:value[:type:value]...)" % len(f))
            return None
        v = self.numbers(lineno, f[1:6], "event record")
        if v is None:
            return None
        self.located(lineno, *v[:4], "event record")
        self.in_time(lineno, "event", v[4])
        for typ_s, val_s in zip(f[6::2], f[7::2]):
            typ, val = uint(typ_s), sint(val_s)
            if typ is None or typ > INT32_MAX:
                self.report(lineno, "event type %r is not an unsigned integer below 2^31" % typ_s)
                continue
            if val is None or not INT64_MIN <= val <= INT64_MAX:
                self.report(lineno, "value %r of event type %d is not a signed 64-bit integer" % (val_s, typ))
                continue
            self.events[typ][val] += 1
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
        self.located(lineno, *v[0:4], "communication sender")
        self.located(lineno, *v[6:10], "communication receiver")
        self.in_time(lineno, "communication", ls, ps, lr, pr)
        if not self.opts.allow_backward_comms and (lr < ls or pr < ps):
            self.report(lineno, "received (logical %d, physical %d) before it was sent (logical %d, physical "
                        "%d): a clock bug (--allow-backward-comms allows it)" % (lr, pr, ls, ps))
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
        for _ in range(header.ncomms):
            check_communicator(prv, *next(lines, (0, "")), header, problem)
        pcf = parse_pcf(base + ".pcf", problem)
        levels = parse_row(base + ".row", header, problem)
        body = Body(prv, header, pcf, opts, problem)
        body.run(lines)
        summary = make_summary(prv, header, levels, body)
        check_expectations(opts, header, pcf, body, problem)
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
]
# per thread time in each state; paramedir's states profile of this example agrees (extrae.md §3.5)
EXAMPLE_STATES = {"1.1.1": {"1": 950000, "5": 50000},
                  "1.1.2": {"0": 150000, "1": 700000, "2": 100000, "7": 50000}}


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
        for what, ext, old, new, args, expected in VARIANTS:
            files = dict(EXAMPLE)
            assert not old or files[ext].count(old) == 1, what
            files[ext] = files[ext].replace(old, new)
            problems, _ = run(files, args)
            if expected is None and problems or expected and not any(expected in p for p in problems):
                failures += 1
                print("FAIL: %s: expected %s, got %s" % (what, expected and "a problem with %r" % expected
                                                         or "no problem", problems))
            else:
                print("ok: %s: %s" % (what, problems[0] if problems else "passes"))
    print("check_prv self-test: %d of %d cases failed" % (failures, len(VARIANTS) + 3))
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
