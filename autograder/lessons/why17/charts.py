"""The feedback page's plots of this lesson: the student's sweep and roofline (inline SVG), drawn
from the numbers plotdata.py stored in results.json."""
from __future__ import annotations

from html import escape

from autograder.reports import svg


def sweep_chart(data: dict) -> str:
    """The student's bandwidth sweep against the device's curve, the L2 size marked."""
    chart = svg.Chart(title="Copy bandwidth against buffer size", xlabel="buffer size (MiB)",
                      ylabel="bandwidth (GB/s)", xlog=True, ylog=True, legend="bottom-left")
    device = data.get("device") or {}
    curve = data.get("device_sweep_gbs") or {}
    if curve:
        xs = sorted(curve, key=float)
        chart.line([float(x) for x in xs], [curve[x] for x in xs],
                   f"{device.get('name') or 'device'}: expected", color="#777777", dash="6 4")
    sweep = data.get("sweep_gbs") or {}
    if sweep:
        xs = sorted(sweep, key=float)
        chart.line([float(x) for x in xs], [sweep[x] for x in xs], "your sweep", color=svg.PALETTE[1])
    l2 = device.get("l2_bytes")
    if isinstance(l2, (int, float)) and l2 > 0:
        # A copy's two buffers leave the L2 when 2 x size exceeds it: the cliff is at L2 / 2.
        chart.vline(l2 / 2 / 2**20, f"cache cliff (L2 {l2 / 2**20:g} MiB)", color="#b3261e")
    return chart.svg()


def roofline_chart(data: dict) -> str:
    """The student's roofline from their measured peak and bandwidth, with their points."""
    bw, peak = data.get("bw_gbs"), data.get("peak_tflops")
    chart = svg.Chart(title="Your roofline", xlabel="arithmetic intensity (FLOPs/byte)",
                      ylabel="attainable (TFLOP/s)", xlog=True, ylog=True)
    if not (svg._finite(bw, peak) and bw > 0 and peak > 0):
        return chart.svg()
    ridge = peak * 1000 / bw
    xs = [10 ** (e / 4) for e in range(-8, 17)]
    xs = sorted(set(xs + [ridge]))
    chart.line(xs, [min(peak, bw * x / 1000) for x in xs],
               f"measured roof: {bw:.4g} GB/s, {peak:.4g} TFLOP/s", color=svg.PALETTE[0])
    device = data.get("device") or {}
    dbw, dpeak = device.get("bw_gbs"), device.get("peak_tflops")
    if svg._finite(dbw, dpeak) and dbw > 0 and dpeak > 0:
        chart.line(xs, [min(dpeak, dbw * x / 1000) for x in xs], "spec sheet roof",
                   color="#777777", dash="6 4")
    chart.vline(ridge, f"ridge {ridge:.3g} FLOPs/B", color=svg.PALETTE[0])
    points = [p for p in data.get("points") or [] if isinstance(p, dict)]
    if points:
        chart.points([p.get("intensity") for p in points], [p.get("tflops") for p in points],
                     "your measurements", color=svg.PALETTE[1],
                     names=[str(p.get("label", "")) for p in points])
    return chart.svg()


def render(data: dict | None) -> str:
    """The "Your measurements" card's HTML: both charts and a line on what they show."""
    if not data:
        return ("<p class=\"muted\">No plots: measurements.json (written by the lab notebook, "
                "why17.ipynb) is missing or unreadable, so there is no sweep or roofline to draw.</p>")
    return (f"<div class=\"plots\">{sweep_chart(data)}{roofline_chart(data)}</div>"
            f"<p class=\"muted\">From your {escape(str(data.get('source', '')))}, measured on "
            f"{escape(str((data.get('device') or {}).get('name', 'your machine')))}. Below the "
            "cliff the copy fits in the cache and looks faster than main memory; decode reads "
            "weights far larger than any cache.</p>")
