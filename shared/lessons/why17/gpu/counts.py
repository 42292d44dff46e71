"""The rate a timed region's work ran at (window.py's trace) and the count of its items a number
implies: a count taken from the arguments (the iters asked where another count ran, warm-ups
counted in) is the CPU argument check's to charge, where a correction factor implies no whole count.
"""
from __future__ import annotations

from typing import NamedTuple

from shared.lessons.why17.gpu import rubric as r
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, close

#: Work items a count may miss as a whole (a batch of k products or copies counted as one).
WHOLE_ITEMS = range(1, 17)


class Keys(NamedTuple):
    """Where window.py's trace holds one module's work."""

    items: str         # how many copies or matmuls ran
    work: str          # their bytes or FLOPs
    spans: str         # [slowest, median, fastest] rate of the spans that timed work, per second
    per_unit: float    # work per second in one of the function's units (GB/s count bytes read and written)


#: Each module's keys.
KEYS = {"bw": Keys("copies", "copy_bytes", "copy_span_rates", 1e9 / 2),
        "flops": Keys("matmuls", "matmul_flops", "matmul_span_rates", 1e12)}


def timed_rate(function: str, timed: dict) -> float:
    """The rate the timed region's work ran at, in ``function``'s unit; 0 when it timed none."""
    seconds, keys = timed.get("duration_s") or 0.0, KEYS[r.MODULE[function]]
    return timed.get(keys.work, 0) / seconds / keys.per_unit if seconds > 0 else 0.0


def clean_rate(function: str, timed: dict) -> float:
    """The timed work's rate over the spans between clock readings that hold it (when they hold all
    of it: ``rubric.held_rate``), else over the whole window."""
    held = r.held_rate(function, timed)
    return held / KEYS[r.MODULE[function]].per_unit if held > 0 else timed_rate(function, timed)


def span_rates(function: str, timed: dict) -> list[float]:
    """[slowest, median, fastest] rate of the spans between clock readings that timed work, in
    ``function``'s unit; [] when none did."""
    keys = KEYS[r.MODULE[function]]
    return [v / keys.per_unit for v in timed.get(keys.spans) or ()]


def items(function: str, timed: dict) -> int:
    """How many copies or matmuls the timed region ran."""
    return timed.get(KEYS[r.MODULE[function]].items, 0)


def implied(s: Session, function: str, variant=None) -> tuple[int, int, float] | None:
    """(items timed, the whole count of them the number implies, their rate) when that count is not
    the count timed, else None; none where the spans that timed them ran at different rates (one
    slowed by a sleep): items of one size run at one rate."""
    x, timed = s.x(function, variant), s.window(function, variant)
    n, rate, spans = items(function, timed), clean_rate(function, timed), span_rates(function, timed)
    if x is None or rate <= 0 or not n or (spans and spans[0] * RATIO_TOLERANCE < spans[-1]):
        return None
    whole = round(n * x / rate)
    return (n, whole, rate) if whole >= 1 and whole != n and abs(n * x / rate - whole) <= r.LIMITS.count_slack else None


def count(s: Session, function: str) -> Diagnosis | None:
    """The CPU argument check's slip (``r.ARGS_OWNER``) when the number is the rate of a count taken
    from the arguments (the iters asked where another count ran, or a fixed number more or fewer)
    at each iters asked where it is no honest count; a correction factor implies no whole count at
    some iters, or the same share more at both."""
    second = r.second_call(s, function)
    calls = [None, second] if second else [None]
    readings = [_counted(s, function, call) for call in calls]
    counts = [one for one in readings if one is not None and one != "honest"]
    if None in readings or not counts or (len(calls) == 1 and counts[0][0] != 0):
        return None
    if len(counts) == 2 and counts[0][0] != counts[1][0] and \
            close(counts[0][2] / counts[0][3], counts[1][2] / counts[1][3], 1 + r.LIMITS.share_slack):
        return None                 # the same share of the items more at both iters: a factor
    _excess, rate, whole, timed_items, iters = counts[0]
    what = KEYS[r.MODULE[function]].items
    return Diagnosis("arguments", r.ARGS_OWNER[r.MODULE[function]],
                     r.say("args_count", function=function, implied=whole, items=what, timed=timed_items, iters=iters),
                     rate, whole / timed_items, 0.0)


def _counted(s: Session, function: str, variant) -> tuple[int, float, int, int, int] | str | None:
    """(count implied less the iters asked, rate, count implied, count timed, iters asked) when
    ``implied`` finds one within WHOLE_ITEMS of the iters; "honest" when it implies the count
    timed; else None (also when the call failed: the checks report that)."""
    try:
        x, timed = s.x(function, variant), s.window(function, variant)
    except Exception:  # reported by the checks that ask for the call
        return None
    iters = s.rubric.call(s, function, variant)[1].get("iters")
    found = implied(s, function, variant)
    if found is None:
        n, rate = items(function, timed), clean_rate(function, timed)
        honest = x is not None and rate > 0 and n and abs(n * x / rate - n) <= r.LIMITS.count_slack
        return "honest" if honest else None
    if iters is None or (found[1] != iters and abs(found[1] - iters) not in WHOLE_ITEMS):
        return None
    n, whole, rate = found
    return whole - iters, rate, whole, n, iters


def size_moved(s: Session, function: str, ratio: float) -> bool:
    """Every call counts the same: whether ``function``'s number over the reference's at another
    size asked on the seeded device is not ``ratio`` (the usual call's), beyond RATIO_TOLERANCE. A
    count or a unit scales every size alike; a number kept from another call (a best, a
    calibration) is the reference's rate at the size that gave it."""
    usual = s.rubric.call(s, function, None)
    for variant in s.rubric.variants(s, function, "ideal"):
        args, kwargs = s.rubric.call(s, function, variant)
        if variant is None or isinstance(variant, tuple) or (args, kwargs) == usual:
            continue
        try:
            x, ref = s.x(function, variant), s.reference(function, "ideal", *args, **kwargs)
        except Exception:  # reported by the checks that ask for the call
            continue
        if x is not None and ref > 0 and not close(x / ref, ratio):
            return True
    return False
