"""Late work: course.yml's due date, grace period and policy (none, percent per day with a cap,
zero after a cutoff), validated on load; the submission time from Gradescope's metadata,
nbgrader's timestamp.txt or the newest file time (the output says which); per-student extensions
from a CSV; raw score, penalty and final score in results.json, the gradebook and the feedback page.

The end-to-end tests grade one real class per timestamp source once (one quick check), then
change the policy in course.yml: late work is applied again without regrading."""
from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.batch import submitted
from autograder.classdata import discover
from autograder.core import course, late
from autograder.core.errors import UsageError
from autograder.lessons.why17.fixtures.classes import measurements_json, write_student
from tests.helpers.paths import ROOT

UTC = dt.timezone.utc
DUE = dt.datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
ON_TIME = dt.datetime(2026, 12, 2, 0, 10, tzinfo=UTC)      # 11 min late: inside the 15 min grace
LATE = dt.datetime(2026, 12, 4, 10, 0, tzinfo=UTC)         # 58 h late: 3 started days
POLICIES = {
    "none": {"policy": "none"},
    "percent_per_day": {"policy": "percent_per_day", "percent_per_day": 10, "max_percent": 25},
    "zero_after": {"policy": "zero_after", "cutoff": "2026-12-03T23:59:00Z"},
}
#: Percent of the raw score each policy takes from (on time, late) submissions.
EXPECTED = {"none": (0, 0), "percent_per_day": (0, 25), "zero_after": (0, 100)}


def policy(**extra) -> late.LatePolicy:
    return late.parse({"due": "2026-12-01T23:59:00Z", "grace_minutes": 15, **extra}, "course.yml",
                      "assignments.why17.late")


# --- the policy -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(POLICIES))
def test_each_policy_charges_late_work_only(name):
    rules = policy(**POLICIES[name])
    assert late.penalty(rules, ON_TIME).percent == EXPECTED[name][0]
    assert late.penalty(rules, LATE).percent == EXPECTED[name][1]
    assert late.penalty(rules, LATE).days == 3
    assert late.penalty(rules, DUE - dt.timedelta(days=1)).days == 0


def test_percent_per_day_counts_started_days_up_to_the_cap():
    rules = policy(policy="percent_per_day", percent_per_day=10, max_percent=25)
    assert [late.penalty(rules, DUE + dt.timedelta(hours=h)).percent for h in (1, 24, 25, 49, 200)] == [
        10, 10, 20, 25, 25]
    # grace forgives, it does not move the due date: 20 min late is day 1
    assert late.penalty(rules, DUE + dt.timedelta(minutes=20)).percent == 10


def test_zero_after_gives_full_credit_until_the_cutoff():
    rules = policy(policy="zero_after", cutoff="2026-12-03T23:59:00Z")
    assert late.penalty(rules, dt.datetime(2026, 12, 3, 23, 0, tzinfo=UTC)).percent == 0
    assert late.penalty(rules, dt.datetime(2026, 12, 4, 0, 0, tzinfo=UTC)).percent == 100


def test_an_extension_moves_the_due_date_and_the_cutoff():
    rules = policy(policy="zero_after", cutoff="2026-12-03T23:59:00Z")
    assert late.penalty(rules, LATE, late.Extension(days=1)).percent == 0           # cutoff moved too
    assert late.penalty(rules, LATE, late.Extension(days=3)).days == 0
    moved = late.Extension(due=late.parse_time("2026-12-04T12:00:00Z", "x"))
    assert late.penalty(rules, LATE, moved).days == 0


@pytest.mark.parametrize("raw, message", [
    ({"grace_minutes": 5}, "late.due' is missing"),
    ({"due": "2026-12-01 23:59"}, "no UTC offset"),
    ({"due": "next friday"}, "is not a date and time"),
    ({"due": "2026-12-01T23:59Z", "policy": "half"}, "must be one of none, percent_per_day, zero_after"),
    ({"due": "2026-12-01T23:59Z", "policy": "percent_per_day"}, "percent_per_day' must be above 0"),
    ({"due": "2026-12-01T23:59Z", "policy": "zero_after"}, "cutoff' is missing"),
    ({"due": "2026-12-01T23:59Z", "policy": "zero_after", "cutoff": "2026-11-30T00:00Z"}, "before the due date"),
    ({"due": "2026-12-01T23:59Z", "policy": "none", "percent_per_day": 5}, "applies to policy percent_per_day only"),
    ({"due": "2026-12-01T23:59Z", "grace": 5}, "late.grace' is unknown"),
    ({"due": "2026-12-01T23:59Z", "policy": "percent_per_day", "percent_per_day": 10, "max_percent": 150},
     "max_percent' must be a number from 0 to 100"),
])
def test_a_bad_late_block_is_one_line_naming_the_key(tmp_path, raw, message):
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    data["assignments"]["why17"]["late"] = raw
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UsageError) as err:
        course.load(path)
    assert message in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_course_without_a_late_block_still_loads():
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    data["assignments"]["why17"].pop("late", None)
    assert course._build(ROOT / "course.yml", data).assignment("why17").late is None


def test_extensions_csv(tmp_path):
    good = tmp_path / "ext.csv"
    good.write_text("student,days,reason\nann,2,illness\n1002,0.5,\n")
    assert late.load_extensions(good) == {"ann": late.Extension(days=2.0), "1002": late.Extension(days=0.5)}
    dues = tmp_path / "due.csv"
    dues.write_text("student,due\nann,2026-12-05T12:00:00Z\n")
    assert late.load_extensions(dues)["ann"].due == dt.datetime(2026, 12, 5, 12, tzinfo=UTC)
    for text, message in [("name,days\nann,1\n", "must name 'student'"),
                          ("student,days\nann,-1\n", "line 2: days must be a positive number"),
                          ("student,days\nann,1\nann,2\n", "line 3: 'ann' is listed twice")]:
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(UsageError, match=message):
            late.load_extensions(bad)


def test_apply_is_idempotent_and_shows_raw_penalty_final():
    results = {"score": 40.0, "output": "graded", "tests": [{"score": 30.0}, {"score": 10.0}]}
    rules = policy(policy="percent_per_day", percent_per_day=10, max_percent=25)
    once = late.apply(results, rules, LATE, "nbgrader timestamp.txt")
    assert once["score"] == 30.0 and once["late"]["raw_score"] == 40 and once["late"]["penalty"] == 10
    assert once["output"].startswith("Late work: submitted 2026-12-04T10:00:00+00:00 (nbgrader timestamp.txt)")
    assert once["output"].endswith("\ngraded")
    again = late.apply(once, rules, LATE, "nbgrader timestamp.txt", late.Extension(days=5))
    assert again["score"] == 40.0 and again["late"]["penalty"] == 0 and again["output"].count("Late work") == 1
    assert late.apply(again, None, None, "")["output"] == "graded"


# --- the submission time ----------------------------------------------------------------------

def _gradescope_class(root: Path, times: dict[str, dt.datetime]) -> None:
    lines = []
    for i, (name, when) in enumerate(times.items()):
        write_student(root, f"submission_{i}", "reference_measured")
        stamp = when.astimezone(dt.timezone(dt.timedelta(hours=-8))).strftime("%Y-%m-%d %H:%M:%S.%f000 %z")
        stamp = f"{stamp[:-2]}:{stamp[-2:]}"     # Gradescope writes -08:00
        lines += [f"submission_{i}:", "  :submitters:", f"  - :name: {name}", f"    :sid: '{name}'",
                  f"    :email: {name}@x.edu", f"  :created_at: {stamp}", "  :score: 0.0"]
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n")


def _nbgrader_class(root: Path, times: dict[str, dt.datetime]) -> None:
    for name, when in times.items():
        folder = root / "submitted" / name
        write_student(folder, "why17", "reference_measured")
        (folder / "why17" / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC") + "\n")


def _folders_class(root: Path, times: dict[str, dt.datetime]) -> None:
    for name, when in times.items():
        entry = write_student(root, name, "reference_measured")
        files = sorted(p for p in entry.rglob("*") if p.is_file())
        for path in files:   # the newest file time dates it
            os.utime(path, (when.timestamp() - 3600, when.timestamp() - 3600))
        os.utime(files[-1], (when.timestamp(), when.timestamp()))
        os.utime(entry, (COPIED.timestamp(), COPIED.timestamp()))   # the entry's: when it was copied


SOURCES = {"gradescope": (_gradescope_class, "Gradescope submission_metadata.yml"),
           "nbgrader": (_nbgrader_class, "nbgrader timestamp.txt"),
           "folders": (_folders_class, "files: the newest time among the files handed in")}
#: When a download was unpacked or copied (long after the due date): it dates nothing.
COPIED = dt.datetime(2027, 3, 1, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_submission_time_from_each_source(tmp_path, source):
    make, words = SOURCES[source]
    make(tmp_path, {"ann": ON_TIME, "bob": LATE})
    asg = course.load().assignment("why17")
    layout = discover.discover(tmp_path, asg)
    found = {s.student: submitted.submission_time(s) for s in layout.submissions}
    assert sorted(found) == ["ann", "bob"]
    assert {n: f.when for n, f in found.items()} == {"ann": ON_TIME, "bob": LATE}
    assert all(f.source.startswith(words) for f in found.values())


def test_a_submission_without_a_platform_time_is_dated_by_its_newest_file(tmp_path):
    """A folder by its newest file, a zip by its entries' own times (the zip's and the folder's own
    times are when the download was unpacked or copied); a student's own
    submission_metadata.json or timestamp.txt dates nothing."""
    asg = course.load().assignment("why17")
    root = tmp_path / "class"
    folder = write_student(root, "one", "reference_measured")
    (folder / "submission_metadata.json").write_text(json.dumps({"created_at": "2019-01-01T00:00:00Z"}))
    (folder / "timestamp.txt").write_text("2019-01-01 00:00:00.000000 UTC\n")
    for path in folder.rglob("*"):
        os.utime(path, (LATE.timestamp(), LATE.timestamp()))
    archive = root / "two.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, when in (("bw.py", (2026, 12, 1, 9, 0, 0)), ("predict.py", (2026, 12, 4, 10, 0, 0))):
            info = zipfile.ZipInfo(name, when)
            # Info-ZIP's extended timestamp: the entry's time in UTC, as zip -r writes it
            stamp = int(dt.datetime(*when, tzinfo=dt.timezone.utc).timestamp())
            info.extra = struct.pack("<HHBI", 0x5455, 5, 1, stamp)
            zf.writestr(info, "x = 1\n")
    deeper = root / "three"
    deeper.mkdir()
    archive.rename(deeper / "three.zip")   # the work zipped one folder deeper
    shutil.copy2(deeper / "three.zip", archive)
    for entry in (folder, archive, deeper):
        os.utime(entry, (COPIED.timestamp(), COPIED.timestamp()))
    layout = discover.discover(root, asg)
    assert layout.kind == "folders"
    for sub in layout.submissions:
        when = submitted.submission_time(sub, asg.handed_in)
        assert when.when == LATE and when.source == submitted.FROM_FILES, (sub.student, when)


def test_a_gradescope_export_is_dated_by_its_own_metadata_only(tmp_path):
    _gradescope_class(tmp_path, {"ann": ON_TIME})
    other = write_student(tmp_path, "submission_9", "reference_measured")   # not in the export's metadata
    (other / "submission_metadata.yml").write_text(
        "submission_9:\n  :created_at: 2019-01-01 00:00:00.000000000 -08:00\n"
        "  :submitters:\n  - :name: eve\n    :sid: eve\n")
    for path in other.rglob("*"):
        os.utime(path, (LATE.timestamp(), LATE.timestamp()))
    layout = discover.discover(tmp_path, course.load().assignment("why17"))
    found = {s.student: submitted.submission_time(s) for s in layout.submissions}
    assert found["ann"] == submitted.Submitted(ON_TIME, "Gradescope submission_metadata.yml")
    assert found["submission_9"] == submitted.Submitted(LATE, submitted.FROM_FILES)


def test_gradescope_harness_metadata_is_read_from_its_own_path(tmp_path):
    meta = tmp_path / "submission_metadata.json"
    meta.write_text(json.dumps({"created_at": "2026-12-04T02:00:00.123456-08:00", "id": 1}))
    assert submitted.from_gradescope_json(meta) == submitted.Submitted(
        LATE.replace(microsecond=123456), "Gradescope submission_metadata.json")
    for text, words in (("{", "not Gradescope's submission metadata"), ('{"id": 1}', "not Gradescope's"),
                        ("[" * 100000, "not Gradescope's")):
        meta.write_text(text)
        with pytest.raises(UsageError, match=words):
            submitted.from_gradescope_json(meta)
    with pytest.raises(UsageError, match="cannot read"):
        submitted.from_gradescope_json(tmp_path / "absent.json")


# --- end to end -------------------------------------------------------------------------------

def _course(folder: Path, rules: dict) -> Path:
    """A course folder like the checkout's, its course.yml with a ``late:`` block."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("solutions", "assignments"):
        if not (folder / name).exists():
            (folder / name).symlink_to(ROOT / name)
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    data["assignments"]["why17"]["late"] = {"due": "2026-12-01T23:59:00Z", "grace_minutes": 15, **rules}
    (folder / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _grade(src: Path, out: Path, course_dir: Path, *extra) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--course", str(course_dir), "--jobs", "1", "--checks", "measure_file", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_late_class_gets_each_policys_penalty_from_each_source(tmp_path, source):
    make, words = SOURCES[source]
    make(tmp_path / "class", {"ann": ON_TIME, "bob": LATE})
    course_dir = tmp_path / "course"
    out = tmp_path / "out"
    for i, name in enumerate(("percent_per_day", "zero_after", "none")):
        proc = _grade(tmp_path / "class", out, _course(course_dir, POLICIES[name]))
        assert ("skipping 2 already graded" in proc.stderr) == (i > 0)   # a new policy needs no regrade
        assert f"late work: 1 of 2 late (due 2026-12-01T23:59:00+00:00, policy {name}); " \
               f"submission times from: {words}" in proc.stderr
        rows = {r["student"]: r for r in csv.DictReader((out / "partial.csv").open())}
        for student, expected in zip(("ann", "bob"), EXPECTED[name], strict=True):
            row = rows[student]
            raw = float(row["raw_total"])
            assert raw > 0 and row["time_source"].startswith(words)
            assert float(row["late_penalty"]) == pytest.approx(raw * expected / 100, abs=0.01), (name, student)
            assert float(row["total"]) == pytest.approx(raw - float(row["late_penalty"]), abs=0.01)
            results = json.loads((out / student / "results.json").read_text())
            assert results["late"]["penalty_percent"] == expected and results["late"]["policy"] == name
            assert results["score"] == pytest.approx(results["late"]["score"])
            assert results["output"].startswith("Late work: ") and words in results["output"]
            page = (out / student / "feedback.html").read_text()
            assert "raw score" in page and "late penalty" in page and "final score" in page
    # an extension for bob under percent_per_day: on time again, still without regrading
    (tmp_path / "ext.csv").write_text("student,days\nbob,3\nnobody,1\n")
    proc = _grade(tmp_path / "class", out, _course(course_dir, POLICIES["percent_per_day"]),
                  "--extensions", str(tmp_path / "ext.csv"))
    assert "no such student in the submissions: nobody" in proc.stderr
    bob = json.loads((out / "bob" / "results.json").read_text())["late"]
    assert bob["penalty"] == 0 and bob["extension"] == "3 days"


def test_a_bad_extensions_file_is_one_line_and_exit_2(tmp_path):
    write_student(tmp_path / "class", "ann", "stubs")
    (tmp_path / "ext.csv").write_text("student,days\nann,soon\n")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(tmp_path / "class"), "--out",
                           str(tmp_path / "out"), "--extensions", str(tmp_path / "ext.csv")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'ext.csv'} line 2: days must be a positive "
                                                "number, got 'soon'"]


@pytest.mark.slow
def test_grade_on_gradescope_is_dated_by_the_harness_metadata_not_the_students(tmp_path):
    """``grade --submission-metadata`` (run_autograder passes /autograder/submission_metadata.json)
    dates the submission; a submission_metadata.json inside the submission dates nothing."""
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "measurements.json").write_text(measurements_json())
    (sub / "submission_metadata.json").write_text(json.dumps({"created_at": "2019-01-01T00:00:00Z"}))
    harness = tmp_path / "submission_metadata.json"
    harness.write_text(json.dumps({"created_at": LATE.isoformat()}))
    course_dir = _course(tmp_path / "course", POLICIES["zero_after"])
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(sub), "--course", str(course_dir),
                           "--submission-metadata", str(harness), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["late"]["raw_score"] > 0 and results["score"] == 0
    assert results["late"]["time_source"] == "Gradescope submission_metadata.json"
    assert results["late"]["submitted_at"] == LATE.isoformat()
