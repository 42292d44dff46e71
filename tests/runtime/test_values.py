"""The child's side of values, in this process (autograder/runtime/): dtypes named without torch and
made torch dtypes in the child, numpy arrays and tensors as plain data, a matplotlib Figure as the
plain data the plot checks read, the bounds on what comes back, and the torch calls a watched call
made. The round trip of plain values and the protocol through a real child are tests/sandbox/test_sandbox.py's.
"""
from __future__ import annotations

import json

import pytest

from autograder.runtime import runner
from autograder.runtime.dtypes import Dtype, to_torch


def round_trip(value):
    """``value`` through one protocol line, as the grader reads it back from the child."""
    return runner.decode(json.loads(runner.dumps({"v": runner.encode(value)}))["v"])


def test_a_dtype_is_named_without_torch_and_equal_by_name():
    assert Dtype("float32") == Dtype("float32") != Dtype("float64")
    assert len({Dtype("float32"), Dtype("float32")}) == 1 and repr(Dtype("bfloat16")) == "torch.bfloat16"
    assert Dtype("float32") != "float32"


def test_the_child_turns_dtype_markers_into_torch_dtypes_wherever_they_sit():
    torch = pytest.importorskip("torch")
    args = [Dtype("float64"), (1, Dtype("bfloat16")), {"dtype": Dtype("float16"), "n": 3}, "float32"]
    assert to_torch(args) == [torch.float64, (1, torch.bfloat16), {"dtype": torch.float16, "n": 3}, "float32"]
    assert round_trip(torch.float16) == Dtype("float16")


def test_numpy_values_come_back_as_numbers_and_arrays():
    np = pytest.importorskip("numpy")
    assert round_trip([np.float32(2.5), np.int64(7), np.bool_(True)]) == [2.5, 7, True]
    array = round_trip(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert isinstance(array, runner.Array)
    assert (array.kind, array.dtype, array.data) == ("numpy", "int32", [[0, 1, 2], [3, 4, 5]])


def test_a_tensor_comes_back_with_its_data_only_up_to_max_points():
    torch = pytest.importorskip("torch")
    small = round_trip(torch.tensor([1.5, 2.5], dtype=torch.float64))
    assert (small.kind, small.dtype, small.data) == ("torch.Tensor", "float64", [1.5, 2.5])
    big = round_trip(torch.zeros(runner.MAX_POINTS + 1))
    assert (big.dtype, big.data) == ("float32", None)
    meta = round_trip(torch.empty(4, device="meta"))
    assert meta.data is None


def test_what_is_not_data_comes_back_opaque_and_short():
    class Loud:
        def __repr__(self):
            return "x" * 1000

    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr")

    loud, broken = round_trip([Loud(), Broken()])
    assert isinstance(loud, runner.Opaque) and loud.type_name.endswith("Loud") and loud.text == "x" * 200
    assert broken.text == "(repr failed)"


def test_nesting_deeper_than_the_bound_is_cut_not_followed():
    value: list = []
    for _ in range(200):
        value = [value]
    back = round_trip(value)
    for _ in range(51):
        back = back[0]
    assert back == runner.Opaque("nested", "too deeply nested")


def _roofline_figure(points: int = 3):
    """A Figure as a student's roofline draws one: log axes, labels, a line, a marked point."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("intensity (FLOPs/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("roofline")
    xs = [float(i + 1) for i in range(points)]
    ax.plot(xs, [min(x, 2.0) for x in xs], marker="o", label="roof")
    ax.scatter([2.0], [2.0], label="ridge")
    ax.annotate("ridge", xy=(2.0, 2.0))
    ax.legend()
    return fig


def test_a_figure_comes_back_as_the_plain_data_the_plot_checks_read():
    (axes,) = round_trip(_roofline_figure())["axes"]
    assert (axes["xscale"], axes["yscale"]) == ("log", "log")
    assert (axes["xlabel"], axes["ylabel"], axes["title"]) == ("intensity (FLOPs/byte)", "TFLOP/s", "roofline")
    (line,) = axes["lines"]
    assert line["label"] == "roof" and line["marker"] == "o"
    assert line["x"] == [1.0, 2.0, 3.0] and line["y"] == [1.0, 2.0, 2.0]
    assert [c["offsets"] for c in axes["collections"]] == [[[2.0, 2.0]]]
    assert axes["texts"] == [{"text": "ridge", "xy": [2.0, 2.0]}]
    assert axes["legend"] == ["roof", "ridge"]


def test_a_line_longer_than_max_points_is_cut():
    (axes,) = runner.figure_data(_roofline_figure(points=runner.MAX_POINTS + 5))["axes"]
    assert len(axes["lines"][0]["x"]) == runner.MAX_POINTS


def test_a_watched_call_records_each_aten_op_with_shapes_dtypes_bytes_and_flops():
    torch = pytest.importorskip("torch")
    a = torch.ones(4, 8, dtype=torch.float64)
    b = torch.ones(8, 2, dtype=torch.float64)
    with runner.TorchWatch() as watch:
        for _ in range(3):
            torch.mm(a, b)
    (mm,) = [call for call in watch.summary() if call["op"] == "mm"]
    assert mm["shapes"] == [[4, 8], [8, 2], [4, 2]] and mm["dtypes"] == ["float64"] * 3
    assert mm["read_bytes"] == 4 * 8 * 8 + 8 * 2 * 8 and mm["written_bytes"] == 4 * 2 * 8 and mm["count"] == 3
    assert mm["flops"] == 2 * 4 * 8 * 2
