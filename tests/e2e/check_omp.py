#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
r"""check_omp.py - reads an OTF2 archive with python3-otf2 (independent of our writer) and
checks its OpenMP events: their structure, then the counts the caller knows about the
traced program.  The generic checks (references, time order, Enter/Leave, lock holders) are
check_otf2.py's; this one looks at the OpenMP paradigm only.

    check_omp.py ARCHIVE/traces.otf2 [expectations...]

Regions counted are those of paradigm OPENMP; ThreadFork, ThreadJoin, ThreadAcquireLock and
ThreadReleaseLock those of model OPENMP; ThreadTeamBegin and ThreadTeamEnd all of them.
A "team location" is a location with at least one ThreadTeamBegin.

Structure (always):
  - per location, ThreadFork and ThreadJoin pair up (a join closes the latest fork), and
    ThreadTeamBegin and ThreadTeamEnd pair up with the same team, none left open; a location
    begins only teams whose communicator's group holds it, never one it is in already; a
    team's group lists its threads in the order of their OpenMP thread numbers, the master
    (the location whose ThreadFork is open when it begins the team) first, and a
    ThreadTaskCreate's creating thread is the creating location's rank in the group;
  - every Enter of a PARALLEL region (named '!$omp parallel...') lies inside a team on its
    location, every ThreadTeamBegin is followed by the Enter of one, and there are as many
    PARALLEL Enters as ThreadTeamBegins;
  - every task created is executed and every task executed was created: the TaskId
    attributes of the TASK_CREATE and the TASK Enters are the same set (without TaskId
    attributes: as many TASK Enters as TASK_CREATE Enters).  A task entered again with the
    same TaskId is a resumption.  Region stacks are per task where the archive has task
    events (untied tasks: ThreadTaskCreate/Switch/Complete, see otf2_tasks.py); each task
    switched to was created and completes with none of its regions open;
  - a TaskDependsOn attribute is a comma-separated list of TaskIds of tasks created, not the
    task's own, and the task starts (first TASK Enter) after each of them ended (last Leave);
  - nothing is entered inside a lock API call (a WRAPPER region of paradigm OPENMP);
  - per location, as many OPENMP ThreadReleaseLock as ThreadAcquireLock, per lock.

Expectations (each may be repeated; COUNT is N exactly, N+ at least N, or N-M from N to M):
    --role ROLE=COUNT            Enters of regions of that otf2.RegionRole (PARALLEL, LOOP,
                                 SECTIONS, SINGLE, BARRIER, IMPLICIT_BARRIER, CRITICAL,
                                 ATOMIC, ORDERED, TASK, TASK_CREATE, TASK_WAIT, WRAPPER...)
    --name NAME=COUNT            Enters of the region named exactly NAME
    --name-prefix PREFIX=COUNT   Enters of regions whose name starts with PREFIX (mind that
                                 '!$omp task' also matches '!$omp taskwait': say '!$omp task @')
    --kind KIND=COUNT            events of that kind: ThreadFork, ThreadJoin, ThreadTeamBegin,
                                 ThreadTeamEnd, ThreadAcquireLock, ThreadReleaseLock, Enter
    --per-location-role ROLE=COUNT, --per-location-name NAME=COUNT,
    --per-location-name-prefix PREFIX=COUNT, --per-location-kind KIND=COUNT
                                 the same, on every team location
    --team-locations COUNT       distinct team locations
    --fork-locations COUNT       distinct locations with a ThreadFork
    --team-size SIZE=COUNT       ThreadTeamBegins in teams (communicators) of SIZE members
    --tasks COUNT                distinct tasks executed (TaskIds of TASK Enters)
    --task-resumptions COUNT     TASK Enters of a task already entered before
    --task-switches COUNT        ThreadTaskSwitch events (untied tasks)
    --task-dependent COUNT       tasks with a TaskDependsOn attribute
    --task-edges COUNT           distinct (task, task it waits for) pairs in those
    --requested N=COUNT          ThreadForks that asked for N threads (0: the default)
Flags (checks, no count):
    --tasks-in-parallel          every TASK Enter lies inside a PARALLEL region of its location
    --waits-cover-tasks          a taskwait (TASK_WAIT '!$omp taskwait') lasts until the tasks
                                 its task created before it ended (their last TASK Leave); a
                                 taskgroup until the tasks created inside it on its location
    --no-runtime-functions       no region is named after an OpenMP runtime's code
                                 ('libgomp.so...+0x...', 'libomp.so...'): a pool thread's time
                                 between teams is idle, not a function
The '=' splits at the last '=', so names may hold one.  Prints the counts per location and
in total; exits 1 with the reasons when anything fails, 2 on a usage error.  Example:

    check_omp.py a.otf2/traces.otf2 --kind ThreadFork=5 --role PARALLEL=10 \
        --per-location-role PARALLEL=5 --name-prefix '!$omp critical=8' --tasks 20+
"""
import collections
import re
import sys

import otf2
from otf2_tasks import TaskStacks

ROLES = {name: getattr(otf2.RegionRole, name) for name in dir(otf2.RegionRole) if name.isupper()}
ROLE_NAMES = {v: k for k, v in ROLES.items()}
MODEL_KINDS = ("ThreadFork", "ThreadJoin", "ThreadAcquireLock", "ThreadReleaseLock")
TEAM_KINDS = ("ThreadTeamBegin", "ThreadTeamEnd")


def usage(msg):
    print("check_omp: " + msg, file=sys.stderr)
    print(__doc__, file=sys.stderr)
    sys.exit(2)


def parse_count(text):
    """(low, high) from 'N', 'N+' or 'N-M' (high None: no bound)."""
    m = re.fullmatch(r"(\d+)(?:(\+)|-(\d+))?", text)
    if not m:
        raise ValueError("bad count %r (N, N+ or N-M)" % text)
    low = int(m.group(1))
    if m.group(2):
        return low, None
    return low, int(m.group(3)) if m.group(3) else low


def in_range(n, rng):
    low, high = rng
    return n >= low and (high is None or n <= high)


def show(rng):
    low, high = rng
    return "%d+" % low if high is None else str(low) if low == high else "%d-%d" % (low, high)


def short_name(name):
    """The region name without its source location: '!$omp parallel @a.c:3' -> '!$omp parallel'."""
    return name.split(" @", 1)[0]


class Counts:
    """Enters per role and per region name, events per kind."""

    def __init__(self):
        self.roles = collections.Counter()
        self.names = collections.Counter()
        self.kinds = collections.Counter()

    def get(self, what, key):
        if what == "role":
            return self.roles[key]
        if what == "name":
            return self.names[key]
        if what == "name-prefix":
            return sum(n for name, n in self.names.items() if name.startswith(key))
        return self.kinds[key]

    def summary(self):
        roles = ", ".join("%s=%d" % (ROLE_NAMES.get(r, str(r)), n) for r, n in
                          sorted(self.roles.items(), key=lambda kv: ROLE_NAMES.get(kv[0], "")))
        kinds = ", ".join("%s=%d" % kv for kv in sorted(self.kinds.items()))
        return "roles: %s; events: %s" % (roles or "-", kinds or "-")


def parse_expectations(args):
    """[(option, key, (low, high))] from the command line."""
    out = []
    i = 0
    flags = ("--tasks-in-parallel", "--waits-cover-tasks", "--no-runtime-functions")
    keyed = ("--role", "--name", "--name-prefix", "--kind", "--per-location-role",
             "--per-location-name", "--per-location-name-prefix", "--per-location-kind",
             "--team-size", "--requested")
    while i < len(args):
        opt = args[i]
        if opt in flags:
            out.append((opt, None, None))
            i += 1
            continue
        if i + 1 >= len(args):
            usage("option %s needs a value" % opt)
        val = args[i + 1]
        i += 2
        try:
            if opt in keyed:
                if "=" not in val:
                    usage("%s %s: KEY=COUNT expected" % (opt, val))
                key, count = val.rsplit("=", 1)
                if opt.endswith("role") and key not in ROLES:
                    usage("%s: no region role %r" % (opt, key))
                if opt in ("--team-size", "--requested"):
                    key = int(key)
                out.append((opt, key, parse_count(count)))
            elif opt in ("--team-locations", "--fork-locations", "--tasks",
                         "--task-resumptions", "--task-dependent", "--task-edges",
                         "--task-switches"):
                out.append((opt, None, parse_count(val)))
            else:
                usage("unknown option " + opt)
        except ValueError as e:
            usage("%s %s: %s" % (opt, val, e))
    return out


def attribute(ev, name):
    """The value of the event's attribute called name, or None."""
    for attr, value in (ev.attributes or {}).items():
        if attr.name == name:
            return value
    return None


# Two threads' time stamps may differ by their CPUs' clock offsets (tens of ns on a virtual
# machine): a wait that ends within this of a task that ran elsewhere covers it.
CLOCK_SLACK_NS = 1000


def waits_cover(waits, creates, last_end):
    """Problems: a taskwait that ended before a task its task created before it, or a taskgroup
    before a task created inside it on its location (beyond CLOCK_SLACK_NS)."""
    out = []
    by_parent = collections.defaultdict(list)
    for parent, t, tid in creates:
        by_parent[parent].append((t, tid))
    for loc, parent, name, enter, leave in waits:
        if leave is None:
            continue
        group = "taskgroup" in name
        for t, tid in by_parent[parent]:
            inside = enter <= t <= leave if group else t < enter
            if inside and last_end.get(tid, 0) > leave + CLOCK_SLACK_NS:
                out.append("%s: %r [%d, %d] ended before task %d (created at %d) ended at %d" % (
                    loc.name, name, enter, leave, tid, t, last_end[tid]))
                break
    return out


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        usage("an archive's traces.otf2 first")
    anchor = argv[1]
    expect = parse_expectations(argv[2:])
    errors = []
    total = Counts()
    per_loc = collections.defaultdict(Counts)
    forks = collections.defaultdict(list)  # location -> open forks (times)
    teams = collections.defaultdict(list)  # location -> open teams (comms)
    want_parallel = {}  # location -> time of a ThreadTeamBegin whose PARALLEL Enter is due
    held = collections.defaultdict(collections.Counter)  # location -> lock id -> balance
    team_sizes = collections.Counter()
    requested = collections.Counter()
    team_locs, fork_locs = set(), set()
    tstacks = TaskStacks()  # location -> [(region, task id)] open, per task (otf2_tasks.py)
    first_run, last_end = {}, {}  # task id -> its first TASK Enter, its last TASK Leave
    edges = set()  # (task, the task it waits for), from TaskDependsOn
    created_ids, run_ids = set(), collections.Counter()
    created_noid = run_noid = 0
    flags = {opt for opt, _, rng in expect if rng is None}
    creates = []  # (parent: task id or ('implicit', location), time, task id)
    waits = []  # [location, parent, name, enter, leave]
    runtime_regions = set()
    with otf2.reader.open(anchor) as tr:
        for loc, ev in tr.events:
            kind = type(ev).__name__
            if kind == "ThreadTaskCreate":
                # The creating thread is a rank in the team's group: this location's.
                members = list(ev.thread_team.group.members)
                if ev.creating_thread >= len(members) or members[ev.creating_thread] != loc:
                    errors.append("%s: ThreadTaskCreate at %d names creating thread %d of team "
                                  "%r, which is %s" % (
                                      loc.name, ev.time, ev.creating_thread,
                                      ev.thread_team.name,
                                      members[ev.creating_thread].name
                                      if ev.creating_thread < len(members) else "no member"))
            if tstacks.event(loc, kind, ev):
                continue
            if kind in ("CallingContextEnter", "CallingContextLeave"):  # stack samples on
                ev.region = ev.calling_context.region
                kind = kind[len("CallingContext"):]
            if kind in MODEL_KINDS and ev.model != otf2.Paradigm.OPENMP:
                continue
            if kind in ("Enter", "Leave"):
                region = ev.region
                if re.search(r"\b(libgomp|libomp|libiomp5)\.so", region.name):
                    runtime_regions.add(region.name)
                if region.paradigm != otf2.Paradigm.OPENMP:
                    continue
                if kind == "Enter" and loc in want_parallel:
                    if region.region_role != otf2.RegionRole.PARALLEL:
                        errors.append("%s: ThreadTeamBegin at %d followed by Enter %r, not a "
                                      "parallel region" % (loc.name, want_parallel[loc],
                                                           region.name))
                    del want_parallel[loc]
                if kind == "Leave":
                    if tstacks.stack(loc):
                        _, tid = tstacks.stack(loc).pop()
                        if tid is not None and region.region_role == otf2.RegionRole.TASK:
                            last_end[tid] = ev.time
                        if isinstance(tid, list):  # a wait: its Leave
                            tid[4] = ev.time
                    continue
                inner = tstacks.stack(loc)[-1][0] if tstacks.stack(loc) else None
                if inner and inner.region_role == otf2.RegionRole.WRAPPER:
                    errors.append("%s: Enter %r at %d inside the lock call %r" % (
                        loc.name, region.name, ev.time, inner.name))
                tid = None
                stack = tstacks.context(loc)
                parent = next((t for r, t in reversed(stack) if r.region_role == otf2.RegionRole.TASK
                               and t is not None), ("implicit", loc))
                if region.region_role == otf2.RegionRole.TASK and "--tasks-in-parallel" in flags and \
                        not any(r.region_role == otf2.RegionRole.PARALLEL for r, _ in stack):
                    errors.append("%s: task %r entered at %d outside any parallel region" % (
                        loc.name, region.name, ev.time))
                if region.region_role in (otf2.RegionRole.TASK, otf2.RegionRole.TASK_CREATE):
                    tid = attribute(ev, "TaskId")
                    deps = attribute(ev, "TaskDependsOn")
                    if deps is not None and tid is not None:
                        if not re.fullmatch(r"\d+(,\d+)*", str(deps)):
                            errors.append("%s: task %d at %d: TaskDependsOn %r is not a list of "
                                          "task ids" % (loc.name, tid, ev.time, deps))
                        else:
                            edges.update((tid, int(d)) for d in str(deps).split(","))
                    if region.region_role == otf2.RegionRole.TASK_CREATE:
                        if tid is not None:
                            creates.append((parent, ev.time, tid))
                        if tid is None:
                            created_noid += 1
                        elif tid in created_ids:
                            errors.append("%s: task %d created twice (at %d)" % (
                                loc.name, tid, ev.time))
                        else:
                            created_ids.add(tid)
                    elif tid is None:
                        run_noid += 1
                    else:
                        run_ids[tid] += 1
                        first_run.setdefault(tid, ev.time)
                if region.region_role == otf2.RegionRole.TASK_WAIT:
                    tid = [loc, parent, region.name, ev.time, None]
                    waits.append(tid)
                tstacks.stack(loc).append((region, tid))
                for c in (total, per_loc[loc]):
                    c.roles[region.region_role] += 1
                    c.names[region.name] += 1
                    c.kinds["Enter"] += 1
                if region.region_role == otf2.RegionRole.PARALLEL or \
                        region.name.startswith("!$omp parallel"):
                    if region.region_role != otf2.RegionRole.PARALLEL:
                        errors.append("region %r has role %s, not PARALLEL" % (
                            region.name, ROLE_NAMES.get(region.region_role)))
                    if not teams[loc]:
                        errors.append("%s: Enter %r at %d outside any team" % (
                            loc.name, region.name, ev.time))
                continue
            if kind not in MODEL_KINDS and kind not in TEAM_KINDS:
                continue
            total.kinds[kind] += 1
            per_loc[loc].kinds[kind] += 1
            if kind == "ThreadFork":
                forks[loc].append(ev.time)
                fork_locs.add(loc)
                requested[ev.number_of_requested_threads] += 1
            elif kind == "ThreadJoin":
                if not forks[loc]:
                    errors.append("%s: ThreadJoin at %d without ThreadFork" % (loc.name, ev.time))
                else:
                    forks[loc].pop()
            elif kind == "ThreadTeamBegin":
                team = ev.thread_team
                if team in teams[loc]:
                    errors.append("%s: ThreadTeamBegin of team %r at %d inside the same team" % (
                        loc.name, team.name, ev.time))
                teams[loc].append(team)
                team_locs.add(loc)
                want_parallel[loc] = ev.time
                members = list(team.group.members)
                team_sizes[len(members)] += 1
                # Members in the order of their OpenMP thread numbers: the master, which
                # forked the team (its fork still open), is rank 0.
                if forks[loc] and members and members[0] != loc:
                    errors.append("%s: master of team %r at %d, but its group begins with %s "
                                  "(members in thread-number order, the master first)" % (
                                      loc.name, team.name, ev.time, members[0].name))
                if loc not in members:
                    errors.append("%s: ThreadTeamBegin of team %r at %d, not one of its "
                                  "members" % (loc.name, team.name, ev.time))
            elif kind == "ThreadTeamEnd":
                if loc in want_parallel:
                    errors.append("%s: ThreadTeamEnd at %d with no parallel region since its "
                                  "ThreadTeamBegin" % (loc.name, ev.time))
                    del want_parallel[loc]
                if not teams[loc]:
                    errors.append("%s: ThreadTeamEnd at %d without ThreadTeamBegin" % (
                        loc.name, ev.time))
                else:
                    if teams[loc][-1] != ev.thread_team:
                        errors.append("%s: ThreadTeamEnd of team %r at %d, but team %r is "
                                      "open" % (loc.name, ev.thread_team.name, ev.time,
                                                teams[loc][-1].name))
                    teams[loc].pop()
            elif kind == "ThreadAcquireLock":
                held[loc][ev.lock_id] += 1
            elif kind == "ThreadReleaseLock":
                held[loc][ev.lock_id] -= 1
                if held[loc][ev.lock_id] < 0:
                    errors.append("%s: OpenMP lock %d released at %d, not held" % (
                        loc.name, ev.lock_id, ev.time))
                    held[loc][ev.lock_id] = 0

    for loc in sorted(set(forks) | set(teams) | set(held), key=lambda l: l.name):
        if forks[loc]:
            errors.append("%s: %d ThreadFork never joined" % (loc.name, len(forks[loc])))
        if teams[loc]:
            errors.append("%s: %d ThreadTeamBegin never ended" % (loc.name, len(teams[loc])))
        for lock, n in held[loc].items():
            if n:
                errors.append("%s: OpenMP lock %d acquired %d times more than released" % (
                    loc.name, lock, n))
    errors += tstacks.finish()
    par = total.roles[otf2.RegionRole.PARALLEL]
    if par != total.kinds["ThreadTeamBegin"]:
        errors.append("%d parallel region Enters, %d ThreadTeamBegin" % (
            par, total.kinds["ThreadTeamBegin"]))
    tasks = len(run_ids) + run_noid
    resumptions = sum(run_ids.values()) - len(run_ids)
    never_run = created_ids - set(run_ids)
    never_created = set(run_ids) - created_ids
    if never_run:
        errors.append("%d tasks created, never executed (TaskIds %s)" % (
            len(never_run), sorted(never_run)[:10]))
    if never_created:
        errors.append("%d tasks executed, never created (TaskIds %s)" % (
            len(never_created), sorted(never_created)[:10]))
    for task, pred in sorted(edges):
        if pred == task or pred not in created_ids:
            errors.append("task %d depends on task %d, %s" % (
                task, pred, "itself" if pred == task else "never created"))
        elif task in first_run and (pred not in last_end or first_run[task] < last_end[pred]):
            errors.append("task %d started at %s, before task %d it depends on ended (at %s)" % (
                task, first_run[task], pred, last_end.get(pred)))
    if "--waits-cover-tasks" in flags:
        errors += waits_cover(waits, creates, last_end)
    if "--no-runtime-functions" in flags and runtime_regions:
        errors.append("regions named after an OpenMP runtime's code: %s" % sorted(runtime_regions)[:5])
    if created_noid != run_noid:
        errors.append("%d tasks created without a TaskId, %d executed without one" % (
            created_noid, run_noid))

    for loc in sorted(per_loc, key=lambda l: l.name):
        print("%-28s %s%s" % (loc.name, per_loc[loc].summary(),
                               " (team)" if loc in team_locs else ""))
    by_short = collections.Counter()
    for name, n in total.names.items():
        by_short[short_name(name)] += n
    print("regions: " + (", ".join("%r=%d" % kv for kv in sorted(by_short.items())) or "-"))
    print("teams: %d team locations, %d fork locations; sizes %s; requested %s" % (
        len(team_locs), len(fork_locs), dict(sorted(team_sizes.items())),
        dict(sorted(requested.items()))))
    dependent = len({task for task, _ in edges})
    print("tasks: %d created, %d executed, %d resumptions, %d switches, %d moved; %d with "
          "dependences, %d edges" % (len(created_ids) + created_noid, tasks, resumptions,
                                     tstacks.switches, len(tstacks.moved), dependent,
                                     len(edges)))
    print("total: " + total.summary())

    for opt, key, rng in expect:
        if rng is None:
            continue  # a flag, checked above
        what = opt[len("--per-location-"):] if opt.startswith("--per-location-") else opt[2:]
        key_v = ROLES[key] if what == "role" else key
        if opt.startswith("--per-location-"):
            if not team_locs:
                errors.append("%s %s: no team location" % (opt, key))
            for loc in sorted(team_locs, key=lambda l: l.name):
                n = per_loc[loc].get(what, key_v)
                if not in_range(n, rng):
                    errors.append("%s: %d %s %s, expected %s" % (loc.name, n, what, key, show(rng)))
        elif opt in ("--role", "--name", "--name-prefix", "--kind"):
            n = total.get(what, key_v)
            if not in_range(n, rng):
                errors.append("%d %s %s, expected %s" % (n, what, key, show(rng)))
        elif opt == "--team-locations":
            if not in_range(len(team_locs), rng):
                errors.append("%d team locations, expected %s" % (len(team_locs), show(rng)))
        elif opt == "--tasks":
            if not in_range(tasks, rng):
                errors.append("%d tasks executed, expected %s" % (tasks, show(rng)))
        elif opt == "--task-dependent":
            if not in_range(dependent, rng):
                errors.append("%d tasks with dependences, expected %s" % (dependent, show(rng)))
        elif opt == "--task-edges":
            if not in_range(len(edges), rng):
                errors.append("%d task dependence edges, expected %s" % (len(edges), show(rng)))
        elif opt == "--task-switches":
            if not in_range(tstacks.switches, rng):
                errors.append("%d ThreadTaskSwitch events, expected %s" % (tstacks.switches,
                                                                          show(rng)))
        elif opt == "--task-resumptions":
            if not in_range(resumptions, rng):
                errors.append("%d task resumptions, expected %s" % (resumptions, show(rng)))
        elif opt == "--fork-locations":
            if not in_range(len(fork_locs), rng):
                errors.append("%d fork locations, expected %s" % (len(fork_locs), show(rng)))
        elif opt == "--team-size":
            if not in_range(team_sizes[key], rng):
                errors.append("%d ThreadTeamBegin in teams of %d, expected %s" % (
                    team_sizes[key], key, show(rng)))
        elif opt == "--requested":
            if not in_range(requested[key], rng):
                errors.append("%d ThreadFork asking for %d threads, expected %s" % (
                    requested[key], key, show(rng)))
    if errors:
        for e in errors[:40]:
            print("check_omp: " + e, file=sys.stderr)
        if len(errors) > 40:
            print("check_omp: ... %d problems in all" % len(errors), file=sys.stderr)
        sys.exit(1)
    print("check_omp: ok")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except SystemExit:
        raise
    except Exception as e:  # a reader exception is a failed check, not a crash
        print("check_omp: reading the archive failed: %r" % e, file=sys.stderr)
        sys.exit(1)
