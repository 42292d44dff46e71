"""Whether a number is a measurement at all: a correction factor earns no GPU check.

On the ideal device (launches wait, no first-use cost, a clock that reads the device's time) a
correct function reads what the reference reads for the same call, whatever its style. A number
off by a count (bytes once, n**3), a unit, or a whole number of work items miscounted (a batch of
k matmuls counted as one) is one mistake, charged on its check. A number off by any other factor
(the measurement divided by an "efficiency", a clock patched to run slow, a spec-sheet figure) is
not a measurement of the work it timed: it fails every check of its function, as a caller that
returns its base's such number does. A clock started before the warm-up is charged there alone.
"""
from __future__ import annotations

import math

from shared.lessons.why17.gpu.rubric import BASE, ITERS, asked, factors
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, explain

#: Work items a count may miss as a whole (a batch of k products or copies counted as one).
WHOLE_ITEMS = range(1, 17)
#: Ratios outside this band are a unit's matter (units_gb_per_s says which), not a forgery's.
BAND = (0.3, 3.5)


def _reference(s: Session, function: str) -> float:
    if function in ("copy_bandwidth", "bandwidth_sweep"):
        return s.reference("copy_bandwidth", "ideal", asked(s.cfgs)[1], iters=ITERS)
    if function == "matmul_tflops":
        return s.reference("matmul_tflops", "ideal", asked(s.cfgs)[2], iters=ITERS)
    return s.reference(function, "ideal")


def _ratio(s: Session, function: str) -> tuple[float, float] | None:
    """(student / reference on the ideal device, the reference's number), or None."""
    _raw, x, _trace = s.measure(function, "ideal")
    if x is None:
        return None
    ref = _reference(s, function)
    return (x / ref, ref) if ref > 0 else None


def _explained(ratio: float, function: str) -> bool:
    counts, units = factors(function)
    whole = {**{float(k): "" for k in WHOLE_ITEMS}, **{1.0 / k: "" for k in WHOLE_ITEMS}}
    return explain(ratio, counts, units) is not None or explain(ratio, whole, {1.0: ""}) is not None


def _warm_up_timed(s: Session, function: str) -> bool:
    from shared.lessons.why17.gpu.checks import warmup_present

    return any(f is not None and not warmup_present(s, f).passed for f in (function, BASE.get(function)))


def diagnose(s: Session, function: str) -> Diagnosis | None:
    """A diagnosis that fails every check of ``function`` when its number is no measurement."""
    base = BASE.get(function)
    if base is not None:
        other = s.diagnosis(base)
        if other is None or other.kind != "not_measured":
            return None             # the caller's own sizes or dtype: its checks judge them
    try:
        found = _ratio(s, function)
    except Exception:  # the call's (or the reference's) own failure is the checks' to report
        return None
    if found is None:
        return None
    ratio, ref = found
    if not BAND[0] <= ratio <= BAND[1] or _explained(ratio, function):
        return None
    if base is not None:
        base_ratio = _ratio(s, base)
        if base_ratio is None or abs(math.log(ratio / base_ratio[0])) > math.log(RATIO_TOLERANCE):
            return None
    if _warm_up_timed(s, function):
        return None
    owner = s.rubric.check_id(next(c for c, fs in s.rubric.judges.items() if function in fs), function)
    return Diagnosis("not_measured", owner, "", ref)



