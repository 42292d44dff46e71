"""Task markers are declared once, in course.yml: the public tests' conftest registers them from it.

Every check runs pytest in a child process, on the repository or on a temporary copy of the
public tests with an edited course.yml beside them.
"""
import textwrap

import pytest
import yaml

from autograder.core import course
from tests.helpers.public_runs import ROOT, run_pytest, student_tree

#: Slow, left out of `make check`: every test runs pytest in a child process.
pytestmark = pytest.mark.slow

ASSIGNMENT = course.load().assignment("why17")
COURSE_TEXT = (ROOT / "course.yml").read_text(encoding="utf-8")


def _tree(tmp_path, course_text=COURSE_TEXT):
    """A copy of the public tests and the reference beside ``course_text`` and the project's shared/."""
    return student_tree(tmp_path, course_text)


def _renamed(old: str, new: str) -> str:
    data = yaml.safe_load(COURSE_TEXT)
    for task in data["assignments"]["why17"]["tasks"]:
        if task["id"] == old:
            task["id"] = new
    return yaml.safe_dump(data, sort_keys=False)


def test_task3_runs_only_the_predict_tests(tmp_path):
    predict_file = run_pytest("solutions/why17/tests/test_predict.py", "--collect-only", cwd=ROOT,
                              scratch=tmp_path / "file")
    run = run_pytest("solutions/why17", "-m", "task3", cwd=ROOT, scratch=tmp_path / "task3")
    assert len(predict_file.items) >= 10
    assert set(run.items) == set(predict_file.items), run.output[-2000:]
    assert "deselected" in run.output
    assert run.returncode == 0 and run.outcomes() == {"passed"}, run.output[-2000:]


def test_each_task_of_course_yml_is_a_registered_marker(tmp_path):
    run = run_pytest("solutions/why17", "--markers", cwd=ROOT, scratch=tmp_path)
    assert run.returncode == 0, run.output[-2000:]
    for task in ASSIGNMENT.tasks:
        assert f"@pytest.mark.{task.id}: {task.title}" in run.output


def test_renaming_a_task_in_course_yml_renames_its_marker(tmp_path):
    root = _tree(tmp_path, _renamed("task3", "predictions"))
    listed = run_pytest("assignments/why17", "--markers", cwd=root, scratch=tmp_path / "markers")
    assert "@pytest.mark.predictions:" in listed.output
    assert "@pytest.mark.task3:" not in listed.output
    # The predict tests still say task3, which course.yml no longer has: refused, not run.
    stale = run_pytest("--strict-markers", "assignments/why17/tests/test_predict.py", cwd=root,
                       scratch=tmp_path / "stale")
    assert stale.returncode != 0 and "'task3' not found in `markers`" in stale.output, stale.output[-2000:]
    # Rename the mark in the tests too, and -m selects them by the new id.
    test_file = root / "assignments" / "why17" / "tests" / "test_predict.py"
    test_file.write_text(test_file.read_text().replace("pytest.mark.task3", "pytest.mark.predictions"))
    renamed = run_pytest("--strict-markers", "assignments/why17/tests/test_predict.py",
                         "assignments/why17/tests/test_roofline.py", "-m", "predictions",
                         "--collect-only", cwd=root, scratch=tmp_path / "renamed")
    assert renamed.returncode == 0, renamed.output[-2000:]
    assert renamed.items and all("/test_predict.py::" in n for n in renamed.items)
    assert "deselected" in renamed.output   # the roofline tests (task4) were left out


EXTRA_TEST = """
    import pytest

    @pytest.mark.{mark}
    def test_marked():
        assert 1 + 1 == 2
"""


@pytest.mark.parametrize("mark, refused", [("task1", False), ("task99", True)])
def test_a_marker_that_is_not_a_task_is_refused(tmp_path, mark, refused):
    root = _tree(tmp_path)
    extra = root / "assignments" / "why17" / "tests" / "test_extra.py"
    extra.write_text(textwrap.dedent(EXTRA_TEST.format(mark=mark)))
    run = run_pytest("--strict-markers", "assignments/why17/tests/test_extra.py", cwd=root, scratch=tmp_path)
    if refused:
        assert run.returncode != 0 and f"'{mark}' not found in `markers`" in run.output, run.output[-2000:]
    else:
        assert run.returncode == 0 and run.outcomes() == {"passed"}, run.output[-2000:]


@pytest.mark.parametrize("expression, unknown", [("task9", "task9"), ("task1 or tsak2", "tsak2")])
def test_selecting_a_task_course_yml_does_not_have_is_refused_in_one_line(tmp_path, expression, unknown):
    run = run_pytest("solutions/why17/tests/test_predict.py", "-m", expression, cwd=ROOT, scratch=tmp_path)
    assert run.returncode == 4, run.output[-2000:]
    assert f"{unknown!r} is not a task in course.yml" in run.output
    assert "Traceback" not in run.output


def test_an_expression_of_known_tasks_is_accepted(tmp_path):
    run = run_pytest("solutions/why17/tests/test_predict.py", "-m", "not task2 and (task3 or task4)",
                     "--collect-only", cwd=ROOT, scratch=tmp_path)
    assert run.returncode == 0 and run.items, run.output[-2000:]


def test_without_course_yml_the_public_tests_say_so_in_one_line(tmp_path):
    root = _tree(tmp_path)
    (root / "course.yml").unlink()
    run = run_pytest("assignments/why17", "--collect-only", cwd=root, scratch=tmp_path / "run")
    assert run.returncode != 0
    assert "no course.yml in" in run.output and "Traceback" not in run.output, run.output[-2000:]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "solutions/why17/tests").glob("test_*.py")))
def test_each_files_run_only_these_command_runs_that_file_alone(name, tmp_path):
    # The command a public test file's docstring gives to run "only these" collects its own tests,
    # all of them, and no other file's, in a student's folder (assignments/why17).
    import re
    text = (ROOT / "solutions/why17/tests" / name).read_text(encoding="utf-8")
    command = re.search(r"Run only these:\s+``pytest ([^`]+)``", text).group(1).split()
    tree = _tree(tmp_path)
    alone = run_pytest(f"assignments/why17/tests/{name}", "--collect-only", cwd=tree, scratch=tmp_path / "file")
    run = run_pytest(*command, "--collect-only", cwd=tree, scratch=tmp_path / "command")
    assert alone.items and set(run.items) == set(alone.items), sorted(set(run.items) ^ set(alone.items))[:5]
