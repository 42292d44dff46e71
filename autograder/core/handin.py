"""Which files make a submission, and when they were last changed: one answer for ``grade``,
grade-all and the Gradescope package.

A student's entry (a folder or a .zip) is searched at any depth up to ``MAX_DEPTH`` for the file
names the assignment expects. When a folder holds none of them anywhere but holds exactly one
.zip (the work zipped one folder deeper than asked: ``dave/dave.zip``), that zip is the
submission (``source``). ``problem`` says why an entry has nothing gradable, or None;
``newest_time`` is the latest modification time among the files handed in (a zip's entries'
own times, never the zip's or the folder's), the fallback date of a submission when the
platform gives none (autograder/batch/submitted.py).
"""
from __future__ import annotations

import calendar
import datetime as dt
import struct
import time
from pathlib import Path

from autograder.core import terminal, ziplimits

#: Deepest folder nesting searched and accepted, in folders (a zip of a folder of a folder is 2).
MAX_DEPTH = 8
#: Names that carry nothing of the student's work, wherever they appear.
CLUTTER = frozenset({"__MACOSX", ".DS_Store", "Thumbs.db", "__pycache__", ".ipynb_checkpoints",
                     ".pytest_cache", ".git", ".hypothesis", ".mypy_cache", ".ruff_cache"})
#: The zip extra field of Info-ZIP's extended timestamp: the modification time in UTC seconds.
_EXT_TIME = 0x5455


def is_clutter(parts) -> bool:
    """Whether a path of ``parts`` is clutter (a cache, an OS dropping, compiled Python)."""
    return any(part in CLUTTER for part in parts) or bool(parts and parts[-1].endswith((".pyc", ".pyo")))


def listing(path: Path) -> list[str]:
    """The files of the folder or zip at ``path`` as relative POSIX names, clutter dropped, at
    most ``MAX_DEPTH`` folders deep. ZipRefused for a zip over a bound or unreadable; OSError for
    a folder that cannot be read."""
    path = Path(path)
    if path.is_file():
        with ziplimits.open_zip(path) as zf:
            names = [i.filename.replace("\\", "/") for i in zf.infolist() if not i.is_dir()]
        return [n for n in names if not is_clutter(n.split("/")) and n.count("/") <= MAX_DEPTH]
    return [rel for rel, _p in _walk(path, "", MAX_DEPTH)]


def _walk(folder: Path, prefix: str, depth: int):
    for entry in sorted(folder.iterdir()):
        if is_clutter((entry.name,)) or entry.is_symlink():
            continue
        if entry.is_dir():
            if depth > 0:
                yield from _walk(entry, f"{prefix}{entry.name}/", depth - 1)
        elif entry.is_file():
            yield f"{prefix}{entry.name}", entry


def _has(files, names) -> bool:
    wanted = set(names)
    return any(f.rsplit("/", 1)[-1] in wanted for f in files)


def source(path: Path, names) -> Path:
    """What to grade of the entry at ``path``: the entry itself, or the one .zip inside a folder
    that holds none of ``names`` anywhere else (the work zipped one folder deeper)."""
    path = Path(path)
    if not names or not path.is_dir():
        return path
    try:
        files = list(_walk(path, "", MAX_DEPTH))
    except OSError:
        return path
    if _has((rel for rel, _p in files), names):
        return path
    zips = [p for rel, p in files if rel.lower().endswith(".zip")]
    return zips[0] if len(zips) == 1 else path


def problem(path: Path, names, ignore=()) -> str | None:
    """Why the entry at ``path`` (a folder or a zip) has nothing gradable, or None when it has
    something. ``ignore``: file names at its top that are not the student's (platform metadata)."""
    wanted = ", ".join(names)
    src = source(path, names)
    label = terminal.shown(src.name if src != path else path.name)
    try:
        files = [f for f in listing(src) if f not in ignore]
    except ziplimits.ZipRefused as exc:
        if exc.unreadable:
            return f"nothing to grade: {label} is not a readable zip file"
        return f"nothing to grade: {exc}"
    except OSError as exc:
        return f"nothing to grade: cannot read {label} ({exc.strerror})"
    if _has(files, names):
        return None
    where = label if src.is_file() else "the folder"
    deep = _too_deep(src) if not files and src.is_file() else None
    if deep is not None:   # not empty: its files lie deeper than any search goes
        return f"nothing to grade: {label} holds its files more than {MAX_DEPTH} folders deep ({terminal.shown(deep)})"
    if not files:
        return f"nothing to grade: {where} is empty" + (" (or holds only clutter such as __MACOSX)"
                                                       if src.is_file() else "")
    shown = ", ".join(terminal.shown(name) for name in files[:4])
    return f"nothing to grade: {where} holds none of {wanted} (it holds {shown}" \
           f"{' ...' if len(files) > 4 else ''})"


def _too_deep(path: Path) -> str | None:
    """The first file of the zip at ``path`` nested more than ``MAX_DEPTH`` folders deep (clutter
    aside), or None."""
    try:
        with ziplimits.open_zip(path) as zf:
            names = [i.filename.replace("\\", "/") for i in zf.infolist() if not i.is_dir()]
    except (ziplimits.ZipRefused, OSError):
        return None
    return next((n for n in names if n.count("/") > MAX_DEPTH and not is_clutter(n.split("/"))), None)


def notebook_only(files, names) -> str | None:
    """A note when ``files`` hold a notebook but none of the other ``names`` (the modules and data
    files the checks read), else None: the work was left in the notebook, which no check of the
    code reads, so the grading gives zeros that need saying why."""
    wanted = [n for n in names if not n.lower().endswith(".ipynb")]
    books = sorted({f.rsplit("/", 1)[-1] for f in files if f.lower().endswith(".ipynb")})
    if not books or _has(files, wanted):
        return None
    return (f"only a notebook ({', '.join(books)}) was handed in: the grader reads {', '.join(wanted)} "
            f"as files, not the notebook; hand them in beside it")


def newest_time(path: Path, names=()) -> dt.datetime | None:
    """The latest modification time (UTC) among the files handed in at ``path``: a folder's files
    (clutter aside), or a zip's entries' own times (Info-ZIP's UTC extended timestamp where the
    zip has one, else the entry's local date and time read as this machine's). Never the
    folder's or the zip's own time. None when there is no file or it cannot be read."""
    src = source(Path(path), names)
    try:
        if src.is_file():
            with ziplimits.open_zip(src) as zf:
                stamps = [_entry_time(i) for i in zf.infolist()
                          if not i.is_dir() and not is_clutter(i.filename.split("/"))]
        else:
            stamps = [p.stat().st_mtime for _rel, p in _walk(src, "", MAX_DEPTH)]
    except (ziplimits.ZipRefused, OSError):
        return None
    return dt.datetime.fromtimestamp(max(stamps), dt.timezone.utc) if stamps else None


def _entry_time(info) -> float:
    """A zip entry's modification time in seconds since the epoch."""
    extra, i = info.extra, 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        body = extra[i + 4:i + 4 + size]
        if tag == _EXT_TIME and len(body) >= 5 and body[0] & 1:
            return float(struct.unpack_from("<I", body, 1)[0])
        i += 4 + size
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return float(calendar.timegm((*info.date_time, 0, 0, 0)))
