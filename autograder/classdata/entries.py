"""A class's entries as any layout yields them: who a submission counts for (``Member``), the
submission (``Submission``), what a layout found (``Layout``), why an entry has nothing to grade
(``problem_of``), and the students' folder names made safe and distinct (``unique``).

autograder/classdata/discover.py reads the grader's own layouts and lms.py an LMS's downloads;
both build these.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import ziplimits

#: Names ignored wherever they appear: editor, OS and Python droppings.
JUNK_NAMES = frozenset({"__MACOSX", ".DS_Store", "__pycache__", ".ipynb_checkpoints", "Thumbs.db",
                        ".git"})
#: How deep inside a submission the gradable files are looked for (a zip of a folder is depth 2).
SEARCH_DEPTH = 3
#: Where an LMS download's loose files are copied, one folder per student (inside grade-all's OUT).
STAGING = ".lms-staging"
#: Names grade-all writes at the top of OUT; a student folder never takes one of them.
RESERVED = frozenset({"gradebook.csv", "canvas.csv", "summary.json", "summary.html", "grade-all.log",
                      "partial.csv", "regrades.csv", "similarity", "checks.csv", "overrides.csv",
                      "extensions.csv", STAGING})
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")


@dataclass(frozen=True)
class Member:
    """One person a submission counts for (a Gradescope group has several)."""

    name: str
    sid: str = ""
    email: str = ""
    lms_id: str = ""   # the LMS's own id of the person (Canvas user id, Moodle participant id)


@dataclass(frozen=True)
class Submission:
    """One student's entry.

    ``student`` is the folder name under OUT (file-system safe, unique); ``path`` the folder or zip
    to grade; ``problem`` why there is nothing to grade (then the student gets a zero with it).
    """

    student: str
    path: Path
    members: tuple[Member, ...]
    problem: str | None = None
    #: Gradescope's submission time: created_at of the export's top submission_metadata.yml (one
    #: inside a submission folder is the student's own and dates nothing).
    created_at: str = ""
    #: The layout it was found in ('gradescope', 'nbgrader', 'folders'; '' when not discovered).
    layout: str = ""

    @property
    def kind(self) -> str:
        return "zip" if self.path.suffix.lower() == ".zip" and self.path.is_file() else "folder"


@dataclass(frozen=True)
class Layout:
    """What was found: the layout's ``kind``, a one-line ``description``, the submissions, and
    ``notes`` on entries that were passed over (each a line for the instructor)."""

    kind: str
    description: str
    submissions: tuple[Submission, ...]
    notes: tuple[str, ...] = field(default=())


def problem_of(path: Path, names, ignore=()) -> str | None:
    """Why ``path`` (a folder or a zip) has nothing gradable, or None when it has something."""
    wanted = ", ".join(names)
    if path.is_file():
        try:
            with ziplimits.open_zip(path) as zf:
                members = [m for m in zf.namelist() if not m.endswith("/")]
        except ziplimits.ZipRefused as exc:
            if exc.unreadable:
                return f"nothing to grade: {path.name} is not a readable zip file"
            return f"nothing to grade: {exc}"
        seen = [m for m in members if not any(part in JUNK_NAMES for part in m.split("/"))
                and m.count("/") < SEARCH_DEPTH]
        if any(m.rsplit("/", 1)[-1] in names for m in seen):
            return None
        if not seen:
            return f"nothing to grade: {path.name} is empty"
        return f"nothing to grade: {path.name} holds none of {wanted}"
    try:
        seen = list(_walk(path, SEARCH_DEPTH))
    except OSError as exc:
        return f"nothing to grade: cannot read {path.name} ({exc.strerror})"
    seen = [p for p in seen if p.name not in ignore]
    if any(p.name in names for p in seen):
        return None
    if not seen:
        return "nothing to grade: the folder is empty"
    return f"nothing to grade: the folder holds none of {wanted}"


def _walk(folder: Path, depth: int):
    for entry in folder.iterdir():
        if entry.name in JUNK_NAMES:
            continue
        if entry.is_dir():
            if depth > 1:
                yield from _walk(entry, depth - 1)
        else:
            yield entry


def safe_name(name: str) -> str:
    """``name`` as a folder name that cannot escape OUT: letters, digits and ``._@+-`` only."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "student"
    return cleaned


def unique(subs: list[Submission]) -> tuple[Submission, ...]:
    """Make every ``student`` a safe, distinct folder name (a suffix -2, -3... on clashes)."""
    out, used = [], set()
    for sub in sorted(subs, key=lambda s: s.student):
        base = safe_name(sub.student)
        if base.lower() in RESERVED:
            base = f"{base}-student"
        key, n = base, 2
        while key.lower() in used:
            key, n = f"{base}-{n}", n + 1
        used.add(key.lower())
        out.append(dataclasses.replace(sub, student=key))
    return tuple(out)
