"""The reference gets full marks on every check of tasks 1-4; the untouched stubs get zero, each
failure naming the NotImplementedError and its task. Full gradings, GPU checks included."""
from __future__ import annotations

import json
import re

import pytest

from autograder.core import course, results
from autograder.grading.grade import checks_for, grade_submission
from autograder.sandbox.perfile import PerFileSandbox

#: Slow, left out of `make check`: full gradings of the reference and the stubs, GPU checks included.
pytestmark = pytest.mark.slow

CODE_TASKS = ("task1", "task2", "task3", "task4")


#: Each child the reference's grading made: (student file, whether it has a simulated-GPU setting).
CHILDREN: list[tuple[str, bool]] = []


@pytest.fixture(scope="module")
def reference():
    made = PerFileSandbox._new

    def new(self, module, setting):
        CHILDREN.append((module, setting is not None))
        return made(self, module, setting)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PerFileSandbox, "_new", new)
        return grade_submission(course.load().assignment("why17").solutions_dir)


@pytest.fixture(scope="module")
def stubs():
    return grade_submission(course.load().assignment("why17").assignments_dir)


def test_reference_passes_every_code_check(reference):
    code = [t for t in reference["tests"] if t["task"] in CODE_TASKS]
    assert code and all(t["status"] == "passed" for t in code), [t["output"] for t in code if t["status"] != "passed"]
    tasks = course.load().assignment("why17").tasks
    for task in tasks[:4]:
        earned = sum(t["score"] for t in code if t["task"] == task.id)
        assert earned == pytest.approx(task.points, abs=1e-3)


def test_results_list_the_checks_in_course_order_whatever_order_they_ran_in(reference):
    # predict.py's checks run first in a cold grading (tests/sandbox/test_early_child.py)
    expected = [c.id for _task, cs in checks_for(course.load().assignment("why17")) for c in cs]
    assert [t["check"] for t in reference["tests"]] == expected


def test_a_files_checks_on_the_cpu_share_one_child_before_its_simulated_gpu_settings(reference):
    """Each child is a fork and a jail (tens of CPU ms). The CPU checks of bw.py and flops.py run
    before the one among them that also reads the simulated GPU (``*_honours_args``), so the
    file's device-free child is not started again after the settings' children."""
    for module in ("bw", "flops"):
        mine = [on_gpu for m, on_gpu in CHILDREN if m == module]
        assert mine.count(False) == 1 and not mine[0], (module, mine)
        assert mine.count(True) == 4                      # one per setting (autograder/gpu/probe.py)


def test_stubs_score_zero_naming_their_task(stubs):
    code = [t for t in stubs["tests"] if t["task"] in CODE_TASKS]
    assert code and all(t["status"] == "failed" and t["score"] == 0 for t in code)
    for t in code:
        assert "NotImplementedError" in t["output"], t
        assert re.search(rf"\b{t['task']}\.\d: \w+", t["output"]), t


def test_results_follow_gradescope_format(reference, tmp_path):
    path = results.write(reference, tmp_path / "out" / "results.json")
    data = json.loads(path.read_text())
    assert set(data) >= {"score", "max_score", "execution_time", "output", "tests"}
    assert "--device sim" in data["output"]
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility", "task", "check"}
        assert t["status"] in ("passed", "failed")
        assert t["visibility"] in course.VISIBILITIES
        assert t["name"].startswith(t["task"] + " ") and t["name"].endswith(f"[{t['check']}]")
    assert data["max_score"] == pytest.approx(sum(t["max_score"] for t in data["tests"]), abs=0.01)
    assert list(tmp_path.joinpath("out").iterdir()) == [path]  # no temp file left behind
