"""CPU a child uses between calls: charged to it, and the child stopped past a small allowance.

A call's time limit covers the call. Threads a submission starts at import or leaves running when
a call returns (and processes, until the sweep after the call kills them) keep using the CPU
while the grader is busy elsewhere, and the per-call sweep ends processes only. So each child's
CPU seconds (all its processes and threads: autograder/sandbox/cputime.py ``tree_seconds``) are
read when a reply arrives and again when the next request is sent; what it used in between is
added up over the child's life. Past ``ALLOWANCE_S`` the child is killed before the request is
sent, and every module it imported fails from then on with one line naming the quantity (CPU
seconds between calls) and its cause; a fresh child would start the same threads again.

An honest child does nothing between calls: it waits on its request pipe (a timer thread that a
call starts and joins is inside the call). /proc reports CPU time in clock ticks (10 ms), so the
allowance is many ticks.

How much such threads get done before the next request goes out depends on how busy the machine
is, so the charge does not stop there: while a thread the child started is still working (running
or waiting for a core), the next request waits, until the thread stops or the allowance is used.
What a thread left working after a call costs is then the same on a quiet machine and a loaded
one; only the wall time of the wait differs.
"""
from __future__ import annotations

import time

from autograder.core.errors import StudentCrashed
from autograder.sandbox import cputime

#: CPU seconds a child may use between calls, in all over its life.
ALLOWANCE_S = 1.0
#: Seconds between looks at a child whose threads still work after a call.
SETTLE_POLL_S = 0.002
#: Longest wall-clock wait for such threads before a request, in seconds (a backstop: a thread
#: given a fiftieth of a core uses the allowance well within it).
SETTLE_MAX_S = 60.0


def _tree_seconds(child) -> float:
    """The child's ``cputime.tree_seconds``, read through the child's own ``cputime.Tree``."""
    if child.cpu is None:
        child.cpu = cputime.Tree(child.proc.pid)
    return child.cpu.seconds()


def mark(child) -> None:
    """Note the child's CPU seconds now: a reply arrived, the time between calls starts."""
    child.idle_from = _tree_seconds(child)


def _settle(child, cpu_now: float) -> float:
    """The child's CPU seconds once no thread it started is working, or once what it used since
    its last reply takes it past ALLOWANCE_S (or SETTLE_MAX_S passed)."""
    until = time.monotonic() + SETTLE_MAX_S
    while (child.cpu.working_threads() and child.idle_cpu + cpu_now - child.idle_from <= ALLOWANCE_S
           and time.monotonic() < until):
        time.sleep(SETTLE_POLL_S)
        cpu_now = _tree_seconds(child)
    return cpu_now


def charge(box, child, module: str) -> float:
    """The CPU seconds of ``child`` (a ChildHandle of Sandbox ``box``) now, as a request for
    ``module`` is about to be sent, after adding what it used since its last reply; past
    ALLOWANCE_S, it is stopped and StudentCrashed raised for ``module`` and every module it imported."""
    cpu_now = _tree_seconds(child)
    if child.idle_from is not None:
        cpu_now = _settle(child, cpu_now)
        child.idle_cpu += max(0.0, cpu_now - child.idle_from)
    child.idle_from = None
    if child.idle_cpu <= ALLOWANCE_S:
        return cpu_now
    box._discard()
    error = StudentCrashed(
        f"the process running {box.label} used {child.idle_cpu:.2f} CPU s between calls, more than"
        f" the {ALLOWANCE_S:g} CPU s allowed: threads or processes it started (at import, or in a call"
        f" that returned without ending them) kept running; it was stopped, and {module}.py is not"
        f" called again")
    for name, known in box.modules.items():
        if isinstance(known, list):
            box.poisoned[name] = error
    box.poisoned[module] = error
    raise error
