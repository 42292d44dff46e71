"""The slices of the class, and the run folder the array tasks read them from.

A run lives in ``OUT/.slurm/<run>/``: ``manifest.json`` (what each task grades and how),
``grade.sh`` (the job script), ``job.json`` (the job id and the sbatch command, written once
submitted) and ``task-<i>.log`` (each task's output). Only students left to grade are planned,
so a rerun after a dead task submits a smaller array holding just the unfinished slice.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from autograder.classdata.store import atomic_write

RUNS = ".slurm"
MANIFEST = "manifest.json"
SCRIPT = "grade.sh"
JOB = "job.json"
LOG_PATTERN = "task-%a.log"
VERSION = 2   # 2: the manifest names the course file


def slices(students: list[str], per_task: int) -> list[list[str]]:
    """``students`` in order, cut into consecutive slices of at most ``per_task``."""
    if per_task < 1:
        raise ValueError(f"per_task must be >= 1, got {per_task}")
    return [students[i:i + per_task] for i in range(0, len(students), per_task)]


@dataclass(frozen=True)
class Manifest:
    """What every array task of one run needs: where to write, how to grade, and its slice.

    Each slice is a list of jobs ``{"student", "digest", "payload"}``: the student's folder name
    under OUT, the content hash planned (the store's commit marker records it), and the worker's
    request as the local executor builds it (path, assignment, device, limits); ``course`` the
    course file every task reads the assignment from. ``key`` is the
    store's grading key; a task whose checkout computes another key (a different course.yml)
    refuses to grade rather than mix results graded two ways.
    """

    out: str
    assignment: str
    key: str
    workers: int
    budget_s: float
    slices: list[list[dict]]
    course: str   # the course file the assignment is read from
    version: int = VERSION

    def write(self, run: Path) -> Path:
        path = run / MANIFEST
        atomic_write(path, json.dumps(asdict(self), indent=1) + "\n")
        return path

    @classmethod
    def read(cls, path: Path) -> "Manifest":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"{path}: not a version-{VERSION} grade-all manifest")
        return cls(**data)

    def students(self) -> list[str]:
        return [job["student"] for part in self.slices for job in part]


def new_run(out: Path) -> Path:
    """A fresh run folder under OUT/.slurm/, named by the UTC time and this process id."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    run = Path(out).resolve() / RUNS / f"{stamp}-{os.getpid()}"
    run.mkdir(parents=True, exist_ok=False)
    return run


def runs(out: Path) -> list[Path]:
    """Earlier run folders of OUT, oldest first."""
    root = Path(out) / RUNS
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def write_script(run: Path, *, python: str = sys.executable, root: Path | None = None) -> Path:
    """The job script: change to the grader's checkout and run the array task with this Python.

    Both paths must be visible on the nodes at the same place (the shared filesystem, README)."""
    from autograder.core import course
    root = Path(root or course.ROOT).resolve()
    text = "\n".join([
        "#!/bin/bash",
        "# One task of a grade-all job array; written by `python -m autograder grade-all`.",
        "# Grades the slice SLURM_ARRAY_TASK_ID of manifest.json into OUT (same folder as this run).",
        "set -eu",
        f"cd {shlex.quote(str(root))}",
        f"exec {shlex.quote(python)} -m autograder.batch.executors.slurm.task {shlex.quote(str(run / MANIFEST))}",
        "",
    ])
    path = run / SCRIPT
    atomic_write(path, text)
    path.chmod(0o755)
    return path


def write_job(run: Path, job_id: str, argv: list[str]) -> None:
    atomic_write(run / JOB, json.dumps({"job_id": job_id, "sbatch": argv,
                                        "submitted": time.time()}) + "\n")


def read_job(run: Path) -> str | None:
    """The job id of ``run``, or None when it was never submitted."""
    try:
        return str(json.loads((run / JOB).read_text(encoding="utf-8"))["job_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
