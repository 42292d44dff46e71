"""Classic slips behind a wrong numeric answer, and how far off an answer is.

A slip is the answer a known mistake gives (the per-stream speed given for the total, bytes given
for GB, the factor 2 of K and V left out, bits used as bytes, ...). Each drill carries the slips its
formula invites, computed by the same arithmetic with the mistake put in; a wrong answer within the
quiz's tolerance of one of them is named after it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: 1 GiB / 1 GB: a GiB is 2**30 bytes, about 7.4% more than a GB (1e9 bytes).
GIB_PER_GB = 2**30 / 1e9


@dataclass(frozen=True)
class Slip:
    """A classic mistake and the answer it gives, in the drill's unit."""

    name: str
    value: float


def scaled(answer: float, factor: float, name: str) -> Slip:
    """The slip whose answer is ``answer * factor``."""
    return Slip(name=name, value=answer * factor)


def unit_slips(answer: float, unit: str) -> tuple[Slip, ...]:
    """Slips of the unit alone: bytes for GB or KiB, GiB for GB, milliseconds for seconds."""
    if unit == "GB":
        return (scaled(answer, 1e9, "bytes given for GB (1 GB = 1e9 bytes)"),
                scaled(answer, 1 / GIB_PER_GB, "GiB given for GB (1 GiB = 2**30 bytes, 7% more than a GB)"))
    if unit == "KiB":
        return (scaled(answer, 1024, "bytes given for KiB (1 KiB = 1024 bytes)"),)
    if unit == "s":
        return (scaled(answer, 1e3, "milliseconds given for seconds"),)
    return ()


def distinct(answer: float, slips, tolerance: float) -> tuple[Slip, ...]:
    """The slips whose answers are told apart from the right one (more than twice the tolerance
    away), without repeats; the first of two slips with the same answer is kept."""
    kept: list[Slip] = []
    for slip in slips:
        if not (math.isfinite(slip.value) and slip.value > 0):
            continue
        if abs(slip.value - answer) <= 2 * tolerance * abs(answer):
            continue
        if any(abs(slip.value - k.value) <= 1e-9 * abs(k.value) for k in kept):
            continue
        kept.append(slip)
    return tuple(kept)


def match(value: float, slips, tolerance: float) -> Slip | None:
    """The slip whose answer ``value`` is within ``tolerance`` (relative) of, the nearest when
    several are; None when it matches none."""
    near = [s for s in slips if abs(value - s.value) <= tolerance * abs(s.value)]
    return min(near, key=lambda s: abs(math.log(value / s.value)), default=None) if value > 0 else None


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
