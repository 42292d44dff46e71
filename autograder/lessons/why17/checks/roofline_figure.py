"""Reading a figure that came back from the child as plain data (autograder.runtime.figures.figure_data).

Helpers for the roofline checks: find the plotting Axes, list its points, find labels.
This module registers no checks.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed

FIGURE_HINT = "return the matplotlib Figure (fig, not plt or an Axes)"


def axes_of(value, what: str) -> dict:
    """The Axes that holds the plot (the first with lines or points), or CheckFailed."""
    if not isinstance(value, dict) or not isinstance(value.get("axes"), list):
        kind = getattr(value, "type_name", type(value).__name__)
        raise CheckFailed(f"{what} returned {kind}; {FIGURE_HINT}. Reread: The roofline.")
    axes = [ax for ax in value["axes"] if ax.get("lines") or ax.get("collections")]
    if not axes:
        raise CheckFailed(f"{what} returned a Figure with nothing plotted. Reread: The roofline.")
    return axes[0]


def points(ax: dict, *, markers_only: bool = False) -> list[tuple[float, float, dict]]:
    """Every finite (x, y, line) of the Axes' lines (only lines drawn with markers, if asked)."""
    out = []
    for line in ax.get("lines", []):
        if markers_only and not line.get("marker"):
            continue
        for x, y in zip(line.get("x", []), line.get("y", [])):
            if math.isfinite(x) and math.isfinite(y):
                out.append((x, y, line))
    return out


def marks(ax: dict) -> list[tuple[float, float | None]]:
    """Places a reader sees as marked: marker points, scatter points and annotation anchors."""
    out = [(x, y) for x, y, _ in points(ax, markers_only=True)]
    for coll in ax.get("collections", []):
        out.extend((float(x), float(y)) for x, y in coll.get("offsets", []))
    for text in ax.get("texts", []):
        if text.get("xy"):
            out.append((text["xy"][0], text["xy"][1]))
    return out


def labels(ax: dict) -> list[str]:
    """Every label text of the Axes: line and collection labels, texts, legend entries."""
    found = [line.get("label", "") for line in ax.get("lines", [])]
    found += [c.get("label", "") for c in ax.get("collections", [])]
    found += [t.get("text", "") for t in ax.get("texts", [])]
    found += list(ax.get("legend", []))
    return [s for s in found if s and not s.startswith("_")]


def near(a: float, b: float, rel: float = 1e-6) -> bool:
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b))
