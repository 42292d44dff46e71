"""What one numeric drill is, and what every kind of drill draws from: the question, its answer in
its unit, the worked answer, the lesson section to reread, and the classic slips it invites.

Kinds of drill live in ``shared.quiz.drills`` (the lesson's formulas) and ``shared.quiz.card_drills``
(the interview card's items). Units: GB = 1e9 bytes, GB/s, TFLOP/s = 1e12 FLOP/s, parameters.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from shared import tables
from shared.quiz import slips
from shared.quiz.slips import Slip


@dataclass(frozen=True)
class Drill:
    """One numeric question and its worked answer; ``unit`` is a spelling shared.quiz.numbers knows."""

    prompt: str
    answer: float
    unit: str
    worked: str
    reread: str
    slips: tuple[Slip, ...] = ()
    #: (bytes each device holds, bytes of memory it has) when the drill puts a model on a device of
    #: the tables; None when it names none. Every drawn setup fits (``fits``): a test checks it.
    memory: tuple[float, float] | None = None

    def accepts(self, value: float, tolerance: float, round_tolerance: float = 0.0) -> bool:
        """True when ``value`` is within ``tolerance`` (relative) of the answer, or is the answer
        said as a round figure within ``round_tolerance`` of it (``shared.quiz.slips.right``)."""
        return slips.right(value, self.answer, tolerance, round_tolerance)


def fmt(x: float) -> str:
    """A number for people: about four significant figures, thousands separated."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def sci(x: float) -> str:
    """3 significant figures in e-notation without the plus sign: 1.61e13."""
    return f"{x:.3g}".replace("e+", "e")


def real_models() -> list[tables.Model]:
    """The table's models without the test config, in key order."""
    return [m for key, m in sorted(tables.models().items()) if "not a real model" not in m.source]


def devices(*, with_peak: bool = False) -> list[tables.Device]:
    """The table's devices in key order; ``with_peak``: only those with a BF16 peak (TFLOP/s)."""
    rows = [d for _, d in sorted(tables.devices().items())]
    return [d for d in rows if d.peak_bf16_tflops is not None] if with_peak else rows


#: Share of a device's memory a drill's weights (and KV caches) may fill: the rest holds activations,
#: the runtime's workspace and the framework. No drill puts a model where it could not run.
ROOM = 0.9


def resident_bytes(m: tables.Model, bytes_per_weight: float) -> float:
    """Bytes a model's weights take in memory: every parameter, every expert of a mixture included."""
    return m.total_params * bytes_per_weight


def fits(d: tables.Device, held_bytes: float, count: int = 1) -> bool:
    """Whether ``held_bytes``, split evenly over ``count`` devices ``d``, leave each its room. A device
    whose memory the tables do not give (a CPU's DDR5) holds nothing a drill could check."""
    return d.memory_bytes is not None and held_bytes / count <= ROOM * d.memory_bytes


def placement(rng: random.Random, models, devs, formats, *, count: int = 1,
              extra_bytes=lambda m: 0.0) -> tuple[tables.Model, tables.Device, tables.Format]:
    """A (model, device, weight format) drawn from those where the weights (plus ``extra_bytes(m)``,
    e.g. KV caches), split over ``count`` devices, fit with room to spare."""
    options = [(m, d, f) for m in models for d in devs for f in map(tables.weight_format, formats)
               if fits(d, resident_bytes(m, f.bytes_per_weight) + extra_bytes(m), count)]
    return rng.choice(options)


def memory(m: tables.Model, d: tables.Device, fmt_: tables.Format, *, count: int = 1,
           extra_bytes: float = 0.0) -> tuple[float, float]:
    """A drill's ``memory``: (bytes each of ``count`` devices holds, bytes it has)."""
    return (resident_bytes(m, fmt_.bytes_per_weight) + extra_bytes) / count, float(d.memory_bytes)


def params_phrase(m: tables.Model) -> str:
    """"8.03B parameters", or for a mixture of experts the total and the active parameters."""
    if m.active_params is not None:
        return (f"{fmt(m.total_params / 1e9)}B parameters, {fmt(m.active_params / 1e9)}B of them active per token "
                f"(a mixture of experts)")
    return f"{fmt(m.total_params / 1e9)}B parameters"
