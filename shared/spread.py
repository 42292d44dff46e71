"""Repeated measurements as one figure with its spread: the median of k runs and their min-max.

A number the lab measures more than once is quoted as ``median (min-max of k)``, from one place;
two figures are told apart only when their ranges do not overlap. Pure functions of the numbers
given, in whatever unit the caller uses (GB/s, tokens/s).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """k runs of one measurement: ``median`` is the figure, ``low``-``high`` the range."""

    runs: tuple

    @property
    def median(self) -> float:
        return float(statistics.median(self.runs))

    @property
    def low(self) -> float:
        return float(min(self.runs))

    @property
    def high(self) -> float:
        return float(max(self.runs))

    @property
    def best(self) -> float:
        """The largest run: for a copy, noise (a busy machine) only ever makes it slower."""
        return self.high

    def text(self, digits: int = 1, unit: str = "") -> str:
        """``"4.7 tok/s (4.1-5.0, 3 runs)"``; one run reads ``"4.7 tok/s (1 run)"``."""
        suffix = f" {unit}" if unit else ""
        figure = f"{self.median:.{digits}f}{suffix}"
        if len(self.runs) == 1:
            return f"{figure} (1 run)"
        return f"{figure} ({self.low:.{digits}f}-{self.high:.{digits}f}, {len(self.runs)} runs)"


def of(runs) -> Spread:
    """A Spread of ``runs``: one or more finite numbers."""
    values = tuple(float(r) for r in runs)
    if not values or not all(math.isfinite(v) for v in values):
        raise ValueError(f"runs must be one or more finite numbers, got {runs!r}")
    return Spread(values)


def apart(a: Spread, b: Spread) -> bool:
    """Whether the two ranges do not overlap: only then is the difference more than the noise."""
    return a.high < b.low or b.high < a.low


#: A measured long/short ratio this close to the prediction (relative) is "as predicted".
AS_PREDICTED = 0.1


def _slower_caption(predicted: float, short: Spread, long: Spread, said: str) -> str:
    """The caption of a long context measured slower: as predicted within AS_PREDICTED of the medians'
    ratio; else inside the runs' range of ratios, or more or less slowdown than predicted, in words."""
    ratio = long.median / short.median
    low, high = long.low / short.high, long.high / short.low
    if abs(ratio / predicted - 1) <= AS_PREDICTED:
        return f"The long context is slower, as predicted: {said}."
    if low <= predicted <= high:
        return (f"The long context is slower: {said}, which the runs' spread allows (their ratios run "
                f"{low:.2f}x to {high:.2f}x), though the medians differ from it.")
    if ratio < predicted:
        return (f"The long context is slower, and by more than predicted: {said}. The prediction counts "
                f"only the bytes read per token; here something else grew with the context too (the "
                f"attention's own work, which a CPU does slowly, or other programs' load).")
    return (f"The long context is slower, but by less than predicted: {said}. Part of the KV cache "
            f"may have been read from a cache rather than memory, or the short runs were slowed by "
            f"other programs' load.")


def slowdown_caption(predicted_ratio: float, short: Spread, long: Spread, *, context: int,
                     kv_bytes: float, weight_bytes: float, llc_bytes: int | None = None) -> str:
    """What the measured long-context ratio says next to the prediction, in one or two sentences.

    ``predicted_ratio`` is the ceiling at ``context`` tokens over the ceiling at short context
    (below 1: slower); ``short`` and ``long`` are tokens/s runs; ``kv_bytes`` is the KV cache at
    ``context`` tokens and ``weight_bytes`` the weights, in bytes; ``llc_bytes`` the last-level
    cache in bytes, when known.
    """
    ratio = long.median / short.median
    said = (f"the medians of {len(short.runs)} short and {len(long.runs)} long runs give {ratio:.2f}x, "
            f"the prediction {predicted_ratio:.2f}x")
    if long.high < short.low:
        return _slower_caption(predicted_ratio, short, long, said)
    share = kv_bytes / (kv_bytes + weight_bytes)
    why = [f"the KV cache is {share:.0%} of the bytes read per token"]
    if llc_bytes and kv_bytes <= llc_bytes:
        why.append(f"its {kv_bytes / 2**20:.0f} MiB fits in the {llc_bytes / 2**20:.0f} MiB "
                   f"last-level cache")
    if not apart(short, long):
        head = (f"The change is inside the run-to-run spread ({short.low:.3g}-{short.high:.3g} tokens/s "
                f"short, {long.low:.3g}-{long.high:.3g} long): {said}, but these runs cannot tell "
                f"the two apart")
    else:
        head = f"The long context measured faster, the inverse of the lesson: {said}"
        why.append("something other than the bytes changed between the runs (other programs' load, "
                   "the clock speed)")
    return (f"{head}. Why here: {'; '.join(why)}. On a GPU with a larger model and a longer context "
            f"the slowdown follows the prediction.")


def unsynced_cpu_caption(unsynced: float, synced: Spread) -> str:
    """What the synchronize experiment's two numbers say on a CPU, in GB/s: a CPU copy is done when
    ``copy_`` returns, so synchronize has nothing to wait for and the copy timed without it is the same
    work as ``synced`` (the sweep's runs at that size); a gap between them is the machine's noise."""
    ratio = unsynced / synced.median
    runs = f"{synced.low:.3g}-{synced.high:.3g} GB/s in its {len(synced.runs)} runs"
    if synced.low <= unsynced <= synced.high:
        seen = f"the {ratio:.2f}x between them is inside the spread of your sweep at this size ({runs})"
    else:
        seen = (f"the {ratio:.2f}x between them is outside your sweep's runs at this size ({runs}): other "
                f"programs' load or the clock speed changed between the runs, not the mistake")
    return (f"On a CPU the copy is done when it returns, so synchronize has nothing to wait for and both "
            f"numbers time the same work: {seen}. On a GPU the same mistake reads many times the memory's "
            f"speed.")
