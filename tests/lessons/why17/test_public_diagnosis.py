"""One source of messages: a wrong value gets the same diagnosis (the ratio, the slip its factor
matches, the lesson section) from the public tests a student runs and from the hidden grader,
both taking their words from shared/diagnose.py. The public tests add no expected value beyond
the one their own assertion already shows.
"""
from __future__ import annotations

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build
from shared import diagnose
from tests.helpers.public_runs import run_pytest, student_tree

#: Slow, left out of `make check`: every test runs the public tests in a child pytest and grades.
pytestmark = pytest.mark.slow

#: Fixture -> (a public test it fails, a hidden check it fails, the slip both must name).
CASES = {
    "decode_forgets_1e9": ("test_spark_whole_checkpoint_is_about_17_tokens_per_s", "decode_quantized",
                           diagnose.SLIPS[0][1], "Reread: The Idea."),
    "kv_without_2": ("test_llama_8b_kv_cache_is_128_kib_per_token", "kv_bytes_gqa",
                     diagnose.KV_WITHOUT_2, "Reread: The KV cache is also bytes."),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_public_test_and_hidden_check_give_the_same_diagnosis(name, tmp_path):
    public, hidden, words, section = CASES[name]
    root = student_tree(tmp_path, fixture=f"wrong/{name}")
    run = run_pytest("assignments/why17/tests/test_predict.py", cwd=root, scratch=tmp_path / "run")
    messages = {n.split("::", 1)[1]: item["message"] for n, item in run.items.items() if item["outcome"] == "failed"}
    assert public in messages, sorted(messages)
    shown = messages[public]
    assert shown.startswith("assert ") and words in shown and section in shown, shown
    diagnosis = shown.splitlines()[-1]
    assert diagnosis.strip().startswith("yours is ") and "ratio" in diagnosis
    results = grade_submission(build.overlay("wrong", name, tmp_path / "sub"), device="cpu", only={hidden})
    assert words in build.outputs(results)[hidden]


def test_a_value_that_matches_no_slip_shows_only_its_ratio(tmp_path):
    root = student_tree(tmp_path, fixture="wrong/decode_whole_bytes")
    run = run_pytest("assignments/why17/tests/test_predict.py", "-k", "q4_k_m_file", cwd=root,
                     scratch=tmp_path / "run")
    (item,) = [i for i in run.items.values() if i["outcome"] == "failed"]
    last = item["message"].splitlines()[-1]
    assert "(ratio 0.6181). Reread: Every way around the wall (fewer bytes per weight)." in last, last


def test_ratio_note_names_each_classic_factor_and_nothing_else():
    for factor, words in diagnose.SLIPS:
        assert words in diagnose.ratio_note(17.0 * factor, 17.0)
    assert diagnose.ratio_note(17.0 * 1.37, 17.0) == "(ratio 1.37)"
    assert diagnose.ratio_note(float("nan"), 17.0) == "(yours is nan)"
    # a rounded lesson number: the test's own tolerance lets 1.6998e-08 against 17.0 match 1e-9
    assert diagnose.slip(1.6998e-08, 17.0) is None
    assert diagnose.slip(1.6998e-08, 17.0, slack=0.1 / 17) == diagnose.SLIPS[0][1]
