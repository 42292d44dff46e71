"""The real-GPU tier of ``grade --device cuda``: a lesson's GPU checks on this machine's GPU.

The lesson's ``realgpu`` module (autograder/core/lesson.py) names the student modules it needs, a
script for the reference's child (PAIR, with ``device_info``), how to measure (``measure``, over
modules that live in the children) and how to judge the figures (``judge``). The engine starts two
sandboxed children that see the GPU, the student's files in one and the reference's in the other,
and drives the lesson's ``measure`` over them from its own process.

Course decision: these tests are INFORMATIONAL (max_score 0, name "[<check>/cuda]"); the
simulated checks stay the graded ones, so a submission's score is the same on any machine.
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

from autograder.core import lesson, results
from autograder.grading.schedule import on_gpu

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
class Remote:
    """One module in a sandboxed child: ``remote.f(*args, **kwargs)`` runs ``module.f`` there and
    returns its value; ``remote.watched(f)`` also returns the aten ops it ran."""

    def __init__(self, box, module: str, timeout_s: float):
        self._box, self._module, self._timeout_s = box, module, timeout_s

    def __getattr__(self, function: str):
        if function.startswith("_"):
            raise AttributeError(function)

        def call(*args, **kwargs):
            value, _trace = self._box.call(self._module, function, args, kwargs, timeout_s=self._timeout_s)
            return value
        call.__name__ = function
        return call

    def watched(self, function: str, *args, **kwargs) -> tuple:
        value, trace = self._box.call(self._module, function, args, kwargs, watch=True, timeout_s=self._timeout_s)
        return value, list((trace or {}).get("torch_ops", []))


def prepare(tier, student_dir: Path, reference_dir: Path) -> tuple[Path, Path]:
    """(student folder, reference folder) for the two real-GPU children: the student's modules
    (``tier.MODULES``) alone in one; the reference's and the lesson's measuring script (PAIR) in
    the other. The caller removes both."""
    student = Path(tempfile.mkdtemp(prefix="grader-cuda-student-"))
    reference = Path(tempfile.mkdtemp(prefix="grader-cuda-reference-"))
    for module in tier.MODULES:
        src = Path(student_dir) / f"{module}.py"
        if src.is_file() and not src.is_symlink():
            shutil.copy2(src, student / src.name)
        shutil.copy2(Path(reference_dir) / f"{module}.py", reference / f"{module}.py")
    shutil.copy2(tier.PAIR, reference / f"{PAIR_MODULE}.py")
    return student, reference


def measure_in_sandbox(tier, student_dir: Path, reference_dir: Path, limits, l2_bytes: int | None = None,
                       **options) -> dict:
    """The lesson's ``tier.measure`` over two sandboxed children on the GPU, the student's and the
    reference's (the course's limits, but room for CUDA's address space): the student's code never
    shares a process or a folder with the reference. Raises StudentError when a call does not finish."""
    from autograder.core.errors import StudentMissing
    from autograder.sandbox.parent import Sandbox

    folders = prepare(tier, student_dir, reference_dir)
    room = replace(limits, memory_limit_mb=ADDRESS_SPACE_MB)
    boxes = [Sandbox(folders[0], room, preload=("torch",), simgpu=False, label="your code on the GPU"),
             Sandbox(folders[1], room, preload=("torch",), simgpu=False, label="the reference on the GPU")]
    try:
        device, _trace = boxes[1].call(PAIR_MODULE, "device_info", (l2_bytes,), timeout_s=CALL_TIMEOUT_S)
        student = {}
        for module in tier.MODULES:
            try:
                boxes[0].has(module)
            except StudentMissing:
                continue            # a module the student did not hand in, or that does not import
            student[module] = Remote(boxes[0], module, CALL_TIMEOUT_S)
        reference = {module: Remote(boxes[1], module, CALL_TIMEOUT_S) for module in tier.MODULES}
        return tier.measure(student, reference, device, **options)
    finally:
        for box in boxes:
            box.close()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def tests_for(asg, student_dir: Path, limits, make_entry) -> tuple[list[dict], str]:
    """(informational results tests '[<check>/cuda]', a line for the overview) on the real GPU.

    ``make_entry(check_id, passed, message)`` builds one results test (``add_tests`` knows the
    task and title). Without a GPU: no tests, and the NO_GPU line; without a lesson tier, no tests.
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


def add_tests(tests: list[dict], checks, asg, student_dir: Path, limits, notes: list[str]) -> list[dict]:
    """``tests`` plus the real-GPU checks '[<check>/cuda]' (0 points) of the GPU checks among
    ``checks`` (each task with its checks, grading/schedule.py) when this machine has a GPU; the
    line saying what ran (or that there is no GPU) goes first in ``notes``."""
    gpu_checks = {c.id: (task, c) for task, cs in checks for c in cs if on_gpu(c)}
    if not gpu_checks:
        return tests

    def entry(check_id: str, passed: bool, message: str) -> dict:
        task, check = gpu_checks[check_id.split("/")[0]]
        e = results.test_entry(task_id=task.id, check_id=check_id, title=check.name + " (real GPU)",
                               score=0.0, max_score=0.0, passed=passed, output=message,
                               visibility=check.visibility or asg.visibility)
        e["outcome"] = "passed" if passed else "failed"
        return e

    extra, line = tests_for(asg, student_dir, limits, entry)
    notes.insert(0, line)
    return tests + [e for e in extra if e["check"].split("/")[0] in gpu_checks]
