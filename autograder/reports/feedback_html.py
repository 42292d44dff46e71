"""OUT/<student>/feedback.html: one student's feedback as a self-contained page (no network).

First what went wrong (autograder/reports/failures.py: each failed check with the points it cost,
the one-line fix and the lesson section, most costly first), then the score per task, the two
pictures that say it faster (the student's bandwidth sweep against the device's curve with the
cache cliff marked; their roofline with their Measure-table points), then every check with its
message. Built from results.json alone (plot numbers under "plots", drawn by
the assignment's charts module, see autograder/core/lesson.py); everything the student wrote is escaped.
"""
from __future__ import annotations

from html import escape

from autograder.classdata import overrides, zero
from autograder.core import late, lesson
from autograder.reports import failures, gradebook

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:980px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 10px}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:16px;margin:12px 0}
.score{font-size:40px;font-weight:700} .muted{color:#5b6474}
table{border-collapse:collapse;width:100%} td,th{padding:6px 8px;border-bottom:1px solid #eceff3;
text-align:left;vertical-align:top} .bar{background:#e6eaf0;border-radius:4px;height:12px;width:220px}
.bar>div{background:#0072B2;height:12px;border-radius:4px}
.passed{color:#0b7a3e;font-weight:600} .failed{color:#b3261e;font-weight:600}
.error{color:#8a5a00;font-weight:600}
pre{white-space:pre-wrap;margin:4px 0 0;font-family:ui-monospace,monospace;font-size:13px}
.plots{display:flex;flex-wrap:wrap;gap:12px} .plots svg{max-width:100%;height:auto}
.wrong{border:2px solid #b3261e;background:#fff7f6} .wrong h2{margin:0 0 8px;color:#b3261e}
.lost{font-weight:700;white-space:nowrap;color:#b3261e} .fix{margin:2px 0} code{font-size:12px}
.allgood{border:2px solid #0b7a3e} .allgood h2{margin:0;color:#0b7a3e}
"""

STATUS_WORDS = {"passed": "passed", "failed": "failed", "error": "did not run"}


def page(title: str, body: str) -> str:
    """A whole HTML document with the shared style; nothing is loaded from elsewhere."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def _task_rows(results: dict, assignment) -> str:
    scores = gradebook.task_scores(results, gradebook.item_ids(assignment))
    scored = {t.get("check") for t in results.get("tests", []) if t.get(overrides.MANUAL)}
    rows = []
    for item in assignment.manual:
        got = f"{scores[item.id]:.4g}" if item.id in scored else "not scored yet"
        rows.append(f"<tr><td><b>{escape(item.id)}</b> {escape(item.title)}</td><td>{got} / "
                    f"{item.points:g}</td><td></td><td class=\"muted\">scored by a person</td></tr>")
    manual_rows = "".join(rows)
    rows = []
    for task in assignment.tasks:
        got = scores[task.id]
        frac = got / task.points if task.points else 0.0
        rows.append(f"<tr><td><b>{escape(task.id)}</b> {escape(task.title)}</td>"
                    f"<td>{got:.4g} / {task.points:g}</td>"
                    f"<td><div class=\"bar\" role=\"img\" aria-label=\"{frac:.0%}\">"
                    f"<div style=\"width:{max(0.0, min(frac, 1.0)) * 100:.1f}%\"></div></div></td>"
                    f"<td class=\"muted\">reread: {escape(task.lesson)}</td></tr>")
    return ("<table><tr><th>task</th><th>points</th><th></th><th>lesson</th></tr>" + "".join(rows)
            + manual_rows + "</table>")


def _overrides(results: dict) -> str:
    """The course staff's changes (OUT/overrides.csv), each with its reason."""
    applied = results.get(overrides.KEY) or []
    if not applied:
        return ""
    rows = []
    for o in applied:
        was = "" if o.get("graded") is None else f"{o['graded']:.4g}"
        now = "not applied" if o.get("points") is None else f"{o['points']:.4g}"
        who = f" ({escape(str(o['grader']))})" if o.get("grader") else ""
        rows.append(f"<tr><td>{escape(str(o['item']))}</td><td>{was}</td><td><b>{now}</b></td>"
                    f"<td>{escape(str(o['reason']))}{who}</td></tr>")
    return ("<h2>Scores changed by the course staff</h2><div class=\"card\" id=\"overrides\"><table>"
            "<tr><th>item</th><th>grader's score</th><th>score</th><th>reason</th></tr>"
            + "".join(rows) + "</table></div>")


def _what_went_wrong(results: dict, assignment) -> str:
    """The top box: one row per failure (failures.ranked), most points lost first."""
    rows = failures.ranked(results, assignment)
    if results.get(overrides.KEY):   # a check the course staff gave its points back costs nothing
        rows = [r for r in rows if r.points > 1e-9]
    given = sum(float(t.get("score") or 0.0) for t in results.get("tests", []) if t.get(overrides.ADJUSTMENT))
    if not rows:
        if not results.get("tests"):
            return ""
        return "<div class=\"card allgood\" id=\"what-went-wrong\"><h2>Every check passed</h2></div>"
    lost = sum(r.points for r in rows)
    staff = (f"<p>The course staff changed your score by {given:+.3g} points (see \"Scores changed by the "
             f"course staff\" below): the score above counts it.</p>" if abs(given) > 1e-9 else "")
    body = []
    for r in rows:
        kind = "" if r.ran else " <span class=\"error\">(did not run)</span>"
        advice = f"<b>Fix:</b> {escape(r.fix)}" if r.fix else f"<b>Seen:</b> {escape(r.saw)}"
        body.append(f"<tr><td class=\"lost\">&minus;{r.points:.3g} pts</td>"
                    f"<td><b>{escape(r.task)}</b> {escape(r.what)}{kind}"
                    f"<div class=\"muted\"><code>{escape(', '.join(r.checks))}</code></div></td>"
                    f"<td><p class=\"fix\">{advice}</p></td>"
                    f"<td class=\"muted\">reread: {escape(r.lesson)}</td></tr>")
    return (f"<div class=\"card wrong\" id=\"what-went-wrong\"><h2>What went wrong: "
            f"{len(rows)} {'thing' if len(rows) == 1 else 'things'}, {lost:.3g} points</h2>"
            + staff + "<table><tr><th>cost</th><th>check</th><th>fix</th><th>lesson</th></tr>"
            + "".join(body) + "</table></div>")


def _checks(results: dict, assignment) -> str:
    from autograder.reports import mistakes
    by_task: dict[str, list[dict]] = {}
    for test in results.get("tests", []):
        by_task.setdefault(test.get("task", ""), []).append(test)
    parts = []
    for task in assignment.tasks:
        tests = by_task.get(task.id, [])
        if not tests:
            continue
        rows = []
        for t in tests:
            state = mistakes.outcome(t)
            rows.append(f"<tr><td class=\"{state}\">{STATUS_WORDS[state]}</td>"
                        f"<td>{escape(str(t.get('name', '')))}"
                        f"<pre>{escape(str(t.get('output', '')))}</pre></td>"
                        f"<td>{float(t.get('score') or 0):.3g} / {float(t.get('max_score') or 0):.3g}</td></tr>")
        parts.append(f"<h3>{escape(task.id)}: {escape(task.title)}</h3><table>{''.join(rows)}</table>")
    return "".join(parts) or "<p class=\"muted\">No checks ran.</p>"


def _late(results: dict) -> str:
    """The late-work lines: raw score, penalty and final score, and the evidence of the time."""
    v = results.get(late.RESULTS_KEY)
    if not isinstance(v, dict):
        return ""
    when = escape(str(v.get("submitted_at") or "unknown"))
    if v.get("days_late"):
        status = (f"{v['late_hours']:.1f} h late ({v['days_late']} day(s) after the due date "
                  f"{escape(str(v.get('due', '')))}); policy {escape(str(v.get('policy', '')))}: "
                  f"{v.get('penalty_percent', 0):g}% of the raw score")
    else:
        status = f"on time (due {escape(str(v.get('due', '')))})"
    extension = f"; extension: {escape(str(v['extension']))}" if v.get("extension") else ""
    return (f"<table class=\"late\"><tr><td>raw score</td><td>{v.get('raw_score', 0):.4g}</td></tr>"
            f"<tr><td>late penalty</td><td>&minus;{v.get('penalty', 0):.4g}</td></tr>"
            f"<tr><td><b>final score</b></td><td><b>{v.get('score', 0):.4g}</b></td></tr></table>"
            f"<p class=\"muted\">Submitted {when} ({escape(str(v.get('time_source', '')))}): "
            f"{status}{extension}.</p>")


def render(student: str, results: dict, assignment) -> str:
    """The feedback page of ``student``."""
    total = late.raw_score(results)
    verdict = results.get(late.RESULTS_KEY)
    if isinstance(verdict, dict):
        total = float(verdict.get("score", total))
    data = results.get(lesson.PLOTS_KEY) if isinstance(results.get(lesson.PLOTS_KEY), dict) else None
    plots = lesson.charts_html(assignment, data)
    note = gradebook.note_of(results)
    body = [f"<h1>{escape(assignment.name)} feedback: {escape(student)}</h1>",
            f"<p class=\"muted\">{escape(assignment.title)}</p>",
            _what_went_wrong(results, assignment),
            f"<div class=\"card\"><div class=\"score\">"
            f"{'no score' if zero.is_grader_failure(results) else f'{total:.4g}'} / {assignment.max_score:g}</div>",
            f"<p class=\"failed\">{escape(note)}</p>" if note else "",
            _late(results),
            _task_rows(results, assignment), "</div>", _overrides(results),
            f"<h2>Your measurements</h2><div class=\"card\">{plots}</div>" if plots else "",
            "<h2>Checks</h2>", f"<div class=\"card\">{_checks(results, assignment)}</div>",
            "<h2>Grader notes</h2>",
            f"<div class=\"card\"><pre>{escape(str(results.get('output', '')))}</pre></div>"]
    return page(f"{assignment.name} feedback: {student}", "".join(body))
