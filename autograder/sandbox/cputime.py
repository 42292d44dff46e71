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
import threading
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


class Tree:
    """``tree_seconds`` of one child, read before and after every call into it: each process's
    /proc files stay open and are read again in place (pread at offset 0), a third of the cost
    of opening them each time. An open file stays tied to the process it was opened for: once
    that process is gone its reads fail, and a process that reuses its pid gets files of its own.
    ``close`` releases them (the child's end, autograder/sandbox/launch.py ``close``)."""

    def __init__(self, pid: int):
        self.pid = pid
        self._files: dict[tuple[str, int], int] = {}   # (kind, pid) -> open file
        self._threaded: list[int] = []                   # processes of the last walk with 2+ threads
        #: Seconds each process of the last walk (its first thread) has waited, runnable, for a
        #: core over its life (/proc/PID/schedstat; absent where the kernel keeps no such count).
        self.waited: dict[int, float] = {}

    def _read(self, kind: str, pid: int) -> bytes:
        """The contents of /proc/``pid``'s ``stat`` or single thread's ``children``; b'' if gone.
        Read ``stat`` first: a process gone takes its kept ``children`` file with it (that file
        of a process gone reads as no children, not as an error)."""
        for _ in range(2):           # a kept file of a process gone: open the pid's afresh once
            fd = self._files.get((kind, pid))
            if fd is None:
                path = {"stat": f"/proc/{pid}/stat", "sched": f"/proc/{pid}/schedstat"}.get(
                    kind, f"/proc/{pid}/task/{pid}/children")
                try:
                    fd = self._files[kind, pid] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    return b""
            try:
                data = os.pread(fd, 1 << 16, 0)
            except OSError:
                data = None
            if data or (data is not None and kind == "children"):
                return data
            for other in ("stat", "sched", "children"):
                self._drop((other, pid))
        return b""

    def _drop(self, key: tuple[str, int]) -> None:
        fd = self._files.pop(key, None)
        if fd is not None:
            os.close(fd)

    def seconds(self) -> float:
        """CPU seconds used by the process and every process below it, as ``tree_seconds``."""
        total, todo, seen = 0.0, [self.pid], set()
        self._threaded, self.waited = [], {}
        while todo and len(seen) < 256:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            try:
                f = self._read("stat", p).rsplit(b")", 1)[1].split()
                total += (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / _TICK
                threads = int(f[17])
            except (IndexError, ValueError):
                continue
            try:
                self.waited[p] = int(self._read("sched", p).split()[1]) / 1e9
            except (IndexError, ValueError):
                pass
            if threads == 1:
                try:
                    todo += [int(x) for x in self._read("children", p).split()]
                except ValueError:
                    pass
            elif threads:
                self._threaded.append(p)
                todo += _children(p, threads)
        for key in [k for k in self._files if k[1] not in seen]:   # processes gone from the tree
            self._drop(key)
        return total

    def starved_since(self, waited: dict[int, float]) -> float:
        """Seconds the tree was kept from running since the walk that gave ``waited`` (a copy of
        ``waited`` then), as of the last walk: the longest a process of both walks waited,
        runnable, for a core in between. Its first thread's count: where a call's work runs on
        other threads, it reads low, and the call's time counts as on a quiet machine."""
        return max((self.waited[p] - before for p, before in waited.items() if p in self.waited), default=0.0)

    def working_threads(self) -> int:
        """How many threads besides a process's first are running or waiting for a core (state R),
        in the processes of the last ``seconds`` walk: work the child does on its own, where every
        thread of an honest child waits between calls (its first thread reads the next request,
        and may be seen returning to that read). Runnable counts as running, so a thread starved
        of the CPU on a busy machine is seen as working all the same."""
        working = 0
        for p in self._threaded:
            try:
                tasks = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for tid in tasks:
                if tid == str(p):
                    continue
                try:
                    with open(f"/proc/{p}/task/{tid}/stat", "rb") as fh:
                        working += fh.read().rsplit(b")", 1)[1].split()[0] == b"R"
                except (OSError, IndexError):
                    continue
        return working

    def close(self) -> None:
        for key in list(self._files):
            self._drop(key)


class Held:
    """How long one call's child has been kept from running by the machine since the call began:
    what its processes' first threads waited, runnable, for a core (``Tree.starved_since``), at
    most the call's wall time less the CPU seconds the child used (time a child spends keeping
    its own threads waiting is its own). A call's wall-clock deadlines move on by it (``more``)
    and a grading's budget leaves it out (``STARVED``), so how busy the machine is decides neither.

    Args:
        tree: the child's Tree, walked just before the call was sent.
        cpu_at_start: its ``seconds()`` then.
        started: when the call was sent (time.monotonic()).
    """

    def __init__(self, tree: Tree, cpu_at_start: float, started: float):
        self.tree, self.cpu_at_start, self.started = tree, cpu_at_start, started
        self.waited = dict(tree.waited)
        self.given = 0.0

    def total(self, cpu_now: float | None = None) -> float:
        """Seconds the call was held back so far; ``cpu_now``: the tree's ``seconds()`` just
        walked (else it walks now)."""
        used = (self.tree.seconds() if cpu_now is None else cpu_now) - self.cpu_at_start
        return max(0.0, min(self.tree.starved_since(self.waited), time.monotonic() - self.started - used))

    def more(self) -> float:
        """Seconds held back since the last ``more`` (0 below MIN_WAIT_S, kept for later)."""
        extra = self.total() - self.given
        if extra < MIN_WAIT_S:
            return 0.0
        self.given += extra
        return extra


class Starved:
    """Seconds the sandboxed children of this process were held back during calls (``Held``),
    added up over the process's life: a grading's budget does not count them (GradingContext)."""

    def __init__(self):
        self.seconds = 0.0
        self._lock = threading.Lock()     # calls end in several threads at once (grading/lanes.py)

    def add(self, held: Held, cpu_now: float | None = None) -> None:
        """Add what the call of ``held`` was held back, now that it ended (``Held.total``)."""
        seconds = held.total(cpu_now)
        with self._lock:
            self.seconds += seconds


#: This process's Starved: its sandboxes add to it, its gradings read it.
STARVED = Starved()


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
