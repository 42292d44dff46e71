"""`python -m autograder grade`: exit 0 whenever grading finished, results.json written atomically,
a short per-task summary on stdout."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from autograder.core import course
from autograder.core.course import ROOT
from autograder.lessons.why17.fixtures import build


@pytest.mark.slow
def test_grade_a_partial_submission_end_to_end(tmp_path):
    sub = tmp_path / "student"
    sub.mkdir()
    shutil.copyfile(build.HERE / "good" / "numpy_predict" / "predict.py", sub / "predict.py")
    out = tmp_path / "deep" / "results.json"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(sub), "--device", "cpu", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    by_task = {}
    for t in data["tests"]:
        by_task.setdefault(t["task"], []).append(t)
    assert all(t["status"] == "passed" for t in by_task["task3"])
    assert all(t["status"] == "failed" for task in ("task1", "task2", "task4") for t in by_task[task])
    assert any("the submission has no bw.py" in t["output"] for t in by_task["task1"])
    task3 = course.load().assignment().task("task3").points
    assert data["score"] == task3 and data["max_score"] == course.load().assignment().max_score
    assert "--device cpu" in data["output"]
    lines = proc.stdout.splitlines()
    assert any(line.startswith("task3") and f"{task3:g} / {task3:g}" in line for line in lines)
    assert any(line.startswith("total") for line in lines)
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]


def test_the_command_line_imports_only_the_command_it_runs():
    from autograder import cli
    every = [m.NAME for m in cli._commands([])]
    assert "grade" in every and "grade-all" in every
    assert [m.NAME for m in cli._commands(["grade", "submission.zip"])] == ["grade"]
    assert [m.NAME for m in cli._commands(["grade-all", "subs", "--out", "o"])] == ["grade-all"]
    # help, a typo and a module's file name (not its command) register every command
    for argv in (["--help"], ["grdae"], ["grade_all", "subs"]):
        assert [m.NAME for m in cli._commands(argv)] == every
