"""The environment variables that shared/ code and the lab notebook read, each declared once.

A ``Setting`` reads its variable when asked (``get()``), so a value set by a parent process or a
test is seen; an empty value counts as unset. A value the setting refuses raises ``error`` with one
line naming the variable, its value and what it accepts. The grader declares its own variables the
same way (autograder/core/settings.py); students' copies of shared/ cannot import the grader, so
the variables shared/ itself reads live here. Needs only os and dataclasses.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

#: The kinds of value a setting holds: what ``get()`` returns for each.
KINDS = {
    "flag": "bool: 1 (on) or 0 (off)",
    "choice": "str: one of the listed words",
    "names": "tuple of str: comma-separated names",
    "path": "str: a file or folder path",
    "pid": "int: a process id",
    "text": "str: any text",
}


class SettingError(ValueError):
    """An environment variable holds a value its setting refuses (the message names the variable)."""


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``name``, ``kind`` (a key of KINDS), ``default`` (the text used when
    unset or empty; "" means no value: ``get()`` returns None), ``doc`` (what it does, one sentence),
    ``choices`` (for kind 'choice')."""

    name: str
    kind: str
    default: str
    doc: str
    choices: tuple[str, ...] = ()
    #: What a refused value raises (the grader's settings raise its UsageError).
    error: ClassVar[type[Exception]] = SettingError

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"setting {self.name}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.kind == "choice" and self.default not in self.choices:
            raise ValueError(f"setting {self.name}: default {self.default!r} is not one of its choices")

    def raw(self, env=None) -> str:
        """The variable's text in ``env`` (default: this process's environment), else the default."""
        value = (os.environ if env is None else env).get(self.name, "")
        return value if value != "" else self.default

    def get(self, env=None):
        """The validated value (the type KINDS names), or None when unset with no default."""
        text = self.raw(env)
        if text == "":
            return None
        if self.kind == "flag":
            if text not in ("0", "1"):
                raise self.error(f"{self.name}={text!r}: expected 1 (on) or 0 (off)")
            return text == "1"
        if self.kind == "choice":
            if text not in self.choices:
                raise self.error(f"{self.name}={text!r}: expected one of {', '.join(self.choices)}")
            return text
        if self.kind == "names":
            names = tuple(name.strip() for name in text.split(",") if name.strip())
            if not names:
                raise self.error(f"{self.name}={text!r}: expected comma-separated names")
            return names
        if self.kind == "pid":
            if not text.isdigit() or int(text) < 1:
                raise self.error(f"{self.name}={text!r}: expected a process id (a positive whole number)")
            return int(text)
        if "\x00" in text:
            raise self.error(f"{self.name}: the value holds a NUL byte")
        return text


#: JSON file that ``python -m shared.submit``'s pytest plugin writes its report to (shared/submit/).
SUBMIT_REPORT = Setting(
    "WHY17_SUBMIT_REPORT", "path", "",
    "JSON file the public tests' report plugin writes (set by `python -m shared.submit` for its child pytest)")

#: The lab notebook's settings (solutions/why17/why17.ipynb; the student README explains them).
RUN_ON = Setting(
    "WHY17_RUN_ON", "choice", "auto",
    "Where the lab notebook measures: `auto` a GPU when torch sees one, else the CPU; `cuda`; `cpu`; "
    "`sim` the simulated GPU", choices=("auto", "cuda", "cpu", "sim"))
SIM_PROFILE = Setting(
    "WHY17_SIM_PROFILE", "text", "h100-sxm",
    "The simulated GPU's profile when the notebook runs on `sim` (a device key of shared/data/hardware.yml)")
MEASURE_MODELS = Setting(
    "WHY17_MEASURE_MODELS", "names", "",
    "Models of the notebook's Measure table (keys of shared/data/models.yml). Unset: the lesson's "
    "models on a GPU, a tiny config on a CPU")

#: Every setting of this module, in the order the docs table lists them.
ALL = (SUBMIT_REPORT, RUN_ON, SIM_PROFILE, MEASURE_MODELS)
