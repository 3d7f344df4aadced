# SPDX-License-Identifier: BSD-3-Clause
"""otf2_tasks.py - region stacks per task, as OTF2's task events define them, for the
checkers that read archives with python3-otf2 (check_otf2.py, check_omp.py).

A location's events belong to the task it runs.  Before its first ThreadTaskSwitch that is
its implicit task; a switch to generation 0 of a team is the location's implicit task
again.  A ThreadTaskSwitch to an explicit task (team, creating thread, generation) saves
the current task's open regions and makes that task's current: the first time, with none
of its own, on top of the regions of the task it interrupted (its context, for checks that
ask what a region lies in); later, wherever the task goes on, with the regions it left
open.  ThreadTaskComplete ends a task: none of its regions may be open.  A task runs on one
location at a time, and is created (ThreadTaskCreate) once, before it runs.
"""
import collections


class TaskStacks:
    def __init__(self):
        self.current = {}  # location -> key of the task it runs
        self.own = collections.defaultdict(list)  # task key -> its open regions
        self.base = {}  # explicit task key -> the regions it began on top of
        self.where = {}  # explicit task key -> the location running it
        self.began = {}  # explicit task key -> the location it began on
        self.moved = set()  # tasks that went on on another location than they began on
        self.created, self.completed = set(), set()
        self.switches = 0
        self.errors = []

    @staticmethod
    def task_key(loc, ev):
        if ev.generation_number == 0:
            return ("implicit", loc)
        return (ev.thread_team, ev.creating_thread, ev.generation_number)

    def key(self, loc):
        return self.current.get(loc, ("implicit", loc))

    def stack(self, loc):
        """The open regions of the task loc runs: Enter appends, Leave pops."""
        return self.own[self.key(loc)]

    def context(self, loc):
        """What the task loc runs lies in, outermost first: where it began, then its own."""
        k = self.key(loc)
        return list(self.base.get(k, ())) + self.own[k]

    def event(self, loc, kind, ev):
        """Takes a ThreadTask* event; returns whether it was one."""
        if kind == "ThreadTaskCreate":
            k = self.task_key(loc, ev)
            if k in self.created:
                self.errors.append("%s: task %s created twice (at %d)" % (loc.name, _name(k), ev.time))
            self.created.add(k)
            return True
        if kind == "ThreadTaskSwitch":
            self.switches += 1
            old = self.key(loc)
            if old[0] != "implicit":
                self.where.pop(old, None)
            k = self.task_key(loc, ev)
            if k[0] != "implicit":
                if k in self.completed:
                    self.errors.append("%s: switch to task %s at %d, completed before" % (
                        loc.name, _name(k), ev.time))
                if k in self.where:
                    self.errors.append("%s: switch to task %s at %d, which %s runs" % (
                        loc.name, _name(k), ev.time, self.where[k].name))
                if k not in self.base:
                    if k not in self.created:
                        self.errors.append("%s: switch to task %s at %d, never created" % (
                            loc.name, _name(k), ev.time))
                    self.base[k] = tuple(self.context(loc))
                    self.began[k] = loc
                elif self.began[k] != loc:
                    self.moved.add(k)
                self.where[k] = loc
            self.current[loc] = k
            return True
        if kind == "ThreadTaskComplete":
            k = self.task_key(loc, ev)
            if k != self.key(loc):
                self.errors.append("%s: task %s completes at %d, but it runs %s" % (
                    loc.name, _name(k), ev.time, _name(self.key(loc))))
            elif self.own[k]:
                self.errors.append("%s: task %s completes at %d with %d regions open" % (
                    loc.name, _name(k), ev.time, len(self.own[k])))
            self.completed.add(k)
            return True
        return False

    def left_open(self, loc):
        """Regions still open on loc's implicit task, and the explicit tasks never completed
        (reported once, with the first location asked)."""
        return len(self.own[("implicit", loc)])

    def finish(self):
        for k in sorted(set(self.base) - self.completed, key=_name):
            self.errors.append("task %s switched to, never completed (%d regions open)" % (
                _name(k), len(self.own[k])))
        return self.errors


def _name(k):
    if k[0] == "implicit":
        return "implicit task of %s" % k[1].name
    team, creator, gen = k
    return "%s/%d/%d" % (getattr(team, "name", team), creator, gen)


# ---- self-test: archives written with python3-otf2, each checked by check_otf2.py ----

def _write(path, script):
    """An archive of two threads of one process in a team of both, with the events of
    script: (thread 0 or 1, time, kind, argument): "enter"/"leave" a region by name,
    "create"/"switch"/"complete" task (creator, generation)."""
    import otf2
    from otf2.enums import GroupType, Paradigm
    with otf2.writer.open(path, timer_resolution=1000000000) as tr:
        d = tr.definitions
        node = d.system_tree_node("node")
        group = d.location_group("process", system_tree_parent=node)
        locs = [d.location("Thread %d" % i, type=otf2.LocationType.CPU_THREAD, group=group)
                for i in range(2)]
        d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP,
                members=locs)
        team = d.comm("team", group=d.group("team", group_type=GroupType.COMM_GROUP,
                                             paradigm=Paradigm.OPENMP, members=locs))
        regions = {}
        writers = [tr.event_writer_from_location(l) for l in locs]
        for who, t, kind, arg in script:
            w = writers[who]
            if kind in ("enter", "leave"):
                r = regions.setdefault(arg, d.region(arg))
                w(otf2.events.Enter(t, r) if kind == "enter" else otf2.events.Leave(t, r))
            else:
                cls = {"create": otf2.events.ThreadTaskCreate,
                       "switch": otf2.events.ThreadTaskSwitch,
                       "complete": otf2.events.ThreadTaskComplete}[kind]
                w(cls(t, team, arg[0], arg[1]))


def _self_test():
    import os
    import subprocess
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    base = [(0, 1, "enter", "parallel"), (1, 1, "enter", "parallel"),
            (0, 2, "create", (0, 1))]
    good = base + [  # task 0/1 begins on thread 0, is suspended in its taskwait, goes on on 1
        (0, 3, "switch", (0, 1)), (0, 3, "enter", "task"), (0, 4, "enter", "taskwait"),
        (0, 5, "switch", (0, 0)), (0, 6, "enter", "barrier"),
        (1, 7, "switch", (0, 1)), (1, 8, "leave", "taskwait"), (1, 9, "leave", "task"),
        (1, 9, "complete", (0, 1)), (1, 9, "switch", (1, 0)),
        (0, 10, "leave", "barrier"), (0, 11, "leave", "parallel"), (1, 11, "leave", "parallel")]
    cases = [
        ("a task that moves", good, None),
        ("a Leave on the thread's implicit task", base + [
            (0, 3, "switch", (0, 1)), (0, 3, "enter", "task"), (0, 4, "switch", (0, 0)),
            (0, 5, "leave", "task"), (0, 6, "leave", "parallel"), (1, 6, "leave", "parallel")],
         "Leave task, but parallel is open"),
        ("completed with a region open", base + [
            (0, 3, "switch", (0, 1)), (0, 3, "enter", "task"), (0, 4, "enter", "taskwait"),
            (0, 5, "leave", "taskwait"), (0, 6, "complete", (0, 1)),
            (0, 6, "switch", (0, 0)), (0, 7, "leave", "parallel"), (1, 7, "leave", "parallel")],
         "completes at 6 with 1 regions open"),
        ("a task never created", [(0, 1, "enter", "parallel"), (0, 2, "switch", (1, 4)),
                                  (0, 3, "complete", (1, 4)), (0, 3, "switch", (0, 0)),
                                  (0, 4, "leave", "parallel")], "never created"),
        ("a task on two threads at once", base + [
            (0, 3, "switch", (0, 1)), (1, 4, "switch", (0, 1)), (1, 5, "complete", (0, 1)),
            (1, 5, "switch", (1, 0)), (0, 6, "switch", (0, 0)),
            (0, 7, "leave", "parallel"), (1, 7, "leave", "parallel")], "which Thread 0 runs"),
        ("a task never completed", base + [
            (0, 3, "switch", (0, 1)), (0, 4, "switch", (0, 0)),
            (0, 5, "leave", "parallel"), (1, 5, "leave", "parallel")], "never completed"),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, script, want) in enumerate(cases):
            path = os.path.join(tmp, "a%d" % i)
            _write(path, script)
            r = subprocess.run([sys.executable, os.path.join(here, "check_otf2.py"),
                                os.path.join(path, "traces.otf2")], capture_output=True,
                               text=True)
            ok = r.returncode == 0 if want is None else r.returncode == 1 and want in r.stderr
            print("%s: %s" % ("ok" if ok else "FAILED", name))
            if not ok:
                failed += 1
                print(r.stdout + r.stderr)
    print("%d cases, %d failed" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--self-test"]:
        sys.exit("usage: otf2_tasks.py --self-test")
    sys.exit(_self_test())
