"""OUT/extensions.csv: the class's extensions, kept with its grades and used by every run.

``grade-all --extensions FILE`` adds FILE's extensions to OUT/extensions.csv (columns ``student``,
``days``, ``due``, ``granted``: when, ``source``: the file it came from); a later run without the
flag still applies them. A student already in OUT/extensions.csv with a different extension in FILE
is refused in one line: changing an extension is explicit, an edit of OUT/extensions.csv (which
every run reads and validates, naming the file and line of a bad row). Each run prints the
extensions in force.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.core import csvsafe, late
from autograder.core.atomic import atomic_write
from autograder.core.errors import UsageError

NAME = "extensions.csv"
FIELDS = ("student", "days", "due", "granted", "source")


def stored(out: Path) -> dict[str, late.Extension]:
    """The extensions kept in OUT ({} when none were given yet)."""
    path = Path(out) / NAME
    return late.load_extensions(path) if path.exists() else {}


def add(out: Path, given: Path | str, when: str) -> dict[str, late.Extension]:
    """OUT/extensions.csv with the extensions of ``given`` added (the same ones again: nothing to
    do); UsageError when one would change a kept extension. The extensions in force."""
    path = Path(out) / NAME
    kept = stored(out)
    new = late.load_extensions(given)
    for student, ext in new.items():
        if student in kept and kept[student] != ext:
            raise UsageError(f"{given}: {student!r} has {ext.describe()}, but {path} already gives "
                             f"{kept[student].describe()}; to change an extension, edit {path}")
    fresh = {s: e for s, e in new.items() if s not in kept}
    if fresh:
        header = FIELDS
        if path.exists():
            first = path.read_text(encoding="utf-8-sig").splitlines()[:1]
            header = tuple(next(csv.reader(first), [])) or FIELDS
            need = {"days" if e.due is None else "due" for e in fresh.values()}
            if need - set(header):
                raise UsageError(f"{path}: add a {'/'.join(sorted(need - set(header)))} column to "
                                 f"keep the extensions of {given}")
        buf = io.StringIO()
        writer = csvsafe.DictWriter(buf, header)
        if not path.exists():
            writer.writeheader()
        for student, ext in fresh.items():
            row = {"student": student, "granted": when, "source": str(given),
                   "days": csvsafe.number(ext.days, 6) if ext.due is None else "",
                   "due": ext.due.isoformat() if ext.due is not None else ""}
            writer.writerow({k: v for k, v in row.items() if k in header})
        text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
        if text and not text.endswith("\n"):
            text += "\n"
        atomic_write(path, text + buf.getvalue())
    return {**kept, **fresh}


def in_force_line(extensions: dict[str, late.Extension], out: Path) -> str:
    """One line for the TA: the extensions every late verdict of this run uses."""
    shown = ", ".join(f"{s} {e.describe()}" for s, e in sorted(extensions.items()))
    return f"extensions in force ({Path(out) / NAME}): {shown}"
