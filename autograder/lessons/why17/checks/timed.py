"""The timed region of a watched real-CPU call: the work between the clock readings, and whether
the number the call returned is explained by it.

A watched call's trace (autograder/runtime/torchwatch.py, ``TorchWatch.trace``) is the graded
code's clock readings in order among its aten ops. Every pair of readings is a *window*: the work
recorded between them (copies of the buffer asked for, n x n products), and the time they span.
A timing function returns a number computed from some windows: one (start and stop around the
loop), the fastest or the median of several (best of k, per-copy times, a benchmark timer's
blocks), or their total work over their total time. Whatever the aggregate, the rate it reports
lies between the slowest and the fastest rate (work / time) of the windows it came from, so the
count the number implies over each window (number x window time) is, for some window, at least
the work inside it, and for some at most. This module finds that range for a call, and the checks
ask it of two calls with different ``iters``: how the work is chosen (iters copies, a count a
timer picks, a warm-up once per process or until timings settle) does not matter, only that the
number follows the work it timed. Nothing here reads how long anything took on this machine: the
number and the readings it was computed from come from the same clock, so an honest number is
explained on a fast machine or a slow one, a quiet one or a loaded one.

A units slip (bytes/s, GFLOP/s, bytes counted once) makes the number a constant times the rate
of the work: the same constant in every call, which the simulated GPU's checks name (one mistake,
one charge). A count not taken from the timed work (iters claimed where another number of copies
ran, warm-up copies counted in, an off-by-one loop) gives a factor that changes with iters.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: Coarsest clock a graded program reads a duration from, in seconds: datetime.now() resolves a
#: microsecond (time.time(), a float near 1.7e9 s, resolves 0.24 us; perf_counter_ns 1 ns). Each
#: end of a window may be read that much off, so a window spans its readings' time +- 2 of these.
RESOLUTION_S = 1e-6
#: Relative slack on the factor the number implies, for the program's own arithmetic: a rate
#: rounded to three significant digits, or computed in float32, stays within 0.5% of itself.
#: Count slips stay far outside it: an off-by-one loop reads 4/3 vs 9/8 of the truth (iters 4
#: and 9), warm-ups counted in 7/4 vs 12/9; 1% never joins two such factors.
REL_SLACK = 0.01


@dataclass(frozen=True)
class Stretch:
    """The ops recorded between two consecutive runs of clock readings (each op dict's ``count``
    is how many times it ran there) and how many bytes its data-moving ops wrote and read, each
    byte counted once (the union of their address ranges)."""

    ops: tuple
    written_bytes: int
    read_bytes: int


def _union(spans: list) -> int:
    return sum(end - start for start, end in spans)


class Timed:
    """One watched call as windows (``record`` is Context.call_watched's second value)."""

    def __init__(self, record: dict):
        ops = record.get("ops", [])
        trace = record.get("trace") or {}
        runs = trace.get("readings") or []
        self.first = [float(r[0]) for r in runs]
        self.last = [float(r[1]) for r in runs]
        self.dropped = int(trace.get("dropped_readings") or 0)
        stretches = trace.get("stretches") or []
        written = trace.get("written") or [[] for _ in stretches]
        read = trace.get("read") or [[] for _ in stretches]
        # stretch k (1 <= k < len(runs)) lies between run k-1 and run k: the windows' parts
        self.inner = [Stretch(tuple({**ops[i], "count": c} for i, c in stretches[k]), _union(written[k]),
                              _union(read[k])) for k in range(1, len(runs))]

    def ops(self) -> list:
        """Every op recorded between two clock readings (inside some window)."""
        return [op for stretch in self.inner for op in stretch.ops]

    def factors(self, rate: float, work) -> tuple[float, float] | None:
        """The range of ``rate x time / work`` over the windows holding work: the factor by which
        a number of ``rate`` units of work per second overstates the work each window timed
        (``work(op)``: an op's units of work, times its count). 1 is in the range when the rate
        is an honest aggregate of windows; None when no window holds work."""
        parts = [sum(work(op) * op["count"] for op in stretch.ops) for stretch in self.inner]
        window = _windows if len(self.first) <= FEW_RUNS else _windows_numpy
        lo, hi = window(self.first, self.last, parts)
        lo, hi = rate * lo, rate * hi
        if hi < 0:
            return None
        return lo * (1 - REL_SLACK), hi * (1 + REL_SLACK)

    def busiest(self, rate: float, work) -> tuple[float, float]:
        """(the work between two consecutive readings where the most was done, the work the
        number implies there), for a message."""
        best = (0.0, 0.0)
        for k, stretch in enumerate(self.inner):
            done = sum(work(op) * op["count"] for op in stretch.ops)
            if done > best[0]:
                span = (self.first[k + 1] - self.last[k] + self.last[k + 1] - self.first[k]) / 2
                best = (done, rate * span)
        return best


#: Runs of readings up to which ``factors`` loops in Python over every window: most calls read the
#: clock a few times, and the grader then never imports numpy (a tenth of a CPU second). Past it,
#: the windows (runs squared over two) are numpy's: a trace keeps up to 4096 runs.
FEW_RUNS = 64


def _windows(first: list, last: list, parts: list) -> tuple[float, float]:
    """(lowest, highest) ``time / work`` over the windows from run a to each later run b that
    hold work, each time widened by the clock's resolution: the least the window can have
    spanned over its work, the most. ``first``, ``last``: each run's first and last reading (s);
    ``parts``: the work between run k and run k+1. Arithmetic as ``_windows_numpy``'s, term by
    term (exact integer sums of integer work), so both give the same figures."""
    before = [0] if all(isinstance(x, int) for x in parts) else [0.0]
    for x in parts:
        before.append(before[-1] + x)
    before = [float(x) for x in before]
    lo, hi = math.inf, -math.inf
    for a in range(len(first) - 1):
        done = [(b, before[b] - before[a]) for b in range(a + 1, len(first))]
        lows = [(first[b] - last[a] - 2 * RESOLUTION_S) / d for b, d in done if d > 1e-9]
        highs = [(last[b] - first[a] + 2 * RESOLUTION_S) / d for b, d in done if d > 1e-9]
        if lows:                  # a run's NaN, as numpy's min and max of it, leaves lo and hi
            lo = min(lo, math.nan if any(map(math.isnan, lows)) else min(lows))
            hi = max(hi, math.nan if any(map(math.isnan, highs)) else max(highs))
    return lo, hi


def _windows_numpy(first: list, last: list, parts: list) -> tuple[float, float]:
    """``_windows`` for many runs, each run's windows at once."""
    import numpy as np

    before = np.concatenate(([0.0], np.cumsum(parts)))
    first, last = np.array(first), np.array(last)
    lo, hi = math.inf, -math.inf
    for a in range(len(first) - 1):        # windows from run a to each later run
        done = before[a + 1:] - before[a]
        has = done > 1e-9
        if has.any():
            lo = min(lo, float(np.min((first[a + 1:][has] - last[a] - 2 * RESOLUTION_S) / done[has])))
            hi = max(hi, float(np.max((last[a + 1:][has] - first[a] + 2 * RESOLUTION_S) / done[has])))
    return lo, hi


def rate_of(value) -> float | None:
    """The magnitude of a returned number, or None for anything else (a negative, zero or
    non-finite number, or no number at all, is another check's to charge: only how the number
    follows the work is judged here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = abs(float(value))
    return value if math.isfinite(value) and value > 0 else None


def agree(ranges: list) -> bool:
    """Whether one factor lies in every call's range: the number follows the timed work up to a
    constant (1 when honest; a units slip's, charged elsewhere)."""
    return max(lo for lo, _hi in ranges) <= min(hi for _lo, hi in ranges)


class Follows:
    """Whether a function's numbers follow the work each call timed: ``add`` each call's number,
    then ``problem`` judges them together (one factor must fit every call)."""

    def __init__(self, noun: str, items: str):
        self.noun, self.items = noun, items        # "copies", "copies of n_bytes"
        self.ranges: list = []
        self.seen: list = []

    def add(self, iters: int, call: Timed, value, per_item: float, count) -> bool:
        """Add the call made with ``iters``: its returned ``value`` over ``per_item`` (the number
        one work item makes, e.g. 2 n_bytes / 1e9 GB) is items per second, and ``count(op)`` says
        how many items an op did. False when there is nothing to follow (no number: another
        check's to charge; or a trace too long to place)."""
        rate = rate_of(value)
        if rate is None or call.dropped:
            return False
        rate /= per_item
        self.ranges.append(call.factors(rate, count))
        self.seen.append((iters, *call.busiest(rate, count)))
        return True

    def problem(self, function: str, advice: str) -> str | None:
        """Why the numbers do not follow the timed work (one line), or None when they do."""
        if agree(self.ranges):
            return None
        told = "; ".join(f"iters={i}: {done:g} {self.items} between two clock readings, the number implies "
                         f"{implied:.3g}" for i, done, implied in self.seen)
        return f"{function} returned a rate that the {self.noun} it timed do not explain ({told}); {advice}"
