"""The public tests of a lab folder, run in a child pytest, counted per task.

The child runs ``python -m pytest FOLDER`` from the folder above ``shared/`` (the top folder), with
shared/submit/report_plugin.py recording each test's task marks and outcome. A test counts for
every task it is marked with; the hidden grader is the authority, these are the same tests
``pytest`` runs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from shared.submit import report_plugin

#: The most one run of the public tests may take, in seconds (they take seconds to a few minutes).
TIMEOUT_S = 1200


@dataclass
class TaskTests:
    """How one task's public tests went: counts, and the first failures' one-line messages."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Outcome:
    """A run of the public tests: per task id; the test files that could not be loaded (file -> the
    first line of why: a module of yours that does not import); and a one-line ``problem`` when the
    run itself broke (its exit status and last line)."""

    tasks: dict[str, TaskTests]
    uncollected: dict[str, str] = field(default_factory=dict)
    problem: str = ""


def _top(folder: Path) -> Path:
    """The nearest folder at or above ``folder`` that holds shared/ (so the child imports it)."""
    for where in (folder, *folder.parents):
        if (where / "shared" / "__init__.py").is_file():
            return where
    return Path(__file__).resolve().parents[2]


def run(folder: Path, task_ids: list[str]) -> Outcome:
    """Run the public tests in ``folder``; the outcome per task of ``task_ids``."""
    tasks = {task_id: TaskTests() for task_id in task_ids}
    top = _top(folder)
    with tempfile.TemporaryDirectory(prefix="why17-submit-") as tmp:
        report = Path(tmp) / "report.json"
        env = {**os.environ, report_plugin.REPORT_ENV: str(report), "MPLBACKEND": "Agg",
               "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(top), os.environ.get("PYTHONPATH", "")]))}
        command = [sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider",
                   "--continue-on-collection-errors", "-p", "shared.submit.report_plugin"]
        try:
            proc = subprocess.run(command, cwd=top, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Outcome(tasks, problem=f"the public tests ran longer than {TIMEOUT_S} s and were stopped")
        entries = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else []
    uncollected = {e["uncollected"]: e["message"] for e in entries if "uncollected" in e}
    tests = [e for e in entries if "uncollected" not in e]
    for test in tests:
        for mark in test["marks"]:
            if mark in tasks:
                counts = tasks[mark]
                setattr(counts, test["outcome"], getattr(counts, test["outcome"]) + 1)
                if test["outcome"] == "failed" and test["message"] not in counts.failures:
                    counts.failures.append(test["message"])
    # pytest: 0 all passed, 1 some failed; anything else means the run itself did not work
    if proc.returncode not in (0, 1) or not (tests or uncollected):
        lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        last = lines[-1].strip() if lines else "no output"
        return Outcome(tasks, uncollected, f"pytest exited {proc.returncode}: {last}")
    return Outcome(tasks, uncollected)
