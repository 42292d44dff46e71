"""CPU seconds a child has used: a call's time limit counts the child's CPU time while it runs.

On a busy machine (every core taken, another class graded beside this one) a CPU-bound child gets
a share of a core, and its wall time stretches while the work it does stays the same. So a call
that passes its wall-clock limit is charged only when the child used its limit in CPU seconds, or
stopped using the CPU (blocked, waiting on nothing: a hang); a child that was running all along,
starved, gets the rest of its limit. No wall-clock ceiling: the sandbox's longest call is a limit
in CPU seconds too (a child that keeps running at RUNNING_SHARE or more of a core reaches it
within limit / RUNNING_SHARE seconds), so how busy the machine is never decides a verdict. On a quiet machine CPU and
wall time agree, and nothing changes. Read from /proc (Linux): the child and every process below it.
"""
from __future__ import annotations

import os
import time

#: Below this share of one core over the call so far, a child is not running (blocked: a hang).
RUNNING_SHARE = 0.05
#: Shortest extra wait granted at a time, in seconds.
MIN_WAIT_S = 0.2
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[float, int]:
    """(CPU seconds: user + system, with reaped children's; threads) of process ``pid``; (0.0, 0)
    if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / _TICK, int(fields[17])
    except (OSError, IndexError, ValueError):
        return 0.0, 0


def _children(pid: int, threads: int) -> list[int]:
    """Children of process ``pid`` (of every one of its ``threads``)."""
    out: list[int] = []
    try:   # one thread (the launcher, the jail's init, most runners): its list alone, no folder listing
        tasks = [str(pid)] if threads == 1 else os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):
            continue
    return out


def tree_seconds(pid: int) -> float:
    """CPU seconds used by process ``pid`` and every process below it (0.0 where unreadable).
    Read before every call into a child: three processes (the jail's launcher, init and the runner)."""
    total, todo, seen = 0.0, [pid], set()
    while todo and len(seen) < 256:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        seconds, threads = _stat(p)
        total += seconds
        if threads:
            todo += _children(p, threads)
    return total


def used_seconds(pid: int, cpu_at_start: float) -> float:
    """CPU seconds process ``pid`` and those below it used since ``cpu_at_start`` (tree_seconds)."""
    return tree_seconds(pid) - cpu_at_start


def starved_for(pid: int, cpu_at_start: float, started: float, limit_s: float) -> float:
    """Seconds more to wait for a call past its wall-clock limit, or 0 to charge it now.

    Args:
        pid: the child's process id.
        cpu_at_start: ``tree_seconds(pid)`` when the call was sent.
        started: when it was sent (time.monotonic()).
        limit_s: the call's limit, in seconds of CPU time.
    """
    used = used_seconds(pid, cpu_at_start)
    if used >= limit_s or used < RUNNING_SHARE * (time.monotonic() - started):
        return 0.0
    return max(limit_s - used, MIN_WAIT_S)
