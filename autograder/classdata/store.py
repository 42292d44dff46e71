"""The output folder OUT: atomic per-student writes, content hashes, and what is left to grade.

Per student, ``OUT/<student>/`` holds ``results.json``, ``feedback.html`` and ``.grade-all.json``
(the commit marker: the submission's content hash and the grading key). They are written in that
order, each atomically (a temporary file in the same folder, fsync, rename), so a power cut leaves
either the old marker or the new one; a student counts as done only when the marker matches the
submission's current hash and the grading key. A rerun grades what is missing or changed.

A damaged store heals: a student whose stored results.json does not parse, is missing behind a
marker, or whose files are folders (``damage``) is regraded, and whatever stands where a file must
be written is moved aside (``heal``). An OUT that cannot be written in is refused at once, in one
line (UsageError).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.classdata.discover import JUNK_NAMES, Submission
from autograder.core.atomic import atomic_write  # also re-exported: batch and slurm write through store
from autograder.core.errors import UsageError

MARKER = ".grade-all.json"
RESULTS = "results.json"
FEEDBACK = "feedback.html"
LOCK = ".grade-all.lock"
#: Suffix of what ``heal`` moves aside (``results.json.damaged``, then ``.damaged-2``...).
DAMAGED = ".damaged"
#: Bytes read at a time while hashing.
_CHUNK = 1 << 20


def content_hash(sub: Submission) -> str:
    """sha256 of what the student handed in: a zip's bytes, or a folder's relative paths and file
    bytes (in sorted order, skipping caches such as __pycache__, which grading may create)."""
    h = hashlib.sha256()
    if sub.problem is not None and not sub.path.exists():
        h.update(f"missing:{sub.path.name}".encode())
        return h.hexdigest()
    if sub.path.is_file():
        h.update(b"zip\0")
        _hash_file(h, sub.path)
        return h.hexdigest()
    h.update(b"folder\0")
    for rel, path in sorted(_files(sub.path)):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        _hash_file(h, path)
        h.update(b"\0")
    return h.hexdigest()


def _hash_file(h, path: Path) -> None:
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    except OSError as exc:  # unreadable: hash the reason, so it is regraded once readable
        h.update(f"unreadable:{exc.errno}".encode())


def _files(folder: Path, prefix: str = ""):
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name in JUNK_NAMES or entry.suffix == ".pyc":
            continue
        rel = f"{prefix}{entry.name}"
        if entry.is_dir() and not entry.is_symlink():
            yield from _files(entry, rel + "/")
        elif entry.is_file():
            yield rel, entry


@dataclass(frozen=True)
class Record:
    """What the marker says about one student: the hash graded, the grading key, seconds taken,
    whether every check was graded (``full``; else ``checks`` lists those that were), when
    (``graded_at``, ISO 8601 UTC)."""

    hash: str
    key: str
    seconds: float
    source: str
    full: bool = True
    checks: tuple[str, ...] = ()
    graded_at: str = ""
    #: Who the submission counts for, as the download named them (name, sid, email, lms_id each).
    members: tuple[dict, ...] = ()


class Store:
    """OUT, opened for one grade-all run (an exclusive lock: two runs cannot share one OUT)."""

    def __init__(self, out: Path | str, key: str):
        self.out = Path(out)
        self.key = key
        self.regraded = 0   # score changes this run logged in regrades.csv
        if self.out.exists() and not self.out.is_dir():
            raise UsageError(f"{self.out}: not a folder (--out names a file)")
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{self.out}: cannot create the output folder ({exc.strerror})") from None
        try:
            self._lock = open(self.out / LOCK, "a")
        except OSError as exc:
            raise UsageError(f"{self.out}: cannot write in this --out folder ({exc.strerror})") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise UsageError(f"{self.out}: another grade-all run is writing here (--out)") from None
        try:   # the lock file may be writable in a folder that is not (chmod a-w OUT)
            with tempfile.TemporaryFile(dir=self.out):
                pass
        except OSError as exc:
            self._lock.close()
            raise UsageError(f"{self.out}: cannot write in this --out folder ({exc.strerror})") from None

    def close(self) -> None:
        self._lock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def folder(self, student: str) -> Path:
        return self.out / student

    def record(self, student: str) -> Record | None:
        """The marker of ``student``, or None when missing or unreadable (then: not done)."""
        try:
            data = json.loads((self.folder(student) / MARKER).read_text(encoding="utf-8"))
            return Record(hash=data["hash"], key=data["key"], seconds=float(data["seconds"]),
                          source=str(data.get("source", "")), full=bool(data.get("full", True)),
                          checks=tuple(data.get("checks") or ()),
                          graded_at=str(data.get("graded_at", "")),
                          members=tuple(m for m in data.get("members") or () if isinstance(m, dict)))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def is_done(self, student: str, digest: str, keys=()) -> bool:
        """Whether ``student`` was graded from this exact content with this grading key (or one
        of ``keys``: a full grading also answers a run of some of its checks)."""
        rec = self.record(student)
        return (rec is not None and rec.hash == digest and rec.key in (self.key, *keys)
                and self.results(student) is not None)

    def results(self, student: str) -> dict | None:
        """The stored results.json of ``student``, or None when it is missing, not a file or
        does not parse as a JSON object."""
        try:
            data = json.loads((self.folder(student) / RESULTS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def damage(self, student: str) -> str | None:
        """What is wrong with ``student``'s stored files, as a phrase naming the file (e.g.
        ``OUT/alice/results.json does not parse``), or None when nothing is (no files yet is not
        damage). Damage: the student's folder is a file; results.json, feedback.html or the marker
        is a folder (or anything but a file); the marker or results.json does not parse; the
        marker says graded but results.json is missing."""
        folder = self.folder(student)
        if not folder.exists():
            return None
        if not folder.is_dir():
            return f"{folder} is not a folder"
        for name in (RESULTS, FEEDBACK, MARKER):
            path = folder / name
            if (path.exists() or path.is_symlink()) and not path.is_file():
                return f"{path} is {'a folder' if path.is_dir() else 'something else'}, not a file"
        marker, results = folder / MARKER, folder / RESULTS
        if marker.exists() and self.record(student) is None:
            return f"{marker} is not a readable grade-all marker"
        if results.exists():
            try:
                data = json.loads(results.read_text(encoding="utf-8"))
            except OSError as exc:
                return f"{results} cannot be read ({exc.strerror})"
            except ValueError:
                return f"{results} does not parse (cut short?)"
            if not isinstance(data, dict):
                return f"{results} is not a JSON object"
        elif marker.exists():
            return f"{results} is missing"
        return None

    def heal(self, student: str) -> list[Path]:
        """Move aside whatever would stop ``student``'s files being written: a file where the
        student's folder belongs, anything but a file where results.json, feedback.html or the
        marker belongs. Each is renamed beside itself with ``DAMAGED`` appended (``-2``, ``-3``...
        when taken), never deleted. The new paths; OSError when a rename fails."""
        folder = self.folder(student)
        moved = []
        if (folder.exists() or folder.is_symlink()) and not folder.is_dir():
            moved.append(_aside(folder))
        elif folder.is_dir():
            for name in (RESULTS, FEEDBACK, MARKER):
                path = folder / name
                if (path.exists() or path.is_symlink()) and not path.is_file():
                    moved.append(_aside(path))
        return moved

    def save(self, student: str, digest: str, results: dict, feedback_html: str, *,
             seconds: float, source: str, key: str | None = None, full: bool = True,
             checks=(), graded_at: str = "", members=()) -> None:
        """Write one student's results, feedback page and marker, each atomically, marker last.
        ``key``: the grading key to record (default: this run's); ``full``, ``checks``,
        ``graded_at``, ``members`` (dicts of name, sid, email, lms_id): see Record."""
        folder = self.folder(student)
        self.write_pages(student, results, feedback_html)
        atomic_write(folder / MARKER, json.dumps({
            "hash": digest, "key": key or self.key, "seconds": round(seconds, 3), "source": source,
            "full": full, "checks": sorted(checks), "graded_at": graded_at,
            "members": [dict(m) for m in members]}) + "\n")

    def students(self) -> list[str]:
        """Every student OUT holds a grading of (a folder with a marker), sorted."""
        try:
            return sorted(p.name for p in self.out.iterdir() if (p / MARKER).is_file())
        except OSError:
            return []

    def write_pages(self, student: str, results: dict, feedback_html: str) -> None:
        """Rewrite results.json and feedback.html only (the marker stays: nothing was regraded)."""
        folder = self.folder(student)
        atomic_write(folder / RESULTS, json.dumps(results, indent=2, sort_keys=False) + "\n")
        atomic_write(folder / FEEDBACK, feedback_html)

    def forget(self, student: str) -> None:
        """Drop the marker so ``student`` is regraded (--force, --student)."""
        try:
            (self.folder(student) / MARKER).unlink()
        except FileNotFoundError:
            pass


def _aside(path: Path) -> Path:
    """Rename ``path`` to a free name beside it ending in ``DAMAGED`` (then ``-2``...)."""
    target, n = path.with_name(path.name + DAMAGED), 2
    while target.exists() or target.is_symlink():
        target, n = path.with_name(f"{path.name}{DAMAGED}-{n}"), n + 1
    os.rename(path, target)
    return target
