"""The reference solution stays out of a student's reach when a broken predict.py makes the
grader run roofline.py beside a stand-in: the stand-in is the public stub's formulas (it agrees
with the reference on valid arguments and shares no other line with its solution regions), and a
roofline.py that hunts for the reference's text (files, modules, linecache, gc, frames) finds
none of it."""
from __future__ import annotations

import inspect
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.core import lesson
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build
from autograder.lessons.why17.standin import predict as standin
from autograder.sandbox import isolation

REFERENCE = build.REFERENCE / "predict.py"
STUB = build.ROOT / "assignments" / "why17" / "predict.py"
STAND_IN = lesson.load("autograder.lessons.why17").stand_in("predict")
ROOFLINE = {cid for cid, c in build.my_checks().items() if c.files == ("roofline",)}
PROT = isolation.protection()


def solution_lines(path) -> set[str]:
    """The stripped lines inside the ``### BEGIN/END SOLUTION`` regions of ``path``."""
    regions = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", path.read_text(encoding="utf-8"), re.S)
    return {line.strip() for region in regions for line in region.splitlines() if line.strip()}


def test_the_stand_in_shares_with_the_reference_only_what_the_stub_documents():
    stub = STUB.read_text(encoding="utf-8")
    shared = solution_lines(REFERENCE) & {line.strip() for line in STAND_IN.read_text(encoding="utf-8").splitlines()}
    assert shared, "the stand-in should state at least the formulas the stub documents"
    for line in shared:
        assert line.removeprefix("return ") in stub, line


def test_the_stand_in_has_the_stubs_signatures():
    import importlib.util

    spec = importlib.util.spec_from_file_location("stub_predict", STUB)
    stub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stub)
    public = {n: f for n, f in vars(stub).items() if inspect.isfunction(f) and f.__module__ == "stub_predict"}
    assert set(public) == {n for n, f in vars(standin).items() if inspect.isfunction(f)}
    for name, function in public.items():
        assert inspect.signature(getattr(standin, name)) == inspect.signature(function), name


positive = st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(derandomize=True, deadline=None, max_examples=60)
@given(a=positive, b=positive, c=positive, batch=st.integers(1, 512), context=st.integers(0, 10**6))
def test_the_stand_in_agrees_with_the_reference_on_valid_arguments(a, b, c, batch, context):
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference_predict", REFERENCE)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    pairs = [(standin.predict_decode(a, b, c), ref.predict_decode(a, b, c)),
             (standin.kv_bytes_per_token(a, b, c, 2), ref.kv_bytes_per_token(a, b, c, 2)),
             (standin.arithmetic_intensity(a, b), ref.arithmetic_intensity(a, b)),
             (standin.ridge_point(a, b), ref.ridge_point(a, b)),
             (standin.attainable_tflops(a, b, c), ref.attainable_tflops(a, b, c)),
             (standin.prefill_seconds(a, b, c), ref.prefill_seconds(a, b, c))]
    mine = standin.decode_ceiling(a, b, c, batch=batch, context=context, kv_bytes_per_token=a, peak_tflops=b)
    theirs = ref.decode_ceiling(a, b, c, batch=batch, context=context, kv_bytes_per_token=a, peak_tflops=b)
    pairs += list(zip(mine, theirs))
    for got, want in pairs:
        assert math.isclose(got, want, rel_tol=1e-12), (got, want)


@pytest.mark.slow
@pytest.mark.skipif(PROT.mode != "namespaces",
                    reason=f"without namespaces the child can read the checkout: {PROT.reason}")
def test_a_roofline_that_hunts_for_the_reference_finds_nothing(tmp_path):
    # Only the thief's two files: a copy of the reference's bw.py beside them would be "found".
    folder = tmp_path / "s"
    folder.mkdir()
    for name, text in build.changed_files("theft", "steal_reference").items():
        (folder / name).write_text(text, encoding="utf-8")
    # The hunt reads up to 4,000 files: a call blocked on a busy disk counts as waiting, not running
    # (autograder/sandbox/cputime.py), so its limit leaves room for a loaded machine's disk.
    results = grade_submission(folder, device="cpu", only=build.checks_touching({"predict"}), time_limit_s=120.0)
    outputs = build.outputs(results)
    for check_id in ROOFLINE:
        message = outputs[check_id]
        assert "graded with a stand-in predict.py" in message, message
        # The hunt ran beside the stand-in and came back empty-handed.
        assert "THEFT predict.py head='\"\"\"A stand-in for predict.py" in message, message
        assert "hits=[]" in message, message
    text = json.dumps(results)
    for line in solution_lines(REFERENCE) - {ln.strip() for ln in STAND_IN.read_text(encoding="utf-8").splitlines()}:
        assert line not in text, line
