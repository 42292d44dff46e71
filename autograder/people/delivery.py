"""The class's feedback pages packed as Canvas and Moodle take feedback files in bulk.

Canvas ("Upload submission comments" on the assignment's page, which takes a zip): Canvas reads
each file's name, split at ``_``, and takes its first two all-digit parts as the user id and the
id of one of that user's submitted attachments; a file whose ids match no submission is ignored
(app/models/assignment.rb, ``infer_comment_context_from_filename``; the download names files
``<login>[_LATE]_<user id>_<attachment id>_<file>``: lms.py). Each student's page is packed as
``<user id>_<attachment id>_<login>_<assignment>-feedback.html``, flat, with the ids read from the
download's own file names (the ids first, so a login with digits cannot be read as one). An
anonymized download has no user ids: those students are left out, with a note.

Moodle ("Upload multiple feedback files in a zip", assignfeedback_file): Moodle reads each path
part as ``<full name>_<participant id>_<plugin type>_<plugin name>_`` and gives the files under it
to that participant (mod/assign/feedback/file/importziplib.php, ``is_valid_filename_for_import``).
Each page goes in a folder named as the download names the student's, ``<Full Name>_<participant
id>_assignsubmission_file_/`` (lms.py), so the zip's folders are the download's.

Other layouts (Gradescope shows its own results; nbgrader has ``nbgrader generate_feedback``; a
folder per student) are refused in one line: their pages are OUT/<student>/feedback.html.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.classdata import lms, store
from autograder.classdata.discover import Layout
from autograder.core.errors import UsageError
from autograder.exports import bundle


@dataclass
class Packed:
    """What a pack holds: the ``lms``, the zip ``path``, the ``names`` in it, and a ``notes`` line
    per student left out."""

    lms: str
    path: Path
    names: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _canvas_attachments(root: Path) -> dict[str, tuple[str, str]]:
    """Canvas user id -> (login, the first attachment id), from the download's file names."""
    found: dict[str, tuple[str, str]] = {}
    for entry in sorted(Path(root).iterdir()):
        m = lms.CANVAS.match(entry.name) if entry.is_file() else None
        if m and m["uid"].isdigit():
            login, att = m["login"] or "", m["att"]
            if m["uid"] not in found or int(att) < int(found[m["uid"]][1]):
                found[m["uid"]] = (login, att)
    return found


def entry_names(layout: Layout, root: Path, asg) -> tuple[dict[str, str], list[str]]:
    """Student folder name -> the name its page takes in the zip, and a note per student who
    cannot take one; UsageError when ``layout`` is not a Canvas or Moodle download."""
    page = f"{asg.name}-feedback.html"
    names, notes = {}, []
    if layout.kind == "canvas":
        atts = _canvas_attachments(root)
        for sub in layout.submissions:
            uid = sub.members[0].lms_id if sub.members else ""
            if uid not in atts:
                notes.append(f"{sub.student}: no Canvas user id in the download's names (anonymized?), "
                             f"so Canvas could not match a feedback file; left out")
                continue
            login, att = atts[uid]
            names[sub.student] = f"{uid}_{att}_{login or sub.student}_{page}"
    elif layout.kind == "moodle":
        for sub in layout.submissions:
            m = sub.members[0]
            names[sub.student] = f"{m.name}_{m.lms_id}_assignsubmission_file_/{page}"
    else:
        raise UsageError(f"{root}: a {layout.kind} layout; feedback zips are for Canvas and Moodle "
                         f"downloads (hand out OUT/<student>/{store.FEEDBACK}; Gradescope shows its "
                         f"own results)")
    return names, notes


def pack(out: Path, layout: Layout, root: Path, asg, dest: Path | None = None) -> Packed:
    """Write the zip of every graded student's feedback page (default OUT/feedback-<lms>.zip),
    reproducibly (the same pages give the same bytes) and atomically."""
    names, notes = entry_names(layout, root, asg)
    packed = Packed(layout.kind, Path(dest) if dest else Path(out) / f"feedback-{layout.kind}.zip",
                    notes=notes)
    files = {}
    for student, name in sorted(names.items()):
        try:
            files[name] = (Path(out) / student / store.FEEDBACK).read_bytes()
        except OSError:
            packed.notes.append(f"{student}: no {store.FEEDBACK} in {out} (not graded yet); left out")
    if not files:
        raise UsageError(f"{out}: no feedback page to pack for this {layout.kind} download "
                         f"(run grade-all with --out {out} first)")
    packed.names = sorted(files)
    bundle.write_zip(files, packed.path)
    return packed
