"""Student files graded side by side: one lane per group of files no check of another group needs.

Once the fork server has torch, a grading's torch files (bw.py, flops.py) were graded one after
another, each file's checks in a child of its own, and the machine used one core while the other
idled (docs/performance.md). Files whose checks share no student file (itself or through the
Lesson's ``depends``) cannot see each other: each lane grades its group of tasks in children of
its own (a PerFileSandbox per lane, so each file still gets its own child, one at a time in its
lane), with a GradingContext of its own; the lanes share the reference's child, one request at a
time (``Serial``), and the grading's budget. The results are those of the same checks run one
after another: each check's calls and judgement stay within its own lane, and finish() puts the
results back in course.yml order whatever order the lanes ended in.

``count`` is how many lanes a grading uses: one per CPU this process may run on, at most
MAX_LANES; grade-all's workers pass one (they already keep every core busy).
"""
from __future__ import annotations

import os
import threading
from typing import Callable, TypeVar

from autograder.core.errors import GradingStopped

#: At most this many children of one submission run at once: each may use the whole
#: memory_limit_mb of course.yml, so a many-core machine does not multiply a hog's memory by its cores.
MAX_LANES = 4


def count(asked: int | None = None) -> int:
    """Lanes for one grading: ``asked`` (at least 1), else one per CPU this process may use, at most MAX_LANES."""
    if asked is not None:
        return max(1, int(asked))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_LANES, cpus))


def split(tasks: list, needs: dict[str, tuple[str, ...]], lanes: int) -> list[list]:
    """``tasks`` ([(task, checks), ...] in run order) in at most ``lanes`` groups, each in run order:
    tasks whose checks need a common student file (a check's files, and what ``needs`` says those
    need) are in one group; groups are dealt to the lanes largest first (by checks), ties in run order."""
    groups: list[tuple[set[str], list]] = []
    for task, checks in tasks:
        files = {f for c in checks for f in c.files}
        files |= {n for f in files for n in needs.get(f, ())}
        joined = [g for g in groups if g[0] & files]
        merged = (files.union(*(g[0] for g in joined)), [tc for g in joined for tc in g[1]] + [(task, checks)])
        groups = [g for g in groups if all(g is not j for j in joined)] + [merged]
    position = {id(tc[0]): i for i, tc in enumerate(tasks)}
    out: list[list] = [[] for _ in range(max(1, min(lanes, len(groups))))]
    for _files, members in sorted(groups, key=lambda g: -sum(len(cs) for _t, cs in g[1])):
        lightest = min(out, key=lambda lane: sum(len(cs) for _t, cs in lane))
        lightest.extend(members)
    return [sorted(lane, key=lambda tc: position[id(tc[0])]) for lane in out if lane]


class Serial:
    """A sandbox the lanes share (the reference's): its requests one at a time. ``lock`` is held
    around each; a caller that times a request (autograder/sandbox/calltime.py) holds it around
    the timing too, so that another lane's request is never counted in it."""

    LOCKED = ("call", "has", "import_seconds", "start")

    def __init__(self, box):
        self.box = box
        self.lock = threading.RLock()

    def __getattr__(self, name: str):
        value = getattr(self.box, name)
        if name not in self.LOCKED:
            return value

        def locked(*args, **kwargs):
            with self.lock:
                return value(*args, **kwargs)
        return locked


#: What one lane's run returns (the grading's: a ``checkrun.Ran``).
Result = TypeVar("Result")


def run(lanes: list, one: Callable[[int, list], Result], stop: Callable[[], None]) -> list[Result]:
    """``one(i, lanes[i])`` for every lane, the first in this thread and the others each in a
    thread of its own; their results in lane order. When one raises, ``stop()`` is called (it
    ends the other lanes' children, so they end soon) and, once every lane has ended, the first
    exception in lane order that is not GradingStopped (what stopping did to the others) is raised."""
    results: list = [None] * len(lanes)
    errors: list = [None] * len(lanes)

    def lane(i: int) -> None:
        try:
            results[i] = one(i, lanes[i])
        except BaseException as exc:  # kept and raised in the caller's thread, after the others end
            errors[i] = exc
            stop()

    threads = [threading.Thread(target=lane, args=(i,), name=f"grading-lane-{i}", daemon=True)
               for i in range(1, len(lanes))]
    for t in threads:
        t.start()
    try:
        lane(0)
    finally:
        if errors[0] is not None:
            stop()
        for t in threads:
            t.join()
    first = next((e for e in errors if e is not None and not isinstance(e, GradingStopped)),
                 next((e for e in errors if e is not None), None))
    if first is not None:
        raise first
    return results
