"""What the engine asks of an assignment's grader package (course.yml's ``grader``), by convention.

    <grader>/__init__.py   may set TORCH_FILES (student files that import torch) and PLOT_FILES
                           (files that draw with matplotlib): their children preload them; and
                           SERVER_PRELOAD and SERVER_LATER (module names): what a fork server
                           imports before it is ready and after, for its children (server_imports)
    <grader>/checks/       the checks, each registered with autograder.core.registry.check
                           (its __init__ may set DEPENDS, student module -> modules its checks also
                           run, and HANDED_IN, other files a submission holds: grading/grade.py)
    <grader>/mistakes.yml  optional: the classic mistakes and the checks that reveal them
    <grader>/plotdata.py   optional: ``collect(submission_path) -> dict | None``, stored in
                           results.json under PLOTS_KEY
    <grader>/charts.py     optional: ``render(data: dict | None) -> str``, HTML of the feedback plots
    <grader>/realgpu.py    optional: the real-GPU tier (autograder/grading/real_gpu.py): MODULES (the student
                           modules it needs), PAIR (a script for the reference's child, with
                           ``device_info(l2_bytes)``), ``measure(student, reference, device, **options)``
                           over modules living in two children, ``judge(figures) -> {check: Verdict}``
    <grader>/calibrate.py  optional: ``calibrate --device sim|cuda`` (``calibrate_sim(profile)``,
                           ``calibrate_cuda()``, ``format_table(...)``; rows with ``problems()``)

Nothing here names an assignment; a new one needs a package and a course.yml entry, no engine change.
"""
from __future__ import annotations

import importlib
from pathlib import Path

#: results.json's top-level key for the feedback plots' numbers (Gradescope ignores unknown keys).
PLOTS_KEY = "plots"


def _optional(asg, name: str):
    """``<grader>.<name>`` when the package has that module, else None."""
    try:
        return importlib.import_module(f"{asg.grader}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"{asg.grader}.{name}", asg.grader):
            return None
        raise


def package_dir(asg) -> Path:
    """The folder of the assignment's grader package."""
    return Path(importlib.import_module(asg.grader).__file__).resolve().parent


def mistakes_file(asg) -> Path | None:
    """The assignment's mistake catalogue, or None when it has none."""
    path = package_dir(asg) / "mistakes.yml"
    return path if path.is_file() else None


def plots_of(asg, submission_path) -> dict | None:
    """The numbers behind the submission's feedback plots, or None (no plots module or no data)."""
    module = _optional(asg, "plotdata")
    return module.collect(submission_path) if module else None


def charts_html(asg, data: dict | None) -> str:
    """The feedback page's plots of ``data``; empty when the assignment draws none."""
    module = _optional(asg, "charts")
    return module.render(data) if module else ""


def server_imports(asg) -> dict[str, tuple[str, ...]]:
    """What a fork server forking this assignment's children imports beyond what every sandboxed
    child runs: ``{"preload": SERVER_PRELOAD, "later": SERVER_LATER}`` of the grader package, in
    its order (autograder/sandbox/forkserver/client.py ``start``'s keyword arguments); an empty
    tuple for one the package does not set."""
    grader = importlib.import_module(asg.grader)
    return {"preload": tuple(getattr(grader, "SERVER_PRELOAD", ())),
            "later": tuple(getattr(grader, "SERVER_LATER", ()))}


def realgpu_of(asg):
    """The assignment's real-GPU tier module, or None when it has none."""
    return _optional(asg, "realgpu")


def calibration_of(asg):
    """The assignment's calibration module, or None when it has none."""
    return _optional(asg, "calibrate")
