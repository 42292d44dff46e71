"""What the grader's own process imports: never torch. Torch is the fork server's import (seconds
of CPU, paid once per server, autograder/sandbox/forkserver/); the grader only judges the plain
values its children return, so an import of torch here would be paid a second time by every
`python -m autograder grade`, on its critical path."""
from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import ROOT

#: The grader's side of a why17 grading: its checks (every module of the Lesson's checks
#: package, the GPU rubric with them) and the simulated GPU's host side that serves the children.
GRADER_SIDE = """
import sys
from autograder.core import course
from autograder.grading import grade
from autograder.gpu import probe
from autograder.sandbox import gpuhost
assignment = course.load(course.find(None)).assignment("why17")
checks = grade.load_checks(assignment)
assert any(c.id.startswith("sync_present") for c in checks.values()), sorted(checks)
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
"""


def test_loading_the_why17_checks_and_the_device_host_imports_no_torch():
    """Does the grader load every why17 check, the GPU rubric and the simulated GPU's host side
    without importing torch (the rubric names a device state that the device module defines)?"""
    done = subprocess.run([sys.executable, "-c", GRADER_SIDE], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout
