"""The hypothesis laws' cases shipped in autograder/lessons/why17/drawn_cases.json (drawn.py).

A fresh process replays them instead of asking hypothesis; the file must hold exactly what
hypothesis draws now (or a grading would replay other cases than a plain run), and anything that
could change the draws (hypothesis, Python, strategies.py, a law's module) sets the file, or that
law, aside. A replayed law that fails still reports hypothesis's own shrunk case.
"""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import strategies as st

from autograder.grading.grade import grade_submission, load_checks
from autograder.lessons.why17 import drawn
from autograder.lessons.why17 import strategies as S
from autograder.lessons.why17.fixtures import build

#: The checks that run hypothesis laws (predict.py's laws and its ValueError laws).
LAW_CHECKS = {c.id for c in load_checks().values() if c.id.startswith(("law_", "errors_"))}


@pytest.fixture
def fresh_process(monkeypatch):
    """As in a process that has run no law yet, with the file loaded anew."""
    monkeypatch.setattr(S, "_DRAWN", {})
    monkeypatch.setattr(drawn, "_loaded", None)


@pytest.mark.slow
def test_the_shipped_cases_are_what_hypothesis_draws_now():
    assert drawn.dumps(drawn.record()) == drawn.FILE.read_text(encoding="utf-8"), (
        f"autograder/lessons/why17/drawn_cases.json is stale: run {drawn.COMMAND}")


def test_every_law_of_the_grader_is_in_the_file_and_a_fresh_process_asks_hypothesis_nothing(
        fresh_process, monkeypatch):
    def no_hypothesis(*args):
        raise AssertionError("hypothesis ran for a law whose cases are shipped")
    monkeypatch.setattr(S, "_hypothesis", no_hypothesis)
    res = grade_submission(build.REFERENCE, only=LAW_CHECKS)
    assert len(res["tests"]) == len(LAW_CHECKS) > 10
    assert all(t["status"] == "passed" for t in res["tests"]), [t["output"] for t in res["tests"]]
    assert S._DRAWN == {}          # nothing drawn: every law replayed from the file


@pytest.mark.slow
@pytest.mark.parametrize("mistake", ["kv_read_batch_squared", "ceiling_ignores_compute"])
def test_a_law_that_fails_on_the_shipped_cases_words_hypothesis_s_own_case(fresh_process, tmp_path, mistake):
    folder = build.overlay("wrong", mistake, tmp_path / mistake)
    replayed = grade_submission(folder, only=LAW_CHECKS)
    with drawn.hypothesis_only():
        plain = grade_submission(folder, only=LAW_CHECKS)
    assert [(t["status"], t["output"]) for t in replayed["tests"]] == \
        [(t["status"], t["output"]) for t in plain["tests"]]
    assert any(t["status"] == "failed" for t in replayed["tests"])


def _shipped_text(**changes) -> dict:
    data = json.loads(drawn.FILE.read_text(encoding="utf-8"))
    data.update(changes)
    return data


@pytest.mark.parametrize("change", [
    {"schema": "why17-drawn-cases/0"},
    {"fingerprint": {**drawn.fingerprint(), "hypothesis": "6.0.0"}},
    {"fingerprint": {**drawn.fingerprint(), "python": "3.99"}},
    {"fingerprint": {**drawn.fingerprint(), "strategies": "0" * 16}},
])
def test_a_file_from_other_code_or_another_hypothesis_is_set_aside(tmp_path, change):
    path = tmp_path / "drawn_cases.json"
    path.write_text(json.dumps(_shipped_text(**change)))
    assert drawn._read(path) == {}
    path.write_text(json.dumps(_shipped_text()))
    assert len(drawn._read(path)) == len(_shipped_text()["laws"])


def test_a_law_whose_module_changed_is_set_aside_and_the_others_kept(tmp_path):
    data = _shipped_text()
    edited = "autograder.lessons.why17.checks.predict_errors"
    data["modules"][edited] = "0" * 16
    path = tmp_path / "drawn_cases.json"
    path.write_text(json.dumps(data))
    kept = drawn._read(path)
    assert kept and all(module != edited for module, *_ in kept)
    assert len(kept) == sum(1 for law in data["laws"] if law["module"] != edited)


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"schema": "why17-drawn-cases/1"}',
                                  json.dumps({**_shipped_text(), "laws": [{"module": 1}]})])
def test_a_broken_file_costs_time_not_a_verdict(tmp_path, text):
    path = tmp_path / "drawn_cases.json"
    path.write_text(text)
    assert drawn._read(path) == {}
    assert drawn._read(tmp_path / "absent.json") == {}


@pytest.mark.parametrize("value", [
    (S.GpuSpec(3350.0, 989.0, "H100"), 7),
    S.DecodeConfig(S.GpuSpec(50.0, 1.0), S.ModelShape(1e8, 0.25, 1, 1, 16, 0.5), 4096, 2**20),
    [(-0.0, 5e-324, 1.7976931348623157e308), [], ()],
    (True, None, "text", 10**30),
])
def test_cases_come_back_from_the_file_exactly(value):
    types = drawn._types()
    back = drawn.decode(json.loads(json.dumps(drawn.encode(value, types))), types)
    assert back == value and repr(back) == repr(value)      # -0.0 and int/float kinds kept


def test_a_case_of_another_type_is_refused_in_both_directions():
    types = drawn._types()
    with pytest.raises(TypeError, match="cannot store"):
        drawn.encode({"a": 1}, types)
    with pytest.raises(TypeError, match="cannot store"):
        drawn.encode(math, types)
    with pytest.raises((TypeError, KeyError)):
        drawn.decode({"os.system": {"command": "true"}}, types)


def test_check_exits_1_on_a_stale_file_and_0_on_a_current_one(monkeypatch, tmp_path, capsys):
    # what a grading records now, as the first test proves the shipped file to be
    current = json.loads(drawn.FILE.read_text(encoding="utf-8"))
    monkeypatch.setattr(drawn, "record", lambda: current)
    assert drawn.main(["--check"]) == 0
    stale = tmp_path / "drawn_cases.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(drawn, "FILE", stale)
    assert drawn.main(["--check"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and drawn.COMMAND in err and stale.read_text() == "{}\n"


def test_a_law_not_in_the_file_still_goes_through_hypothesis(fresh_process):
    seen = []
    S.run_law(st.integers(0, 7), seen.append)
    assert seen and len(S._DRAWN) == 1       # drawn here, and kept for the next run in the process
