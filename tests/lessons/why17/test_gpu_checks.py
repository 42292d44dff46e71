"""The GPU sanity checks, end to end through the real grader (sandboxed child, reference).

Sound in both directions: every correct style in autograder/lessons/why17/fixtures/gpu/good_* keeps
every GPU check (one per timing function each check judges), and each wrong_* submission fails
exactly its own check, with the check's id in the test name and the lesson's words in the
message; a units slip costs that one check even beside the CPU checks. A submission that measures
nothing (unmeasured_*) earns no measurement check. Grading twice gives identical results.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.core import settings
from autograder.core.registry import CheckFailed
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.checks import bw_cpu
from autograder.lessons.why17.checks.gpu import VERDICTS
from autograder.lessons.why17.fixtures import adversarial, build
from shared.lessons.why17.gpu import RUBRIC
from tests.helpers import lesson_server
from tests.helpers.paths import ROOT
from tests.lessons.why17.expected import WRONG

#: Slow, left out of `make check`: every test grades through the fork server this module starts.
pytestmark = pytest.mark.slow

SUBMISSIONS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "gpu"
IDS = set(VERDICTS)
VERDICT_IDS = RUBRIC.ids()
MODULE = RUBRIC.module
GOOD = sorted(p.name for p in SUBMISSIONS.glob("good_*"))


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    """Children fork from a process that already imported torch (seconds saved per grade)."""
    lesson_server.keep()


def submission(name: str, tmp_path: Path) -> Path:
    """gpu/``name`` built (a mistake.yml applied to its base), completed with good_events'
    bw.py / flops.py where it changes only one."""
    return build.gpu_submission(name, tmp_path / name)


def gpu_tests(results: dict) -> dict[str, dict]:
    return {t["check"]: t for t in results["tests"] if t["check"] in IDS}


#: Checks no single-mistake fixture fails: a function that calls another is charged on that one
#: (tests/lessons/why17/test_simgpu_verdicts.py proves these checks fail on their own with in-process fakes).
CHARGED_ELSEWHERE = {"bytes_counted_twice.bandwidth_sweep", "units_gb_per_s.bandwidth_sweep",
                     "sync_present.measured_bandwidth", "sync_present.measured_peak_tflops",
                     "warmup_present.bandwidth_sweep", "warmup_present.measured_bandwidth",
                     "warmup_present.measured_peak_tflops"}


def test_every_wrong_submission_has_a_check_and_every_check_a_wrong_submission():
    assert {check for check, _words in WRONG.values()} == IDS - CHARGED_ELSEWHERE
    assert set(WRONG) == {p.name for p in SUBMISSIONS.glob("wrong_*")}


def test_a_copy_onto_itself_measures_nothing_and_earns_no_measurement_check(tmp_path):
    tests = gpu_tests(grade_submission(submission("unmeasured_self_copy", tmp_path), only=IDS))
    bw = {c for c, (_check, f) in VERDICT_IDS.items() if MODULE[f] == "bw"}
    failed = {c for c, t in tests.items() if t["status"] == "failed"}
    assert failed == bw
    assert all("does not follow the device" in tests[c]["output"] for c in bw)


#: The CPU checks of bw.py, which watch the torch calls a copy makes.
BW_CPU = {"bw_returns_gbs", "bw_honours_args", "bw_sweep_sizes", "bw_rejects_bad"}
FLOPS_CPU = {"flops_returns_tflops", "flops_honours_args", "flops_rejects_bad", "flops_peak_plausible"}


@pytest.mark.parametrize("name", ["good_chunked", "good_best_of_k"])
def test_chunked_and_best_of_k_copies_keep_the_cpu_checks_too(name, tmp_path):
    """Slices of the buffer count by their bytes, k repeats of iters copies are k x iters, and
    indexing one element (src[-1].item()) copies nothing."""
    res = grade_submission(submission(name, tmp_path), only=BW_CPU)
    assert {t["check"]: t["output"] for t in res["tests"] if t["status"] != "passed"} == {}
    assert {t["check"] for t in res["tests"]} == BW_CPU


def test_a_units_slip_is_charged_once_by_the_cpu_and_gpu_checks_together(tmp_path):
    """bytes/s also lands above the CPU's plausibility bound (bw_returns_gbs): that check leaves
    it to units_gb_per_s, which knows the true answer, so the slip costs one check. (The gpu/
    wrong_units_* files are CUDA-only; wrong/bw_bytes_per_s is the reference's portable bw.py.)"""
    res = grade_submission(build.overlay("wrong", "bw_bytes_per_s", tmp_path / "s"), only=IDS | BW_CPU)
    assert {t["check"] for t in res["tests"]} == IDS | BW_CPU
    assert {t["check"] for t in res["tests"] if t["status"] == "failed"} == {"units_gb_per_s"}


def test_a_buffer_smaller_than_n_bytes_is_charged_once_by_the_cpu_and_gpu_checks_together(tmp_path):
    """A buffer of n_bytes // 8 uint8 elements, copied iters times and reported for n_bytes, is the
    GPU's buffer_exceeds_cache.copy_bandwidth to charge (it sees the buffer against the size
    asked); bw_honours_args counts its copies in that buffer, finds iters of them, and passes."""
    entry = next(e for e in adversarial.entries() if e.name == "uint8_eighth_buffer")
    only = adversarial.checks(entry) | BW_CPU
    res = grade_submission(adversarial.build(entry, tmp_path / entry.name), only=only)
    assert {t["check"] for t in res["tests"]} == only
    assert {t["check"] for t in res["tests"] if t["status"] == "failed"} == {"buffer_exceeds_cache.copy_bandwidth"}


@pytest.mark.parametrize("name, words", [("flops_per_s", "FLOP/s, not TFLOP/s"),
                                         ("flops_gflops", "GFLOP/s, not TFLOP/s")])
def test_a_flops_units_slip_is_charged_once_whatever_the_cpu(name, words, tmp_path):
    """FLOP/s or GFLOP/s lands above or below a fixed CPU bound depending on how fast the grading
    machine is; flops_returns_tflops lets a number that a units factor brings into its bounds
    pass, and leaves the factor to flops_counted_2n3, which names it."""
    only = IDS | FLOPS_CPU
    res = grade_submission(build.overlay("wrong", name, tmp_path / "s"), only=only)
    assert {t["check"] for t in res["tests"]} == only
    failed = {t["check"]: t["output"] for t in res["tests"] if t["status"] == "failed"}
    assert set(failed) == {"flops_counted_2n3"} and words in failed["flops_counted_2n3"]


def test_the_cpu_bound_still_fails_a_rate_no_units_factor_explains():
    assert bw_cpu.plausible_gbs(2.5e10, "copy_bandwidth") == 2.5e10       # 25 GB/s in bytes/s
    with pytest.raises(CheckFailed, match="more than any CPU can copy"):
        bw_cpu.plausible_gbs(1e16, "copy_bandwidth")                    # no clock around the copies


@pytest.mark.parametrize("name", GOOD)
def test_correct_styles_pass_every_gpu_check(name, tmp_path):
    tests = gpu_tests(grade_submission(submission(name, tmp_path), only=IDS))
    assert set(tests) == IDS
    failed = {c: t["output"] for c, t in tests.items() if t["status"] != "passed"}
    assert failed == {}
    assert all(t["score"] == t["max_score"] > 0 for t in tests.values())


@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_mistake_fails_exactly_its_own_check(name, tmp_path):
    check, words = WRONG[name]
    tests = gpu_tests(grade_submission(submission(name, tmp_path), only=IDS))
    failed = {c for c, t in tests.items() if t["status"] == "failed"}
    assert failed == {check}
    test = tests[check]
    assert f"[{check}]" in test["name"] and test["score"] == 0
    assert words in test["output"]
    assert "Reread:" in test["output"]


@pytest.mark.parametrize("secret", ["s4", "s5", "s6"])
def test_a_capped_buffer_is_charged_once_whatever_the_seed(secret, monkeypatch, tmp_path):
    """The seed decides whether the capped 8 MiB copies sit in the device's L2 (s4 and s5: they
    do, and measured_bandwidth, which times them, then "did not follow the device"; s6: they do
    not). Either way the one slip costs the one check that names it."""
    monkeypatch.setenv(settings.SIM_SECRET.name, secret)
    tests = gpu_tests(grade_submission(submission("wrong_fixed_8mib", tmp_path), only=IDS))
    assert {c for c, t in tests.items() if t["status"] == "failed"} == {"buffer_exceeds_cache.copy_bandwidth"}
    assert "judged in [buffer_exceeds_cache.copy_bandwidth]" in tests["buffer_exceeds_cache"]["output"]


def test_reference_passes_and_stubs_fail_every_check():
    ref = gpu_tests(grade_submission(ROOT / "solutions" / "why17", only=IDS))
    assert {c for c, t in ref.items() if t["status"] == "passed"} == IDS
    stub = gpu_tests(grade_submission(ROOT / "assignments" / "why17", only=IDS))
    assert {c for c, t in stub.items() if t["status"] == "failed"} == IDS
    assert all("NotImplementedError" in t["output"] for t in stub.values())


def test_grading_twice_gives_identical_results(tmp_path):
    folder = submission("wrong_bytes_once", tmp_path)
    first = grade_submission(folder, only=IDS)
    second = grade_submission(folder, only=IDS)
    strip = lambda r: [(t["name"], t["score"], t["status"], t["output"]) for t in r["tests"]]  # noqa: E731
    assert strip(first) == strip(second)
    assert first["score"] == second["score"]
