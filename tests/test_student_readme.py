"""The student README agrees with course.yml (ids, titles, points, lesson sections) and with the
tables (the lesson's two decode numbers), and tells how to run the checks and how to submit.
"""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import zipfile

import pytest

from autograder.core import course
from shared import tables
from tests.public_runs import ROOT

ASSIGNMENT = course.load().assignment("why17")
README = ROOT / "solutions" / "why17" / "README.md"
_ROW = re.compile(r"^\|\s*(\w+)\s*\|\s*(.+?)\s*\|\s*([\d.]+)\s*\|\s*(.+?)\s*\|\s*$")


def readme_tasks(text: str) -> list[tuple[str, str, float, str]]:
    """Rows of the README's task table: (id, title, points, lesson section)."""
    rows = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            task_id, title, points, lesson = match.groups()
            rows.append((task_id, title, float(points), lesson))
    return rows


def table_drift(text: str, assignment) -> list[str]:
    """How the README's task table differs from course.yml, one line per difference."""
    rows = {row[0]: row for row in readme_tasks(text)}
    problems = []
    for task in assignment.tasks:
        row = rows.pop(task.id, None)
        if row is None:
            problems.append(f"{task.id} is missing from the README's task table")
            continue
        for field, said, truth in (("title", row[1], task.title), ("points", row[2], task.points),
                                   ("lesson section", row[3], task.lesson)):
            if said != truth:
                problems.append(f"{task.id}: README says {field} {said!r}, course.yml says {truth!r}")
    problems += [f"{extra}: in the README's task table but not in course.yml" for extra in rows]
    return problems


def test_the_task_table_matches_course_yml():
    assert table_drift(README.read_text(encoding="utf-8"), ASSIGNMENT) == []


def test_the_task_table_lists_tasks_in_course_order():
    assert [row[0] for row in readme_tasks(README.read_text(encoding="utf-8"))] == [t.id for t in ASSIGNMENT.tasks]


@pytest.mark.parametrize("old, new, complaint", [
    ("| task1 | Memory bandwidth (bw.py) | 25 |", "| task1 | Memory bandwidth (bw.py) | 30 |",
     "task1: README says points 30.0, course.yml says 25.0"),
    ("| task2 | Matmul throughput (flops.py)", "| task2 | Matmul speed (flops.py)", "task2: README says title"),
    ("| task5 |", "| task6 |", "task5 is missing"),
])
def test_a_drifted_table_is_caught(old, new, complaint):
    text = README.read_text(encoding="utf-8")
    assert old in text
    assert any(complaint in p for p in table_drift(text.replace(old, new), ASSIGNMENT))


def test_the_two_decode_numbers_come_from_the_tables():
    text = README.read_text(encoding="utf-8")
    spark = tables.device("spark")
    llama = tables.model("llama-3.1-8b")
    bf16 = tables.weight_format("bf16").bytes_per_weight
    for whole_checkpoint in (True, False):
        gb = llama.params_read(whole_checkpoint=whole_checkpoint) * bf16 / 1e9
        speed = spark.bw_gbs / gb
        assert f"{gb:.2f} GB" in text
        assert f"{speed:.0f} tok/s" in text or f"{speed:.1f} tok/s" in text
    assert f"{spark.bw_gbs:g} GB/s" in text


@pytest.mark.parametrize("needle", [
    "pytest assignments/why17", "-m task1", "python -m shared.simgpu --device h100",
    "pip install -r requirements.txt", "Gradescope",
    "bw.py flops.py predict.py roofline.py why17.ipynb measurements.json",
])
def test_the_readme_says_how_to_run_check_and_submit(needle):
    assert needle in README.read_text(encoding="utf-8")


def test_the_release_carries_the_same_readme():
    assert (ROOT / "assignments" / "why17" / "README.md").read_bytes() == README.read_bytes()


def test_the_measurements_schema_matches_the_graders():
    from autograder.lessons.why17 import measurements

    text = README.read_text(encoding="utf-8")
    assert f'"schema": "{measurements.SCHEMA}"' in text
    for field in measurements._TOP + measurements._DEVICE + measurements._ROW:
        assert f'"{field}":' in text, f"the README's measurements.json schema lacks {field!r}"


def test_the_readmes_zip_command_packs_the_six_files(tmp_path):
    # Run the README's own commands in a copy of a finished folder: the zip holds the six files.
    text = README.read_text(encoding="utf-8")
    command = next(line.strip() for line in text.splitlines() if line.strip().startswith("python -m zipfile"))
    folder = tmp_path / "assignments" / "why17"
    shutil.copytree(ROOT / "solutions" / "why17", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "measurements.json").write_text("{}\n")
    proc = subprocess.run([sys.executable, *shlex.split(command)[1:]], cwd=folder, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "why17-submission.zip") as zf:
        assert sorted(zf.namelist()) == sorted(["bw.py", "flops.py", "predict.py", "roofline.py",
                                                "why17.ipynb", "measurements.json"])
