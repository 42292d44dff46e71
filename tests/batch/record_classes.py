"""A class of 15 on the tiny course (tests/fixtures/tiny_course), in every download layout grade-all
reads, with the file times each platform leaves; used by tests/batch/test_grade_all_record.py.

Layouts and their sources: Gradescope's export (a folder per submission and the export's own
``submission_metadata.yml`` at the top, with ``:created_at:``), nbgrader's exchange
(``submitted/<student>/<assignment>/`` with the ``timestamp.txt`` nbgrader writes), Moodle's and
Canvas's downloads as tests/batch/lms_layouts.py builds them (with their LMS code cited there),
and a plain folder of one folder or zip per student. Moodle's download stamps every file with the
time of the download (after the due date here), so its students are dated by the grading
worksheet Moodle writes beside it (``moodle_sheet``: autograder/classdata/moodle_dates.py cites
its columns and date format), given to the first run only.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import os
import shutil
import struct
import zipfile
from pathlib import Path

import yaml

from tests.batch import lms_layouts
from tests.helpers.tiny_course import TINY, cli

GOOD = lms_layouts.GOOD
WRONG = lms_layouts.WRONG
UTC = dt.timezone.utc
DUE = "2026-12-01T23:59:00Z"
#: A day and a half before the due date, and half a day after it (one started day late).
ON_TIME = dt.datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LATE = dt.datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
POLICY = {"due": DUE, "policy": "percent_per_day", "percent_per_day": 10}
#: When the TA downloaded the Moodle class (days after the due date), and the worksheet's zone.
DOWNLOADED = dt.datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
ZONE = "Europe/London"


def course(tmp_path: Path, **extra) -> Path:
    """A copy of the tiny course, its assignment given ``extra`` keys (late:, manual:)."""
    folder = tmp_path / "course"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    data = yaml.safe_load((folder / "course.yml").read_text())
    data["assignments"]["tiny"].update(extra)
    (folder / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def grade(src: Path, out: Path, course_dir: Path, *extra):
    return cli("grade-all", src, "--out", out, "--course", course_dir, "--jobs", "1", *extra)


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def rows_of_text(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def by_student(path: Path) -> dict[str, dict]:
    return {r["student"]: r for r in rows(path)}


def write(path: Path, text: str, when: dt.datetime = ON_TIME) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (when.timestamp(), when.timestamp()))
    return path


def zip_of(path: Path, files: dict[str, str], when: dt.datetime = ON_TIME) -> Path:
    """A zip whose entries carry ``when`` as zip -r writes it (local time and Info-ZIP's UTC stamp)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, when.timetuple()[:6])
            info.extra = struct.pack("<HHBI", 0x5455, 5, 1, int(when.timestamp()))
            zf.writestr(info, text)
    return path


def stamp_all(root: Path, when: dt.datetime) -> None:
    for path in root.rglob("*"):
        os.utime(path, (when.timestamp(), when.timestamp()))


def folders(root: Path) -> dict[str, float]:
    """One folder or zip per student: student -> expected total under POLICY."""
    write(root / "ann" / "double.py", GOOD)
    zip_of(root / "bob.zip", {"tiny/double.py": GOOD}, LATE)
    zip_of(root / "cid" / "cid.zip", {"cid/work/deep/tiny/double.py": GOOD})   # a folder deeper, zipped
    write(root / "nia" / "work" / "tiny.ipynb", "{}")   # the notebook alone: a zero that says why
    return {"ann": 10.0, "bob": 9.0, "cid": 10.0, "nia": 0.0}


def nbgrader(root: Path) -> dict[str, float]:
    for name, when in (("dee", ON_TIME), ("eve", LATE)):
        folder = root / "submitted" / name / "tiny"
        write(folder / "double.py", GOOD, ON_TIME)   # nbgrader's timestamp dates it, not the file
        write(folder / "timestamp.txt", when.strftime("%Y-%m-%d %H:%M:%S.%f UTC") + "\n")
    return {"dee": 10.0, "eve": 9.0}


def moodle_sheet(path: Path, times: dict[str, dt.datetime | None]) -> Path:
    """Moodle's grading worksheet: participant id -> Last modified (submission), written as
    Moodle's English ``userdate`` writes it in ZONE ("-" for none)."""
    import zoneinfo
    lines = ["Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
             "Last modified (submission),Last modified (grade),Feedback comments"]
    for pid, when in times.items():
        t = when.astimezone(zoneinfo.ZoneInfo(ZONE)) if when else None
        shown = f"{t:%A}, {t.day} {t:%B %Y}, {int(f'{t:%I}')}:{t:%M %p}" if t else "-"
        lines.append(f'Participant {pid},Someone {pid},{pid}@x.edu,Submitted for grading,,10.00,Yes,"{shown}",-,')
    path.write_text("\n".join(lines) + "\n")
    return path


def _sheet_of(root: Path) -> Path:
    return root.parent / f"{root.name}-worksheet.csv"


def moodle(root: Path) -> dict[str, float]:
    expected = lms_layouts.moodle(root)
    stamp_all(root, DOWNLOADED)
    moodle_sheet(_sheet_of(root), {"12345": ON_TIME, "12346": ON_TIME, "12347": LATE, "12348": ON_TIME})
    points = {k: v[2] for k, v in expected.items()}
    points["Participant_12347"] = 9.0
    return points


def moodle_flat(root: Path) -> dict[str, float]:
    """Moodle's download without folders: Ada's and Charles's files lie loose, named with the prefix."""
    expected = lms_layouts.moodle_flat(root)
    stamp_all(root, DOWNLOADED)
    moodle_sheet(_sheet_of(root), {"12345": ON_TIME, "12346": LATE, "12399": None})
    return {k: v[2] for k, v in expected.items()}


def first_run_args(name: str, root: Path) -> tuple:
    """What the first run of layout ``name`` is given besides the download (Moodle's worksheet)."""
    if name.startswith("moodle"):
        return ("--moodle-worksheet", _sheet_of(root), "--moodle-timezone", ZONE)
    return ()


def canvas(root: Path) -> dict[str, float]:
    expected = lms_layouts.canvas(root)
    stamp_all(root, LATE)   # Canvas writes each file as it zips the download: the times say nothing
    return {k: v[2] for k, v in expected.items()}


def gradescope(root: Path) -> dict[str, float]:
    write(root / "submission_1" / "double.py", GOOD)
    write(root / "submission_2" / "double.py", GOOD)
    lines = []
    for sub, when, people in (("submission_1", ON_TIME, (("Fay Group", "501"), ("Gus Group", "502"))),
                              ("submission_2", LATE, (("Hal Solo", "503"),))):
        lines += [f"{sub}:", f"  :created_at: {when.isoformat()}", "  :submitters:"]
        for name, sid in people:
            lines += [f"  - :name: {name}", f"    :sid: '{sid}'", f"    :email: {sid}@x.edu"]
    write(root / "submission_metadata.yml", "\n".join(lines) + "\n")
    return {"501": 10.0, "503": 9.0}


LAYOUTS = {"folders": folders, "nbgrader": nbgrader, "moodle": moodle, "moodle_flat": moodle_flat,
           "canvas": canvas, "gradescope": gradescope}
