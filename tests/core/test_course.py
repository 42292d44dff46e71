"""course.yml is validated on load: a wrong key or type gets one line naming the key and the file."""
from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml

from autograder.core import course
from autograder.core.errors import UsageError

RAW = yaml.safe_load(course.COURSE_FILE.read_text(encoding="utf-8"))


def _write(tmp_path, data) -> str:
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _mutated(edit):
    data = copy.deepcopy(RAW)
    edit(data)
    return data


def _why17(data):
    return data["assignments"]["why17"]


CASES = [
    (lambda d: d.update(coarse="typo"), "unknown key 'coarse'"),
    (lambda d: _why17(d).update(time_limit="60"), "unknown key 'assignments.why17.time_limit'"),
    (lambda d: _why17(d).update(time_limit_s="60"), "key 'assignments.why17.time_limit_s' must be int or float"),
    (lambda d: _why17(d).update(memory_limit_mb=True), "key 'assignments.why17.memory_limit_mb' must be int"),
    (lambda d: _why17(d).update(time_limit_s=0), "key 'assignments.why17.time_limit_s' must be positive"),
    (lambda d: _why17(d).update(device="tpu"), "key 'assignments.why17.device' must be one of"),
    (lambda d: _why17(d).update(visibility="public"), "key 'assignments.why17.visibility' must be one of"),
    (lambda d: _why17(d).update(sim_profile="h900"), "key 'assignments.why17.sim_profile'"),
    (lambda d: _why17(d).pop("tasks"), "missing key 'assignments.why17.tasks'"),
    (lambda d: _why17(d)["tasks"][0].update(points=-5), "key 'assignments.why17.tasks[0].points' must be positive"),
    (lambda d: _why17(d)["tasks"][1].update(points="15"),
     "key 'assignments.why17.tasks[1].points' must be int or float"),
    (lambda d: _why17(d)["tasks"][2].update(functions=["predict_decode"]), "assignments.why17.tasks[2].functions"),
    (lambda d: _why17(d)["tasks"][3].update(id="task 4"), "assignments.why17.tasks[3].id must be an identifier"),
    (lambda d: _why17(d)["tasks"][1].update(id="task1"), "assignments.why17.tasks[1].id 'task1' is used twice"),
    (lambda d: _why17(d)["tasks"][0].update(weight=2), "unknown key 'assignments.why17.tasks[0].weight'"),
    (lambda d: d.update(assignments=[]), "key 'assignments' must be dict"),
]


@pytest.mark.parametrize("edit, words", CASES, ids=[w for _e, w in CASES])
def test_wrong_key_or_type_is_one_line_naming_key_and_file(tmp_path, edit, words):
    path = _write(tmp_path, _mutated(edit))
    with pytest.raises(UsageError) as info:
        course.load(path)
    message = str(info.value)
    assert words in message and path in message and "\n" not in message


def test_invalid_yaml_names_the_line(tmp_path):
    path = tmp_path / "course.yml"
    path.write_text("course: x\nassignments:\n  why17: [unclosed\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"course.yml line \d+: not valid YAML"):
        course.load(path)


def test_a_file_that_is_not_utf8_is_one_line(tmp_path):
    path = tmp_path / "course.yml"
    path.write_bytes(b"course: \xff\xfe\n")
    with pytest.raises(UsageError, match="course.yml: not UTF-8 text"):
        course.load(path)


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="cannot read course file"):
        course.load(tmp_path / "nope.yml")


def test_the_real_course_loads_with_points_adding_to_100():
    asg = course.load().assignment("why17")
    assert asg.max_score == 100
    assert [t.id for t in asg.tasks] == ["task1", "task2", "task3", "task4", "task5"]
    assert asg.task("task3").label("predict.decode_ceiling") == "task3.6: decode_ceiling"
    assert asg.task_of("bw.copy_bandwidth").id == "task1" and asg.task_of("nope.f") is None


def test_unknown_assignment_on_the_command_line_exits_2_with_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path), "--assignment", "why18"],
                          capture_output=True, text=True, cwd=course.ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown assignment 'why18'" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


@pytest.mark.slow
def test_the_student_conftest_refuses_a_broken_course_yml_with_the_graders_line(tmp_path):
    from tests.helpers.public_runs import run_pytest, student_tree

    broken = _mutated(lambda d: _why17(d)["tasks"][1].update(id="task1"))
    root = student_tree(tmp_path, yaml.safe_dump(broken, sort_keys=False))
    with pytest.raises(UsageError) as info:
        course.load(root / "course.yml")
    run = run_pytest("assignments/why17", "--collect-only", cwd=root, scratch=tmp_path / "run")
    assert run.returncode != 0 and "Traceback" not in run.output
    assert "assignments.why17.tasks[1].id 'task1' is used twice" in str(info.value)
    assert str(info.value) in run.output, run.output[-2000:]   # one parser: the very same line
