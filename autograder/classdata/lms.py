"""LMS bulk downloads, read as they come: Moodle's "Download all submissions" and Canvas's
"Download Submissions".

Moodle (mod/assign/locallib.php, ``download_submissions``): the prefix of a student is their full
name (underscores made spaces), ``_``, the participant id (``get_uniqueid_for_user``); then
``_<plugin subtype>_<plugin type>_``: ``Ada Lovelace_12345_assignsubmission_file_``. With
"Download submissions in folders" (the default since Moodle 3.1) that is a folder holding the
student's files as they handed them in; without it, each file's name carries the prefix. Blind
marking writes ``Participant`` for the name; team submissions put ``<group>-`` in front. Files of
other plugins (``assignsubmission_onlinetext_``: onlinetext.html) are not graded.

Canvas (lib/content_zipper.rb, ``get_filename`` and ``add_upload_submission``): one flat folder;
each uploaded file is ``<user name>[_LATE]_<user id>_<attachment id>_<file name>``, where the user
name is the sortable name ("Lovelace, Ada") lower-cased with everything but letters, digits and
``_`` removed ("lovelaceada"), ``LATE`` marks a submission Canvas counted late, and an anonymized
assignment writes ``anon_<anonymous id>`` for the name and the id.

Each student is named as the LMS names them: Moodle ``<Full Name>_<participant id>``, Canvas the
login-like user name (with the user id when two share one); the id goes to ``Member.lms_id``
(canvas.csv's ``ID`` column). A student whose files lie loose (Canvas; Moodle without folders) is
graded from a staging folder of their files under their own names; a student who handed in one
zip is graded from the zip.
"""
from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

from autograder.classdata.entries import Layout, Member, Submission, problem_of, unique
from autograder.core import handin
from autograder.core.errors import UsageError

MOODLE = re.compile(r"^(?P<name>[^_]+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.*)$")
CANVAS = re.compile(r"^(?:(?P<login>.+?)_)??(?:(?P<late>LATE)_)?(?P<uid>\d+|anon_[A-Za-z0-9]+)_"
                    r"(?P<att>\d+)_(?P<file>.+)$")
#: A re-uploaded file's name as it may come back (``bw-1.py``): read as the name without ``-N``.
_RENUMBERED = re.compile(r"^(?P<stem>.+)-\d+(?P<ext>\.[A-Za-z0-9]+)$")


def which(entries: list[Path]) -> str | None:
    """'moodle' or 'canvas' when most entries are named so, else None."""
    if not entries:
        return None
    moodle = sum(1 for e in entries if MOODLE.match(e.name))
    canvas = sum(1 for e in entries if e.is_file() and CANVAS.match(e.name))
    if moodle * 2 > len(entries):
        return "moodle"
    if canvas * 2 > len(entries):
        return "canvas"
    return None


def _stage_root(stage: Path | None) -> Path:
    if stage is not None:
        return Path(stage)
    folder = Path(tempfile.mkdtemp(prefix="why17-lms-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _gather(files: list[tuple[str, Path]], names, folder: Path) -> Path:
    """``files`` (name to give, file) copied into ``folder`` (emptied first), keeping file times;
    a lone zip is graded as it is."""
    if len(files) == 1 and files[0][1].suffix.lower() == ".zip":
        return files[0][1]
    try:
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        given = {n for n, _ in files}
        for name, path in files:
            m = _RENUMBERED.match(name)
            if m and f"{m['stem']}{m['ext']}" in names and f"{m['stem']}{m['ext']}" not in given:
                name = f"{m['stem']}{m['ext']}"
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot gather the download's files of a student here "
                         f"({exc.strerror or exc})") from None
    return folder


def moodle(root: Path, entries: list[Path], names, stage: Path | None):
    people: dict[tuple[str, str], dict] = {}
    notes = []
    for entry in entries:
        m = MOODLE.match(entry.name)
        if not m:
            notes.append(f"{entry.name}: skipped (not named as Moodle names a submission)")
            continue
        person = people.setdefault((m["name"], m["id"]), {"folders": [], "files": [], "other": []})
        if m["plugin"] != "file":
            person["other"].append(entry.name)
        elif entry.is_dir():
            person["folders"].append(entry)
        elif m["file"]:
            person["files"].append((m["file"], entry))
    subs = []
    root_stage = None
    for (name, pid), found in sorted(people.items()):
        key = f"{name}_{pid}"
        member = Member(name=name, lms_id=pid)
        if found["folders"]:
            path = handin.source(found["folders"][0], names)
        elif found["files"]:
            root_stage = root_stage or _stage_root(stage)
            path = _gather(found["files"], names, root_stage / "moodle" / key.replace("/", "_"))
        else:
            what = ", ".join(found["other"])
            subs.append(Submission(student=key, path=root / found["other"][0], members=(member,),
                                   problem=f"nothing to grade: no file submission, only {what}"))
            continue
        subs.append(Submission(student=key, path=path, members=(member,), problem=problem_of(path, names),
                               layout="moodle"))
    return Layout("moodle", f"Moodle download in {root} (<Full Name>_<participant id>_"
                  f"assignsubmission_file_)", unique(subs), tuple(notes))


def canvas(root: Path, entries: list[Path], names, stage: Path | None):
    people: dict[tuple[str, str], list[tuple[str, Path]]] = {}
    late: set[tuple[str, str]] = set()
    notes = []
    for entry in entries:
        m = CANVAS.match(entry.name) if entry.is_file() else None
        if not m:
            notes.append(f"{entry.name}: skipped (not named as Canvas names a submitted file)")
            continue
        who = (m["login"] or m["uid"], m["uid"])
        people.setdefault(who, []).append((m["file"], entry))
        if m["late"]:
            late.add(who)
    logins: dict[str, int] = {}
    for login, _uid in people:
        logins[login] = logins.get(login, 0) + 1
    subs = []
    folder = _stage_root(stage) / "canvas"
    for (login, uid), files in sorted(people.items()):
        key = login if logins[login] == 1 else f"{login}_{uid}"
        path = _gather(sorted(files), names, folder / key)
        lms_id = "" if uid.startswith("anon_") else uid
        subs.append(Submission(student=key, path=path, members=(Member(name=login, lms_id=lms_id),),
                               problem=problem_of(path, names), layout="canvas",
                               marked_late=(login, uid) in late))
    if late:
        notes.append(f"{len(late)} student(s) marked LATE by Canvas: "
                     f"{', '.join(sorted(login for login, _ in late)[:8])} (course.yml's late: block, if "
                     f"any, decides the penalty)")
    return Layout("canvas", f"Canvas download in {root} (<login>[_LATE]_<user id>_<attachment id>_<file>)",
                  unique(subs), tuple(notes))
