"""``moodle-worksheet``: Moodle's offline grading worksheet from gradebook.csv, matched by the
participant id of a real Moodle download of the tiny course."""
from __future__ import annotations

import csv
import io

import pytest

from autograder.classdata import discover
from autograder.core.errors import UsageError
from autograder.people import moodle_sheet
from tests.batch import lms_layouts
from tests.helpers.tiny_course import TINY, cli
from tests.people import classes

SCORES = {"Ada_Lovelace_12345": 10.0, "Charles_Babbage_12346": 0.0, "Participant_12347": 10.0,
          "Grace_Hopper_12348": 0.0}
MADE = "2026-12-03T10:00:00+00:00"


def _out(tmp_path, make=lms_layouts.moodle, scores=SCORES):
    root, out = tmp_path / "download", tmp_path / "out"
    make(root)
    asg = classes.tiny_asg()
    classes.write_out(out, discover.discover(root, asg), asg, scores)
    return out


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_row_per_participant_in_moodles_columns(tmp_path):
    sheet = moodle_sheet.build(_out(tmp_path), "tiny", MADE)
    assert next(csv.reader(io.StringIO(sheet.text))) == [
        "Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
        "Last modified (submission)", "Last modified (grade)", "Feedback comments"]
    rows = _rows(sheet.text)
    assert [(r["Identifier"], r["Full name"], r["Grade"], r["Maximum Grade"]) for r in rows] == [
        ("Participant 12345", "Ada Lovelace", "10", "10"), ("Participant 12346", "Charles Babbage", "0", "10"),
        ("Participant 12347", "Participant", "10", "10"), ("Participant 12348", "Grace Hopper", "0", "10")]
    assert {r["Last modified (grade)"] for r in rows} == {MADE}
    assert rows[1]["Feedback comments"] == "tiny: 0 of 10 points. Every check is explained on your feedback page."
    assert sheet.filled == 4 and sheet.notes == []


def test_moodles_own_worksheet_keeps_its_rows_and_gets_grades_and_comments(tmp_path):
    out = _out(tmp_path)
    given = tmp_path / "Grades-worksheet.csv"
    given.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        "Participant 12345,Ada Lovelace,ada@uni.edu,Submitted for grading,,10.00,Yes,"
        "\"Thursday, 3 December 2026, 9:00 AM\",-,\n"
        "Participant 12399,Alan Turing,alan@uni.edu,No submission,,10.00,Yes,-,-,\n"
        "Participant 12346,Charles Babbage,cb@uni.edu,Submitted for grading,,10.00,Yes,-,-,old words\n",
        encoding="utf-8")
    sheet = moodle_sheet.build(out, "tiny", MADE, template=given)
    rows = _rows(sheet.text)
    assert [(r["Identifier"], r["Email address"], r["Grade"], r["Last modified (grade)"]) for r in rows] == [
        ("Participant 12345", "ada@uni.edu", "10", "-"), ("Participant 12399", "alan@uni.edu", "", "-"),
        ("Participant 12346", "cb@uni.edu", "0", "-")]
    assert rows[0]["Last modified (submission)"] == "Thursday, 3 December 2026, 9:00 AM"
    assert rows[2]["Feedback comments"].startswith("tiny: 0 of 10 points")
    assert sheet.notes == [f"Participant_12347: participant 12347 is not in {given}; left out",
                           f"Grace_Hopper_12348: participant 12348 is not in {given}; left out"]


def test_a_grade_above_the_worksheets_maximum_grade_is_a_warning(tmp_path):
    """Moodle refuses a grade above the assignment's maximum, so its upload would skip the row
    without a word to the TA (mod/assign/locallib.php, update_grade)."""
    out = _out(tmp_path)
    given = tmp_path / "Grades-worksheet.csv"
    given.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        "Participant 12346,Charles Babbage,cb@uni.edu,Submitted for grading,,5.00,Yes,-,-,\n"
        "Participant 12345,Ada Lovelace,ada@uni.edu,Submitted for grading,,5.00,Yes,-,-,\n"
        "Participant 12347,Participant,p@uni.edu,Submitted for grading,,10.00,Yes,-,-,\n"
        "Participant 12348,Grace Hopper,gh@uni.edu,No submission,,,Yes,-,-,\n", encoding="utf-8")
    sheet = moodle_sheet.build(out, "tiny", MADE, template=given)
    assert [r["Grade"] for r in _rows(sheet.text)] == ["0", "10", "10", "0"]
    assert sheet.notes == [
        f"Ada_Lovelace_12345: grade 10 is above the worksheet's Maximum Grade 5.00 (row 3 of {given}), and "
        f"Moodle skips a grade above the assignment's maximum: set that to 10 (the course's points), then "
        f"download the worksheet again and fill it"]


def test_a_class_without_participant_ids_is_refused_and_a_mixed_one_noted(tmp_path):
    out = _out(tmp_path, make=lambda r: (r / "ann").mkdir(parents=True), scores={"ann": 10.0})
    with pytest.raises(UsageError, match="no Moodle participant id in lms_id"):
        moodle_sheet.build(out, "tiny", MADE)
    given = tmp_path / "not-a-sheet.csv"
    given.write_text("student,grade\nann,10\n")
    with pytest.raises(UsageError, match="not a Moodle grading worksheet"):
        moodle_sheet.build(_out(tmp_path / "m"), "tiny", MADE, template=given)


def test_the_command_writes_the_worksheet_beside_canvas_csv(tmp_path):
    out = _out(tmp_path)
    proc = cli("--course", TINY, "moodle-worksheet", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"moodle-worksheet: 4 grade(s) in {out / 'moodle-worksheet.csv'}")
    assert [r["Grade"] for r in _rows((out / "moodle-worksheet.csv").read_text())] == ["10", "0", "10", "0"]
    proc = cli("--course", TINY, "moodle-worksheet", "--out", tmp_path / "nothing")
    assert proc.returncode == 2 and "no gradebook to read" in proc.stderr and "Traceback" not in proc.stderr
