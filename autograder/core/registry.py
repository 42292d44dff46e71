"""What a check is, how it is registered, and the context it runs in.

A check is a function ``fn(ctx) -> str | None`` registered with ``@check(...)``. It passes by
returning (optionally a short message) and fails by raising ``CheckFailed(message)``; the message
names the quantity with its unit, the ratio seen, and the lesson section to reread. Any student
error it does not catch (StudentError and subclasses) also fails it, with a message the runner
writes. Checks never see student objects, only the plain values the child process returned.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol


class CheckFailed(AssertionError):
    """The check's verdict: failed, with a message for the student."""


class Context(Protocol):
    """What a check may ask of the grader (implemented by autograder/grading/context.py)."""

    seed: int            # stable per submission (hash of its files); seeds randomized profiles
    device: str          # 'sim', 'cpu' or 'cuda'

    def has(self, module: str, function: str | None = None) -> bool:
        """Whether the submission has ``module`` (and ``function`` in it) importable."""

    def call(self, module: str, function: str, *args, sim: dict | None = None,
             timeout_s: float | None = None, **kwargs) -> Any:
        """Call the student's ``module.function`` in the child; return its value as plain data.

        ``sim`` is a simulated-GPU configuration (a dict, see shared.simgpu) active during the
        call. Raises a StudentError subclass when no value comes back.
        """

    def call_traced(self, module: str, function: str, *args, sim: dict | None = None,
                    timeout_s: float | None = None, **kwargs) -> tuple[Any, dict]:
        """As ``call``, plus the simulator's trace of the call (a dict; empty without ``sim``)."""

    def reference(self, module: str, function: str, *args, sim: dict | None = None,
                  **kwargs) -> Any:
        """Call the reference solution the same way, in a trusted process; plain data back."""


@dataclass(frozen=True)
class Check:
    """One hidden check: ``id`` is unique and appears in the results' test name."""

    id: str
    task: str
    name: str
    files: tuple[str, ...]
    fn: Callable[[Context], str | None]
    weight: float = 1.0
    visibility: str | None = None   # None: the assignment's default from course.yml


#: Checks by the assignment package that holds them (course.yml's ``grader``), then by check id.
REGISTRY: dict[str, dict[str, Check]] = {}


def package_of(module: str) -> str:
    """The assignment package of a check module: 'pkg.checks.bw_cpu' -> 'pkg'."""
    head, sep, _tail = module.partition(".checks.")
    if not sep:
        raise ValueError(f"check module {module!r} is not inside a '<package>.checks' package")
    return head


def check(id: str, *, task: str, name: str, files: tuple[str, ...] | str, weight: float = 1.0,
          visibility: str | None = None):
    """Register ``fn`` as a check. ``files`` names the student modules it needs, e.g. ('bw',)."""
    files = (files,) if isinstance(files, str) else tuple(files)

    def register(fn):
        mine = REGISTRY.setdefault(package_of(fn.__module__), {})
        if id in mine:
            raise ValueError(f"check id {id!r} registered twice in {package_of(fn.__module__)}")
        mine[id] = Check(id=id, task=task, name=name, files=files, fn=fn, weight=weight,
                         visibility=visibility)
        return fn

    return register
