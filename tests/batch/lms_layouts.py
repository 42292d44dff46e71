"""LMS bulk downloads of a class of the tiny course (tests/fixtures/tiny_course), named as each LMS
names them. Used by tests/batch/test_grade_all_semester.py.

Sources of the naming (the LMS's own code, which its documentation does not spell out):

- Moodle, mod/assign/locallib.php, ``assign::download_submissions``
  (https://github.com/moodle/moodle/blob/main/mod/assign/locallib.php): the prefix is the full name
  with ``_`` made a space, ``_``, the participant id, then ``_assignsubmission_file_``; a folder
  per student and plugin with "Download submissions in folders" (the default since 3.1, whose help
  string reads "Each submission is then put in a separate folder, with the folder structure kept
  for any subfolders, and files are not renamed"), else the prefix on each file's name. Blind
  marking writes ``Participant`` for the name. The online-text plugin adds
  ``<prefix>_assignsubmission_onlinetext_/onlinetext.html``.
- Canvas, lib/content_zipper.rb, ``get_filename`` and ``add_upload_submission``
  (https://github.com/instructure/canvas-lms/blob/master/lib/content_zipper.rb): each file is
  ``<sortable name, lower-cased, only word characters>[_LATE]_<user id>_<attachment id>_<file name>``;
  an anonymized assignment writes ``anon_<anonymous id>`` instead of the name and the user id.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from tests.helpers import tiny_course

TINY = tiny_course.TINY / "submissions"
GOOD = (TINY / "good_adds" / "double.py").read_text()
WRONG = (TINY / "wrong_squares" / "double.py").read_text()


def _zip(path: Path, files: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def moodle(root: Path) -> dict[str, tuple[str, str, float]]:
    """Moodle's download with folders; student folder name -> (name, participant id, points)."""
    _write(root / "Ada Lovelace_12345_assignsubmission_file_" / "double.py", GOOD)
    _write(root / "Ada Lovelace_12345_assignsubmission_onlinetext_" / "onlinetext.html", "<p>done</p>")
    _zip(root / "Charles Babbage_12346_assignsubmission_file_" / "tiny.zip", {"tiny/double.py": WRONG})
    _write(root / "Participant_12347_assignsubmission_file_" / "tiny" / "double.py", GOOD)
    _write(root / "Grace Hopper_12348_assignsubmission_onlinetext_" / "onlinetext.html", "<p>no file</p>")
    return {"Ada_Lovelace_12345": ("Ada Lovelace", "12345", 10.0),
            "Charles_Babbage_12346": ("Charles Babbage", "12346", 0.0),
            "Participant_12347": ("Participant", "12347", 10.0),
            "Grace_Hopper_12348": ("Grace Hopper", "12348", 0.0)}


def moodle_flat(root: Path) -> dict[str, tuple[str, str, float]]:
    """Moodle's download without folders: the prefix on each file's name."""
    _write(root / "Ada Lovelace_12345_assignsubmission_file_double.py", GOOD)
    _write(root / "Charles Babbage_12346_assignsubmission_file_double.py", WRONG)
    _write(root / "Charles Babbage_12346_assignsubmission_file_notes.txt", "my notes")
    return {"Ada_Lovelace_12345": ("Ada Lovelace", "12345", 10.0),
            "Charles_Babbage_12346": ("Charles Babbage", "12346", 0.0)}


def canvas(root: Path) -> dict[str, tuple[str, str, float]]:
    """Canvas's flat download; student folder name -> (name, user id, points)."""
    _write(root / "lovelaceada_1001_5001_double.py", GOOD)
    _zip(root / "babbagecharles_LATE_1002_5002_submission.zip", {"double.py": WRONG})
    _write(root / "hoppergrace_1003_5003_double-1.py", GOOD)      # a re-upload's name
    _write(root / "hoppergrace_1003_5004_README.txt", "read me")
    _write(root / "anon_x7k2q_5005_double.py", GOOD)
    return {"lovelaceada": ("lovelaceada", "1001", 10.0),
            "babbagecharles": ("babbagecharles", "1002", 0.0),
            "hoppergrace": ("hoppergrace", "1003", 10.0),
            "anon_x7k2q": ("anon_x7k2q", "", 10.0)}


LAYOUTS = {"moodle": (moodle, "Moodle download"), "moodle_flat": (moodle_flat, "Moodle download"),
           "canvas": (canvas, "Canvas download")}
