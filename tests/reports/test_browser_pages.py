"""feedback.html and summary.html in a real headless Chromium: they render their plots, log no
console errors and load nothing from anywhere (self-contained). Screenshots go to the test's
temporary folder. Skipped, with the reason, only where Chromium or its driver is not installed
(.ci/run installs Debian's chromium and chromium-driver)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.lessons.why17.fixtures.classes import QUICK_CHECKS, make_class
from tests.helpers.paths import ROOT
from tests.reports.browser import NEEDS_CHROMIUM, visit

pytestmark = [NEEDS_CHROMIUM, pytest.mark.slow]     # slow: Chromium, and real gradings (`make check` leaves them out)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    make_class(base / "s", 4, kinds=("reference_measured", "bytes_once", "empty_folder", "stubs"))
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(base / "s"), "--out",
                           str(base / "o"), "--jobs", "1", "--checks", ",".join(QUICK_CHECKS)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "o"


def test_feedback_page_renders_both_plots_without_errors(out, browser, tmp_path):
    shot = tmp_path / "feedback.png"
    facts = visit(browser, out / "s000" / "feedback.html", shot)
    assert facts["svgs"] == 2 and facts["marks"] > 10
    assert "Copy bandwidth against buffer size" in facts["text"] and "Your roofline" in facts["text"]
    assert "cache cliff" in facts["text"]
    assert facts["errors"] == [] and facts["loaded"] == []
    assert shot.stat().st_size > 10_000


def test_feedback_without_measurements_still_renders_scores_and_checks(out, browser, tmp_path):
    facts = visit(browser, out / "s001" / "feedback.html", tmp_path / "mistake.png")
    assert facts["errors"] == [] and facts["loaded"] == []
    assert "bytes_counted_twice" in facts["text"] and "failed" in facts["text"]


def test_summary_page_renders_charts_mistakes_and_links(out, browser, tmp_path):
    shot = tmp_path / "summary.png"
    facts = visit(browser, out / "summary.html", shot)
    assert facts["svgs"] == 4 and facts["errors"] == [] and facts["loaded"] == []   # + pass rate per check
    assert "Counted the bytes once" in facts["text"] and "nothing to grade" in facts["text"]
    assert "Pass rate per check" in facts["text"] and "bytes_counted_twice" in facts["text"]
    links = [Path(link.removeprefix("file://")) for link in browser.execute_script(
        "return Array.from(document.querySelectorAll('a')).map(a => a.href)")]
    pages = [link for link in links if link.name == "feedback.html"]
    assert sorted(link.parent.name for link in pages) == ["s000", "s001", "s002", "s003"]
    files = sorted(link.name for link in links if link not in pages)
    assert {"gradebook.csv", "canvas.csv", "checks.csv", "overrides.csv"} <= set(files)
    assert all(link.is_file() for link in links)      # every link leads to a file that is there
    assert shot.stat().st_size > 10_000


@pytest.fixture(scope="module")
def similarity_report(tmp_path_factory):
    from tests.similarity.classes import make_similarity_class
    base = tmp_path_factory.mktemp("similar-page")
    make_similarity_class(base / "class")
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(base / "class"),
                           "--out", str(base / "out"), "--top", "3"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "out" / "report.html"


def test_similarity_report_renders_side_by_side_regions(similarity_report, browser, tmp_path):
    shot = tmp_path / "similarity.png"
    facts = visit(browser, similarity_report, shot)
    assert facts["errors"] == [] and facts["loaded"] == []
    assert "evidence for a person to look at, not a verdict" in facts["text"]
    assert "copy ~ orig" in facts["text"] or "orig ~ copy" in facts["text"]
    layout = browser.execute_script("""
        const marks = Array.from(document.querySelectorAll('mark')).filter(m => m.getClientRects().length);
        const sides = Array.from(document.querySelectorAll('.side')).slice(0, 1).map(s => {
          const [a, b] = s.children; const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
          return {left: ra.left, right: rb.left, top: ra.top, other_top: rb.top, width: ra.width};
        });
        return {marks: marks.length, sides};""")
    assert layout["marks"] > 10
    (side,) = layout["sides"]
    assert side["right"] >= side["left"] + side["width"] - 1 and side["top"] == side["other_top"]  # side by side
    assert shot.stat().st_size > 10_000


def test_similarity_report_shows_the_baseline_and_a_copy_ring_as_one_cluster(browser, tmp_path):
    from tests.similarity.classes import make_ring_class
    make_ring_class(tmp_path / "class")
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(tmp_path / "class"),
                           "--out", str(tmp_path / "out"), "--top", "4"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    shot = tmp_path / "similarity-clusters.png"
    facts = visit(browser, tmp_path / "out" / "report.html", shot)
    assert facts["errors"] == [] and facts["loaded"] == []
    page = browser.execute_script("""
        const cells = tr => Array.from(tr.children).map(td => td.innerText.trim());
        const visible = el => el && el.getClientRects().length > 0;
        const table = id => Array.from(document.querySelectorAll('#' + id + ' tr')).map(cells);
        return {
          baseline: visible(document.getElementById('baseline')) && document.getElementById('baseline').innerText,
          median: document.getElementById('class-median').innerText,
          reference: document.getElementById('reference-median').innerText,
          clusters: Array.from(document.querySelectorAll('#clusters tr')).map(cells),
          pairs: table('pairs'),
          link: (document.querySelector('#clusters a') || {}).hash,
        };""")
    assert "Baseline of this class" in page["baseline"] and re.fullmatch(r"\d+%", page["median"])
    assert re.fullmatch(r"\d+%", page["reference"])
    header, *groups = page["clusters"]
    assert [row[:3] for row in groups] == [["C1", "3", "ring1, ring2, ring3"]]
    head, *rows = page["pairs"]
    assert head[:6] == ["#", "pair", "similarity", "cluster", "median pair", "each vs reference (a / b)"]
    assert [row[3] for row in rows[:3]] == ["C1"] * 3 and rows[3][3] == ""   # the ring's three pairs first
    assert all(row[4] == page["median"] for row in rows)                  # the baseline beside each pair
    assert page["link"] == "#pair1"
    assert shot.stat().st_size > 10_000


def test_a_semester_s_pages_show_overrides_manual_scores_and_grader_failures(browser, tmp_path):
    """The tiny course with a manual item: ann's override on her feedback page, and a class where
    the grader failed on everyone named at the top of summary.html."""
    import yaml

    from tests.helpers.tiny_course import TINY, cli
    course = tmp_path / "course"
    shutil.copytree(TINY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    data = yaml.safe_load((course / "course.yml").read_text())
    data["assignments"]["tiny"]["manual"] = [{"id": "explain", "title": "Explain It Back", "points": 5}]
    (course / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    shutil.copytree(TINY / "submissions" / "wrong_squares", tmp_path / "class" / "ann")
    out = tmp_path / "out"
    out.mkdir()
    (out / "overrides.csv").write_text("student,item,points,delta,reason,grader\n"
                                       "ann,doubles_like_reference,7,,<b>regrade</b> accepted,TA Kim\n"
                                       "ann,explain,3,,clear answer,TA Kim\n")
    proc = cli("grade-all", tmp_path / "class", "--out", out, "--course", course, "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts = visit(browser, out / "ann" / "feedback.html", tmp_path / "ann.png")
    assert facts["errors"] == [] and facts["loaded"] == []
    assert "10 / 15" in facts["text"] and "Scores changed by the course staff" in facts["text"]
    assert "<b>regrade</b> accepted (TA Kim)" in facts["text"] and "Explain It Back\t3 / 5" in facts["text"]
    reference = course / "solutions" / "tiny" / "double.py"
    reference.write_text('raise RuntimeError("broken")\n' + reference.read_text())
    failed = cli("grade-all", tmp_path / "class", "--out", out, "--course", course, "--jobs", "1", "--force")
    assert failed.returncode == 1
    facts = visit(browser, out / "summary.html", tmp_path / "summary.png")
    assert facts["errors"] == [] and facts["loaded"] == []
    assert "The grader itself failed on 1 student(s)" in facts["text"] and "GRADER FAILED" in facts["text"]
