"""Every command of the student README runs as written from the top folder of the unpacked student
bundle, on a finished lab (the reference's code and Measure table), and exits 0 without a traceback.

The README's commands are its ``sh`` fences (the convention of tests/test_docs_commands.py, which
also checks that each one exists). A few are not run here, each for the reason NOT_RUN gives.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core import course
from autograder.exports import bundle
from tests.helpers.markdown_commands import extract
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test runs a command of the student README in the unpacked bundle.
pytestmark = pytest.mark.slow

ASSIGNMENT = course.load().assignment("why17")
#: Commands not run, by how they start, and why.
NOT_RUN = {
    "python -m venv": "makes a fresh, empty environment; the test runs in the project's, which has "
                      "everything requirements.txt lists",
    ". .venv/bin/activate": "a shell builtin that enters that environment (see above)",
    "pip install": "downloads packages from the network",
    "docker run": "needs Docker, and pulls an image from the network",
    "jupyter notebook": "starts a notebook server and waits for a browser",
    "jupyter nbconvert": "executes the whole lab notebook, minutes on a CPU; "
                         "tests/lessons/why17/test_notebook.py runs it",
}
#: The most one command may take, in seconds (the public tests run twice: pytest and shared.submit).
SECONDS = 600


def _readme_commands() -> list[str]:
    text = (ROOT / "solutions" / "why17" / "README.md").read_text(encoding="utf-8")
    return [c.text for c in extract(text, "student README")]


def _skipped(command: str) -> str | None:
    return next((why for start, why in NOT_RUN.items() if command.startswith(start)), None)


@pytest.fixture(scope="module")
def top(tmp_path_factory) -> Path:
    """The unpacked bundle, with the reference's four modules and Measure table in the lab folder."""
    base = tmp_path_factory.mktemp("bundle")
    for name, data in bundle.contents(ASSIGNMENT).items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    top = base / f"{ASSIGNMENT.name}-student"
    lab = top / "assignments" / ASSIGNMENT.folder
    for module in ("bw.py", "flops.py", "predict.py", "roofline.py"):
        shutil.copyfile(ROOT / "solutions" / ASSIGNMENT.folder / module, lab / module)
    shutil.copyfile(ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements" / "reference"
                    / "measurements.json", lab / "measurements.json")
    return top


def test_every_exclusion_names_a_command_the_readme_still_shows():
    commands = _readme_commands()
    assert [start for start in NOT_RUN if not any(c.startswith(start) for c in commands)] == []


RUN = [c for c in _readme_commands() if _skipped(c) is None]


def test_most_commands_run():
    assert len(RUN) >= 8 and any("shared.submit" in c for c in RUN)


@pytest.mark.parametrize("command", RUN)
def test_the_command_runs_as_written_from_the_top_folder(top, command):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(["bash", "-c", command], cwd=top, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=SECONDS)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "Traceback (most recent call last)" not in output, output[-3000:]
