"""The rate a timed region's work ran at, and the count of its items a number implies.

A number is the rate of the work between its clock readings (``timed_rate``, ``clean_rate``:
shared/simgpu/window.py's trace) times a count and a unit. ``implied`` reads which whole count of
the copies or matmuls timed the number implies; ``count`` charges a count taken from the
arguments (the iters asked where another count ran, warm-ups counted in) on the CPU argument
check, at each iters asked, where a correction factor implies no whole count.
"""
from __future__ import annotations

from shared.lessons.why17.gpu import rubric as r
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, close

#: Work items a count may miss as a whole (a batch of k products or copies counted as one).
WHOLE_ITEMS = range(1, 17)


def _bw(function: str) -> bool:
    return r.MODULE[function] == "bw"


def timed_rate(function: str, timed: dict) -> float:
    """The rate the timed region's work ran at, in ``function``'s unit; 0 when it timed none."""
    seconds = timed.get("duration_s") or 0.0
    if seconds <= 0:
        return 0.0
    if _bw(function):
        return 2 * timed.get("copy_bytes", 0) / seconds / 1e9
    return timed.get("matmul_flops", 0.0) / seconds / 1e12


def clean_rate(function: str, timed: dict) -> float:
    """The rate of the timed work over the spans between consecutive clock readings that hold it
    (shared/simgpu/window.py), when they hold all of it: the readings the number was computed
    from, not a reading taken later to stretch the window; else over the whole window."""
    bw = _bw(function)
    work = 2 * timed.get("clean_copy_bytes", 0) if bw else timed.get("clean_matmul_flops", 0.0)
    seconds = timed.get("clean_s" if bw else "clean_matmul_s") or 0.0
    total = 2 * timed.get("copy_bytes", 0) if bw else timed.get("matmul_flops", 0.0)
    if seconds > 0 and work > 0 and work >= total * (1 - 1e-9):
        return work / seconds / (1e9 if bw else 1e12)
    return timed_rate(function, timed)


def span_rates(function: str, timed: dict) -> list[float]:
    """[slowest, median, fastest] rate of the spans between clock readings that timed work, in
    ``function``'s unit (GB/s, TFLOP/s); [] when none did."""
    scale = 2 / 1e9 if _bw(function) else 1 / 1e12
    return [v * scale for v in timed.get("copy_span_rates" if _bw(function) else "matmul_span_rates") or ()]


def items(function: str, timed: dict) -> int:
    """How many copies or matmuls the timed region ran."""
    return timed.get("copies" if _bw(function) else "matmuls", 0)


def implied(s: Session, function: str, variant=None) -> tuple[int, int, float] | None:
    """(copies or matmuls timed, the whole count of them the number implies, their rate) when the
    number is the rate of a whole count of the items it timed other than that count, else None.
    Items of one size run at one rate: where the spans between the clock readings that timed them
    ran at different rates (one slowed by a sleep), no rate counts them, and the number implies none."""
    _raw, x, trace = s.measure(function, "ideal", variant)
    timed = trace.get("timed") or {}
    n, rate, spans = items(function, timed), clean_rate(function, timed), span_rates(function, timed)
    if x is None or rate <= 0 or not n or (spans and spans[0] * RATIO_TOLERANCE < spans[-1]):
        return None
    whole = round(n * x / rate)
    return (n, whole, rate) if whole >= 1 and whole != n and abs(n * x / rate - whole) <= r.COUNT_SLACK else None


def count(s: Session, function: str) -> Diagnosis | None:
    """The CPU argument check's slip (``r.ARGS_OWNER``) when the number is the rate of a count of
    the items timed taken from the arguments: the iters asked where another count ran (a loop off
    by one, a loop capped), or more or fewer (warm-ups counted in), at each iters asked
    (``rubric.second_iters``) where it is no honest count. A correction factor implies no whole
    count at some iters, or the same share more at both; a count shows one at one iters only
    when it is the same excess at both or another share of the items at each."""
    calls = [None, ("iters", r.second_iters(s.cfgs))]
    calls = calls if calls[1] in s.rubric.variants(s, function, "ideal") else calls[:1]
    readings = [_counted(s, function, call) for call in calls]
    counts = [one for one in readings if one is not None and one != "honest"]
    if None in readings or not counts or (len(calls) == 1 and counts[0][0] != 0):
        return None
    if len(counts) == 2 and counts[0][0] != counts[1][0] and close(counts[0][2] / counts[0][3],
                                                                    counts[1][2] / counts[1][3], 1 + r.SHARE_SLACK):
        return None                 # the same share of the items more at both iters: a factor
    _excess, rate, whole, timed_items, iters = counts[0]
    what = "copies" if _bw(function) else "matmuls"
    return Diagnosis("arguments", r.ARGS_OWNER[r.MODULE[function]],
                     r.say("args_count", function=function, implied=whole, items=what, timed=timed_items, iters=iters),
                     rate, whole / timed_items, 0.0)


def _counted(s: Session, function: str, variant) -> tuple[int, float, int, int, int] | str | None:
    """(the count the number implies less the iters asked, the timed work's rate, the count
    implied, the count timed, the iters asked) when ``implied`` finds one within WHOLE_ITEMS of
    the iters asked; "honest" when the number implies the count timed; else None (and when the
    call failed: its failure is the checks' to report)."""
    try:
        _raw, x, trace = s.measure(function, "ideal", variant)
    except Exception:  # reported by the checks that ask for the call
        return None
    iters = s.rubric.call(s, function, variant)[1].get("iters")
    found = implied(s, function, variant)
    if found is None:
        timed = trace.get("timed") or {}
        n, rate = items(function, timed), clean_rate(function, timed)
        honest = x is not None and rate > 0 and n and abs(n * x / rate - n) <= r.COUNT_SLACK
        return "honest" if honest else None
    if iters is None or (found[1] != iters and abs(found[1] - iters) not in WHOLE_ITEMS):
        return None
    n, whole, rate = found
    return whole - iters, rate, whole, n, iters
