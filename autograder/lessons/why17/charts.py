"""The feedback page's plots of this lesson: the student's sweep and roofline (inline SVG), drawn
from the numbers plotdata.py stored in results.json. The caption under them is read from the
student's own sweep (shared/sweep_reading.py): a cliff where it shows one, and why not where not."""
from __future__ import annotations

from html import escape

from autograder.api import svg
from shared import sweep_reading


def _cache_bytes(device: dict):
    """The last-level cache in bytes the plot marks: the machine's own, else the spec's L2."""
    for key in ("llc_bytes", "l2_bytes"):
        value = device.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return value
    return None


def reading(data: dict) -> sweep_reading.Reading:
    """What the student's sweep shows, from the numbers in ``data`` (plotdata's dict)."""
    device = data.get("device") or {}
    threads = device.get("threads") if isinstance(device.get("threads"), int) else None
    return sweep_reading.read(data.get("sweep_gbs") or {}, llc_bytes=_cache_bytes(device),
                              device_type=device.get("type") or ("cuda" if device.get("key") else "cpu"),
                              threads=threads, runs=data.get("sweep_runs_gbs") or {})


def sweep_chart(data: dict) -> str:
    """The student's bandwidth sweep against the device's curve, the last-level cache marked."""
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
    cache = _cache_bytes(device)
    if cache:
        # A copy's two buffers leave the cache when 2 x size exceeds it: a cliff would be at cache / 2.
        label = (f"cache cliff (cache {cache / 2**20:g} MiB)" if reading(data).shape == "cliff"
                 else f"cache {cache / 2**20:g} MiB: no cliff in your sweep")
        chart.vline(cache / 2 / 2**20, label, color="#b3261e")
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
            f"{escape(str((data.get('device') or {}).get('name', 'your machine')))}. "
            f"<span class=\"sweep-reading\">{escape(reading(data).caption)}</span> Decode reads "
            "weights far larger than any cache.</p>")
