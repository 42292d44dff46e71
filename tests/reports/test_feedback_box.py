"""The feedback page opens with what went wrong: each failed check with the points it cost, the
one-line fix and the lesson section, most costly first; and no passing row speaks of a mistake.

One real grading (grade-all, so feedback.html is written as students get it) of a submission with
three of the lesson's mistakes at different prices: no synchronize (bw.py), K without V
(predict.py) and no measurements.json. The page is read in a real headless Chromium where one is
installed (tests/reports/test_browser_pages.py's driver), and its rows from results.json everywhere.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core import course
from autograder.lessons.why17.fixtures import build
from autograder.reports import failures, feedback_html, mistakes
from tests.helpers.paths import ROOT
from tests.reports.browser import CHROMIUM, DRIVER, chrome

#: Slow, left out of `make check`: most tests read a class graded by the real grade-all.
pytestmark = pytest.mark.slow

ASSIGNMENT = course.load().assignment("why17")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("feedback-box")
    student = build.overlay("class", "no_sync", base / "class" / "three_mistakes")
    (student / "predict.py").write_text(build.changed_files("class", "kv_not_doubled")["predict.py"],
                                        encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(base / "class"), "--out",
                           str(base / "out"), "--jobs", "1"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "out" / "three_mistakes"


@pytest.fixture(scope="module")
def results(graded) -> dict:
    return json.loads((graded / "results.json").read_text(encoding="utf-8"))


def test_the_rows_are_the_failed_checks_most_costly_first(results):
    rows = failures.ranked(results, ASSIGNMENT)
    failed = {t["check"] for t in results["tests"] if t["status"] != "passed"}
    assert {c for r in rows for c in r.checks} == failed
    assert [r.points for r in rows] == sorted((r.points for r in rows), reverse=True)
    lost = sum(t["max_score"] - t["score"] for t in results["tests"])
    assert sum(r.points for r in rows) == pytest.approx(lost)
    # the missing Measure table is one row (8 points), ahead of the missing synchronize (5) and K and V (4)
    assert [(r.task, r.what, r.points) for r in rows] == [
        ("task5", "No usable Measure table", 8.0), ("task1", "Forgot to synchronize", 5.0),
        ("task3", "KV cache without the 2 for K and V", 4.0)]


def test_each_row_has_the_catalogues_fix_and_a_lesson_section(results):
    catalogue = {m.title: m for m in mistakes.of(ASSIGNMENT)}
    for row in failures.ranked(results, ASSIGNMENT):
        assert row.fix == catalogue[row.what].fix and row.fix
        assert row.lesson and "\n" not in row.fix


def test_a_missing_file_is_not_blamed_on_the_numbers_it_would_hold(results):
    [measure] = [r for r in failures.ranked(results, ASSIGNMENT) if r.task == "task5"]
    assert "measurements.json" in measure.fix and "own bandwidth" not in measure.fix


def test_code_that_never_ran_is_told_to_run_first(tmp_path):
    stubs = ROOT / "assignments" / "why17"
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(stubs), "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = failures.ranked(json.loads(out.read_text(encoding="utf-8")), ASSIGNMENT)
    not_run = [r for r in rows if not r.ran]
    assert not_run and all(r.fix.startswith("Make it run first:") and "NotImplementedError" in r.fix
                           for r in not_run)
    # a stub is none of the lesson's mistakes; only the missing Measure table is named as one
    titles = {m.title for m in mistakes.of(ASSIGNMENT)}
    assert [r.what for r in rows if r.what in titles] == ["No usable Measure table"]


def test_a_page_with_every_check_passed_says_so_and_lists_nothing(results):
    passed = {**results, "tests": [{**t, "status": "passed", "score": t["max_score"]} for t in results["tests"]]}
    html = feedback_html.render("someone", passed, ASSIGNMENT)
    assert "Every check passed" in html and "What went wrong" not in html


def test_no_passing_message_of_the_grader_speaks_of_a_mistake(results):
    green = [t["output"] for t in results["tests"] if t["status"] == "passed"
             and "mistake" in str(t.get("output", "")).lower()]
    assert green == []


# -- in a real browser -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def page(graded, tmp_path_factory):
    if not (CHROMIUM and DRIVER):
        pytest.skip("Chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
    driver = chrome(tmp_path_factory.mktemp('chromium-profile'))
    driver.get((graded / "feedback.html").as_uri())
    facts = driver.execute_script("""
        const box = document.getElementById('what-went-wrong');
        const top = el => el.getBoundingClientRect().top;
        const cards = Array.from(document.querySelectorAll('.card'));
        const rows = box ? Array.from(box.querySelectorAll('tr')).slice(1) : [];
        const checks = Array.from(document.querySelectorAll('h3 + table tr'));
        return {
          box: box ? box.innerText : null,
          visible: box ? box.getBoundingClientRect().height > 0 : false,
          first_card: cards.length ? cards[0].id : null,
          above_score: box ? top(box) < top(document.querySelector('.score')) : false,
          rows: rows.map(r => Array.from(r.cells).map(c => c.innerText)),
          green: checks.filter(r => r.cells[0].className === 'passed').map(r => r.innerText),
          loaded: performance.getEntriesByType('resource').map(e => e.name),
        };""")
    facts["errors"] = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    driver.set_window_size(1100, 1400)
    assert driver.save_screenshot(str(tmp_path_factory.mktemp("shots") / "feedback-box.png"))
    driver.quit()
    return facts


def test_the_box_is_the_first_thing_on_the_page(page):
    assert page["visible"] and page["first_card"] == "what-went-wrong" and page["above_score"]
    assert page["errors"] == [] and page["loaded"] == []
    assert page["box"].startswith("What went wrong: 3 things, 17 points")


def test_the_box_rows_show_cost_fix_and_lesson_in_order(page, results):
    expected = failures.ranked(results, ASSIGNMENT)
    assert [cells[0] for cells in page["rows"]] == ["\u22128 pts", "\u22125 pts", "\u22124 pts"]
    for cells, row in zip(page["rows"], expected):
        assert row.what in cells[1] and all(check in cells[1] for check in row.checks)
        assert cells[2] == f"Fix: {row.fix}"
        assert cells[3] == f"reread: {row.lesson}"


def test_no_green_row_on_the_page_says_mistake(page):
    assert page["green"], "the page lists the passed checks"
    assert [row for row in page["green"] if "mistake" in row.lower()] == []


def test_every_classic_mistake_has_a_one_line_fix():
    assert [m.id for m in mistakes.of(ASSIGNMENT) if not m.fix.strip() or "\n" in m.fix] == []


def test_a_fix_that_is_not_text_is_refused_in_one_line(tmp_path):
    from autograder.core.errors import UsageError
    path = tmp_path / "mistakes.yml"
    path.write_text("mistakes:\n  - {id: a, title: A, explain: E, lesson: L, checks: [x], fix: [1]}\n")
    with pytest.raises(UsageError, match=r"mistakes\[0\]\.fix must be a str"):
        mistakes.load(path)
