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
"""
from __future__ import annotations

from autograder.core.errors import StudentCrashed
from autograder.sandbox import cputime

#: CPU seconds a child may use between calls, in all over its life.
ALLOWANCE_S = 1.0


def _tree_seconds(child) -> float:
    """The child's ``cputime.tree_seconds``, read through the child's own ``cputime.Tree``."""
    if child.cpu is None:
        child.cpu = cputime.Tree(child.proc.pid)
    return child.cpu.seconds()


def mark(child) -> None:
    """Note the child's CPU seconds now: a reply arrived, the time between calls starts."""
    child.idle_from = _tree_seconds(child)


def charge(box, child, module: str) -> float:
    """The CPU seconds of ``child`` (a ChildHandle of Sandbox ``box``) now, as a request for
    ``module`` is about to be sent, after adding what it used since its last reply; past
    ALLOWANCE_S, it is stopped and StudentCrashed raised for ``module`` and every module it imported."""
    cpu_now = _tree_seconds(child)
    if child.idle_from is not None:
        child.idle_cpu += max(0.0, cpu_now - child.idle_from)
    child.idle_from = None
    if child.idle_cpu <= ALLOWANCE_S:
        return cpu_now
    box._discard()
    error = StudentCrashed(
        f"the process running {box.label} used {child.idle_cpu:.1f} CPU s between calls, more than"
        f" the {ALLOWANCE_S:g} CPU s allowed: threads or processes it started (at import, or in a call"
        f" that returned without ending them) kept running; it was stopped, and {module}.py is not"
        f" called again")
    for name, known in box.modules.items():
        if isinstance(known, list):
            box.poisoned[name] = error
    box.poisoned[module] = error
    raise error
