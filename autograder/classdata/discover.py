"""Find the submissions in SUBMISSIONS_DIR and say which input layout they came in.

Five layouts are recognised, in this order:

- ``gradescope``: a Gradescope bulk export: one folder per submission (``submission_<id>/``) and a
  ``submission_metadata.yml`` naming the submitters, at the top (as Gradescope writes it) or inside
  each submission folder;
- ``nbgrader``: nbgrader's exchange layout ``submitted/<student>/<assignment>/`` (SUBMISSIONS_DIR
  may be the course folder holding ``submitted/`` or the ``submitted/`` folder itself);
- ``moodle``: Moodle's "Download all submissions" (mod/assign): one folder per student and
  submission plugin, ``<Full Name>_<participant id>_assignsubmission_file_``, holding the student's
  files or zip (or, with "Download submissions in folders" off, the same prefix on each file);
- ``canvas``: Canvas's "Download Submissions": one flat folder of files named
  ``<login>[_LATE]_<user id>_<attachment id>_<file name>`` (``anon_<id>`` when anonymized);
- ``folders``: one folder or ``.zip`` per student, named after the student.

The LMS layouts are read by autograder/classdata/lms.py: each student is named as the LMS names them
and keeps the LMS's id (``Member.lms_id``), so canvas.csv matches; a student's loose files are
copied into a staging folder (``stage``) to be graded as one folder.

A student whose entry holds nothing gradable is still listed, with ``problem`` set: the grader gives
a zero with that reason and the batch goes on.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import bounded, ziplimits
from autograder.core.errors import UsageError

#: Names ignored wherever they appear: editor, OS and Python droppings.
JUNK_NAMES = frozenset({"__MACOSX", ".DS_Store", "__pycache__", ".ipynb_checkpoints", "Thumbs.db",
                        ".git"})
#: How deep inside a submission the gradable files are looked for (a zip of a folder is depth 2).
SEARCH_DEPTH = 3
GRADESCOPE_METADATA = "submission_metadata.yml"
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


def gradable_names(assignment) -> tuple[str, ...]:
    """The file names a submission of ``assignment`` may hold, from course.yml: each task's
    modules and ``files`` (the Measure table, the lab notebook)."""
    return assignment.handed_in


def discover(root: Path | str, assignment, exclude: Path | None = None,
             stage: Path | None = None) -> Layout:
    """The layout of ``root`` and its submissions, sorted by student. UsageError when ``root`` is
    not a readable folder or holds no submission at all. ``exclude`` (grade-all's OUT, when it lies
    inside ``root``) is passed over with a note. ``stage``: where an LMS download's loose files
    are gathered per student (default: a temporary folder)."""
    from autograder.classdata import lms
    root = Path(root)
    if not root.exists():
        raise UsageError(f"{root}: no such folder (SUBMISSIONS_DIR)")
    if not root.is_dir():
        raise UsageError(f"{root}: not a folder (SUBMISSIONS_DIR must hold one entry per student)")
    try:
        entries = _entries(root)
    except OSError as exc:
        raise UsageError(f"{root}: cannot list the folder ({exc.strerror})") from None
    names = gradable_names(assignment)
    if (root / GRADESCOPE_METADATA).is_file() or any(
            e.is_dir() and (e / GRADESCOPE_METADATA).is_file() for e in entries):
        layout = _gradescope(root, entries, names)
    elif (root / "submitted").is_dir() or _looks_nbgrader(root, entries, assignment.folder):
        layout = _nbgrader(root, assignment.folder, names)
    elif lms.which(entries) == "moodle":
        layout = lms.moodle(root, entries, names, stage)
    elif lms.which(entries) == "canvas":
        layout = lms.canvas(root, entries, names, stage)
    else:
        layout = _folders(root, entries, names)
    if exclude is not None:
        skip = Path(exclude).resolve()
        kept = tuple(s for s in layout.submissions if s.path.resolve() != skip)
        if len(kept) != len(layout.submissions):
            layout = Layout(layout.kind, layout.description, kept,
                            layout.notes + (f"{skip.name}: skipped (it is the --out folder)",))
    if not layout.submissions:
        raise UsageError(f"{root}: no submissions found (expected one folder or .zip per student)")
    return layout


def _entries(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir()
                   if p.name not in JUNK_NAMES and not p.name.startswith(".")),
                  key=lambda p: p.name)


def _looks_nbgrader(root: Path, entries: list[Path], folder: str) -> bool:
    """``root`` is nbgrader's ``submitted/`` itself: named so, or every student folder holds
    ``<folder>/`` and nbgrader's ``timestamp.txt`` is in one of them."""
    dirs = [e for e in entries if e.is_dir()]
    if not dirs:
        return False
    if root.name == "submitted":
        return True
    return (all((d / folder).is_dir() for d in dirs)
            and any((d / folder / "timestamp.txt").is_file() for d in dirs))


def _folders(root: Path, entries: list[Path], names) -> Layout:
    found: dict[str, Path] = {}
    notes = []
    for entry in entries:
        if entry.is_dir() or entry.suffix.lower() == ".zip":
            key = entry.stem if entry.is_file() else entry.name
            if key in found:
                notes.append(f"{entry.name}: skipped; {found[key].name} is graded for {key}")
                continue
            found[key] = entry
        else:
            notes.append(f"{entry.name}: skipped (not a folder or a .zip)")
    subs = _unique([Submission(student=key, path=path, members=(Member(key),),
                               problem=problem_of(path, names), layout="folders")
                    for key, path in found.items()])
    return Layout("folders", f"one folder or .zip per student in {root}", subs, tuple(notes))


def _nbgrader(root: Path, folder: str, names) -> Layout:
    submitted = root / "submitted" if (root / "submitted").is_dir() else root
    subs, notes = [], []
    for entry in _entries(submitted):
        if not entry.is_dir():
            notes.append(f"{entry.name}: skipped (nbgrader keeps one folder per student)")
            continue
        path = entry / folder
        problem = (problem_of(path, names) if path.is_dir()
                   else f"nothing to grade: no {folder}/ folder in submitted/{entry.name}/")
        subs.append(Submission(student=entry.name, path=path, members=(Member(entry.name),),
                               problem=problem, layout="nbgrader"))
    return Layout("nbgrader", f"nbgrader exchange layout {submitted}/<student>/{folder}/",
                  _unique(subs), tuple(notes))


def _gradescope(root: Path, entries: list[Path], names) -> Layout:
    top = _read_metadata(root / GRADESCOPE_METADATA) if (root / GRADESCOPE_METADATA).is_file() else {}
    subs, notes = [], []
    for entry in entries:
        if entry.name == GRADESCOPE_METADATA:
            continue
        if not entry.is_dir():
            notes.append(f"{entry.name}: skipped (a Gradescope export has a folder per submission)")
            continue
        meta = top.get(entry.name)
        # Only the export's own metadata dates a submission: a copy inside the folder came with
        # the student's files and names its submitters at most.
        created = meta.get(":created_at", meta.get("created_at")) if isinstance(meta, dict) else None
        own = entry / GRADESCOPE_METADATA
        if meta is None and own.is_file():
            meta = _read_metadata(own)
        members = _members(meta) or (Member(entry.name),)
        first = members[0]
        key = first.sid or first.email or entry.name
        subs.append(Submission(student=key, path=entry, members=members,
                               problem=problem_of(entry, names, ignore=(GRADESCOPE_METADATA,)),
                               created_at=_stamp_text(created), layout="gradescope"))
    return Layout("gradescope", f"Gradescope export in {root} (a folder per submission, "
                  f"{GRADESCOPE_METADATA})", _unique(subs), tuple(notes))


def _read_metadata(path: Path) -> dict:
    """A Gradescope metadata file as a dict; UsageError (one line) when it is not YAML."""
    try:
        data = bounded.load_yaml(bounded.head(path))
    except (OSError, bounded.Refused) as exc:
        why = exc.reason if isinstance(exc, bounded.Refused) else exc.strerror
        raise UsageError(f"{path}: not a readable Gradescope {GRADESCOPE_METADATA} ({why})") from None
    return data if isinstance(data, dict) else {}


def _stamp_text(value) -> str:
    """Gradescope's created_at as text (YAML may have parsed it into a datetime already)."""
    if value is None:
        return ""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _members(meta) -> tuple[Member, ...]:
    """The submitters of one submission: Gradescope writes Ruby-style keys (``:submitters:``,
    ``:name:``, ``:sid:``, ``:email:``); plain keys are accepted too."""
    if not isinstance(meta, dict):
        return ()
    people = meta.get(":submitters", meta.get("submitters")) or []
    out = []
    for person in people if isinstance(people, list) else []:
        if not isinstance(person, dict):
            continue
        def get(k, person=person):
            return str(person.get(f":{k}", person.get(k)) or "").strip()

        if get("name") or get("sid") or get("email"):
            out.append(Member(name=get("name") or get("email") or get("sid"), sid=get("sid"),
                              email=get("email")))
    return tuple(out)


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


def _unique(subs: list[Submission]) -> tuple[Submission, ...]:
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
