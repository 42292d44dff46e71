"""A matplotlib Figure as plain data, for the checks that read a student's plot.

The sandboxed child encodes a Figure a student function returned (autograder/runtime/codec.py);
the checks read the result (autograder/lessons/why17/checks/roofline_figure.py). Only the Figure's
own methods are used: this module imports no matplotlib.
"""
from __future__ import annotations

import math

#: Longest list of points kept per plotted line (the rest is cut; plots need far fewer), and most
#: elements of a tensor whose data comes back (codec.py).
MAX_POINTS = 10_000


def figure_data(fig) -> dict:
    """A matplotlib Figure as plain data: per Axes its scales, labels, lines, points and texts.

    Returns ``{"axes": [{"xscale", "yscale", "xlabel", "ylabel", "title", "lines": [{"label",
    "x", "y", "marker", "linestyle"}], "collections": [{"label", "offsets"}], "texts": [{"text",
    "xy"}], "legend": [labels]}]}``; x and y are lists of floats in data coordinates.
    """
    axes = []
    for ax in fig.get_axes():
        lines = []
        for line in ax.get_lines():
            xs, ys = line.get_xdata(orig=True), line.get_ydata(orig=True)
            lines.append({
                "label": str(line.get_label()),
                "x": _floats(xs), "y": _floats(ys),
                "marker": str(line.get_marker()) if line.get_marker() not in (None, "None", "none", "") else "",
                "linestyle": str(line.get_linestyle()),
            })
        collections = []
        for coll in ax.collections:
            try:
                offsets = [[float(a), float(b)] for a, b in list(coll.get_offsets())[:MAX_POINTS]]
            except Exception:
                offsets = []
            collections.append({"label": str(coll.get_label()), "offsets": offsets})
        texts = []
        for text in ax.texts:
            xy = getattr(text, "xy", None)
            if xy is None:
                xy = text.get_position()
            try:
                pair = [float(xy[0]), float(xy[1])]
            except (TypeError, ValueError, IndexError):
                pair = None
            texts.append({"text": str(text.get_text()), "xy": pair})
        legend = ax.get_legend()
        axes.append({
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "title": ax.get_title(),
            "lines": lines, "collections": collections, "texts": texts,
            "legend": [t.get_text() for t in legend.get_texts()] if legend is not None else [],
        })
    return {"axes": axes}


def _floats(values) -> list:
    out = []
    for v in list(values)[:MAX_POINTS]:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(math.nan)
    return out
