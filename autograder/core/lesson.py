"""The lesson contract: everything the engine asks of an assignment's grader package, in one place.

A grader package (course.yml's ``grader``) exports one ``LESSON = Lesson(...)`` in its
``__init__.py``; the engine reads nothing else of it by name. ``of(asg)`` imports the package and
checks the declaration once: a missing or wrong piece stops the command with one line naming it
(UsageError), before any student code runs. Nothing here names an assignment; a new one needs a
package and a course.yml entry, no engine change.

The checks themselves are registered with ``autograder.core.registry.check`` (or, for a GPU
rubric, ``autograder.gpu.checks.register``) by the modules of the package ``Lesson.checks``
names; each check declares the device it runs on.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType, ModuleType

from autograder.core.errors import UsageError

#: results.json's top-level key for the feedback plots' numbers (Gradescope ignores unknown keys).
PLOTS_KEY = "plots"
#: Folder of a grader package that holds the stand-ins, one ``<module>.py`` each (``Lesson.depends``).
STAND_INS = "standin"


def _names(value, what: str) -> tuple[str, ...]:
    """``value`` as a tuple of names; TypeError naming ``what`` otherwise."""
    if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
        raise TypeError(f"Lesson.{what} must be a list of names, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Lesson:
    """What one grader package declares. Module names are dotted and absolute; files are relative
    to the package's folder.

    Attributes:
        package: the grader package itself (its ``__name__``); must be course.yml's ``grader``.
        checks: the package whose every module registers checks when imported (required).
        torch_files: student modules that import torch: their child preloads it.
        plot_files: student modules that draw with matplotlib: their child preloads it.
        server_preload: modules a fork server imports, in order, before it forks the children.
        server_later: modules it imports after it is ready, while no request waits.
        depends: student module -> the student modules its checks also run; each needed module
            has a stand-in ``standin/<module>.py`` in the package (autograder/grading/fallback.py).
        handed_in: file names a submission holds besides course.yml's (its tasks' modules and files).
        mistakes: the mistake catalogue (a .yml file): the class summary counts each classic mistake.
        plots: module with ``collect(submission_path) -> dict | None``: results.json's ``plots``.
        charts: module with ``render(data: dict | None) -> str``: the feedback page's plots as HTML.
        realgpu: module of the real-GPU tier (autograder/grading/real_gpu.py): MODULES, PAIR,
            ``measure(student, reference, device, **options)``, ``judge(figures)``.
        calibrate: module of ``calibrate --device sim|cuda``: ``calibrate_sim(profile)``,
            ``calibrate_cuda()``, ``format_table(rows)``.
        deciding: packages outside this one whose files decide a verdict (the rubric the GPU
            checks judge with, the tables the oracles read): with the package itself and the
            reference solution, what grade-all's grading key digests (autograder/batch/fingerprint.py).
    """

    package: str
    checks: str
    torch_files: tuple[str, ...] = ()
    plot_files: tuple[str, ...] = ()
    server_preload: tuple[str, ...] = ()
    server_later: tuple[str, ...] = ()
    depends: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    handed_in: tuple[str, ...] = ()
    mistakes: str | None = None
    plots: str | None = None
    charts: str | None = None
    realgpu: str | None = None
    calibrate: str | None = None
    deciding: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("package", "checks"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise TypeError(f"Lesson.{name} must be a dotted module name, got {getattr(self, name)!r}")
        for name in ("torch_files", "plot_files", "server_preload", "server_later", "handed_in", "deciding"):
            object.__setattr__(self, name, _names(getattr(self, name), name))
        for name in ("mistakes", "plots", "charts", "realgpu", "calibrate"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise TypeError(f"Lesson.{name} must be a name or None, got {getattr(self, name)!r}")
        if not isinstance(self.depends, Mapping):
            raise TypeError(f"Lesson.depends must map a student module to the modules it needs, got {self.depends!r}")
        depends = {str(m): _names(needs, f"depends[{m!r}]") for m, needs in self.depends.items()}
        object.__setattr__(self, "depends", MappingProxyType(depends))

    @property
    def folder(self) -> Path:
        """The package's folder."""
        return Path(importlib.import_module(self.package).__file__).resolve().parent

    def stand_in(self, module: str) -> Path:
        """The stand-in for the student's ``module``.py (never the reference's)."""
        return self.folder / STAND_INS / f"{module}.py"

    def optional(self, name: str) -> ModuleType | None:
        """The module the field ``name`` ('plots', 'charts', 'realgpu', 'calibrate') names,
        imported; None when unset."""
        module = getattr(self, name)
        return importlib.import_module(module) if module else None


def _problems(lesson: Lesson, grader: str) -> str | None:
    """The first piece ``lesson`` names that is not there, in words; None when all are."""
    if lesson.package != grader:
        return f"package is {lesson.package!r}, but course.yml's grader is {grader!r}"
    modules = [("checks", lesson.checks)] + [(f.name, getattr(lesson, f.name)) for f in fields(lesson)
                                             if f.name in ("plots", "charts", "realgpu", "calibrate")]
    modules += [("deciding", name) for name in lesson.deciding]
    for what, module in modules:
        if module and importlib.util.find_spec(module) is None:
            return f"{what} names the module {module!r}, which does not exist"
    if lesson.mistakes and not (lesson.folder / lesson.mistakes).is_file():
        return f"mistakes names {lesson.folder / lesson.mistakes}, which does not exist"
    for module, needs in lesson.depends.items():
        for need in needs:
            if not lesson.stand_in(need).is_file():
                return (f"depends says {module}.py needs {need}.py, but there is no stand-in "
                        f"{lesson.stand_in(need)} (built from the public stub's documented formulas)")
    return None


@functools.lru_cache(maxsize=16)
def load(grader: str) -> Lesson:
    """The checked ``LESSON`` of the grader package ``grader``.

    Raises:
        UsageError: one line naming what is missing or wrong (the package does not import, it
            exports no Lesson, or a piece the Lesson names is not there).
    """
    where = f"grader package {grader!r}"
    try:
        package = importlib.import_module(grader)
    except Exception as exc:   # any failure of the grader's own import is one line
        first = (str(exc).splitlines() or [""])[0]
        raise UsageError(f"{where} does not import ({type(exc).__name__}: {first})") from None
    declared = getattr(package, "LESSON", None)   # the one name the engine reads
    if not isinstance(declared, Lesson):
        raise UsageError(f"{where} exports no LESSON: its __init__.py must set "
                         "LESSON = autograder.api.Lesson(package=__name__, checks=...)")
    problem = _problems(declared, grader)
    if problem is not None:
        raise UsageError(f"{where}: LESSON.{problem}")
    return declared


def of(asg) -> Lesson:
    """The checked Lesson of an assignment (course.yml's ``grader``)."""
    return load(asg.grader)


def package_dir(asg) -> Path:
    """The folder of the assignment's grader package."""
    return of(asg).folder


def mistakes_file(asg) -> Path | None:
    """The assignment's mistake catalogue, or None when it declares none."""
    declared = of(asg)
    return declared.folder / declared.mistakes if declared.mistakes else None


def plots_of(asg, submission_path) -> dict | None:
    """The numbers behind the submission's feedback plots, or None (no plots module or no data)."""
    module = of(asg).optional("plots")
    return module.collect(submission_path) if module else None


def charts_html(asg, data: dict | None) -> str:
    """The feedback page's plots of ``data``; empty when the assignment draws none."""
    module = of(asg).optional("charts")
    return module.render(data) if module else ""


def server_imports(asg) -> dict[str, tuple[str, ...]]:
    """What a fork server forking this assignment's children imports beyond what every sandboxed
    child runs: ``{"preload": ..., "later": ...}`` (autograder/sandbox/forkserver/client.py
    ``start``'s keyword arguments), in the Lesson's order."""
    declared = of(asg)
    return {"preload": declared.server_preload, "later": declared.server_later}


def realgpu_of(asg):
    """The assignment's real-GPU tier module, or None when it has none."""
    return of(asg).optional("realgpu")


def calibration_of(asg):
    """The assignment's calibration module, or None when it has none."""
    return of(asg).optional("calibrate")
