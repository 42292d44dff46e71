"""plot_roofline: log-log axes, labelled units, two roofs meeting at a marked ridge, workloads.

The figure comes back as plain data. The roofs are checked against the lesson's geometry (slope
TFLOP/s = GB/s x FLOPs/byte / 1000, roof = peak); workload points against the student's own
attainable_tflops when it works (a slip there is graded once, in task3), else the grader's oracle.
That is the predict.py roofline.py imported, called in roofline.py's own child ('predict.<name>'),
so no second child starts; a roofline.py that does not import predict is compared with the oracle.
"""
from __future__ import annotations

from autograder.api import CheckFailed, StudentError, check
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.checks import roofline_figure as fig
from shared import tables

TASK = "task4"
#: The machine drawn: H100 SXM from the hardware table (its ridge is about 295 FLOPs/byte).
DEVICE = "h100-sxm"
#: Workloads drawn: one well below the ridge, one near it, one above it (FLOPs/byte).
WORKLOADS = {"decode batch 1": 1.0, "batch 48": 96.0, "prefill 2K": 2048.0}
#: How far apart (as a factor) the slope's last point and the roof's first point may sit around
#: the ridge when the roofline is drawn as a sampled curve rather than through its corner.
GAP = 1.5
ROOFLINE = "Reread: The roofline."


def _figure(ctx, workloads=None) -> dict:
    d = tables.device(DEVICE)
    value = ctx.call("roofline", "plot_roofline", d.peak_bf16_tflops, d.bw_gbs, workloads=workloads)
    return fig.axes_of(value, "plot_roofline")


@check("roofline_loglog", task=TASK, name="plot_roofline draws on log-log axes", files="roofline")
def loglog(ctx):
    ax = _figure(ctx)
    if ax["xscale"] != "log" or ax["yscale"] != "log":
        raise CheckFailed(f"plot_roofline uses {ax['xscale']} x and {ax['yscale']} y axes; a roofline is drawn "
                          f"log-log (ax.set_xscale('log'), ax.set_yscale('log')), so the slope is a straight "
                          f"line and both ends are readable. {ROOFLINE}")


@check("roofline_axis_labels", task=TASK, name="plot_roofline labels its axes FLOPs/byte and TFLOP/s",
       files="roofline")
def axis_labels(ctx):
    ax = _figure(ctx)
    x, y = ax["xlabel"].lower(), ax["ylabel"].lower()
    if "flop" not in x or "byte" not in x:
        raise CheckFailed(f"plot_roofline's x label is {ax['xlabel']!r}; name the quantity and its unit: arithmetic "
                          f"intensity in FLOPs/byte. {ROOFLINE}")
    if "tflop" not in y:
        raise CheckFailed(f"plot_roofline's y label is {ax['ylabel']!r}; name the unit: attainable TFLOP/s. "
                          f"{ROOFLINE}")


@check("roofline_roofs_meet", task=TASK, name="plot_roofline's slope and roof meet at the ridge point",
       files="roofline")
def roofs_meet(ctx):
    d = tables.device(DEVICE)
    peak, bw = d.peak_bf16_tflops, d.bw_gbs
    ridge = oracle.ridge(peak, bw)
    ax = _figure(ctx)
    pts = fig.points(ax)
    slope = sorted({x for x, y, _ in pts if x <= ridge * (1 + 1e-6) and fig.near(y, bw * x / 1000.0)})
    roof = sorted({x for x, y, _ in pts if x >= ridge * (1 - 1e-6) and fig.near(y, peak)})
    if len(slope) < 2:
        raise CheckFailed(f"no line in plot_roofline follows the bandwidth slope left of the ridge: at {bw:g} GB/s "
                          f"it is TFLOP/s = GB/s x FLOPs/byte / 1000 (a 45-degree line on log-log axes). {ROOFLINE}")
    if len(roof) < 2:
        raise CheckFailed(f"no line in plot_roofline follows the compute roof right of the ridge: a flat line at the "
                          f"peak, {peak:g} TFLOP/s. {ROOFLINE}")
    if slope[-1] < ridge / GAP or roof[0] > ridge * GAP:
        raise CheckFailed(f"plot_roofline's slope stops at {slope[-1]:.4g} and its roof starts at {roof[0]:.4g} "
                          f"FLOPs/byte; draw both up to the ridge point, where they meet. {ROOFLINE}")


@check("roofline_ridge_marked", task=TASK, name="plot_roofline marks the ridge point", files="roofline")
def ridge_marked(ctx):
    d = tables.device(DEVICE)
    ridge = oracle.ridge(d.peak_bf16_tflops, d.bw_gbs)
    ax = _figure(ctx)
    vertical = any(line.get("x") and all(fig.near(x, ridge) for x in line["x"]) for line in ax.get("lines", []))
    if not vertical and not any(fig.near(x, ridge) for x, _y in fig.marks(ax)):
        raise CheckFailed(f"plot_roofline does not mark the ridge point: put a marker, a vertical line or an "
                          f"annotation at x = peak / bandwidth, in FLOPs/byte, where the two roofs meet. {ROOFLINE}")


def _expected(ctx, intensity, peak, bw) -> float:
    try:
        return oracle.number(ctx.call("roofline", "predict.attainable_tflops", intensity, peak, bw),
                             "attainable_tflops", "TFLOP/s")
    except (StudentError, CheckFailed):
        return oracle.roof(intensity, peak, bw)


@check("roofline_workloads", task=TASK, name="plot_roofline puts each workload, labelled, on the roofline",
       files="roofline")
def workloads(ctx):
    d = tables.device(DEVICE)
    peak, bw = d.peak_bf16_tflops, d.bw_gbs
    ax = _figure(ctx, workloads=dict(WORKLOADS))
    marks = fig.marks(ax) + [(x, y) for x, y, _ in fig.points(ax)]
    texts = " | ".join(fig.labels(ax))
    for name, intensity in WORKLOADS.items():
        want = _expected(ctx, intensity, peak, bw)
        if not any(fig.near(x, intensity) and y is not None and fig.near(y, want) for x, y in marks):
            at = [y for x, y in marks if fig.near(x, intensity)]
            seen = f" (your point there is at {at[0]:.4g} TFLOP/s)" if at else ""
            raise CheckFailed(f"workload {name!r} at {intensity:g} FLOPs/byte should sit on the roofline, at its "
                              f"attainable TFLOP/s{seen}: the lower of peak and bandwidth x intensity. {ROOFLINE}")
        if name not in texts:
            raise CheckFailed(f"workload {name!r} is not labelled in plot_roofline; label each point with its "
                              f"name (a legend entry or an annotation). {ROOFLINE}")
