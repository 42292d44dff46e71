"""Ratios and what explains them: byte and FLOP counts, units, and how a ratio reads in a message.

A GPU check divides the student's number by the reference's on the same simulated device (or by
the student's own under another setting). A ratio within RATIO_TOLERANCE of a count factor times
a unit factor is explained by those two slips (``explain``); the tables name each slip in the
lesson's words. The simulated checks (verdicts.py, which re-exports these names) and the
real-GPU ones (autograder/gpu/real.py) read them.
"""
from __future__ import annotations

import math

#: Student/reference ratios within this factor of an explained ratio count as that ratio.
RATIO_TOLERANCE = 1.02

#: Byte-count factors: student / reference when only the byte count is off.
BYTE_FACTORS = {0.5: "you counted the bytes once; a copy reads n_bytes and writes n_bytes",
                1.0: "",
                2.0: "you counted 4·n_bytes per copy; a copy reads n_bytes and writes n_bytes, 2·n_bytes in all"}
#: Units factors for GB/s: student / reference when only the unit is off.
GBS_UNITS = {
    1.0: "",
    1e9: "bytes per second, not GB/s (1e9 bytes/s)",
    1e6: "kB/s, not GB/s",
    1e3: "MB/s, not GB/s",
    1e-3: "TB/s instead of GB/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
    1e9 / 2**30: "GiB/s (2**30 bytes) instead of GB/s (1e9 bytes)",
    1e9 / 2**20: "MiB/s instead of GB/s",
    1e9 / 2**40: "TiB/s instead of GB/s",
    8.0: "gigabits per second, not gigabytes",
}
#: FLOP-count factors: student / reference when only the FLOP count is off.
FLOP_FACTORS = {0.5: "you counted n**3 FLOPs; each of the n**3 multiply-adds is 2 FLOPs, 2·n**3 in all",
                1.0: "", 2.0: "you counted 4·n**3 FLOPs; an n×n matmul does 2·n**3"}
#: Units factors for TFLOP/s.
TFLOPS_UNITS = {
    1.0: "",
    1e12: "FLOP/s, not TFLOP/s (1e12 FLOP/s)",
    1e6: "MFLOP/s, not TFLOP/s",
    1e3: "GFLOP/s, not TFLOP/s",
    1e-3: "PFLOP/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
}


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


def explain(ratio: float, counts: dict, units: dict) -> tuple[float, float] | None:
    """(count factor, unit factor) whose product is within RATIO_TOLERANCE of ``ratio``, or None."""
    best = None
    for c in counts:
        for u in units:
            off = abs(math.log(ratio / (c * u)))
            if off <= math.log(RATIO_TOLERANCE) and (best is None or off < best[0]):
                best = (off, c, u)
    return None if best is None else best[1:]


def single(explained):
    """``explained`` when it is one mistake (a count or a unit, not both), else None."""
    if explained is None or (explained[0] != 1.0 and explained[1] != 1.0):
        return None
    return explained


# ------------------------------------------------------------ measuring
