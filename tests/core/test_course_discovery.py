"""Which course.yml a command uses: --course, else the nearest one upward, else the checkout's.

``course.find`` is tested in this process (the current folder and the selection variable set by
monkeypatch); the command line in child processes, on a copy of tests/fixtures/tiny_course.
"""
from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest

from autograder.core import course
from autograder.core.errors import UsageError
from tests.helpers.tiny_course import ROOT, cli, copy_of_tiny

NOT_A_COURSE = "# another tool's file of the same name\ncourse: intro\nweeks: 12\n"


@pytest.fixture
def nowhere(tmp_path, monkeypatch) -> Path:
    """A folder with no course.yml in it or above it, as the current folder."""
    assert not any((p / "course.yml").exists() for p in (tmp_path, *tmp_path.parents))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def tiny(tmp_path) -> Path:
    return copy_of_tiny(tmp_path)


def test_a_given_folder_or_file_is_used(nowhere, tiny):
    assert course.find(tiny) == tiny / "course.yml"
    assert course.find(tiny / "course.yml") == tiny / "course.yml"
    with pytest.raises(UsageError, match=r"--course .*nope: no such course file"):
        course.find(nowhere / "nope")


def test_the_nearest_course_upward_is_found_skipping_files_without_assignments(nowhere, tiny, monkeypatch):
    deep = tiny / "solutions" / "tiny" / "a" / "b"
    deep.mkdir(parents=True)
    (deep.parent / "course.yml").write_text(NOT_A_COURSE, encoding="utf-8")
    assert course.find(start=deep) == tiny / "course.yml"
    monkeypatch.chdir(deep)
    assert course.find() == tiny / "course.yml"
    assert list(course.load().assignments) == ["tiny", "tinygpu"]
    assert course.load().path == (tiny / "course.yml").resolve()


def test_a_broken_course_upward_is_reported_not_skipped(nowhere, monkeypatch):
    (nowhere / "course.yml").write_text("course: x\nassignments:\n  tiny: [unclosed\n", encoding="utf-8")
    assert course.find() == nowhere / "course.yml"
    with pytest.raises(UsageError, match=r"course.yml line \d+: not valid YAML"):
        course.load()


def test_without_any_course_upward_the_checkout_is_used(nowhere):
    assert course.find() == course.COURSE_FILE == ROOT / "course.yml"
    assert "why17" in course.load().assignments


def test_the_given_course_wins_over_the_current_folder(nowhere, tiny, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert list(course.load(course.find(tiny)).assignments) == ["tiny", "tinygpu"]


def test_the_command_line_passes_the_course_down_and_writes_no_environment(nowhere, tiny, monkeypatch, capsys):
    """The course is loaded once by the command line and handed to the command; no variable of
    this process (which grade-all's workers would inherit) names it."""
    from autograder import cli
    from autograder.commands import grade

    seen = []
    monkeypatch.setattr(grade, "run", lambda args: seen.append(args.course) or 0)
    before = dict(os.environ)
    assert cli.main(["--course", str(tiny), "grade", str(nowhere)]) == 0
    assert [c.path for c in seen] == [(tiny / "course.yml").resolve()]
    assert dict(os.environ) == before


def test_an_unknown_course_path_is_one_line_and_exit_2(tmp_path):
    for args in (("--course", tmp_path / "nope", "generate", "--check"),
                 ("generate", "--check", "--course", tmp_path / "nope")):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and "--course" in proc.stderr and "nope" in proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout


@pytest.mark.slow
def test_the_option_goes_before_or_after_the_command(tiny):
    assert cli("--course", tiny, "generate", "--assignment", "tiny").returncode == 0
    assert (tiny / "assignments" / "tiny" / "double.py").is_file()
    assert cli("--course", tiny / "course.yml", "generate", "--check").returncode == 0
    assert cli("generate", "--check", "--course", tiny).returncode == 0
    # the checkout's course has no assignment 'tiny': without --course, ROOT's is used
    wrong = cli("generate", "--check", "--assignment", "tiny")
    assert wrong.returncode == 2 and "unknown assignment 'tiny'" in wrong.stderr


@pytest.mark.slow
def test_grade_finds_the_course_from_a_folder_inside_it_and_names_it(tiny, tmp_path):
    inside = tiny / "submissions"
    proc = cli("grade", "good_adds", "--assignment", "tiny", "--out", tmp_path / "r.json", cwd=inside)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == f"course: {tiny / 'course.yml'}"
    assert any(line.startswith("total") and "10 / 10" in line for line in proc.stdout.splitlines())


@pytest.mark.slow
def test_grade_all_workers_grade_with_the_selected_course(tiny, tmp_path):
    subs = tmp_path / "class"
    shutil.copytree(tiny / "submissions" / "wrong_squares", subs / "alice")
    shutil.copytree(tiny / "submissions" / "good_adds", subs / "bob")
    proc = cli("grade-all", subs, "--out", tmp_path / "out", "--course", tiny, "--assignment", "tiny",
               "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == f"course: {tiny / 'course.yml'}"
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as fh:
        rows = {row["student"]: row for row in csv.DictReader(fh)}
    assert (float(rows["alice"]["double"]), float(rows["bob"]["double"])) == (0, 10)
