"""plot_batch_curve: a "total" line and a "per stream" line whose values are decode_ceiling's.

Values are compared with the student's own decode_ceiling when it works (a slip there is graded
once, in task3), else with the grader's oracle. That is the predict.py roofline.py imported, called
in roofline.py's own child ('predict.decode_ceiling'); without that import, the oracle.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, StudentError, check
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.checks import roofline_figure as fig
from shared import tables

TASK = "task4"
FIGURE = "Reread: Every way around the wall (batching) and Figure 003."
BATCHES = (1, 3, 12, 48, 300)
CONTEXT = 1024


def _setting():
    d, m = tables.device("dgx-spark"), tables.model("llama-3.1-8b")
    return dict(params_read=float(m.params_read(whole_checkpoint=True)), bytes_per_weight=2.0, bw_gbs=d.bw_gbs,
                peak_tflops=d.peak_bf16_tflops, context=CONTEXT, kv_bytes_per_token=m.kv_bytes_per_token(2.0))


def _figure(ctx) -> dict:
    s = _setting()
    value = ctx.call("roofline", "plot_batch_curve", s["params_read"], s["bytes_per_weight"], s["bw_gbs"],
                     s["peak_tflops"], context=s["context"], kv_bytes_per_token=s["kv_bytes_per_token"],
                     batches=BATCHES)
    return fig.axes_of(value, "plot_batch_curve")


def _line(ax, *words):
    for line in ax.get("lines", []):
        label = line.get("label", "").lower().replace("-", " ").replace("_", " ")
        if all(w in label for w in words):
            return line
    return None


@check("batch_curve_lines", task=TASK, name="plot_batch_curve draws labelled total and per-stream lines",
       files="roofline")
def lines(ctx):
    ax = _figure(ctx)
    missing = [name for name, words in (("total", ("total",)), ("per stream", ("per", "stream")))
               if _line(ax, *words) is None]
    if missing:
        found = [line.get("label", "") for line in ax.get("lines", [])]
        raise CheckFailed(f"plot_batch_curve has no line labelled {' or '.join(repr(m) for m in missing)} "
                          f"(labels found: {found}); plot total and per-stream tokens/s against batch, "
                          f"each with its label. {FIGURE}")
    if "batch" not in ax["xlabel"].lower() or not any(u in ax["ylabel"].lower() for u in ("tokens/s", "tok/s")):
        raise CheckFailed(f"plot_batch_curve's axes are labelled {ax['xlabel']!r} and {ax['ylabel']!r}; x is the "
                          f"batch and y is tokens/s. {FIGURE}")


def _expected(ctx, batch) -> tuple[float, float]:
    s = _setting()
    try:
        return oracle.pair(ctx.call("roofline", "predict.decode_ceiling", s["params_read"], s["bytes_per_weight"],
                                    s["bw_gbs"], batch=batch, context=s["context"],
                                    kv_bytes_per_token=s["kv_bytes_per_token"], peak_tflops=s["peak_tflops"]),
                           "decode_ceiling", "tokens/s")
    except (StudentError, CheckFailed):
        return oracle.ceiling(s["params_read"], s["bytes_per_weight"], s["bw_gbs"], batch, s["context"],
                              s["kv_bytes_per_token"], s["peak_tflops"])


@check("batch_curve_values", task=TASK, name="plot_batch_curve plots decode_ceiling at each batch",
       files="roofline")
def values(ctx):
    ax = _figure(ctx)
    total, per = _line(ax, "total"), _line(ax, "per", "stream")
    if total is None or per is None:
        raise CheckFailed(f"plot_batch_curve needs lines labelled 'total' and 'per stream' to be read. {FIGURE}")
    for batch in BATCHES:
        want_one, want_all = _expected(ctx, batch)
        for name, line, want in (("total", total, want_all), ("per stream", per, want_one)):
            ys = [y for x, y in zip(line["x"], line["y"]) if fig.near(x, batch)]
            if not ys:
                raise CheckFailed(f"the {name} line has no point at batch {batch}; plot one point per batch size "
                                  f"asked for (x = batch). {FIGURE}")
            if not any(fig.near(y, want) for y in ys if math.isfinite(y)):
                raise CheckFailed(f"the {name} line at batch {batch} ({CONTEXT} tokens of context) shows "
                                  f"{ys[0]:.4g} tokens/s {oracle.ratio_hint(ys[0], want)}; "
                                  "it should be decode_ceiling's "
                                  f"{name} value, with every stream's KV cache read each step. {FIGURE}")
