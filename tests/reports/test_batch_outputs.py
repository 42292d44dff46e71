"""The class outputs from results dicts: gradebook and Canvas CSV, summary counts, HTML pages."""
from __future__ import annotations

import csv
import io
import json
import math

import pytest

from autograder.classdata.discover import Member, Submission
from autograder.classdata.zero import zero_results
from autograder.core import course
from autograder.lessons.why17 import plotdata
from autograder.lessons.why17.fixtures.classes import measurements_json
from autograder.reports import feedback_html, gradebook, mistakes, summary, summary_html, svg


@pytest.fixture(scope="module")
def asg():
    return course.load().assignment("why17")


def test(task, check, score, max_score, outcome="passed", output="ok"):
    status = "passed" if outcome == "passed" else "failed"
    return {"name": f"{task} {check} [{check}]", "task": task, "check": check, "score": score,
            "max_score": max_score, "status": status, "outcome": outcome, "output": output}


test.__test__ = False  # a builder, not a pytest test


def results_of(*tests):
    return {"score": sum(t["score"] for t in tests), "max_score": sum(t["max_score"] for t in tests),
            "output": "", "tests": list(tests)}


def sub(name, *members):
    return Submission(student=name, path=None, members=members or (Member(name),))


def test_gradebook_has_a_row_per_person_and_a_column_per_task(asg):
    group = sub("1815", Member("Ada", "1815", "ada@x.edu"), Member("Charles", "1791", "cb@x.edu"))
    entries = [
        (sub("alice"), results_of(test("task1", "a", 10, 10), test("task1", "b", 0, 15, "failed"),
                                  test("task3", "c", 25, 25))),
        (group, results_of(test("task2", "d", 15, 15))),
        (sub("carol"), zero_results(asg, "nothing to grade: the folder is empty")),
    ]
    rows = list(csv.DictReader(io.StringIO(gradebook.gradebook_csv(entries, asg))))
    assert list(rows[0]) == ["student", "name", "sid", "email", "lms_id", "task1", "task2", "task3", "task4",
                             "task5", "raw_total", "late_penalty", "total", "max_score",
                             "submitted_at", "time_source", "checks", "graded_at", "overrides", "note"]
    assert [(r["student"], r["name"], r["total"]) for r in rows] == [
        ("alice", "alice", "35"), ("1815", "Ada", "15"), ("1815", "Charles", "15"), ("carol", "carol", "0")]
    assert (rows[0]["task1"], rows[0]["task2"], rows[0]["task3"]) == ("10", "0", "25")
    assert rows[2]["sid"] == "1791" and rows[3]["note"] == "nothing to grade: the folder is empty"
    assert {r["max_score"] for r in rows} == {"100"}


def test_canvas_csv_has_canvas_columns_points_possible_and_totals(asg):
    entries = [(sub("1815", Member("Ada", "1815", "ada@x.edu")), results_of(test("task1", "a", 7.5, 25)))]
    rows = list(csv.reader(io.StringIO(gradebook.canvas_csv(entries, asg))))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "why17"]
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "100"
    assert rows[2] == ["Ada", "", "1815", "ada@x.edu", "", "7.5"]


def test_mistakes_count_verdicts_only_and_respect_requires():
    catalogue = mistakes.of(course.load().assignment())
    seen = results_of(test("task1", "bytes_counted_twice", 0, 3, "failed"),
                      test("task1", "sync_present", 0, 3, "error"),
                      test("task5", "measure_file", 0, 3, "failed"),
                      test("task5", "measure_ridge_point", 0, 3, "failed"))
    assert mistakes.made(seen, catalogue) == ["no_measure_table", "bytes_counted_once", mistakes.NOT_RUN]
    fixed_file = results_of(test("task5", "measure_file", 3, 3),
                            test("task5", "measure_ridge_point", 0, 3, "failed"))
    assert mistakes.made(fixed_file, catalogue) == ["ridge_point_wrong"]
    assert mistakes.made(results_of(test("task1", "sync_present", 3, 3)), catalogue) == []


def test_every_mistake_names_checks_and_a_lesson_section():
    for m in mistakes.of(course.load().assignment()):
        assert m.checks and m.lesson and m.title and m.explain
    ids = [m.id for m in mistakes.of(course.load().assignment())]
    assert len(ids) == len(set(ids))


#: Each wrong fixture of predict.py and roofline.py (tests/lessons/why17/test_grade_wrong.py) -> the one mistake
#: of the catalogue it must count as in the class summary's "What to reteach".
RETEACH = {"decode_forgets_1e9": "units_slip", "ridge_in_gflops": "units_slip",
           "roofline_slope_no_1000": "units_slip", "kv_without_2": "kv_without_k_and_v",
           "ceiling_ignores_kv": "kv_cache_forgotten", "attainable_max": "roofline_max_not_min",
           "roofline_linear_axes": "roofline_linear_axes", "ceiling_rereads_weights": "batching_rereads_weights",
           "ceiling_ignores_compute": "compute_roof_ignored", "prefill_no_2": "prefill_one_flop"}


def test_every_check_a_mistake_names_is_a_real_check(asg):
    from autograder.grading.grade import load_checks
    registered = set(load_checks(asg))
    for m in mistakes.of(asg):
        assert set(m.checks) | set(m.requires) <= registered, m.id


@pytest.mark.parametrize("fixture", sorted(RETEACH))
def test_predict_and_roofline_mistakes_are_reteach_items(asg, fixture):
    """The checks the fixture fails (as tests/lessons/why17/test_grade_wrong.py proves), every other check of the
    catalogue passed: the summary counts exactly its mistake, once."""
    from tests.lessons.why17.expected import EXPECTED
    failing = EXPECTED[fixture]
    everything = {c for m in mistakes.of(asg) for c in (*m.checks, *m.requires)} | failing
    results = results_of(*(test("task3", c, 0 if c in failing else 1, 1,
                                "failed" if c in failing else "passed") for c in sorted(everything)))
    assert mistakes.made(results, mistakes.of(asg)) == [RETEACH[fixture]]


def test_summary_counts_histogram_means_and_zero_reasons(asg):
    entries = [
        (sub("a"), results_of(test("task1", "bytes_counted_twice", 0, 25, "failed"), test("task3", "x", 25, 25))),
        (sub("b"), results_of(test("task1", "bytes_counted_twice", 0, 25, "failed"),
                              test("task1", "sync_present", 0, 25, "failed"))),
        (sub("c"), results_of(test("task1", "bytes_counted_twice", 0, 25, "error"))),
        (sub("d"), results_of(test("task1", "t", 25, 25), test("task2", "t2", 15, 15), test("task3", "t3", 25, 25),
                              test("task4", "t4", 15, 15), test("task5", "t5", 20, 20))),
        (sub("e"), zero_results(asg, "nothing to grade: e.zip is not a readable zip file")),
    ]
    data = summary.build(entries, asg, "one folder or .zip per student")
    json.dumps(data)  # plain data
    count = {m["id"]: (m["students"], m["who"]) for m in data["mistakes"]}
    assert count["bytes_counted_once"] == (2, ["a", "b"])
    assert count["forgot_synchronize"] == (1, ["b"])
    assert count["buffer_in_cache"] == (0, [])
    assert data["not_run"] == {"students": 1, "who": ["c"],
                               "details": [{"student": "c", "reason": "bytes_counted_twice: ok"}]}
    # every check that ran: passed / failed by a verdict / did not run, over graded students only
    assert data["checks"]["bytes_counted_twice"] == {"task": "task1", "graded": 3, "passed": 0,
                                                     "failed": 2, "not_run": 1, "pass_rate": 0.0}
    assert data["checks"]["sync_present"]["failed"] == 1 and data["checks"]["t2"]["pass_rate"] == 1.0
    assert data["not_graded"] == [{"student": "e", "reason": "nothing to grade: e.zip is not a readable zip file"}]
    assert data["students"] == 5 and data["histogram"]["counts"] == [3, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    assert data["histogram"]["bins"][0] == 0 and data["histogram"]["bins"][-1] == 100
    assert data["tasks"]["task3"]["mean"] == 10.0 and data["tasks"]["task2"]["mean_fraction"] == round(
        3.0 / asg.task("task2").points, 4)
    assert data["mean_total"] == 25.0 and data["median_total"] == 0.0


def test_histogram_puts_full_marks_in_the_last_bin():
    assert summary.histogram([0, 9.99, 10, 100], 100)["counts"] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_feedback_page_escapes_student_text_and_has_both_plots(asg):
    evil = "<script>alert(1)</script>"
    results = results_of(test("task1", "bytes_counted_twice", 0, 25, "failed", output=evil))
    results["output"] = evil
    results["plots"] = plotdata.from_measurements(measurements_json().encode())
    html = feedback_html.render("mallory<img src=x>", results, asg)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<img src=x>" not in html
    assert html.count("<svg") == 2 and "cache cliff" in html and "llama-3.1-8b decode" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html


def test_feedback_without_measurements_says_why_there_are_no_plots(asg):
    html = feedback_html.render("dave", zero_results(asg, "nothing to grade: the folder is empty"), asg)
    assert "<svg" not in html and "measurements.json" in html and "the folder is empty" in html


def test_plot_data_from_a_measure_table(asg):
    data = plotdata.from_measurements(measurements_json().encode())
    assert data["sweep_gbs"]["8"] == 8800.0 and data["device"]["l2_bytes"] == 52428800
    curve = data["device_sweep_gbs"]
    # the cliff: a copy of 8 MiB (16 MiB working set) fits the 50 MiB L2; 128 MiB does not
    assert curve["8"] > 2 * curve["128"] and curve["128"] == curve["8192"]
    (point,) = data["points"]
    assert point["intensity"] == 1.0 and math.isclose(point["tflops"], 0.8 * 2900 * 1e9 * 2 / 2 / 1e12)
    assert plotdata.from_measurements(b"{not json") is None


def test_summary_page_links_every_student_and_escapes(asg):
    entries = [(sub("a&b"), results_of(test("task1", "bytes_counted_twice", 0, 25, "failed")))]
    data = summary.build(entries, asg, "layout <x>")
    html = summary_html.render(data, gradebook.rows(entries, asg))
    assert 'href="a%26b/feedback.html"' in html and "layout &lt;x&gt;" in html
    assert html.count("<svg") == 4   # histogram, tasks, mistakes, pass rate per check


def test_summary_page_names_who_did_not_run_and_why_and_every_mistake(asg):
    entries = [(sub("zed"), results_of(test("task1", "sync_present", 0, 5, "error",
                                            output="copy_bandwidth raised NotImplementedError: task1.1")))]
    regraded = [{"run": "r", "student": "zed", "check": "(total)", "old_score": "1", "new_score": "2",
                 "reason": "changed submission"}]
    data = summary.build(entries, asg, "", regraded=regraded)
    html = summary_html.render(data, gradebook.rows(entries, asg))
    assert "zed</td><td>sync_present: copy_bandwidth raised NotImplementedError: task1.1" in html
    for m in mistakes.of(asg):          # What to reteach lists the whole catalogue, also at 0 students
        assert m.title.replace("'", "&#x27;") in html
    assert "Pass rate per check" in html and "sync_present" in html and "changed submission" in html


def test_svg_chart_skips_non_finite_and_non_positive_on_log_axes():
    chart = svg.Chart(title="t", xlabel="x", ylabel="y", xlog=True, ylog=True)
    chart.line([1, 2, 0, -1, math.nan, 4], [1, math.inf, 3, 4, 5, 8], "s")
    (series,) = chart.series
    assert series.xs == [1, 4] and series.ys == [1, 8]
    assert "NaN" not in chart.svg() and "inf" not in chart.svg()
    empty = svg.Chart(title="none", xlabel="x", ylabel="y")
    assert "no data" in empty.svg()
