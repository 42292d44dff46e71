"""The grader's environment variables, each declared once: name, type, default and what it does.

Code reads a variable only through its Setting here (``settings.SANDBOX.get()``), never through
``os.environ`` by name; a bad value raises UsageError with one line naming the variable (the
command line prints it and exits 2). Each ``get()`` reads the environment afresh: tests set
variables per test. No variable carries the course: the command line loads it once and passes it
down (worker processes get its file as an argument). shared/ code reads its own variables through shared/settings.py.

``python -m autograder.core.settings`` prints the table of every variable that
docs/maintaining.md carries (tests/core/test_settings.py checks that the two agree).
"""
from __future__ import annotations

from typing import ClassVar

from autograder.core.errors import UsageError
from shared import settings as shared_settings


class Setting(shared_settings.Setting):
    """A grader setting (shared.settings.Setting) whose refused value raises UsageError."""

    error: ClassVar[type[Exception]] = UsageError


SANDBOX = Setting(
    "WHY17_SANDBOX", "choice", "auto",
    "Sandbox mode: `auto` uses namespaces when the kernel allows them and falls back to plain; "
    "`namespaces` stops grading when they are refused; `plain` never tries them "
    "(docs/threat-model.md)",
    choices=("auto", "namespaces", "plain"))
FORKSERVER = Setting(
    "WHY17_FORKSERVER", "flag", "1",
    "0: every sandboxed child is a fresh interpreter instead of a fork of a server that imported "
    "torch once (slower; for debugging the sandbox)")
SIM_SECRET = Setting(
    "WHY17_SIM_SECRET", "text", "",
    "Secret the simulated GPU's per-student seeds derive from; set the same on every grading "
    "machine. Unset: the course's .why17-sim-secret file. Never passed to a sandboxed child")
BATCH_PARENT = Setting(
    "WHY17_BATCH_PARENT", "pid", "",
    "Set by grade-all for its workers: the process id of the grade-all that started them (a worker "
    "whose parent has gone exits)")
ROOT = Setting(
    "WHY17_ROOT", "path", "",
    "Checkout whose grader nbgrader's task cells run; written into nbgrader_config.py by "
    "nbgrader-course. Unset: the checkout of the running code")
PYTHON = Setting(
    "WHY17_PYTHON", "path", "",
    "Python that nbgrader's task cells and the Gradescope package's run_autograder grade with. "
    "Unset: nbgrader's kernel's Python; on Gradescope, the package's venv")

PREGRADED = Setting(
    "WHY17_PREGRADED", "flag", "0",
    "1: `nbgrader autograde` does not run grade-all on submitted/ first (each notebook's first "
    "test cell then runs `grade` itself); the config sets it once it has pre-graded")

#: The grader's own settings.
GRADER = (SANDBOX, FORKSERVER, SIM_SECRET, BATCH_PARENT, ROOT, PYTHON, PREGRADED)
#: The grader's settings, then those shared/ and the lab notebook read, in the order of the docs table.
ALL = (*GRADER, *shared_settings.ALL)


def check() -> None:
    """Read every grader setting once, so a bad value stops a command before it starts work (a
    grade-all worker would otherwise meet it mid-class); UsageError names the first bad one."""
    for setting in GRADER:
        setting.get()


def table() -> str:
    """The Markdown table of ALL: variable, type, default, what it does."""
    rows = ["| Variable | Type | Default | What it does |", "|---|---|---|---|"]
    for s in ALL:
        kind = f"one of {', '.join(f'`{c}`' for c in s.choices)}" if s.choices else s.kind
        default = f"`{s.default}`" if s.default else "unset"
        rows.append(f"| `{s.name}` | {kind} | {default} | {s.doc}. |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table(), end="")
