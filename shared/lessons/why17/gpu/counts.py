"""The rate a timed region's work ran at (window.py's trace), the count and unit factors a number
is of it, whether every size asked reads alike, and the count of its items a number implies: a
count taken from the arguments (the iters asked where another count ran, warm-ups counted in) is
the CPU argument check's to charge, where a correction factor implies no whole count.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from shared.lessons.why17.gpu import rubric as r
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, READ_SLACK_S, close, explain

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


def power_of(q: float, ratio: float, formula: bool = True) -> bool:
    """Whether ``q`` is 1 or, for a ``formula`` (a number no count or unit explains), ``ratio`` (of
    two sizes) to a whole power from -3 to 3, within RATIO_TOLERANCE: how a count from a formula in
    the size (2 n**2 for 2 n**3) moves between them."""
    return any(close(q, ratio**p) for p in (range(-3, 4) if formula else (0,)))


def item_size(function: str, timed: dict) -> float:
    """The size of one timed item: bytes a copy moved, or the n of an n x n matmul; 0 where none ran."""
    keys = KEYS[r.MODULE[function]]
    n, work = timed.get(keys.items, 0), timed.get(keys.work, 0)
    if not n or work <= 0:
        return 0.0
    return work / n if r.MODULE[function] == "bw" else (work / n / 2.0) ** (1 / 3)


def _asked_work(function: str, args: tuple, kwargs: dict) -> float:
    """The work a call's arguments ask for, in KEYS' ``work`` (bytes each copy moves once, or
    FLOPs): iters x the size asked (bytes, bandwidth_sweep's MiB, or 2 n**3); 0 where none is asked."""
    iters = kwargs.get("iters")
    if not args or not iters:
        return 0.0
    size = args[0][0] * r.MIB if isinstance(args[0], tuple) else args[0]
    return (size if r.MODULE[function] == "bw" else 2.0 * size**3) * iters


def asked(s: Session, function: str) -> Diagnosis | None:
    """The CPU argument check's slip (``r.ARGS_OWNER``) where, at every size and iters asked, the
    number is the rate of the work its arguments ask for over a window that timed more than that
    (buffers larger than asked, copies there and back): the work asked reported, not the work
    timed, which a count slip's factor only happens to match."""
    keys, share, x = KEYS[r.MODULE[function]], 0.0, None
    for variant in s.rubric.variants(s, function, "ideal"):
        want = _asked_work(function, *s.rubric.call(s, function, variant))
        try:
            x, timed = s.x(function, variant), s.window(function, variant)
        except Exception:  # reported by the checks that ask for the call
            return None
        done, seconds = timed.get(keys.work, 0), timed.get("duration_s") or 0.0
        if want <= 0 or x is None or seconds <= 0 or done <= want * RATIO_TOLERANCE or \
                not close(x * seconds * keys.per_unit, want):
            return None
        share = share or done / want
    timed = s.window(function)
    return Diagnosis("arguments", r.ARGS_OWNER[r.MODULE[function]], r.say("args_more", function=function, share=share),
                     timed_rate(function, timed), 1 / share, 0.0)


def with_idle(timed: dict, rate: float) -> tuple[float, ...]:
    """``rate`` (the timed work per second of the window ``timed``) and, where the host idled in
    the window (``idle_s``), the work per second of the window less its idle."""
    idle, duration = timed.get("idle_s") or 0.0, timed.get("duration_s") or 0.0
    return (rate, rate * duration / (duration - idle)) if 0 < idle < duration else (rate,)


def span_range(s: Session, function: str, timed: dict, x: float) -> tuple[float, float]:
    """(low, fast) of the window ``timed`` (spans that timed work) for the number ``x``: the lower
    of its rate and the median span's, and the fastest span's, or the rate less a fixed wait it
    timed and took out, or a cache's rate for a number above main memory's."""
    rate, (_slow, median, fast) = clean_rate(function, timed), span_rates(function, timed)
    fast = max(fast, with_idle(timed, rate)[-1])
    if r.MODULE[function] == "bw" and x > s.cfgs["ideal"]["bw_gbs"] * r.LIMITS.speed_of_light:
        fast = max(fast, (timed.get("copy_span_fastest") or 0) * 2 / 1e9)
    return min(rate, median), fast


def size_off(s: Session, function: str, timed: dict) -> tuple[float, int] | None:
    """Every call counts the same: (its number over its own rate, the size) of the first other size
    asked on the seeded device where ``function``'s number, over the factor the usual call's
    (``timed``) is of its own rate, is not made of that call's spans (``span_range``); else None. A
    count or unit scales every size alike, and a count from a formula in the size by a whole power
    of the sizes' ratio; a number kept from another call (a median of the process's, a first
    call's rate, a model of the cache) does not."""
    x, rate, usual = s.x(function), clean_rate(function, timed), s.rubric.call(s, function, None)[0]
    if x is None or rate <= 0 or not span_rates(function, timed):
        return None
    low, fast = span_range(s, function, timed, x)
    factor = 1.0 if low / RATIO_TOLERANCE <= x <= fast * RATIO_TOLERANCE else x / rate     # made of its spans
    formula = explain(factor, *r.factors(function)) is None
    for variant in r.other_sizes(s, function):
        try:
            other_x, other = s.x(function, variant), s.window(function, variant)
        except Exception:  # reported by the checks that ask for the call
            continue
        other_rate = clean_rate(function, other)
        if other_x is None or other_rate <= 0 or not span_rates(function, other):
            continue
        (low, fast), reading = span_range(s, function, other, other_x), other_x / factor
        tick = 1 + READ_SLACK_S / (other.get("duration_s") or math.inf)     # a microsecond clock's
        if not (low / RATIO_TOLERANCE / tick <= reading <= fast * RATIO_TOLERANCE * tick
                or power_of(reading / other_rate, variant / usual[0], formula)):
            return reading / other_rate, variant
    return None


def over(s: Session, function: str, rate: float, variant=None) -> float | None:
    """``function``'s number on the seeded device (the call ``variant``) over ``rate`` (its timed work's), or None."""
    x = s.x(function, variant)
    return x / rate if x is not None and rate > 0 else None


def explained(s: Session, function: str, rate: float, scale: float = 1.0, variant=None) -> set[tuple[float, ...]]:
    """The (count, unit) factors that make ``function``'s number ``rate`` (times ``scale``)."""
    ratio = over(s, function, rate, variant)
    found = (explain(ratio / k, *r.factors(function)) for k in {1.0, scale}) if ratio is not None else ()
    return {e for e in found if e is not None}
