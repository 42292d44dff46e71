"""What a check is, how it is registered, and the context it runs in.

A check is a function ``fn(ctx) -> str | None`` registered with ``@check(...)``. It passes by
returning (optionally a short message) and fails by raising ``CheckFailed(message)``; the message
names the quantity with its unit, the ratio seen, and the lesson section to reread. Any student
error it does not catch (StudentError and subclasses) also fails it, with a message the runner
writes; any other exception is the grader's own failure, never a grade. Checks never see student
objects, only the plain values the child process returned.

Each check declares its device: ``CPU`` (the grading machine, the default) or ``SIMULATED_GPU``
(the simulated GPU seeded for the submission, with the reference beside it: the engine starts
the reference early and runs these checks once torch is in).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

#: A check's device: the grading machine's CPU.
CPU = "cpu"
#: A check's device: the simulated GPU, beside the reference.
SIMULATED_GPU = "simulated-gpu"
DEVICES = (CPU, SIMULATED_GPU)


class CheckFailed(AssertionError):
    """The check's verdict: failed, with a message for the student."""


class Context(Protocol):
    """Everything a check may ask of the grader (implemented by autograder/grading/context.py).

    Attributes:
        seed: stable per submission (a hash of its files); seeds randomized profiles.
        device: 'sim', 'cpu' or 'cuda', as the grading was asked.
        submission_dir: the private copy of the submission (read it; never execute it here).
        sim_profile: course.yml's base profile of the simulated GPU (e.g. 'h100-sxm').
        sim_seed: the simulated GPU's seed: ``seed`` with the grader's secret.
        gpu_memo: the GPU checks' shared calls and verdicts, for one submission.
    """

    seed: int
    device: str
    submission_dir: Path
    sim_profile: str
    sim_seed: int
    gpu_memo: dict

    def has(self, module: str, function: str | None = None) -> bool:
        """Whether the submission has ``module`` (and ``function`` in it) importable; a name with
        an extension ('measurements.json') asks whether that plain file exists."""

    def require(self, module: str) -> None:
        """Raise StudentMissing with its one-line reason unless ``module`` is importable."""

    def read_file(self, name: str, max_bytes: int) -> bytes | None:
        """Up to ``max_bytes`` of the submission's plain file ``name``; None when there is none."""

    def call(self, module: str, function: str, *args, sim: dict | None = None,
             timeout_s: float | None = None, **kwargs) -> Any:
        """Call the student's ``module.function`` in the child; return its value as plain data.

        ``sim`` is a simulated-GPU configuration (a dict, see shared.simgpu) active during the
        call. Raises a StudentError subclass when no value comes back.
        """

    def call_traced(self, module: str, function: str, *args, sim: dict | None = None,
                    timeout_s: float | None = None, **kwargs) -> tuple[Any, dict]:
        """As ``call``, plus the simulator's trace of the call (a dict; empty without ``sim``)."""

    def call_watched(self, module: str, function: str, *args, timeout_s: float | None = None,
                     **kwargs) -> tuple[Any, dict]:
        """As ``call`` on the real CPU/GPU, plus what it ran: ``{"ops": [...], "trace": {...}}``,
        the aten ops (bytes, FLOPs) and the clock readings in order among them."""

    def reference(self, module: str, function: str, *args, sim: dict | None = None,
                  **kwargs) -> Any:
        """Call the reference solution the same way, in a trusted process; plain data back."""

    def reference_traced(self, module: str, function: str, *args, sim: dict | None = None,
                         **kwargs) -> tuple[Any, dict]:
        """As ``reference``, plus the simulator's trace."""


@dataclass(frozen=True)
class Check:
    """One hidden check: ``id`` is unique and appears in the results' test name; ``device`` is
    where it runs (CPU or SIMULATED_GPU); ``module`` the check module that registered it."""

    id: str
    task: str
    name: str
    files: tuple[str, ...]
    fn: Callable[[Context], str | None]
    weight: float = 1.0
    visibility: str | None = None   # None: the assignment's default from course.yml
    device: str = CPU
    module: str = ""


#: Checks by the module that registered them, then by check id (a Lesson's checks are those of
#: the modules of its ``checks`` package: autograder/grading/grade.py ``load_checks``).
REGISTRY: dict[str, dict[str, Check]] = {}


def add(module: str, check: Check) -> None:
    """File ``check`` under the check module ``module`` (ValueError on an id registered twice there)."""
    if check.device not in DEVICES:
        raise ValueError(f"check {check.id!r}: device must be one of {', '.join(DEVICES)}, got {check.device!r}")
    mine = REGISTRY.setdefault(module, {})
    if check.id in mine:
        raise ValueError(f"check id {check.id!r} registered twice in {module}")
    mine[check.id] = check


def check(id: str, *, task: str, name: str, files: tuple[str, ...] | str, weight: float = 1.0,
          visibility: str | None = None, device: str = CPU, module: str | None = None):
    """Register ``fn`` as a check. ``files`` names the student modules it needs, e.g. ('bw',);
    ``module``: the check module it is filed under (default: ``fn``'s own)."""
    files = (files,) if isinstance(files, str) else tuple(files)

    def register(fn):
        home = module or fn.__module__
        add(home, Check(id=id, task=task, name=name, files=files, fn=fn, weight=weight,
                        visibility=visibility, device=device, module=home))
        return fn

    return register
