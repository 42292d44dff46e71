"""How the hypothesis laws grade: from their table of cases alone (cases.run_law), and what fresh
hypothesis draws say of the same laws (strategies.run_fresh).

A law's verdict depends on its cases only: it calls its body on each case of the table in order and
reports the first that fails, with that case's message; a student's hang stops it at once. Grading
never imports hypothesis. Hypothesis stays here, hunting: with fresh draws the reference holds every
law and each wrong submission fails the laws tests/lessons/why17/expected.py says it fails (as
test_grade_wrong.py grades it), so a law whose table is weaker than the law itself shows up.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

from autograder.core.errors import GraderError, StudentTimeout
from autograder.core.registry import CheckFailed
from autograder.grading.grade import grade_submission, load_checks
from autograder.lessons.why17 import LESSON, cases
from autograder.lessons.why17 import strategies as S
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.fixtures import build
from tests.helpers.paths import ROOT
from tests.lessons.why17.expected import EXPECTED

#: The checks that run the laws (predict.py's laws and its ValueError laws).
LAW_CHECKS = {c.id for c in load_checks(LESSON).values() if c.id.startswith(("law_", "errors_"))}
#: The wrong submissions that must fail some law, and those laws.
CAUGHT = {name: checks & LAW_CHECKS for name, checks in EXPECTED.items() if checks & LAW_CHECKS}


class Student:
    """A law's body over a student who hangs at one case or is wrong from some number up."""

    def __init__(self, hang_at=None, wrong_from=None):
        self.seen, self.hang_at, self.wrong_from = [], hang_at, wrong_from

    def body(self, n):
        self.seen.append(n)
        if n == self.hang_at:
            raise StudentTimeout("predict_decode did not return within 3 s")
        if self.wrong_from is not None and n >= self.wrong_from:
            raise CheckFailed(f"n={n} is too big")


@pytest.fixture
def table(monkeypatch):
    """Replace the laws' table by the dict a test fills."""
    laws: dict[str, tuple] = {}
    monkeypatch.setattr(cases, "load", lambda path=None: laws)
    return laws


def test_a_law_sees_exactly_its_cases_in_the_table_s_order(table):
    table["law_x"], table["law_y"] = (3, 1, 2), (9,)
    student = Student()
    cases.run_law("law_x", student.body)
    assert student.seen == [3, 1, 2]


def test_the_first_failing_case_ends_the_law_with_its_own_message(table):
    table["law_x"] = (1, 5, 2, 7, 6)
    student = Student(wrong_from=5)
    with pytest.raises(CheckFailed, match="^n=5 is too big$"):
        cases.run_law("law_x", student.body)
    assert student.seen == [1, 5]            # no shrinking, no further case


def test_a_hang_stops_the_law_at_once_and_is_raised_as_it_is(table):
    table["law_x"] = (1, 2, 3, 4)
    student = Student(hang_at=2)
    with pytest.raises(StudentTimeout, match="within 3 s"):
        cases.run_law("law_x", student.body)
    assert student.seen == [1, 2]


def test_a_verdict_depends_on_the_law_s_cases_only(monkeypatch, tmp_path):
    """decode_clamps_bandwidth caps bandwidth at 5000 GB/s: the bandwidth law fails on exactly
    the cases above 2500 GB/s, and quotes the first of them in the table."""
    folder = build.overlay("wrong", "decode_clamps_bandwidth", tmp_path / "s")
    law, real = "law_bandwidth_doubles", cases.load()
    below = tuple(case for case in real[law] if 2 * case[1].bw_gbs <= 5000)
    above = [case for case in real[law] if 2 * case[1].bw_gbs > 5000]
    assert below and len(above) >= 2

    def graded(chosen) -> dict:
        monkeypatch.setattr(cases, "load", lambda path=None: {**real, law: tuple(chosen)})
        result, = grade_submission(folder, device="cpu", only={law})["tests"]
        return result

    assert graded(below)["status"] == "passed"
    for first in (above[0], above[-1]):
        result = graded((*below, first, *above))
        assert result["status"] == "failed"
        assert result["output"].startswith(f"doubling bw_gbs from {oracle.fmt(first[1].bw_gbs)} to ")
    assert graded(real[law]) == graded([above[0]])


def test_the_reference_passes_every_law_on_its_table():
    results = grade_submission(build.REFERENCE, device="cpu", only=LAW_CHECKS)
    assert len(results["tests"]) == len(LAW_CHECKS) > 10
    assert [t for t in results["tests"] if t["status"] != "passed"] == []


def test_a_broken_table_stops_the_grading_instead_of_scoring_the_student(tmp_path, monkeypatch):
    broken = tmp_path / "law_cases.json"
    broken.write_text('{"schema": "why17-law-cases/1", "laws": {"law_kv_linear": [[{"eval": "1"}]]}}')
    monkeypatch.setattr(cases, "FILE", broken)
    with pytest.raises(GraderError, match="law_cases.json: law 'law_kv_linear': not a case"):
        grade_submission(build.REFERENCE, device="cpu", only={"law_kv_linear"})


@pytest.mark.slow
def test_grading_never_imports_hypothesis():
    code = ("import os, sys\nfrom autograder.grading.grade import grade_submission, load_checks\n"
            "from autograder.lessons.why17 import LESSON\n"
            "from autograder.lessons.why17.fixtures import build\n"
            "only = {c for c in load_checks(LESSON) if c.startswith(('law_', 'errors_'))}\n"
            "res = grade_submission(build.REFERENCE, device='cpu', only=only)\n"
            "print(len(res['tests']), 'hypothesis' in sys.modules, os.environ.get('HYPOTHESIS_NO_PLUGINS'))")
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_NO_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == [str(len(LAW_CHECKS)), "False", "None"], done.stderr[-2000:]


# --- Hunting with fresh draws ---------------------------------------------------------------------

@pytest.fixture
def fresh(monkeypatch):
    """The laws draw their cases afresh from their strategies (tests/conftest.py's profile);
    yields the names of the laws run so."""
    ran: list[str] = []
    profile = settings.get_profile("why17-hunt")

    def run_fresh(law, body):
        ran.append(law)
        S.run_fresh(law, body, profile)
    monkeypatch.setattr(cases, "run_law", run_fresh)
    return ran


@pytest.mark.slow
def test_the_reference_holds_every_law_under_fresh_draws(fresh):
    results = grade_submission(build.REFERENCE, device="cpu", only=LAW_CHECKS)
    assert len(results["tests"]) == len(LAW_CHECKS)
    assert [t for t in results["tests"] if t["status"] != "passed"] == []
    assert set(fresh) == set(S.laws()) == set(cases.load())   # every law of the table, drawn afresh


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_each_wrong_submission_fails_its_laws_under_fresh_draws(fresh, name, tmp_path):
    folder = build.overlay("wrong", name, tmp_path / name)
    results = grade_submission(folder, device="cpu", only=CAUGHT[name])
    assert build.failed(results) == CAUGHT[name], build.outputs(results)
    # each law_ check failed on fresh draws (an errors_ check may fail before its law, on its
    # enumeration of bad values)
    assert set(fresh) >= {check for check in CAUGHT[name] if check.startswith("law_")}
