"""Classic slips behind a wrong numeric answer, and how far off an answer is.

A slip is the answer a known mistake gives (the per-stream speed given for the total, bytes given
for GB, the factor 2 of K and V left out, bits used as bytes, ...). Each drill carries the slips its
formula invites, computed by the same arithmetic with the mistake put in; a wrong answer within the
quiz's tolerance of one of them is named after it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: 1 GiB / 1 GB: a GiB is 2**30 bytes, 1.074 GB (a GB is 1e9 bytes). Both are definitions (IEC 80000-13, SI).
GIB_PER_GB = 2**30 / 1e9
#: How the quiz spells the GiB/GB relation in a slip's name.
GIB_TEXT = f"1 GiB = 2**30 B = {GIB_PER_GB:.3f} GB"
_GIB = GIB_TEXT


@dataclass(frozen=True)
class Slip:
    """A classic mistake and the answer it gives, in the drill's unit."""

    name: str
    value: float


def scaled(answer: float, factor: float, name: str) -> Slip:
    """The slip whose answer is ``answer * factor``."""
    return Slip(name=name, value=answer * factor)


def unit_slips(answer: float, unit: str) -> tuple[Slip, ...]:
    """Slips of the unit alone: bytes or GiB for GB, TB/s or GiB/s for GB/s, bytes for KiB,
    milliseconds for seconds and seconds for milliseconds, a fraction for a percentage."""
    if unit == "GB":
        return (scaled(answer, 1e9, "bytes given for GB (1 GB = 1e9 bytes)"),
                scaled(answer, 1 / GIB_PER_GB, f"GiB given for GB ({_GIB}: the same bytes are "
                                               f"{GIB_PER_GB:.3f}x fewer GiB)"))
    if unit == "GB/s":
        return (scaled(answer, 1e-3, "TB/s given for GB/s (1 TB/s = 1,000 GB/s)"),
                scaled(answer, 1 / GIB_PER_GB, f"GiB/s given for GB/s ({_GIB}: the same rate is "
                                               f"{GIB_PER_GB:.3f}x fewer GiB/s)"))
    if unit == "KiB":
        return (scaled(answer, 1024, "bytes given for KiB (1 KiB = 1024 bytes)"),)
    if unit == "s":
        return (scaled(answer, 1e3, "milliseconds given for seconds"),)
    if unit == "ms":
        return (scaled(answer, 1e-3, "seconds given for milliseconds (1 s = 1,000 ms)"),)
    if unit == "%":
        return (scaled(answer, 1e-2, "a fraction given for a percentage (0.5% is 0.005 of the whole)"),)
    return ()


def gib_mixups(answer: float, *, per_token_time: bool = False) -> tuple[Slip, Slip]:
    """The GiB-for-GB slips of an answer that divides bandwidth by a size (tokens/s), or a size by
    bandwidth (``per_token_time``: seconds or ms per token): a size in GiB used as GB, or a
    bandwidth in GiB/s used as GB/s. Either is off by exactly 2**30 / 1e9 = 1.074, one way or the other."""
    size_factor = 1 / GIB_PER_GB if per_token_time else GIB_PER_GB
    way = {True: "high", False: "low"}
    return (scaled(answer, size_factor, f"the weights' size in GiB used as GB ({_GIB}): the answer comes out "
                                        f"{GIB_PER_GB:.3f}x {way[size_factor > 1]}"),
            scaled(answer, 1 / size_factor, f"the bandwidth in GiB/s used as GB/s ({_GIB}): the answer comes out "
                                            f"{GIB_PER_GB:.3f}x {way[size_factor < 1]}"))


def round_figure(answer: float, digits: int) -> float:
    """``answer`` rounded to ``digits`` significant figures: 42.857 -> 40 (1), 43 (2)."""
    if answer == 0 or not math.isfinite(answer):
        return answer
    return round(answer, digits - 1 - math.floor(math.log10(abs(answer))))


def right(value: float, answer: float, tolerance: float, round_tolerance: float = 0.0) -> bool:
    """Whether ``value`` counts as ``answer`` to an interview's precision: within ``tolerance``
    (relative), or the answer said as a round figure (rounded to one or two significant figures,
    "roughly 40" for 42.9) that is within ``round_tolerance`` of it. A round figure that far off
    ("1,000" for 1,371) is not an estimate of it."""
    if abs(value - answer) <= tolerance * abs(answer):
        return True
    if not abs(value - answer) <= round_tolerance * abs(answer):
        return False
    return any(abs(value - round_figure(answer, d)) <= 1e-9 * abs(answer) for d in (1, 2))


def distinct(answer: float, slips, tolerance: float) -> tuple[Slip, ...]:
    """The slips a wrong answer can be matched to: those whose answers are wrong themselves (outside
    ``tolerance``, relative, of the right one, and the right one outside ``tolerance`` of them).
    Slips with the same answer become one, named after all of them ("A; or B"), so none goes unnamed."""
    kept: list[Slip] = []
    for slip in slips:
        if not (math.isfinite(slip.value) and slip.value > 0):
            continue
        if abs(slip.value - answer) <= tolerance * max(abs(answer), abs(slip.value)):
            continue
        same = next((i for i, k in enumerate(kept) if abs(slip.value - k.value) <= 1e-9 * abs(k.value)), None)
        if same is None:
            kept.append(slip)
        elif slip.name not in kept[same].name:
            kept[same] = Slip(f"{kept[same].name}; or {slip.name}", kept[same].value)
    return tuple(kept)


def matches(value: float, slips, tolerance: float) -> tuple[Slip, ...]:
    """The slips whose answers ``value`` is within ``tolerance`` (relative) of, nearest first; none
    for a value that is not positive."""
    if not value > 0:
        return ()
    near = [s for s in slips if abs(value - s.value) <= tolerance * abs(s.value)]
    return tuple(sorted(near, key=lambda s: abs(math.log(value / s.value))))


def match(value: float, slips, tolerance: float) -> Slip | None:
    """The nearest slip ``value`` is within ``tolerance`` (relative) of; None when it matches none."""
    found = matches(value, slips, tolerance)
    return found[0] if found else None


def _factor(x: float) -> str:
    if x < 100:
        return f"{x:.3g}"
    if x < 1e4:
        return f"{x:,.0f}"
    return f"{x:.2g}".replace("e+0", "e").replace("e+", "e")


def off_by(value: float, answer: float) -> str:
    """How far ``value`` is from ``answer``: "16x low", "2.5x high", "7% high", "not a positive number"."""
    if not value > 0:
        return "not a positive number"
    ratio = value / answer
    if ratio >= 1.5:
        return f"{_factor(ratio)}x high"
    if ratio <= 1 / 1.5:
        return f"{_factor(1 / ratio)}x low"
    return f"{abs(ratio - 1):.0%} {'high' if ratio > 1 else 'low'}"
