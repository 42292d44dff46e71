"""Ratios and what explains them, and how a ratio reads in a message.

A GPU check divides the student's number by the reference's on the same simulated device (or by
the student's own under another setting). A ratio within RATIO_TOLERANCE of a count factor times
a unit factor is explained by those two slips (``explain``); a lesson's tables name each factor
in its own words (for why17: shared/lessons/why17/gpu/factors.py).
"""
from __future__ import annotations

import math

#: Student/reference ratios within this factor of an explained ratio count as that ratio.
RATIO_TOLERANCE = 1.02
#: Seconds a window read by a program's clock may differ from the device's: datetime.now() counts
#: whole microseconds (each of two readings rounds by up to half of one) and time.time()'s float
#: near 1.7e9 s resolves 0.24 us; the in-cache copies of the small size take tens of microseconds.
READ_SLACK_S = 1.5e-6


def fmt_ratio(ratio: float) -> str:
    """A ratio for a message: '0.50x', '1.07x', '232x', '1e+09x'."""
    if 0.01 <= ratio < 10:
        return f"{ratio:.2f}x"
    return f"{ratio:.0f}x" if 10 <= ratio < 1e5 else f"{ratio:.3g}x"


def number(value) -> float | None:
    """``value`` as a positive finite float (a float, an int, a one-element array), or None."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return None
    if type(value).__name__ == "Array":           # autograder.runtime.runner's tensor/array that came back
        data = getattr(value, "data", None)
        value = data[0] if isinstance(data, list) and len(data) == 1 else data
        if value is None or isinstance(value, (bool, str, list)):
            return None
    try:
        x = float(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def close(a: float, b: float, tolerance: float = RATIO_TOLERANCE) -> bool:
    """Whether ``a`` is within ``tolerance`` (a factor) of ``b``."""
    return abs(math.log(a / b)) <= math.log(tolerance)


def explain(ratio: float, counts: dict, units: dict,
            tolerance: float = RATIO_TOLERANCE) -> tuple[float, float] | None:
    """(count factor, unit factor) whose product is within ``tolerance`` of ``ratio``, or None."""
    best = None
    for c in counts:
        for u in units:
            off = abs(math.log(ratio / (c * u)))
            if off <= math.log(tolerance) and (best is None or off < best[0]):
                best = (off, c, u)
    return None if best is None else best[1:]


def single(explained):
    """``explained`` when it is one mistake (a count or a unit, not both), else None."""
    if explained is None or (explained[0] != 1.0 and explained[1] != 1.0):
        return None
    return explained
