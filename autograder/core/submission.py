"""A submission as a private folder: copied from a folder or safely extracted from a .zip.

Refused with one line (SubmissionError, exit 2 on the command line): no such path, a zip over the
bounds checked before it is read (autograder/core/ziplimits.py) or unreadable, absolute paths,
'..', symlinks, too many files, absurd sizes, names the file system cannot hold (a part longer
than 255 bytes, control characters, not UTF-8, empty), a name that is both a file and a folder
or appears twice. Harmless clutter (__MACOSX, .DS_Store, caches such as __pycache__, .hypothesis
and .ipynb_checkpoints, *.pyc) is dropped.
Students hand in their files one or more folders deep (the whole bundle zipped, a folder named
like the assignment, a folder holding only their zip: autograder/core/handin.py, the one answer
grade-all and the Gradescope package share): the submission is graded from the shallowest folder that holds the most of
the files the assignment expects, and ``found_in`` says which.
"""
from __future__ import annotations

import hashlib
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.core import handin, terminal, ziplimits
from autograder.core.errors import UsageError

#: Most files a submission may hold.
MAX_FILES = 500
#: Largest single file, in bytes (a notebook with plots is a few MB).
MAX_FILE_BYTES = 20 * 2**20
#: Largest submission in total, in bytes.
MAX_TOTAL_BYTES = 50 * 2**20
#: Deepest folder nesting accepted.
MAX_DEPTH = handin.MAX_DEPTH
#: Longest part of a path, in bytes of UTF-8 (Linux's NAME_MAX).
MAX_NAME_BYTES = 255
#: Longest whole path inside a submission, in characters.
MAX_PATH_CHARS = 1024
#: Names that carry nothing of the student's work and are dropped silently.
CLUTTER = handin.CLUTTER


class SubmissionError(UsageError):
    """A submission that cannot be graded safely; the message names the path and the problem."""


@dataclass
class Submission:
    """A private copy of one submission. ``folder`` holds its files; ``seed`` hashes their contents;
    ``found_in`` is the folder, relative to the submission's top ('' for the top itself), where
    its files were found."""

    folder: Path
    files: tuple[str, ...]
    seed: int
    origin: str
    _tmp: Path
    found_in: str = ""

    def scratch(self, name: str) -> Path:
        """A path ``name`` beside the private copy (not inside it), removed with it."""
        return self._tmp / name

    def cleanup(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


def load(path: Path | str, expected: tuple[str, ...] | list[str] = ()) -> Submission:
    """Copy or extract the submission at ``path`` into a fresh private folder.

    ``expected`` names the files the assignment asks for ('bw.py', 'measurements.json'); the
    submission is graded from the folder that holds them (see ``locate``).
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise SubmissionError(f"{path}: no such file or folder")
    if not path.is_symlink():   # the work zipped one folder deeper: grade that zip, as grade-all does
        path = handin.source(path, expected)
    tmp = Path(tempfile.mkdtemp(prefix="grader-sub-"))
    dest = tmp / "submission"
    dest.mkdir()
    try:
        if path.is_symlink():
            raise SubmissionError(f"{path}: is a symlink; submit a folder or a .zip")
        if path.is_dir():
            _copy_folder(path, dest)
        elif path.suffix.lower() == ".zip":
            _extract_zip(path, dest)
        else:
            raise SubmissionError(f"{path}: not a folder or a .zip")
        folder = locate(dest, expected)
        files = tuple(sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()))
        found_in = folder.relative_to(dest).as_posix()
        return Submission(folder=folder, files=files, seed=_seed(folder, files), origin=str(path), _tmp=tmp,
                          found_in="" if found_in == "." else found_in)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _is_clutter(parts) -> bool:
    return handin.is_clutter(parts)


def _copy_folder(src: Path, dest: Path) -> None:
    count = total = 0
    for item in sorted(src.rglob("*")):
        rel = item.relative_to(src)
        if _is_clutter(rel.parts):
            continue
        bad = _bad_name(rel.parts)
        if bad:
            raise SubmissionError(f"{src}: {_show(rel.as_posix())} {bad}")
        if item.is_symlink():
            raise SubmissionError(f"{src}: {rel.as_posix()} is a symlink; symlinks are refused")
        if len(rel.parts) > MAX_DEPTH:
            raise SubmissionError(f"{src}: {rel.as_posix()} is nested too deeply")
        if item.is_dir():
            continue
        if not item.is_file():
            raise SubmissionError(f"{src}: {rel.as_posix()} is not a regular file")
        size = item.stat().st_size
        count, total = count + 1, total + size
        _check_sizes(src, rel.as_posix(), size, count, total)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item, target)


def _extract_zip(src: Path, dest: Path) -> None:
    try:
        archive = ziplimits.open_zip(src)
    except ziplimits.ZipRefused as exc:
        raise SubmissionError(f"{src}: {exc.reason}") from None
    with archive:
        count = total = 0
        entries, files, folders = [], set(), set()
        for info in archive.infolist():
            name = info.filename
            pure = PurePosixPath(name.replace("\\", "/"))
            if name.startswith(("/", "\\")) or pure.is_absolute() or (len(name) > 1 and name[1] == ":"):
                raise SubmissionError(f"{src}: entry {_show(name)} has an absolute path; refused")
            if ".." in pure.parts:
                raise SubmissionError(f"{src}: entry {_show(name)} climbs out with '..'; refused")
            bad = _bad_name(pure.parts)
            if bad:
                raise SubmissionError(f"{src}: entry {_show(name)} {bad}")
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise SubmissionError(f"{src}: entry {_show(name)} is a symlink; refused")
            if _is_clutter(pure.parts):
                continue
            if len(pure.parts) > MAX_DEPTH:
                raise SubmissionError(f"{src}: entry {_show(name)} is nested too deeply")
            folders.update(pure.parents[i].parts for i in range(len(pure.parts) - 1))
            if info.is_dir():
                folders.add(pure.parts)
                continue
            if pure.parts in files:
                raise SubmissionError(f"{src}: entry {_show(name)} appears twice in the zip")
            files.add(pure.parts)
            count, total = count + 1, total + info.file_size
            _check_sizes(src, name, info.file_size, count, total)
            entries.append((info, pure))
        clash = sorted(files & folders)
        if clash:
            raise SubmissionError(f"{src}: {_show('/'.join(clash[0]))} is both a file and a folder in the zip")
        for info, pure in entries:
            target = dest.joinpath(*pure.parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as fin, open(target, "wb") as fout:
                    # Read at most the declared size + 1: a lying header cannot fill the disk.
                    data = fin.read(MAX_FILE_BYTES + 1)
                    if len(data) > MAX_FILE_BYTES:
                        raise SubmissionError(f"{src}: entry {_show(info.filename)} is larger than "
                                              f"{MAX_FILE_BYTES // 2**20} MiB")
                    fout.write(data)
            except ziplimits.READ_ERRORS as exc:
                raise SubmissionError(f"{src}: unreadable zip entry {_show(info.filename)} "
                                      f"({ziplimits.one_line(exc)})") from None


def _bad_name(parts: tuple[str, ...]) -> str | None:
    """What makes a path of ``parts`` one the file system cannot hold or a reader cannot show;
    None when it is fine."""
    if not parts:
        return "has an empty name"
    if sum(len(p) + 1 for p in parts) > MAX_PATH_CHARS:
        return f"has a path longer than {MAX_PATH_CHARS} characters"
    for part in parts:
        try:
            size = len(part.encode("utf-8"))
        except UnicodeEncodeError:
            return "has a name that is not UTF-8"
        if size > MAX_NAME_BYTES:
            return f"has a name part of {size} bytes, more than the file system's {MAX_NAME_BYTES}"
        if any(ord(c) < 32 or ord(c) == 127 for c in part):
            return "has a control character in its name"
    return None


def _show(name: str) -> str:
    """``name`` for a one-line message: quoted, escaped, its last 80 characters at most."""
    return terminal.shown(name, 80, quoted=True)


def _check_sizes(src, name, size, count, total) -> None:
    if count > MAX_FILES:
        raise SubmissionError(f"{src}: more than {MAX_FILES} files; submit only your work")
    if size > MAX_FILE_BYTES:
        raise SubmissionError(f"{src}: {name} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    if total > MAX_TOTAL_BYTES:
        raise SubmissionError(f"{src}: more than {MAX_TOTAL_BYTES // 2**20} MiB in total")


def locate(top: Path, expected) -> Path:
    """The folder under ``top`` to grade: the shallowest holding any of the ``expected`` file names
    (at one depth: the one holding the most, then the first by name); with none anywhere, ``top``
    unwrapped of lone top folders."""
    wanted = set(expected)
    best, best_key = None, None
    if wanted:
        for folder in [top, *sorted(p for p in top.rglob("*") if p.is_dir())]:
            found = sum((folder / name).is_file() for name in wanted)
            key = (len(folder.relative_to(top).parts), -found, folder.as_posix())
            if found and (best_key is None or key < best_key):
                best, best_key = folder, key
    return best if best is not None else _unwrap(top)


def _unwrap(folder: Path) -> Path:
    """Descend into a lone top folder (students often zip the assignment's folder itself)."""
    while True:
        entries = list(folder.iterdir())
        if len(entries) == 1 and entries[0].is_dir():
            folder = entries[0]
            continue
        return folder


def _seed(folder: Path, files) -> int:
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256((folder / rel).read_bytes()).digest())
    return int.from_bytes(digest.digest()[:8], "big") >> 1
