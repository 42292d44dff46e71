"""The Gradescope package as a TA keeps it: a package not rebuilt after a course.yml change says so,
and docs/gradescope.md's local trial runs as written."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.core.errors import UsageError
from autograder.exports import gradescope
from tests.exports import gradescope_package
from tests.helpers.paths import ROOT
from tests.helpers.tiny_course import cli, copy_of_tiny


def test_a_package_built_from_another_course_yml_says_so(tmp_path):
    package = gradescope_package.build(tmp_path / "built")
    assert gradescope.stale(package) is None
    here = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "--check", str(package)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert here.returncode == 0 and "built from this course.yml" in here.stdout
    changed = tmp_path / "course"
    changed.mkdir()
    (changed / "course.yml").write_text((ROOT / "course.yml").read_text() + "# visibility changed\n")
    problem = gradescope.stale(package, root=changed)
    assert problem.startswith(f"{package} was built from another course.yml than {changed / 'course.yml'}")
    assert "rebuild it" in problem
    not_ours = tmp_path / "other.zip"
    shutil.make_archive(str(not_ours.with_suffix("")), "zip", changed)
    with pytest.raises(UsageError, match="not a package built by"):
        gradescope.stale(not_ours)


def test_a_course_other_than_the_checkouts_is_refused_in_one_line(tmp_path):
    """The package carries the checkout's course.yml: built or checked for another course (--course,
    or a course.yml found upward from the current folder), it would say nothing true of that one."""
    other = tmp_path / "course"
    other.mkdir()
    for name in ("solutions", "assignments"):
        (other / name).symlink_to(ROOT / name)
    (other / "course.yml").write_text((ROOT / "course.yml").read_text() + "# late policy changed\n")
    package = tmp_path / "autograder.zip"
    said = (f"error: {other / 'course.yml'}: gradescope packs this checkout's course.yml ({ROOT / 'course.yml'}) "
            f"with its grader and solutions/, never another course; edit that file and run gradescope "
            f"without --course, from a folder that holds no other course.yml")
    for how, cwd in ((["--course", str(other)], ROOT), ([], other)):
        for command in (["--out", str(package)], ["--check", str(package)]):
            done = subprocess.run([sys.executable, "-m", "autograder", *how, "gradescope", *command],
                                  cwd=cwd, capture_output=True, text=True, timeout=120,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert (done.returncode, done.stderr.strip().splitlines()) == (2, [said]), (how, command)
    assert not package.exists()


@pytest.mark.parametrize("users, score", [([{"name": "Gus"}], 9.0),
                                           ([{"name": "Fay", "assignment": {"due_date": "2026-12-05T23:00:00-08:00"}},
                                             {"name": "Gus"}], 10.0)])
def test_grade_on_gradescope_follows_gradescopes_due_date_and_extension(tmp_path, users, score):
    """What run_autograder does: ``grade --submission-metadata`` with the harness's file, whose due
    date (a day before created_at) replaces course.yml's (a month before), and whose per-student
    due date (Gradescope's extension for one member of a group) moves it past created_at."""
    course_dir = copy_of_tiny(tmp_path)
    data = yaml.safe_load((course_dir / "course.yml").read_text())
    data["assignments"]["tiny"]["late"] = {"due": "2026-11-01T23:59:00Z", "policy": "percent_per_day",
                                           "percent_per_day": 10}
    (course_dir / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    harness = tmp_path / "submission_metadata.json"
    harness.write_text(json.dumps({"created_at": "2026-12-04T10:00:00-08:00", "users": users,
                                   "assignment": {"due_date": "2026-12-03T23:00:00-08:00"}}))
    out = tmp_path / "results.json"
    done = cli("grade", course_dir / "submissions" / "good_adds", "--course", course_dir,
               "--submission-metadata", harness, "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = json.loads(out.read_text())["late"]
    assert (verdict["raw_score"], verdict["score"]) == (10.0, score), verdict
    assert verdict["due"] == ("2026-12-05T23:00:00-08:00" if score == 10 else "2026-12-03T23:00:00-08:00")


def _trial_block() -> str:
    """The shell block of docs/gradescope.md that tries the package locally."""
    text = (ROOT / "docs" / "gradescope.md").read_text()
    after = text.split("Try the package locally", 1)[1]
    return re.search(r"```sh\n(.*?)```", after, re.S).group(1)


@pytest.mark.slow
def test_the_docs_local_trial_runs_as_written(tmp_path):
    block = _trial_block().replace("/tmp/gs", str(tmp_path / "gs"))
    block = block.replace("$PWD/.venv/bin/python", sys.executable).replace("python -m", f"{sys.executable} -m")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "gs" / "results" / "results.json").read_text())
    tasks = {}
    for test in results["tests"]:
        tasks.setdefault(test["task"], [0.0, 0.0])
        tasks[test["task"]][0] += test["score"]
        tasks[test["task"]][1] += test["max_score"]
    assert all(got == most for task, (got, most) in tasks.items() if task != "task5"), tasks
    assert tasks["task5"][0] == 0
    assert Path(tmp_path / "gs" / "autograder.zip").is_file()
