"""Public tests of task 4 (roofline.py): what the two pictures show, read back from the Figure.

Any drawing style passes (lines, markers, scatter, axhline, annotations) as long as the picture
shows the right geometry in the right units: the roofline in FLOPs/byte and TFLOP/s, the batch
curve in tokens/s. Run only these:
``pytest assignments/why17/tests/test_roofline.py``; every test of task4: ``pytest assignments/why17 -m task4``.
"""
import matplotlib
import numpy as np
import pytest
import roofline
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from shared import tables

matplotlib.use("Agg")

pytestmark = pytest.mark.task4
#: The lesson section a failed comparison here points to (conftest.py, shared/diagnose.py);
#: a test marked ``@pytest.mark.lesson(...)`` names its own.
LESSON = 'The roofline; Figure 003'

SPARK = tables.device("spark")
LLAMA_8B = tables.model("llama-3.1-8b")
BF16 = tables.weight_format("bf16").bytes_per_weight
WHOLE = LLAMA_8B.params_read(whole_checkpoint=True)
KV_8B = LLAMA_8B.kv_bytes_per_token(BF16)
#: The lesson's two workloads on the Spark: decode at batch 1 (1 FLOP/byte) and a 1,000-token prefill.
WORKLOADS = {"decode": 1.0, "prefill": 1000.0}
RIDGE = SPARK.peak_bf16_tflops * 1e12 / (SPARK.bw_gbs * 1e9)
CLOSE = 1e-3   # relative tolerance for reading coordinates back from a drawing


def _rendered(fig):
    assert isinstance(fig, Figure), f"expected a matplotlib Figure, got {type(fig).__name__}"
    FigureCanvasAgg(fig).draw()   # lays the figure out (and proves it renders)
    return fig


def _data_points(ax, artist):
    """The artist's points in data coordinates, whatever transform it was drawn with."""
    if hasattr(artist, "get_xydata"):
        xy = np.asarray(artist.get_xydata(), dtype=float)
        transform = artist.get_transform()
    else:   # a scatter (PathCollection)
        xy = np.asarray(artist.get_offsets(), dtype=float)
        transform = artist.get_offset_transform()
    if xy.size == 0:
        return np.empty((0, 2))
    if transform == ax.transData:
        return xy
    return ax.transData.inverted().transform(transform.transform(xy))


def _has_marker(line) -> bool:
    return line.get_marker() not in (None, "", " ", "None", "none")


def _near(a, b) -> bool:
    return abs(a - b) <= CLOSE * abs(b)


def _texts(fig) -> list[str]:
    found = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    for ax in fig.get_axes():
        found += [a.get_label() for a in ax.get_lines() + list(ax.collections)]
    return found


def _loglog_axes(fig):
    axes = [ax for ax in fig.get_axes() if ax.get_xscale() == "log" and ax.get_yscale() == "log"]
    assert axes, "the roofline is drawn on log-log axes (ax.set_xscale('log'), ax.set_yscale('log'))"
    return axes[0]


# --- plot_roofline -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spark_roofline():
    fig = _rendered(roofline.plot_roofline(SPARK.peak_bf16_tflops, SPARK.bw_gbs, WORKLOADS))
    return fig, _loglog_axes(fig)


def test_roofline_draws_the_bandwidth_slope(spark_roofline):
    _, ax = spark_roofline
    for line in ax.get_lines():
        on_slope = [(x, y) for x, y in _data_points(ax, line)
                    if 0 < x <= RIDGE * (1 + CLOSE) and _near(y, SPARK.bw_gbs * x / 1000)]
        if len({round(x, 9) for x, _ in on_slope}) >= 2:
            return
    pytest.fail(f"no line on y = {SPARK.bw_gbs:g} GB/s x intensity / 1000 (TFLOP/s) left of the "
                f"ridge point; reread 'The roofline'")


def test_roofline_draws_the_compute_roof(spark_roofline):
    _, ax = spark_roofline
    for line in ax.get_lines():
        points = _data_points(ax, line)
        if len(points) >= 2 and any(x > RIDGE and _near(y, SPARK.peak_bf16_tflops) for x, y in points):
            return
    pytest.fail(f"no flat line at the peak, {SPARK.peak_bf16_tflops:g} TFLOP/s, right of the ridge point")


def test_roofline_marks_the_ridge_point(spark_roofline):
    fig, ax = spark_roofline
    marked = any(f"{RIDGE:.0f}" in text for text in _texts(fig))
    for line in ax.get_lines():
        xs = _data_points(ax, line)[:, 0]
        if (_has_marker(line) and any(_near(x, RIDGE) for x in xs)) or \
                (len(xs) and all(_near(x, RIDGE) for x in xs)):
            marked = True
    for collection in ax.collections:
        if any(_near(x, RIDGE) for x in _data_points(ax, collection)[:, 0]):
            marked = True
    for text in ax.texts:
        xy = getattr(text, "xy", None)
        if xy is not None and _near(float(xy[0]), RIDGE):
            marked = True
    assert marked, f"mark the ridge point at {RIDGE:.0f} FLOPs/byte (a marker, a vertical line or a label)"


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_roofline_places_each_workload_at_its_attainable_tflops(spark_roofline, name):
    fig, ax = spark_roofline
    x = WORKLOADS[name]
    y = min(SPARK.peak_bf16_tflops, SPARK.bw_gbs * x / 1000)
    artists = [line for line in ax.get_lines() if _has_marker(line)] + list(ax.collections)
    assert any(_near(px, x) and _near(py, y) for a in artists for px, py in _data_points(ax, a)), \
        f"no point for {name!r} at {x:g} FLOPs/byte, {y:g} TFLOP/s"
    assert any(name in text for text in _texts(fig)), f"the point for {name!r} is labelled with its name"


def test_roofline_axes_name_their_units(spark_roofline):
    _, ax = spark_roofline
    assert "byte" in ax.get_xlabel().lower(), "x is arithmetic intensity in FLOPs/byte"
    assert "tflop" in ax.get_ylabel().lower(), "y is attainable performance in TFLOP/s"


def test_roofline_without_workloads():
    fig = _rendered(roofline.plot_roofline(SPARK.peak_bf16_tflops, SPARK.bw_gbs))
    _loglog_axes(fig)


# --- plot_batch_curve ---------------------------------------------------------------------------

def _ceiling(batch, context):
    """A plain oracle: (per-stream, total) tokens/s of one decode step, weights + KV, two roofs."""
    step_bytes = WHOLE * BF16 + batch * context * KV_8B
    step_s = max(step_bytes / (SPARK.bw_gbs * 1e9), 2 * WHOLE * batch / (SPARK.peak_bf16_tflops * 1e12))
    return 1 / step_s, batch / step_s


def _curve(fig, label):
    """(axes, points) of the line labelled ``label``; x rounded to whole batches."""
    for ax in fig.get_axes():
        for line in ax.get_lines():
            text = line.get_label().lower().replace("-", " ")
            if label in text:
                points = _data_points(ax, line).copy()
                points[:, 0] = np.rint(points[:, 0])
                return ax, points
    pytest.fail(f"no line labelled {label!r} (label=... in ax.plot, as the docstring says)")


def _batch_curve(context=1024, batches=None):
    kwargs = {} if batches is None else {"batches": batches}
    return _rendered(roofline.plot_batch_curve(WHOLE, BF16, SPARK.bw_gbs, SPARK.peak_bf16_tflops,
                                               context=context, kv_bytes_per_token=KV_8B, **kwargs))


@pytest.fixture(scope="module")
def spark_batch_curve():
    return _batch_curve()


@pytest.mark.parametrize("label, which", [("total", 1), ("per stream", 0)])
def test_batch_curve_plots_the_ceiling_at_each_batch(spark_batch_curve, label, which):
    _, points = _curve(spark_batch_curve, label)
    batches = [1, 2, 4, 8, 16, 32, 64, 128]
    assert sorted(points[:, 0].tolist()) == batches, "one point per batch size, x = batch"
    for b, y in sorted(points.tolist()):
        want = _ceiling(int(b), 1024)[which]
        assert _near(y, want), f"{label} at batch {b:g}: {y:.4g} tokens/s, expected {want:.4g}"


def test_batch_curve_shows_the_lessons_batch_64_numbers(spark_batch_curve):
    # Batch 64 at 1K context on the Spark: about 11 tok/s per stream, about 700 in total.
    at = {label: dict(_curve(spark_batch_curve, label)[1].tolist()) for label in ("total", "per stream")}
    assert at["per stream"][64] == pytest.approx(11, abs=0.5)
    assert at["total"][64] == pytest.approx(700, rel=0.03)


def test_batch_curve_honours_the_batches_argument():
    _, points = _curve(_batch_curve(batches=(1, 3, 9)), "total")
    assert sorted(points[:, 0].tolist()) == [1, 3, 9]


def test_batch_curve_heavier_cache_lowers_the_curve():
    # A longer context means more KV bytes per step: every stream gets slower.
    short = dict(_curve(_batch_curve(context=1024), "per stream")[1].tolist())
    long_ = dict(_curve(_batch_curve(context=32 * 1024), "per stream")[1].tolist())
    assert all(long_[b] < short[b] for b in short)


def test_batch_curve_axes_name_their_units(spark_batch_curve):
    ax, _ = _curve(spark_batch_curve, "total")
    assert "batch" in ax.get_xlabel().lower()
    assert "tokens/s" in ax.get_ylabel().lower().replace(" per second", "/s")
