"""The CPU argument checks (bw_honours_args, flops_honours_args) pass every correct style of the
adversarial set, however it spells its copy or its matmul and however it picks how many to time:
they judge the bytes and FLOPs each aten op did (autograder/runtime/torchwatch.py), not the names
of torch functions, and the work between the clock readings, not the whole call (a timer that
picks the count, a warm-up once per process or until timings settle)."""
from __future__ import annotations

import pytest

from autograder.core import course, lesson
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import adversarial
from autograder.sandbox import forkserver

#: Slow, left out of `make check`: one grading per entry.
pytestmark = pytest.mark.slow

CHECK = {"bw": "bw_honours_args", "flops": "flops_honours_args"}
#: Single mistakes charged on a GPU check alone, which these checks must pass.
WRONG_ELSEWHERE = {"bmm_batch_uncounted"}
ENTRIES = [e for e in adversarial.entries()
           if e.kind == "good" or (e.kind == "wrong" and e.name in WRONG_ELSEWHERE)]


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    forkserver.start(**lesson.server_imports(course.load().assignment()))
    yield
    forkserver.stop()


@pytest.mark.parametrize("entry", [
    pytest.param(e, marks=pytest.mark.xfail(reason=e.open)) if e.open and e.kind == "good" else e
    for e in ENTRIES], ids=[f"{e.kind}/{e.name}" for e in ENTRIES])
def test_a_correct_spelling_passes_the_cpu_argument_checks(entry, tmp_path):
    only = {CHECK[module] for module in adversarial.own_modules(entry)}
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), device="cpu", only=only)
    failed = {t["check"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    assert {t["check"] for t in results["tests"]} == only and not failed, failed
