"""A Moodle download dated by Moodle's grading worksheet (``grade-all --moodle-worksheet``): the
files of a Moodle download carry the time of the download, so without the worksheet an on-time
student whose files lie loose is late; with it, each student is dated by Moodle's ``Last modified
(submission)``, kept on first sight, and a bad zone or date is one line.

The worksheet is written as Moodle's grading table downloads it (mod/assign/gradingtable.php:
``Identifier`` ``Participant <id>``, ``Last modified (submission)`` by ``userdate`` in English,
``-`` when nothing was handed in; autograder/classdata/moodle_dates.py cites it).
"""
from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from tests.batch import record_classes as rc

#: When the TA downloaded the class: days after the due date, so the files alone say late.
DOWNLOADED = dt.datetime(2026, 12, 5, 9, 30, tzinfo=dt.timezone.utc)
ZONE = "America/New_York"
SOURCE = "Moodle grading worksheet: Last modified (submission)"
HEADER = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
          "Last modified (submission),Last modified (grade),Feedback comments\n")


def _row(pid: str, name: str, submitted: str) -> str:
    return (f'Participant {pid},{name},{name.split()[0].lower()}@x.edu,Submitted for grading,,10.00,Yes,'
            f'"{submitted}","-",\n')


def _download(root: Path) -> None:
    """Moodle's download without folders (loose files named with the prefix), and one student in
    a folder with a zip: every file stamped with the download's time, as Moodle's zip leaves them."""
    rc.write(root / "Ada Lovelace_12345_assignsubmission_file_double.py", rc.GOOD)
    rc.write(root / "Bea Byron_12346_assignsubmission_file_double.py", rc.GOOD)
    rc.zip_of(root / "Cy Young_12347_assignsubmission_file_" / "tiny.zip", {"tiny/double.py": rc.GOOD},
              DOWNLOADED)
    rc.stamp_all(root, DOWNLOADED)


def _worksheet(path: Path, rows: str = "") -> Path:
    path.write_text(HEADER + (rows or (
        _row("12345", "Ada Lovelace", "Monday, 30 November 2026, 7:00 AM")        # 12:00 UTC, on time
        + _row("12346", "Bea Byron", "Wednesday, 2 December 2026, 7:00 AM")      # a day late
        + _row("12347", "Cy Young", "Tuesday, 1 December 2026, 6:59 PM")         # 23:59 UTC, on time
        + _row("12399", "Dee Absent", "-"))))
    return path


@pytest.mark.slow
def test_a_loose_file_moodle_student_on_time_by_the_worksheet_is_not_late(tmp_path):
    course = rc.course(tmp_path, late=rc.POLICY)
    src, copy, out = tmp_path / "moodle", tmp_path / "moodle-copy", tmp_path / "out"
    _download(src)
    sheet = _worksheet(tmp_path / "Grades-tiny.csv")
    proc = rc.grade(src, out, course, "--moodle-worksheet", sheet, "--moodle-timezone", ZONE)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"dated by Moodle's grading worksheet {sheet}: 3 of 3" in proc.stderr
    rows = rc.by_student(out / "gradebook.csv")
    assert {s: r["total"] for s, r in rows.items()} == {
        "Ada_Lovelace_12345": "10", "Bea_Byron_12346": "9", "Cy_Young_12347": "10"}
    ada = rows["Ada_Lovelace_12345"]
    assert (ada["submitted_at"], ada["time_source"]) == ("2026-11-30T07:00:00-05:00", SOURCE)
    before = (out / "gradebook.csv").read_text()
    # a copy of the download, graded without the worksheet: the dates were kept on first sight
    subprocess.run(["cp", "-r", str(src), str(copy)], check=True)
    rc.stamp_all(copy, DOWNLOADED.replace(year=2027))
    again = rc.grade(copy, out, course, "--force")
    assert again.returncode == 0, again.stderr[-2000:]
    assert [{k: v for k, v in r.items() if k != "graded_at"} for r in rc.rows(out / "gradebook.csv")] == [
        {k: v for k, v in r.items() if k != "graded_at"} for r in rc.rows_of_text(before)]


@pytest.mark.slow
def test_the_worksheet_given_later_takes_the_place_of_the_download_times(tmp_path):
    course = rc.course(tmp_path, late={**rc.POLICY, "timezone": ZONE})
    src, out = tmp_path / "moodle", tmp_path / "out"
    _download(src)
    first = rc.grade(src, out, course)
    assert first.returncode == 0, first.stderr[-2000:]
    assert rc.by_student(out / "gradebook.csv")["Ada_Lovelace_12345"]["total"] == "6"   # 4 days late
    proc = rc.grade(src, out, course, "--moodle-worksheet", _worksheet(tmp_path / "sheet.csv"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "skipping 3 already graded" in proc.stderr
    totals = {s: r["total"] for s, r in rc.by_student(out / "gradebook.csv").items()}
    assert totals == {"Ada_Lovelace_12345": "10", "Bea_Byron_12346": "9", "Cy_Young_12347": "10"}


def test_a_bad_zone_or_date_or_no_zone_is_one_line_and_nobody_is_graded(tmp_path):
    course = rc.course(tmp_path, late=rc.POLICY)
    src, out = tmp_path / "moodle", tmp_path / "out"
    _download(src)
    sheet = _worksheet(tmp_path / "sheet.csv")
    bad_date = _worksheet(tmp_path / "bad.csv", _row("12345", "Ada Lovelace", "Monday, 30 November 2026, 7:00 AM")
                          + _row("12346", "Bea Byron", "30/11/2026 07:00"))
    cases = [
        (("--moodle-worksheet", sheet, "--moodle-timezone", "Mars/Olympus"),
         "error: --moodle-timezone: unknown time zone 'Mars/Olympus' (give an IANA name such as "
         "Europe/London or America/New_York)"),
        (("--moodle-worksheet", bad_date, "--moodle-timezone", ZONE),
         f"error: {bad_date} row 3: Last modified (submission) '30/11/2026 07:00' is not a date as "
         f"Moodle's English worksheet writes it (e.g. 'Thursday, 3 December 2026, 4:05 PM')"),
        (("--moodle-worksheet", sheet),
         f"error: --moodle-worksheet {sheet}: its times are the local times of the Moodle profile that "
         f"downloaded it; give their zone with --moodle-timezone ZONE (e.g. Europe/London) or "
         f"course.yml's late.timezone"),
        (("--moodle-worksheet", tmp_path / "none.csv", "--moodle-timezone", ZONE),
         f"error: {tmp_path / 'none.csv'}: cannot read the Moodle grading worksheet (No such file or directory)"),
    ]
    for extra, line in cases:
        proc = rc.grade(src, out, course, *extra)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == line
        assert not (out / "gradebook.csv").exists()
    zoned = rc.course(tmp_path / "zoned", late={**rc.POLICY, "timezone": "Nowhere/Land"})
    proc = rc.grade(src, out, zoned)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "key 'assignments.tiny.late.timezone': unknown time zone 'Nowhere/Land'" in proc.stderr
