"""Broken and hostile submissions are graded to completion in bounded time; each costs only the
checks of the file or function at fault, and the result names the cause in one line."""
from __future__ import annotations

import re

import pytest

from autograder.core import course
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build

#: A short time limit per call, so an endless loop costs seconds in this test.
LIMIT_S = 3.0

ROOFLINE = {"roofline_loglog", "roofline_axis_labels", "roofline_roofs_meet", "roofline_ridge_marked",
            "roofline_workloads", "batch_curve_lines", "batch_curve_values"}
BW = {"bw_returns_gbs", "bw_honours_args", "bw_sweep_sizes", "bw_rejects_bad"}
FLOPS = {"flops_returns_tflops", "flops_honours_args", "flops_rejects_bad", "flops_peak_plausible"}
#: Every check of predict.py (task3); roofline.py, which imports it, then runs with the reference's.
PREDICT = {cid for cid, c in build.my_checks().items() if c.files == ("predict",)}

#: Submission -> (checks that must fail, words every one of their messages carries).
EXPECTED = {
    "syntax_error_roofline": (ROOFLINE, "roofline.py does not import: SyntaxError line"),
    "syntax_error_predict": (PREDICT, "predict.py does not import: SyntaxError line"),
    "crash_at_import": (ROOFLINE, "roofline.py does not import: RuntimeError"),
    "sys_exit_at_import": (FLOPS, "flops.py does not import: it calls sys.exit(3)"),
    "os_exit_at_import": (BW, "bw.py does not import: the process running your code exited with code 4"),
    "os_exit_in_function": ({"prefill_time", "errors_prefill_seconds"}, "exited with code 7"),
    "sys_exit_in_function": ({"kv_bytes_gqa", "law_kv_linear", "errors_kv_bytes_per_token"},
                             "kv_bytes_per_token called sys.exit(1)"),
    "endless_loop": ({"prefill_time", "errors_prefill_seconds"},
                     f"prefill_seconds did not return within {LIMIT_S:g} s"),
    "output_flood": (set(), ""),
    "huge_allocation": ({"bw_returns_gbs", "bw_honours_args", "bw_sweep_sizes"}, "MemoryError"),
}


def test_every_hostile_submission_is_listed():
    assert {p.name for p in (build.HERE / "hostile").iterdir() if p.is_dir()} == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_submission_costs_only_its_own_checks(name, tmp_path):
    folder = build.overlay("hostile", name, tmp_path / name)
    reachable = build.checks_touching(build.changed_modules("hostile", name))
    must_fail, words = EXPECTED[name]
    results = grade_submission(folder, device="cpu", only=reachable, time_limit_s=LIMIT_S)
    assert {t["check"] for t in results["tests"]} == reachable
    assert build.failed(results) == must_fail
    for check_id in must_fail:
        message = build.outputs(results)[check_id]
        assert words in message, message
        assert "\n" not in message and "Traceback" not in message, message


@pytest.mark.slow
def test_a_missing_file_costs_only_its_checks(tmp_path):
    folder = build.overlay("good", "numpy_predict", tmp_path / "s")
    (folder / "roofline.py").unlink()
    reachable = build.checks_touching({"predict"})
    results = grade_submission(folder, device="cpu", only=reachable)
    assert build.failed(results) == ROOFLINE
    assert all("the submission has no roofline.py" in build.outputs(results)[c] for c in ROOFLINE)


def test_a_broken_predict_costs_task3_only_and_roofline_says_it_ran_with_the_reference(tmp_path):
    folder = build.overlay("hostile", "syntax_error_predict", tmp_path / "s")
    results = grade_submission(folder, device="cpu", only=PREDICT | ROOFLINE, time_limit_s=LIMIT_S)
    lost = {t["task"] for t in results["tests"] if t["status"] == "failed"}
    assert lost == {"task3"}
    for check_id in ROOFLINE:
        assert ("graded with a stand-in predict.py (the stub's documented formulas) because your "
                "predict.py cannot be used") in build.outputs(results)[check_id]
    assert "graded with a stand-in predict.py" in results["output"]


@pytest.mark.slow
def test_a_hang_is_stopped_at_a_limit_from_the_reference_and_charged_once(tmp_path):
    """With course.yml's limits (no override) an endless loop is stopped at a multiple of the
    reference's time for the same call, at least the floor: seconds, not the 60 s ceiling. It is
    paid once: the next check is told the same reason and the function is not run again (no
    restarted child)."""
    asg = course.load().assignment("why17")
    folder = build.overlay("hostile", "endless_loop", tmp_path / "s")
    results = grade_submission(folder, device="cpu", only={"prefill_time", "errors_prefill_seconds"})
    assert build.failed(results) == {"prefill_time", "errors_prefill_seconds"}
    message, = {build.outputs(results)[c] for c in ("prefill_time", "errors_prefill_seconds")}
    found = re.fullmatch(r"prefill_seconds did not return within ([\d.]+) s \((the least a call gets; )?"
                         r"(\S+)x the reference solution's time for the same call( is less)?\)", message)
    assert found, message
    assert asg.time_limit_floor_s <= float(found[1]) < asg.time_limit_s
    assert float(found[3]) == asg.time_limit_multiple
    assert bool(found[2]) == bool(found[4]) == (float(found[1]) == asg.time_limit_floor_s)   # the floor bound it
    assert "restarted" not in results["output"]


def test_a_grading_past_its_budget_ends_with_every_check_charged_in_one_line(tmp_path):
    """``grade`` has a budget for the whole grading as grade-all has: once it is spent, each check
    left fails with one line saying so (charged to the student, "outcome": "error"), and the
    grading still returns complete results."""
    folder = build.overlay("hostile", "endless_loop", tmp_path / "s")
    results = grade_submission(folder, device="cpu", only=PREDICT, time_limit_s=LIMIT_S, budget_s=0.0)
    assert {t["check"] for t in results["tests"]} == PREDICT
    for test in results["tests"]:
        assert test["status"] == "failed" and test["outcome"] == "error", test
        assert test["output"] == "not run: grading this submission took its whole budget of 0 s (slow or " \
                                 "hanging calls of your code used it up)", test["output"]


@pytest.mark.slow
def test_no_call_outlives_the_grading_budget(tmp_path):
    """A call that hangs is cut where the budget ends, not at its own (longer) limit."""
    folder = build.overlay("hostile", "endless_loop", tmp_path / "s")
    hung = {"prefill_time", "errors_prefill_seconds"}
    results = grade_submission(folder, device="cpu", only=PREDICT, time_limit_s=600.0, budget_s=8.0)
    for check_id in hung:
        message = build.outputs(results)[check_id]
        cut = re.search(r"did not return within ([0-9.]+) s", message)
        assert (cut and float(cut.group(1)) < 600) or message.startswith("not run: grading this submission took "
                                                                         "its whole budget of 8 s"), message
