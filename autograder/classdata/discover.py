"""Find the submissions in SUBMISSIONS_DIR and say which input layout they came in.

Five layouts are recognised, in this order:

- ``gradescope``: a Gradescope bulk export: one folder per submission (``submission_<id>/``) and a
  ``submission_metadata.yml`` at the top naming the submitters, as Gradescope writes it. Only that
  file decides the layout and who a submission belongs to: one inside a student's folder is the
  student's own file and is never read (a student cannot take another's name or SID, or name a
  group);
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

from pathlib import Path

from autograder.classdata import lms
from autograder.classdata.entries import JUNK_NAMES, Layout, Member, Submission, problem_of, unique
from autograder.classdata.entries import RESERVED as RESERVED
from autograder.classdata.entries import SEARCH_DEPTH as SEARCH_DEPTH
from autograder.classdata.entries import STAGING as STAGING
from autograder.classdata.entries import safe_name as safe_name
from autograder.core import bounded
from autograder.core.errors import UsageError

GRADESCOPE_METADATA = "submission_metadata.yml"


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
    if (root / GRADESCOPE_METADATA).is_file():   # the export's own file, never one a student placed
        layout = _gradescope(root, entries, names)
    elif (root / "submitted").is_dir() or _looks_nbgrader(root, entries, assignment.folder):
        layout = _nbgrader(root, assignment.folder, names)
    elif lms.which(entries) == "moodle":
        layout = lms.moodle(root, entries, names, stage)
    elif lms.which(entries) == "canvas":
        layout = lms.canvas(root, entries, names, stage)
    else:
        _refuse_a_class_of_classes(root, entries, assignment.folder, names)
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


def _refuse_a_class_of_classes(root: Path, entries: list[Path], folder: str, names) -> None:
    """UsageError when most folders of ``root`` are classes themselves (an export, a download,
    nbgrader's layout, or a folder of two or more gradable entries with none of the expected
    files at its own top): grade-all was pointed one level too high, and grading would make
    each class one student."""
    dirs = [e for e in entries if e.is_dir()]
    classes = [d for d in dirs if _looks_like_a_class(d, folder, names)]
    if dirs and len(classes) * 2 > len(dirs):
        shown = ", ".join(d.name for d in classes[:4]) + (" ..." if len(classes) > 4 else "")
        raise UsageError(f"{root}: a folder of classes, not of students ({shown} each hold "
                         f"submissions of their own); point SUBMISSIONS_DIR at one of them")


def _looks_like_a_class(entry: Path, folder: str, names) -> bool:
    from autograder.classdata import lms
    try:
        inside = _entries(entry)
    except OSError:
        return False
    if any(p.name in names for p in inside):
        return False
    if ((entry / GRADESCOPE_METADATA).is_file() or (entry / "submitted").is_dir()
            or _looks_nbgrader(entry, inside, folder) or lms.which(inside)):
        return True
    gradable = [p for p in inside if (p.is_dir() or p.suffix.lower() == ".zip")
                and problem_of(p, names) is None]
    return len(gradable) >= 2


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
    subs = unique([Submission(student=key, path=path, members=(Member(key),),
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
                  unique(subs), tuple(notes))


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
        # Only the export's own metadata names and dates a submission: a file inside the folder
        # came with the student's files and is theirs, never read.
        created = meta.get(":created_at", meta.get("created_at")) if isinstance(meta, dict) else None
        members = _members(meta) or (Member(entry.name),)
        first = members[0]
        key = first.sid or first.email or entry.name
        subs.append(Submission(student=key, path=entry, members=members,
                               problem=problem_of(entry, names, ignore=(GRADESCOPE_METADATA,)),
                               created_at=_stamp_text(created), layout="gradescope"))
    return Layout("gradescope", f"Gradescope export in {root} (a folder per submission, "
                  f"{GRADESCOPE_METADATA})", unique(subs), tuple(notes))


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


