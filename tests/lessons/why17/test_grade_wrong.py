"""Every hidden check is proven: a submission with one classic mistake fails exactly the checks
named in tests/lessons/why17/expected.py, and every other check its change can reach still passes.

Each folder in autograder/lessons/why17/fixtures/wrong/ holds the one file that differs from the reference.
"""
from __future__ import annotations

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build
from tests.lessons.why17.expected import EXPECTED


def test_every_wrong_submission_is_listed():
    on_disk = {p.name for p in (build.HERE / "wrong").iterdir() if p.is_dir()}
    assert on_disk == set(EXPECTED)


def test_every_check_of_mine_is_proven_by_a_wrong_submission():
    proven = set().union(*EXPECTED.values())
    assert set(build.my_checks()) - proven == set()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_submission_fails_exactly_its_checks(name, tmp_path):
    folder = build.overlay("wrong", name, tmp_path / name)
    reachable = build.checks_touching(build.changed_modules("wrong", name))
    assert EXPECTED[name] <= reachable
    results = grade_submission(folder, device="cpu", only=reachable)
    assert {t["check"] for t in results["tests"]} == reachable
    assert build.failed(results) == EXPECTED[name]
    for check_id in EXPECTED[name]:
        message = build.outputs(results)[check_id]
        assert len(message.splitlines()) <= 3, message
        # a lesson section to reread, or (for a refused valid argument) what the function raised
        assert "Reread:" in message or "raised" in message, message


@pytest.mark.slow
def test_same_submission_same_results(tmp_path):
    """A failing law reports the same case every time: the first of its table that fails."""
    folder = build.overlay("wrong", "ceiling_swapped_pair", tmp_path / "s")
    only = {"law_per_stream_never_rises", "law_total_never_falls", "errors_decode_ceiling"}
    first, second = (grade_submission(folder, device="cpu", only=only)["tests"] for _ in range(2))
    assert first == second
    assert [t["status"] for t in first] == ["passed", "failed", "failed"]
