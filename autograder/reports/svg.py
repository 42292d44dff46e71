"""Small inline-SVG charts for the feedback and summary pages: no libraries, no network.

``Chart`` draws lines, points and vertical markers on linear or log axes with ticks, labels and a
legend; ``bar_chart`` draws labelled bars (the score histogram, means per task). Every text is
escaped; every number is checked finite before it is drawn (a non-finite value is skipped).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

#: Colours of series in order (colour-blind-safe Okabe-Ito palette).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
FONT = "font-family:system-ui,sans-serif;font-size:12px"


def _finite(*values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        exp = int(math.floor(math.log10(abs(v))))
        mant = v / 10 ** exp
        return f"{mant:g}e{exp}" if mant != 1 else f"1e{exp}"
    return f"{v:g}"


@dataclass
class _Series:
    kind: str            # 'line' | 'points'
    xs: list
    ys: list
    label: str
    color: str
    dash: str = ""
    names: list = field(default_factory=list)


class Chart:
    """A 2-D chart. ``xlog``/``ylog`` choose log axes; sizes are in CSS pixels."""

    def __init__(self, *, title: str, xlabel: str, ylabel: str, xlog: bool = False,
                 ylog: bool = False, width: int = 640, height: int = 380, legend: str = "top-left"):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.xlog, self.ylog = xlog, ylog
        self.width, self.height = width, height
        self.series: list[_Series] = []
        self.vlines: list[tuple[float, str, str]] = []
        self.margin = (48, 20, 56, 74)  # top, right, bottom, left
        self.legend = legend            # 'top-left' or 'bottom-left', inside the plot area

    def _ok(self, x, y) -> bool:
        return (_finite(x, y) and (not self.xlog or x > 0) and (not self.ylog or y > 0))

    def line(self, xs, ys, label: str, color: str | None = None, dash: str = "") -> None:
        pairs = [(x, y) for x, y in zip(xs, ys) if self._ok(x, y)]
        if pairs:
            self.series.append(_Series("line", [p[0] for p in pairs], [p[1] for p in pairs], label,
                                       color or PALETTE[len(self.series) % len(PALETTE)], dash))

    def points(self, xs, ys, label: str, color: str | None = None, names=None) -> None:
        names = list(names or [""] * len(xs))
        keep = [(x, y, n) for x, y, n in zip(xs, ys, names) if self._ok(x, y)]
        if keep:
            self.series.append(_Series("points", [k[0] for k in keep], [k[1] for k in keep], label,
                                       color or PALETTE[len(self.series) % len(PALETTE)],
                                       names=[k[2] for k in keep]))

    def vline(self, x: float, label: str, color: str = "#777777") -> None:
        if _finite(x) and (not self.xlog or x > 0):
            self.vlines.append((x, label, color))

    @property
    def empty(self) -> bool:
        return not self.series

    # ------------------------------------------------------------------ geometry
    def _range(self, values, log: bool) -> tuple[float, float]:
        lo, hi = min(values), max(values)
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
            lo, hi = math.floor(lo), math.ceil(hi)
            if hi - lo < 1:
                hi = lo + 1
            return lo, hi
        if lo == hi:
            lo, hi = lo - (abs(lo) or 1) * 0.5, hi + (abs(hi) or 1) * 0.5
        pad = (hi - lo) * 0.05
        return (0.0 if lo >= 0 and lo - pad < 0 else lo - pad), hi + pad

    def _ticks(self, lo: float, hi: float, log: bool) -> list[float]:
        if log:
            step = max(1, math.ceil((hi - lo) / 8))
            return [10.0 ** e for e in range(int(lo), int(hi) + 1, step)]
        raw = (hi - lo) / 6
        mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        first = math.ceil(lo / step) * step
        out, v = [], first
        while v <= hi + step * 1e-9:
            out.append(round(v, 10))
            v += step
        return out

    def svg(self) -> str:
        top, right, bottom, left = self.margin
        w, h = self.width, self.height
        xs = [x for s in self.series for x in s.xs] + [v[0] for v in self.vlines]
        ys = [y for s in self.series for y in s.ys]
        if not xs or not ys:
            return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="60" role="img" '
                    f'viewBox="0 0 {w} 60"><text x="10" y="35" style="{FONT}">{escape(self.title)}: '
                    f'no data</text></svg>')
        f = _Frame(left, top, w - left - right, h - top - bottom, *self._range(xs, self.xlog),
                   *self._range(ys, self.ylog), self.xlog, self.ylog)
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
               f'viewBox="0 0 {w} {h}" role="img" aria-label="{escape(self.title)}">',
               f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>',
               f'<text x="{w / 2:.1f}" y="20" text-anchor="middle" style="{FONT};font-size:14px;'
               f'font-weight:600">{escape(self.title)}</text>',
               f'<rect x="{left}" y="{top}" width="{f.pw}" height="{f.ph}" fill="none" stroke="#999"/>']
        out += self._axes(f)
        out += self._vlines(f)
        for s in self.series:
            out += _series(s, f)
        out += self._legend(f)
        out.append("</svg>")
        return "\n".join(out)

    def _axes(self, f: _Frame) -> list[str]:
        """Grid lines and tick labels on both axes, then the axis labels."""
        out = []
        left, top, pw, ph = f.left, f.top, f.pw, f.ph
        lo_x, hi_x = (10 ** f.x0, 10 ** f.x1) if self.xlog else (f.x0, f.x1)
        lo_y, hi_y = (10 ** f.y0, 10 ** f.y1) if self.ylog else (f.y0, f.y1)
        for t in self._ticks(f.x0, f.x1, self.xlog):
            if lo_x <= t <= hi_x:
                X = f.px(t)
                out.append(f'<line x1="{X:.1f}" y1="{top}" x2="{X:.1f}" y2="{top + ph}" stroke="#eee"/>')
                out.append(f'<text x="{X:.1f}" y="{top + ph + 16}" text-anchor="middle" '
                           f'style="{FONT}">{_fmt(t)}</text>')
        for t in self._ticks(f.y0, f.y1, self.ylog):
            if lo_y <= t <= hi_y:
                Y = f.py(t)
                out.append(f'<line x1="{left}" y1="{Y:.1f}" x2="{left + pw}" y2="{Y:.1f}" stroke="#eee"/>')
                out.append(f'<text x="{left - 6}" y="{Y + 4:.1f}" text-anchor="end" '
                           f'style="{FONT}">{_fmt(t)}</text>')
        out.append(f'<text x="{left + pw / 2:.1f}" y="{self.height - 14}" text-anchor="middle" '
                   f'style="{FONT}">{escape(self.xlabel)}</text>')
        out.append(f'<text transform="translate(16,{top + ph / 2:.1f}) rotate(-90)" '
                   f'text-anchor="middle" style="{FONT}">{escape(self.ylabel)}</text>')
        return out

    def _vlines(self, f: _Frame) -> list[str]:
        """The vertical markers, each labelled at the top (left of it near the right edge)."""
        out = []
        for x, label, color in self.vlines:
            X = f.px(x)
            out.append(f'<line x1="{X:.1f}" y1="{f.top}" x2="{X:.1f}" y2="{f.top + f.ph}" stroke="{color}" '
                       f'stroke-width="1.5" stroke-dasharray="6 4"/>')
            anchor, tx = ("end", X - 4) if X > f.left + 0.75 * f.pw else ("start", X + 4)
            out.append(f'<text x="{tx:.1f}" y="{f.top + 14}" text-anchor="{anchor}" '
                       f'style="{FONT};fill:{color}">{escape(label)}</text>')
        return out

    def _legend(self, f: _Frame) -> list[str]:
        """The labelled series, inside the plot where the data leaves room."""
        out = []
        labelled = [s for s in self.series if s.label]
        lx = f.left + 10
        ly = f.top + 22 if self.legend == "top-left" else f.top + f.ph - 10 - 16 * (len(labelled) - 1)
        for s in labelled:
            if s.kind == "line":
                dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
                out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" '
                           f'stroke="{s.color}" stroke-width="2"{dash}/>')
            else:
                out.append(f'<circle cx="{lx + 11}" cy="{ly - 4}" r="5" fill="{s.color}"/>')
            out.append(f'<text x="{lx + 28}" y="{ly}" style="{FONT}">{escape(s.label)}</text>')
            ly += 16
        return out


@dataclass(frozen=True)
class _Frame:
    """The plot area (CSS pixels: its left and top edge, width ``pw`` and height ``ph``) and the
    data range it shows (``x0``..``x1``, ``y0``..``y1``: decades on a log axis)."""

    left: float
    top: float
    pw: float
    ph: float
    x0: float
    x1: float
    y0: float
    y1: float
    xlog: bool
    ylog: bool

    def px(self, x: float) -> float:
        v = math.log10(x) if self.xlog else x
        return self.left + (v - self.x0) / (self.x1 - self.x0) * self.pw

    def py(self, y: float) -> float:
        v = math.log10(y) if self.ylog else y
        return self.top + self.ph - (v - self.y0) / (self.y1 - self.y0) * self.ph


def _series(s: _Series, f: _Frame) -> list[str]:
    """One series: a polyline (dotted at each point when there are few), or named points."""
    out = []
    if s.kind == "line":
        path = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y in zip(s.xs, s.ys))
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{s.color}" '
                   f'stroke-width="2"{dash}/>')
        for x, y in zip(s.xs, s.ys):
            if len(s.xs) <= 16:
                out.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="2.5" fill="{s.color}"/>')
    else:
        for x, y, name in zip(s.xs, s.ys, s.names):
            out.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="5" fill="{s.color}" '
                       f'stroke="#fff"><title>{escape(name or s.label)}</title></circle>')
            if name:
                out.append(f'<text x="{f.px(x) + 7:.1f}" y="{f.py(y) - 7:.1f}" '
                           f'style="{FONT};fill:{s.color}">{escape(name)}</text>')
    return out


def bar_chart(labels, values, *, title: str, ylabel: str, ymax: float | None = None,
              width: int = 640, height: int = 300, color: str = PALETTE[0],
              value_fmt=lambda v: f"{v:g}") -> str:
    """Vertical bars, one per label, each with its value written above it."""
    labels, values = list(labels), [v if _finite(v) else 0.0 for v in values]
    top, right, bottom, left = 40, 16, 58, 56
    pw, ph = width - left - right, height - top - bottom
    top_value = ymax if ymax and ymax > 0 else (max(values) if values and max(values) > 0 else 1.0)
    n = max(len(values), 1)
    slot = pw / n
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" style="{FONT};font-size:14px;'
           f'font-weight:600">{escape(title)}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#999"/>',
           f'<text transform="translate(16,{top + ph / 2:.1f}) rotate(-90)" text-anchor="middle" '
           f'style="{FONT}">{escape(ylabel)}</text>']
    for i, (label, value) in enumerate(zip(labels, values)):
        bh = max(0.0, min(value / top_value, 1.0)) * ph
        x = left + i * slot + slot * 0.12
        bw = slot * 0.76
        out.append(f'<rect x="{x:.1f}" y="{top + ph - bh:.1f}" width="{bw:.1f}" height="{bh:.1f}" '
                   f'fill="{color}"><title>{escape(str(label))}: {escape(value_fmt(value))}</title></rect>')
        out.append(f'<text x="{x + bw / 2:.1f}" y="{top + ph - bh - 4:.1f}" text-anchor="middle" '
                   f'style="{FONT}">{escape(value_fmt(value))}</text>')
        out.append(f'<text x="{x + bw / 2:.1f}" y="{top + ph + 16}" text-anchor="middle" '
                   f'style="{FONT};font-size:11px">{escape(str(label))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def hbar_chart(labels, values, *, title: str, xlabel: str, width: int = 900, color: str = PALETTE[1],
               value_fmt=lambda v: f"{v:g}", vmax: float | None = None) -> str:
    """Horizontal bars, one per label (long labels fit on the left), each with its value; a bar
    of ``vmax`` (default: the largest value) spans the plot."""
    labels, values = [str(x) for x in labels], [v if _finite(v) else 0.0 for v in values]
    row, top, left, right = 24, 40, 260, 60
    height = top + row * max(len(values), 1) + 36
    pw = width - left - right
    top_value = vmax if vmax else (max(values) if values and max(values) > 0 else 1.0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" style="{FONT};font-size:14px;'
           f'font-weight:600">{escape(title)}</text>']
    for i, (label, value) in enumerate(zip(labels, values)):
        y = top + i * row
        bw = min(max(0.0, value / top_value), 1.0) * pw
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end" style="{FONT}">'
                   f'{escape(label)}</text>')
        out.append(f'<rect x="{left}" y="{y + 3}" width="{bw:.1f}" height="{row - 8}" fill="{color}">'
                   f'<title>{escape(label)}: {escape(value_fmt(value))}</title></rect>')
        out.append(f'<text x="{left + bw + 6:.1f}" y="{y + 15}" style="{FONT}">'
                   f'{escape(value_fmt(value))}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 10}" text-anchor="middle" '
               f'style="{FONT}">{escape(xlabel)}</text>')
    out.append("</svg>")
    return "\n".join(out)
