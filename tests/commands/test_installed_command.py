"""The installed command: `uv pip install -e .` (make install) puts `why17` beside the interpreter; it
runs every subcommand from any folder, names the course it graded with, and grades there.

Skipped, with the reason, only where the project was not installed (`make install` does it)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

WHY17 = Path(sys.executable).parent / "why17"

pytestmark = [pytest.mark.skipif(not WHY17.is_file(),
                                 reason=f"{WHY17} is not installed (make install runs uv pip install -e .)"),
              pytest.mark.slow]     # every test grades or runs subcommands in child processes (not in `make check`)


def why17(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(WHY17), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_every_subcommand_answers_from_another_folder(tmp_path):
    top = why17("--help", cwd=tmp_path)
    assert top.returncode == 0
    commands = ("calibrate", "generate", "grade", "grade-all", "gradescope", "nbgrader-course", "release",
                "similarity")
    for name in commands:
        assert name in top.stdout
        proc = why17(name, "--help", cwd=tmp_path)
        assert proc.returncode == 0 and "usage:" in proc.stdout, name


def test_installed_command_grades_from_another_folder_with_course(tmp_path):
    submission = tmp_path / "alice"
    submission.mkdir()
    shutil.copyfile(ROOT / "solutions" / "why17" / "predict.py", submission / "predict.py")
    proc = why17("grade", submission, "--course", ROOT, "--out", tmp_path / "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == f"course: {ROOT / 'course.yml'}"
    results = json.loads((tmp_path / "r.json").read_text())
    predict = [t for t in results["tests"] if t.get("task") == "task3"]
    assert predict and all(t["status"] == "passed" for t in predict)
    assert results["score"] > 0


def test_installed_command_finds_the_course_upward_from_a_subfolder(tmp_path):
    inside = ROOT / "docs"
    proc = why17("generate", "--check", cwd=inside)
    assert proc.returncode == 0, proc.stderr[-2000:]
    entry = tmp_path / "class" / "bob"
    entry.mkdir(parents=True)
    shutil.copyfile(ROOT / "solutions" / "why17" / "bw.py", entry / "bw.py")
    proc = why17("grade-all", tmp_path / "class", "--out", tmp_path / "out", "--jobs", "1",
                 "--checks", "measure_file", cwd=inside)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == f"course: {ROOT / 'course.yml'}"
    assert (tmp_path / "out" / "bob" / "results.json").is_file()
