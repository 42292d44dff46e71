"""The Gradescope package as a TA builds it (``python -m autograder gradescope``), for its tests."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT


def build(folder: Path) -> Path:
    """``folder``/autograder.zip, built by the real command from the checkout."""
    out = folder / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out
