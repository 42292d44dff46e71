"""The real-GPU tier of ``grade --device cuda``: a lesson's GPU checks on this machine's GPU.

The lesson's ``realgpu`` module (autograder/core/lesson.py) names a measuring script (PAIR), the
student modules it needs and the reference's private names; the engine copies them into a
sandboxed child that sees the GPU, runs the script's ``run`` and hands the figures to the lesson's
``judge``. Course decision: these tests are INFORMATIONAL (max_score 0, name "[<check>/cuda]");
the simulated checks stay the graded ones, so a submission's score is the same on any machine.
Without a CUDA GPU, ``probe`` says so in one line and grading goes on with the simulated device
only.
"""
from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from autograder.core import lesson

#: CUDA reserves tens of GiB of virtual address space: the course's address-space limit would
#: stop the context from starting, so the real-GPU child gets this one (MiB).
ADDRESS_SPACE_MB = 2**20
#: Wall clock for the one measuring call, seconds (copies of 8x L2, matmuls at 4096, 3 rounds).
CALL_TIMEOUT_S = 300.0
#: The measuring script's module name in the child.
PAIR_MODULE = "grader_realgpu_pair"
NO_GPU = ("--device cuda: no CUDA GPU on this machine (torch.cuda.is_available() is False); "
          "the GPU checks ran on the simulated device only, as with --device sim.")


@functools.lru_cache(maxsize=None)
def probe(python: str = sys.executable) -> str | None:
    """None when torch sees a CUDA GPU here; otherwise the one line saying it does not. Asked in a
    fresh interpreter (the grader does not import torch) once per process: grade-all asks per student."""
    try:
        done = subprocess.run([python, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"],
                              capture_output=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired):
        return NO_GPU
    return None if done.returncode == 0 else NO_GPU


# ---------------------------------------------------------------- the grader's side
def prepare(tier, student_dir: Path, reference_dir: Path) -> Path:
    """A folder for the real-GPU child: the student's modules (``tier.MODULES``), the reference
    under its private names and the lesson's measuring script. The caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix="grader-cuda-"))
    for module in tier.MODULES:
        src = Path(student_dir) / f"{module}.py"
        if src.is_file() and not src.is_symlink():
            shutil.copy2(src, folder / src.name)
    for module, name in tier.REFERENCE_NAMES.items():
        shutil.copy2(Path(reference_dir) / f"{module}.py", folder / f"{name}.py")
    shutil.copy2(tier.PAIR, folder / f"{PAIR_MODULE}.py")
    return folder


def measure_in_sandbox(tier, student_dir: Path, reference_dir: Path, limits, **options) -> dict:
    """The lesson's ``PAIR.run(**options)`` in a sandboxed child (the course's limits, but room
    for CUDA's address space); raises StudentError when it does not finish."""
    from autograder.sandbox.parent import Sandbox

    folder = prepare(tier, student_dir, reference_dir)
    box = Sandbox(folder, replace(limits, memory_limit_mb=ADDRESS_SPACE_MB), preload=("torch",),
                  simgpu=False, label="your code with the reference on the GPU")
    try:
        m, _trace = box.call(PAIR_MODULE, "run", kwargs=options, timeout_s=CALL_TIMEOUT_S)
        m["reference_left"] = sorted(p.name for p in box.child.workdir.glob("grader_ref_*"))
        return m
    finally:
        box.close()
        shutil.rmtree(folder, ignore_errors=True)


def tests_for(asg, student_dir: Path, limits, make_entry) -> tuple[list[dict], str]:
    """(informational results tests '[<check>/cuda]', a line for the overview) on the real GPU.

    ``make_entry(check_id, passed, message)`` builds one results test (grade.py knows the task
    and title). Without a GPU: no tests, and the NO_GPU line; without a lesson tier, no tests.
    """
    tier = lesson.realgpu_of(asg)
    if tier is None:
        return [], f"--device cuda: assignment {asg.name} has no real-GPU checks; graded on the simulated device."
    reason = probe()
    if reason:
        return [], reason
    from autograder.core.errors import StudentError

    try:
        m = measure_in_sandbox(tier, student_dir, asg.solutions_dir, limits)
        found = tier.judge(m)
    except StudentError as exc:
        return [], f"--device cuda: the real-GPU measurement did not finish ({exc}); graded on the simulated device."
    if m.get("device") == "cpu":   # the sandboxed child saw no GPU (its /dev): do not judge a CPU
        return [], ("--device cuda: the sandboxed child saw no CUDA GPU (torch.cuda.is_available() "
                    "was False there); graded on the simulated device only.")
    tests = [make_entry(f"{check}/cuda", v.passed, v.message) for check, v in found.items()]
    return tests, (f"Real-GPU checks on the {m.get('device')}: informational ([<check>/cuda], 0 points); "
                   "the score comes from the simulated GPU.")
