"""Submission times: the platform's word first (Canvas's LATE marker, Gradescope's due dates), else
the newest file, recorded in OUT/submitted.csv on first sight and never moved after; and what a
notebook-only submission is told."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from autograder.batch import submitted
from autograder.classdata import dates, discover
from autograder.core import course, handin, late
from autograder.core.errors import UsageError
from tests.batch import lms_layouts

UTC = dt.timezone.utc
FIRST = dt.datetime(2026, 11, 30, 12, tzinfo=UTC)
COPIED = dt.datetime(2027, 1, 5, tzinfo=UTC)


def test_the_first_date_of_a_submission_is_kept_whatever_later_runs_find(tmp_path):
    source = submitted.FROM_FILES
    assert dates.first_seen(tmp_path, "ann", "h1", FIRST, source, "run1") == (FIRST, source)
    assert dates.first_seen(tmp_path, "ann", "h1", COPIED, source, "run2") == (FIRST, source)   # a copy
    assert dates.first_seen(tmp_path, "ann", "h2", COPIED, source, "run2") == (COPIED, source)  # new work
    assert dates.first_seen(tmp_path, "bob", "h1", None, "no time found", "run2") == (None, "no time found")
    assert [line.split(",")[:2] for line in (tmp_path / dates.NAME).read_text().splitlines()] == [
        ["hash", "student"], ["h1", "ann"], ["h2", "ann"], ["h1", "bob"]]   # the same files, another student


def test_moodles_worksheet_date_takes_the_place_of_the_files_and_is_then_kept(tmp_path):
    files, sheet = submitted.FROM_FILES, submitted.MOODLE_SHEET
    assert dates.first_seen(tmp_path, "ada", "h1", COPIED, files, "run1") == (COPIED, files)
    assert dates.first_seen(tmp_path, "ada", "h1", FIRST, sheet, "run2") == (FIRST, sheet)    # the platform's word
    assert dates.first_seen(tmp_path, "ada", "h1", COPIED, files, "run3") == (FIRST, sheet)   # no worksheet now
    later = FIRST + dt.timedelta(days=3)
    assert dates.first_seen(tmp_path, "ada", "h1", later, sheet, "run4") == (FIRST, sheet)    # first word wins
    assert dates.read(tmp_path) == {("ada", "h1"): (FIRST, sheet)}


def test_canvas_says_on_time_or_late_and_its_file_times_date_nothing(tmp_path):
    tiny = type("Asg", (), {"handed_in": ("double.py",), "folder": "tiny"})()
    lms_layouts.canvas(tmp_path / "download")
    layout = discover.discover(tmp_path / "download", tiny, stage=tmp_path / "stage")
    found = {s.student: submitted.submission_time(s, tiny.handed_in) for s in layout.submissions}
    assert found["babbagecharles"] == submitted.Submitted(None, submitted.CANVAS_LATE)
    assert found["lovelaceada"] == submitted.Submitted(None, submitted.CANVAS_ON_TIME)
    policy = late.parse({"due": "2026-12-01T23:59:00Z", "grace_minutes": 15}, "course.yml", "late")
    assert late.just_after_due(policy) == dt.datetime(2026, 12, 2, 0, 14, 1, tzinfo=UTC)
    assert late.just_after_due(policy, late.Extension(days=1)) == dt.datetime(2026, 12, 3, 0, 14, 1, tzinfo=UTC)


def test_gradescope_due_date_and_a_students_extension_there_are_honoured(tmp_path):
    meta = tmp_path / "submission_metadata.json"
    meta.write_text(json.dumps({
        "created_at": "2026-12-04T10:00:00-08:00",
        "assignment": {"due_date": "2026-12-03T23:00:00-08:00", "late_due_date": None},
        "users": [{"name": "Fay", "assignment": {"due_date": "2026-12-05T23:00:00-08:00"}}, {"name": "Gus"}]}))
    policy = late.parse({"due": "2026-11-01T23:59:00Z", "policy": "percent_per_day", "percent_per_day": 10},
                        "course.yml", "late")
    moved, extension, when = submitted.gradescope_policy(meta, policy)
    assert moved.due == dt.datetime(2026, 12, 4, 7, tzinfo=UTC)
    assert extension.due == dt.datetime(2026, 12, 6, 7, tzinfo=UTC)
    verdict = late.apply({"tests": [{"score": 10.0}]}, moved, when.when, when.source, extension)
    assert verdict["score"] == 10.0 and verdict["late"]["extension"].startswith("due moved to 2026-12-05")
    alone = late.apply({"tests": [{"score": 10.0}]}, moved, when.when, when.source)
    assert alone["score"] == 9.0      # a day after Gradescope's due date, not a month after course.yml's
    meta.write_text(json.dumps({"created_at": "2026-12-04T10:00:00Z", "assignment": {"due_date": "soon"}}))
    with pytest.raises(UsageError, match="assignment.due_date"):
        submitted.gradescope_policy(meta, policy)


def test_a_notebook_alone_is_graded_with_a_note_saying_why_it_scores_nothing():
    asg = course.load().assignment("why17")
    note = handin.notebook_only(["work/why17.ipynb"], asg.handed_in)
    assert note.startswith("only a notebook (why17.ipynb) was handed in: the grader reads bw.py, flops.py")
    assert handin.notebook_only(["why17.ipynb", "bw.py"], asg.handed_in) is None
    assert handin.notebook_only(["bw.py"], asg.handed_in) is None
