"""OUT/summary.html: the class report as a self-contained page (no network).

Score histogram, mean per task, the pass rate of every check (table and chart), how many students
made each classic mistake (what to reteach, most common first; every mistake of the catalogue,
also those nobody made), whose code did not run and why, who got a zero without grading and why,
partial results, regrades that changed a total, the students the grader itself failed on (no
score), links to the class files (gradebook.csv, canvas.csv, checks.csv, overrides.csv,
extensions.csv, regrades.csv, submitted.csv, the similarity report when there is one) and every
student with their total, late penalty and submission time, a mark where the course staff
changed a score, and a link to their feedback page. Built from summary.json's dict
and the gradebook rows.
"""
from __future__ import annotations

from html import escape
from urllib.parse import quote

from autograder.reports import svg
from autograder.reports.feedback_html import page

#: The class files linked from the top of the report (in OUT beside summary.html).
CLASS_FILES = ("gradebook.csv", "canvas.csv", "checks.csv", "overrides.csv", "extensions.csv",
               "regrades.csv", "submitted.csv", "similarity/report.html")


def render(summary: dict, rows: list[dict], files=()) -> str:
    """The class report; ``rows`` are gradebook rows (one per person); ``files``: the class files
    (CLASS_FILES) that exist beside it, linked at the top."""
    body = [
        _header(summary, files),
        f"<div class=\"card plots\">{_histogram(summary)}{_task_chart(summary)}</div>",
        _reteach(summary),
        _checks(summary),
        _regrades(summary),
        _not_graded(summary),
        _students(rows),
    ]
    return page(f"{summary['assignment']} class report", "".join(body))


def _header(summary: dict, files) -> str:
    """The title, the class files' links, the grader failures, the counts and the partial results."""
    n = summary["students"]
    links = " &middot; ".join(f"<a href=\"{quote(name)}\">{escape(name)}</a>" for name in files)
    failed = summary.get("grader_failed", [])
    failed_rows = "".join(f"<tr><td><a href=\"{quote(e['student'])}/feedback.html\">{escape(e['student'])}"
                          f"</a></td><td>{escape(e['reason'])}</td></tr>" for e in failed)
    partial_names = summary.get("partial", [])
    return "".join([
        f"<h1>Class report: {escape(summary['assignment'])}</h1>",
        f"<p class=\"files\">Class files: {links}</p>" if links else "",
        (f"<div class=\"card failed\" id=\"grader-failed\">The grader itself failed on {len(failed)} "
         f"student(s): no score, their cells in the exports are empty (not 0), and they are left out "
         f"of every figure below; fix the grader and rerun.<table>{failed_rows}</table></div>"
         if failed else ""),
        f"<p class=\"muted\">{n} students; mean {summary['mean_total']:g}, median "
        f"{summary['median_total']:g} of {summary['max_score']:g} points. {escape(summary['layout'])}</p>",
        (f"<div class=\"card failed\">{len(partial_names)} partial result(s), graded on some checks "
         f"only (--checks) with no full result to merge into: their totals are not grades and "
         f"gradebook.csv and canvas.csv leave them out: {escape(', '.join(partial_names[:20]))}"
         f"{' ...' if len(partial_names) > 20 else ''}</div>" if partial_names else ""),
    ])


def _histogram(summary: dict) -> str:
    hist = summary["histogram"]
    edges = hist["bins"]
    labels = [f"{edges[i]:g}-{edges[i + 1]:g}" for i in range(len(hist["counts"]))]
    return svg.bar_chart(labels, hist["counts"], title="Score histogram (students per bin)",
                         ylabel="students", value_fmt=lambda v: f"{v:g}", width=450)


def _task_chart(summary: dict) -> str:
    tasks = summary["tasks"]
    return svg.bar_chart(
        [f"{k}" for k in tasks], [100 * v["mean_fraction"] for v in tasks.values()],
        title="Mean score per task (% of its points)", ylabel="% of points", ymax=100,
        color=svg.PALETTE[2], value_fmt=lambda v: f"{v:.0f}%", width=450)


def _reteach(summary: dict) -> str:
    """What to reteach: every classic mistake (most students first), then whose code did not run."""
    n = summary["students"]
    ranked = sorted(summary["mistakes"], key=lambda m: (-m["students"], m["id"]))
    mistake_rows = []
    for m in ranked:
        share = m["students"] / n if n else 0.0
        who = ", ".join(m["who"][:12]) + (" ..." if len(m["who"]) > 12 else "")
        mistake_rows.append(
            f"<tr><td><b>{escape(m['title'])}</b><br><span class=\"muted\">{escape(m['explain'])}</span></td>"
            f"<td>{m['students']} ({share:.0%})<div class=\"bar\"><div style=\"width:{share * 100:.1f}%\">"
            f"</div></div></td><td>{escape(m['lesson'])}</td>"
            f"<td class=\"muted\">{escape(who)}</td></tr>")
    mistakes_chart = svg.hbar_chart([m["title"] for m in ranked], [m["students"] for m in ranked],
                                    title="Students per classic mistake", xlabel="students",
                                    color=svg.PALETTE[1])
    not_run = summary["not_run"]
    not_run_rows = "".join(f"<tr><td>{escape(e['student'])}</td><td>{escape(e['reason'])}</td></tr>"
                           for e in not_run.get("details", []))
    return "".join([
        "<h2>What to reteach</h2>",
        "<div class=\"card\"><p class=\"muted\">A student counts for a mistake when a check ran "
        "their code and saw it. Code that raised, hung, crashed or was missing counts below instead."
        "</p>",
        f"<div class=\"plots\">{mistakes_chart}</div>",
        "<table><tr><th>mistake</th><th>students</th><th>lesson</th><th>who</th></tr>",
        "".join(mistake_rows), "</table>",
        f"<p>Code that did not run in at least one check: <b>{not_run['students']}</b> students"
        f"{':' if not_run_rows else '.'}</p>",
        f"<table><tr><th>student</th><th>first check that did not run, and why</th></tr>{not_run_rows}</table>"
        if not_run_rows else "", "</div>",
    ])


def _checks(summary: dict) -> str:
    """The pass rate of every check: a chart and a table."""
    checks = summary.get("checks", {})
    if not checks:   # the heading twice, as the page has always had it (tests compare pages)
        return "<h2>Pass rate per check</h2>" * 2 + "<div class=\"card muted\">No checks ran.</div>"
    check_rows = "".join(
        f"<tr><td>{escape(c)}</td><td>{escape(r['task'])}</td><td>{r['passed']} / {r['graded']}"
        f" ({r['pass_rate']:.0%})</td><td>{r['failed']}</td><td>{r['not_run']}</td></tr>"
        for c, r in checks.items())
    checks_chart = svg.hbar_chart(list(checks), [100 * r["pass_rate"] for r in checks.values()],
                                  title="Pass rate per check (% of students graded on it)",
                                  xlabel="% passed", color=svg.PALETTE[2], vmax=100,
                                  value_fmt=lambda v: f"{v:.0f}%")
    return ("<h2>Pass rate per check</h2>"
            f"<div class=\"card\"><div class=\"plots\">{checks_chart}</div>"
            "<table><tr><th>check</th><th>task</th><th>passed</th><th>failed (a verdict)</th>"
            f"<th>did not run</th></tr>{check_rows}</table></div>")


def _regrades(summary: dict) -> str:
    regraded_rows = "".join(
        f"<tr><td>{escape(r.get('student', ''))}</td><td>{escape(r.get('old_score', ''))} &rarr; "
        f"{escape(r.get('new_score', ''))}</td><td>{escape(r.get('reason', ''))}</td>"
        f"<td class=\"muted\">{escape(r.get('run', ''))}</td></tr>" for r in summary.get("regraded", []))
    return "<h2>Regrades that changed a total</h2>" + (
        f"<div class=\"card\"><p class=\"muted\">From regrades.csv (every changed check is there)."
        f"</p><table><tr><th>student</th><th>total</th><th>reason</th><th>run</th></tr>"
        f"{regraded_rows}</table></div>" if regraded_rows else "<div class=\"card muted\">None.</div>")


def _not_graded(summary: dict) -> str:
    zero_rows = "".join(f"<tr><td>{escape(e['student'])}</td><td>{escape(e['reason'])}</td></tr>"
                        for e in summary["not_graded"])
    return "<h2>Not graded (zero with a reason)</h2>" + (
        f"<div class=\"card\"><table>{zero_rows}</table></div>" if zero_rows
        else "<div class=\"card muted\">None.</div>")


def _students(rows: list[dict]) -> str:
    """Every person: the total, the late penalty and when they handed in (under a late policy),
    a mark where the course staff changed a score (overrides.csv), and the note."""
    student_rows = "".join(
        f"<tr><td><a href=\"{quote(r['student'])}/feedback.html\">{escape(r['student'])}</a></td>"
        f"<td>{escape(r['name'])}</td><td>{escape(r['total'])} / {escape(r['max_score'])}</td>"
        f"<td>{_late_cell(r)}</td>"
        f"<td>{_override_mark(r)}</td><td class=\"muted\">{escape(r['note'])}</td></tr>" for r in rows)
    late = [r for r in rows if _penalty(r) > 0]
    late_box = (f"<p>Late: <b>{len(late)}</b> of {len(rows)}, "
                f"{sum(_penalty(r) for r in late):.4g} points taken in all "
                f"(the late column says when each handed in and how we know).</p>"
                if any(r.get("submitted_at") or r.get("time_source") for r in rows) else "")
    return ("<h2>Students</h2>"
            f"<div class=\"card\" id=\"students\">{late_box}<table><tr><th>student</th><th>name</th>"
            "<th>total</th><th>late</th><th>overrides</th><th>note</th></tr>"
            f"{student_rows}</table></div>")


def _override_mark(row: dict) -> str:
    """A mark where the course staff changed a score, the changes and reasons on hover."""
    changes = row.get("overrides") or ""
    return f"<b title=\"{escape(changes)}\">changed by staff</b>" if changes else ""


def _penalty(row: dict) -> float:
    try:
        return float(row.get("late_penalty") or 0.0)
    except ValueError:
        return 0.0


def _late_cell(row: dict) -> str:
    """The late column: the penalty (or 'on time') and the submission time with its source."""
    if not (row.get("submitted_at") or row.get("time_source")):
        return ""
    penalty = _penalty(row)
    verdict = f"<b>&minus;{penalty:.4g}</b>" if penalty > 0 else "on time"
    return (f"{verdict}<div class=\"muted\" title=\"{escape(str(row.get('time_source') or ''))}\">"
            f"{escape(str(row.get('submitted_at') or 'no time'))}</div>")
