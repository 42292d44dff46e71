"""The CPU argument checks (bw_honours_args, flops_honours_args) on the adversarial set: every
correct style passes them, however it spells its copy or its matmul and however it picks how many
to time: they judge the bytes and FLOPs each aten op did (autograder/runtime/torchwatch.py), not
the names of torch functions, and the work between the clock readings, not the whole call (a
timer that picks the count, a warm-up once per process or until timings settle). A mistake they
name fails them; a mistake a GPU check names passes them (one mistake, one charge); a forgery
written against them fails them."""
from __future__ import annotations

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import adversarial
from tests.helpers import lesson_server

#: Slow, left out of `make check`: one grading per entry.
pytestmark = pytest.mark.slow

CHECK = {"bw": "bw_honours_args", "flops": "flops_honours_args"}
#: Single mistakes charged on a GPU check alone, which these checks must pass (besides those whose
#: manifest line names the CPU checks it was written against).
WRONG_ELSEWHERE = {"bmm_batch_uncounted", "uint8_eighth_buffer"}


def _judged(entry) -> bool:
    if entry.kind == "good":
        return True
    if entry.kind == "wrong":
        return entry.cpu_only or bool(entry.cpu) or entry.name in WRONG_ELSEWHERE
    return bool(entry.cpu)


def expected(entry) -> tuple[set, set]:
    """(the CPU checks the entry is graded on, those it must fail)."""
    only = {CHECK[module] for module in adversarial.own_modules(entry)} | set(entry.cpu)
    if entry.kind == "forged":
        return only, only
    if entry.cpu_only:
        return only, {entry.check}
    return only, set()


ENTRIES = [e for e in adversarial.entries() if _judged(e)]


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    lesson_server.keep()


@pytest.mark.parametrize("entry", [
    pytest.param(e, marks=pytest.mark.xfail(reason=f"open: {e.open_on('CPU')}")) if e.open_on("CPU") else e
    for e in ENTRIES], ids=[f"{e.kind}/{e.name}" for e in ENTRIES])
def test_each_entry_gets_what_its_manifest_says_of_the_cpu_argument_checks(entry, tmp_path):
    only, must_fail = expected(entry)
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), device="cpu", only=only)
    failed = {t["check"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    assert {t["check"] for t in results["tests"]} == only
    assert set(failed) == must_fail, failed
