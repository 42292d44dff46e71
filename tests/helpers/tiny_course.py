"""The tiny course of tests/fixtures/tiny_course: a copy of it outside the checkout, and the real
command line run with a course chosen by its arguments (no selection variable).

Used by the tests of several folders (tests/core/test_course_discovery.py, tests/core/test_second_assignment.py, ...).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT

TINY = ROOT / "tests" / "fixtures" / "tiny_course"


def copy_of_tiny(tmp_path: Path) -> Path:
    """tmp_path/tiny_course: a copy of the tiny course (generate writes into it)."""
    folder = tmp_path / "tiny_course"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def cli(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python -m autograder ARGS`` in ``cwd``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
