"""The adversarial set (autograder/lessons/why17/fixtures/adversarial/), graded by the real grader.

Written by a reviewer who had read the docs and shared/ but not the grader, before anyone saw
what passes: every correct timing style keeps every GPU check, every single mistake fails exactly
its own check, and no forgery earns a GPU check (but those its manifest allows, with the reason:
a function that behaves exactly as a listed slip, which is charged once).
"""
from __future__ import annotations

import pytest

from autograder.core import settings
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import adversarial
from tests.helpers import lesson_server

#: Slow, left out of `make check`: a grading of each entry of the adversarial set.
pytestmark = pytest.mark.slow

ENTRIES = adversarial.entries()


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    """Children fork from a process that already imported torch."""
    lesson_server.keep()


def test_the_set_is_as_large_as_promised():
    kinds = [e.kind for e in ENTRIES]
    assert (kinds.count("good"), kinds.count("wrong"), kinds.count("forged")) >= (25, 20, 10)


@pytest.mark.parametrize("entry", [
    pytest.param(e, marks=pytest.mark.xfail(reason=f"open: {e.open_on('GPU')}")) if e.open_on("GPU") else e
    for e in ENTRIES], ids=[f"{e.kind}/{e.name}" for e in ENTRIES])
def test_each_submission_gets_what_its_manifest_says(entry, tmp_path):
    folder = adversarial.build(entry, tmp_path / entry.name)
    only = adversarial.checks(entry)
    results = grade_submission(folder, only=only)
    assert {t["check"] for t in results["tests"]} == only
    ok, what = adversarial.judge(entry, results)
    assert ok, f"{entry.kind}/{entry.name} ({entry.what}): {what}\n" + "\n".join(
        f"{t['check']}: {t['output']}" for t in results["tests"] if t["status"] != "passed")


def test_a_number_that_matches_its_slipped_work_on_one_device_only_earns_nothing(monkeypatch, tmp_path):
    """forged/flops_cap2048_peak_spec times matmul_tflops' capped matmuls, then returns 0.8 x the
    spec sheet's peak. Under this secret that figure happens to be the rate those matmuls ran at
    on the seeded device, so the slip's agreement alone would excuse measured_peak_tflops; on the
    probe's device the work runs at another rate and the figure does not move."""
    monkeypatch.setenv(settings.SIM_SECRET.name, "a1")
    entry = next(e for e in ENTRIES if e.name == "flops_cap2048_peak_spec")
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), only=adversarial.checks(entry))
    caller = {t["check"]: t for t in results["tests"]
              if "measured_peak_tflops" in t["check"] or t["check"] == "within_peak"}
    assert len(caller) == 3 and all(t["status"] == "failed" for t in caller.values())
    assert all("does not follow the device" in t["output"] for t in caller.values())


@pytest.mark.parametrize("secret", ["x5", "s1"])
def test_a_program_honest_only_for_its_first_calls_earns_nothing_under_any_secret(secret, monkeypatch, tmp_path):
    """forged/honest_first_five measures for the first five calls of its process (bw) and its
    first three sizes (flops), then answers from those. Under secret x5 one of the unjudged calls
    before the judged ones was the judged call itself, answered from the grader's cache, and
    matmul_tflops earned three checks; now every judged call follows rounds of its own kind and
    of other sizes (tests/gpu/test_prelude.py proves that for any seed)."""
    monkeypatch.setenv(settings.SIM_SECRET.name, secret)
    entry = next(e for e in ENTRIES if e.name == "honest_first_five")
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), only=adversarial.checks(entry))
    assert results["tests"] and not [t["check"] for t in results["tests"] if t["status"] == "passed"]


def test_a_best_kept_from_another_size_earns_nothing_for_its_callers(monkeypatch, tmp_path):
    """forged/t12_f_running_best returns the best GB/s its process has seen. Under secret s5 that
    is 2.95x the reference at the large size, near a whole 3, which the table left to the checks
    as k items counted as one; bandwidth_sweep and measured_bandwidth return that number, and
    their failures were excused as copy_bandwidth's. A count scales every size alike; this number
    is the reference's at the small size, so it is no measurement, nor is a caller's copy of it."""
    monkeypatch.setenv(settings.SIM_SECRET.name, "s5")
    entry = next(e for e in ENTRIES if e.name == "t12_f_running_best")
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), only=adversarial.checks(entry))
    callers = [t for t in results["tests"] if "bandwidth_sweep" in t["check"] or "measured_bandwidth" in t["check"]
               or t["check"] == "buffer_exceeds_cache"]
    assert callers and all(t["status"] == "failed" for t in callers)
    assert not [t["check"] for t in results["tests"] if t["status"] == "passed"]


def test_a_count_padded_by_a_pace_near_the_devices_speed_is_read_off_its_window(monkeypatch, tmp_path):
    """forged/t19_f_half_iters_spec_sleep runs half the iters, sleeps the spec-sheet time of the
    rest and reports all. Under secret s5 the seeded device runs near that spec pace, so its number
    is 0.93x the reference's, a 2**40 unit slip by that reading, and it kept the 5 other checks;
    its own window reads twice its rate, a count, and a count padded by idle measures nothing."""
    monkeypatch.setenv(settings.SIM_SECRET.name, "s5")
    entry = next(e for e in ENTRIES if e.name == "t19_f_half_iters_spec_sleep")
    results = grade_submission(adversarial.build(entry, tmp_path / entry.name), only=adversarial.checks(entry))
    assert results["tests"] and not [t["check"] for t in results["tests"] if t["status"] == "passed"]
