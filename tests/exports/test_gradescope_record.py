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

from autograder.core.errors import UsageError
from autograder.exports import gradescope
from tests.exports import gradescope_package
from tests.helpers.paths import ROOT


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
