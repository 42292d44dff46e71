"""Run pytest on a copy of the public tests in a child process and read back what happened.

One child per run: solutions/why17 and assignments/why17 define modules with the same names, so
they can never share a process.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import pytest_task_report
from tests.helpers.paths import ROOT

PLUGIN = Path(__file__).with_name("pytest_task_report.py")
#: Generous bound for one child pytest run, in seconds (the public tests take a few seconds).
RUN_TIMEOUT_S = 300


@dataclass
class Run:
    """The outcome of one child pytest run: exit status, output, and per-test results."""

    returncode: int
    output: str
    items: dict[str, dict]

    def outcomes(self) -> set[str]:
        return {item["outcome"] for item in self.items.values()}


def run_pytest(*args: str, cwd: Path, scratch: Path, env: dict | None = None) -> Run:
    """``python -m pytest ARGS`` in ``cwd``, with the task-report plugin; ``scratch`` is a temp dir."""
    plugin_dir = scratch / "report-plugin"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(PLUGIN, plugin_dir / PLUGIN.name)
    report = scratch / "report.json"
    if report.exists():
        report.unlink()
    child_env = {**os.environ, "PYTHONPATH": str(plugin_dir), pytest_task_report.REPORT_ENV: str(report),
                 "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", PLUGIN.stem, "-q",
                           "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=child_env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    items = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return Run(proc.returncode, proc.stdout + proc.stderr, items)


def student_tree(where: Path, course_text: str | None = None, fixture: str | None = None) -> Path:
    """A student's working folder under ``where``: course.yml, shared/ and assignments/why17.

    assignments/why17 starts as the reference (solutions/why17); ``fixture`` (KIND/NAME of
    autograder/lessons/why17/fixtures, e.g. good/compact_all_four) then lays its changed files
    over it. ``course_text`` replaces course.yml.
    """
    root = where / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.ipynb", "measurements.json", ".pytest_cache")
    shutil.copytree(ROOT / "solutions" / "why17", root / "assignments" / "why17", ignore=ignore)
    shutil.copytree(ROOT / "shared", root / "shared", ignore=ignore)
    text = course_text if course_text is not None else (ROOT / "course.yml").read_text(encoding="utf-8")
    (root / "course.yml").write_text(text, encoding="utf-8")
    if fixture is not None:
        from autograder.lessons.why17.fixtures import build

        for file, text in build.changed_files(*fixture.split("/")).items():
            (root / "assignments" / "why17" / file).write_text(text, encoding="utf-8")
    return root
