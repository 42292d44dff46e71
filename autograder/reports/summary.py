"""OUT/summary.json: what the class did, so the instructor knows what to reteach.

Keys: ``students`` (count), ``max_score``, ``mean_total``, ``median_total``, ``histogram``
(``bins``: edges in points, ``counts``: students per bin, the last bin closed), ``tasks`` (per task
id: title, points, mean score, mean as a fraction of the points), ``mistakes`` (per classic mistake:
id, title, explain, lesson, the checks behind it, how many students made it and who), ``checks``
(per check id, in the order the results list them: task, students graded on it, how many passed,
failed by a verdict, or never ran their code, and the pass rate), ``not_run`` (students with at
least one check whose code never ran: ``who``, and ``details`` with each one's reason: the first
such check and its message), ``not_graded`` (students with a zero without grading, with the
reason), ``grader_failed`` (students the grader itself failed on, with the reason: no score, left out of
every statistic), ``partial`` (students whose result covers some checks only: not grades), ``regraded``
(regrades.csv's changed totals, newest first), ``layout`` (the input layout found).
"""
from __future__ import annotations

import statistics

from autograder.classdata import overrides, zero
from autograder.classdata.discover import Submission
from autograder.core import late
from autograder.reports import gradebook, mistakes

#: Histogram bins: this many equal bins from 0 to the maximum score.
BINS = 10
#: Characters of a not-run reason kept in the summary (the feedback page has the whole message).
REASON_CHARS = 160
#: A check tested on several functions counts by its worst test.
_WORST = {"passed": 0, "failed": 1, "error": 2}


def histogram(totals: list[float], max_score: float, bins: int = BINS) -> dict:
    """Counts of ``totals`` in ``bins`` equal bins over [0, max_score] (the last bin is closed)."""
    width = max_score / bins if max_score > 0 else 1.0
    counts = [0] * bins
    for total in totals:
        index = int(total / width) if width > 0 else 0
        counts[min(max(index, 0), bins - 1)] += 1
    edges = [round(i * width, 4) for i in range(bins + 1)]
    return {"bins": edges, "counts": counts}


def check_rates(entries: list[tuple[Submission, dict]]) -> dict:
    """Per check id: its task and how many students passed it (every test of the check passed),
    failed it by a verdict, or never ran their code in it; ``pass_rate`` = passed / graded."""
    rates: dict[str, dict] = {}
    for _sub, results in entries:
        if gradebook.note_of(results):
            continue
        state: dict[str, str] = {}
        for test in results.get("tests", []):
            check = test.get("check")
            if not check or test.get(overrides.MANUAL) or test.get(overrides.ADJUSTMENT):
                continue
            rates.setdefault(check, {"task": test.get("task", ""), "graded": 0, "passed": 0,
                                     "failed": 0, "not_run": 0})
            state[check] = max(state.get(check, "passed"), mistakes.outcome(test), key=_WORST.get)
        for check, seen in state.items():
            r = rates[check]
            r["graded"] += 1
            r[{"passed": "passed", "failed": "failed", "error": "not_run"}[seen]] += 1
    for r in rates.values():
        r["pass_rate"] = round(r["passed"] / r["graded"], 4) if r["graded"] else 0.0
    return rates


def not_run_reason(results: dict) -> str:
    """The first check whose code never ran, and its message (shortened)."""
    for test in results.get("tests", []):
        if mistakes.outcome(test) == "error":
            text = " ".join(str(test.get("output", "")).split())
            if len(text) > REASON_CHARS:
                text = text[:REASON_CHARS - 3] + "..."
            return f"{test.get('check') or test.get('name')}: {text}"
    return ""


def build(entries: list[tuple[Submission, dict]], assignment, layout_description: str = "",
          partial=(), regraded=()) -> dict:
    """The summary dict of a class; ``entries`` pairs each submission with its results;
    ``partial``: the students whose results cover some checks only; ``regraded``: regrades.csv's
    total rows."""
    task_ids = [t.id for t in assignment.tasks]
    catalogue = mistakes.of(assignment)
    totals, per_task = [], {t: [] for t in task_ids}
    made = {m.id: [] for m in catalogue}
    not_run, not_graded, details, grader_failed = [], [], [], []
    for sub, results in entries:
        if zero.is_grader_failure(results):
            grader_failed.append({"student": sub.student, "reason": gradebook.note_of(results)})
            continue
        scores = gradebook.task_scores(results, task_ids)
        for t in task_ids:
            per_task[t].append(scores[t])
        totals.append(late.raw_score(results))   # with manual items and overrides
        reason = gradebook.note_of(results)
        if reason:
            not_graded.append({"student": sub.student, "reason": reason})
            continue
        for mistake_id in mistakes.made(results, catalogue):
            if mistake_id == mistakes.NOT_RUN:
                not_run.append(sub.student)
                details.append({"student": sub.student, "reason": not_run_reason(results)})
            else:
                made[mistake_id].append(sub.student)
    n = len(entries) - len(grader_failed)
    return {
        "assignment": assignment.name,
        "layout": layout_description,
        "students": n,
        "max_score": float(assignment.max_score),
        "mean_total": round(statistics.fmean(totals), 2) if totals else 0.0,
        "median_total": round(statistics.median(totals), 2) if totals else 0.0,
        "histogram": histogram(totals, float(assignment.max_score)),
        "tasks": {
            t.id: {"title": t.title, "points": t.points,
                   "mean": round(statistics.fmean(per_task[t.id]), 2) if n else 0.0,
                   "mean_fraction": (round(statistics.fmean(per_task[t.id]) / t.points, 4)
                                     if n and t.points else 0.0)}
            for t in assignment.tasks
        },
        "mistakes": [
            {"id": m.id, "title": m.title, "explain": m.explain, "lesson": m.lesson,
             "checks": list(m.checks), "students": len(made[m.id]), "who": sorted(made[m.id])}
            for m in catalogue
        ],
        "checks": check_rates(entries),
        "not_run": {"students": len(not_run), "who": sorted(not_run),
                    "details": sorted(details, key=lambda e: e["student"])},
        "not_graded": sorted(not_graded, key=lambda e: e["student"]),
        "grader_failed": sorted(grader_failed, key=lambda e: e["student"]),
        "partial": sorted(partial),
        "regraded": [dict(r) for r in regraded],
    }
