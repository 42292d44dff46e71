"""A class's entries as any layout yields them: who a submission counts for (``Member``), the
submission (``Submission``), what a layout found (``Layout``), why an entry has nothing to grade
(``problem_of``), and the students' folder names made safe and distinct (``unique``).

autograder/classdata/discover.py reads the grader's own layouts and lms.py an LMS's downloads;
both build these.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import handin

#: Names ignored wherever they appear: editor, OS and Python droppings.
JUNK_NAMES = frozenset({"__MACOSX", ".DS_Store", "__pycache__", ".ipynb_checkpoints", "Thumbs.db",
                        ".git"})
#: How deep inside a submission the gradable files are looked for (a zip of a folder is depth 2):
#: as deep as ``grade`` looks (autograder/core/handin.py).
SEARCH_DEPTH = handin.MAX_DEPTH
#: Where an LMS download's loose files are copied, one folder per student (inside grade-all's OUT).
STAGING = ".lms-staging"
#: Names grade-all writes at the top of OUT; a student folder never takes one of them.
RESERVED = frozenset({"gradebook.csv", "canvas.csv", "summary.json", "summary.html", "grade-all.log",
                      "partial.csv", "regrades.csv", "similarity", "checks.csv", "overrides.csv",
                      "extensions.csv", "submitted.csv", STAGING})
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
    #: Canvas's own word on lateness: True for a file it named ``LATE``, False for one it did not;
    #: None where the layout says nothing.
    marked_late: bool | None = None
    #: The LMS's own time of the submission where a file of the LMS gives one (Moodle's grading
    #: worksheet: autograder/classdata/moodle_dates.py); None where none does.
    lms_time: dt.datetime | None = None

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
    """Why ``path`` (a folder or a zip) has nothing gradable, or None when it has something: the
    intake's one answer (autograder/core/handin.py), as ``grade`` reads the same entry."""
    return handin.problem(path, names, ignore)


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


def names_of(subs) -> dict[str, str]:
    """Every name a student of ``subs`` goes by (LMS id, name, email, SID, folder name) -> their
    folder name under OUT: how overrides.csv and a TA's command may name a student."""
    found: dict[str, str] = {}
    for sub in subs:
        for m in sub.members:
            for name in (m.lms_id, m.name, m.email, m.sid):
                if name:
                    found.setdefault(name, sub.student)
    found.update({sub.student: sub.student for sub in subs})
    return found
