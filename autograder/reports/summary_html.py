"""OUT/summary.html: the class report as a self-contained page (no network).

Score histogram, mean per task, how many students made each classic mistake (what to reteach,
most common first), who got a zero without grading and why, and a link to every feedback page.
Built from summary.json's dict and the gradebook rows.
"""
from __future__ import annotations

from html import escape
from urllib.parse import quote

from autograder.reports import svg
from autograder.reports.feedback_html import page


def render(summary: dict, rows: list[dict]) -> str:
    """The class report; ``rows`` are gradebook rows (one per person)."""
    n = summary["students"]
    hist = summary["histogram"]
    edges = hist["bins"]
    labels = [f"{edges[i]:g}-{edges[i + 1]:g}" for i in range(len(hist["counts"]))]
    histogram = svg.bar_chart(labels, hist["counts"], title="Score histogram (students per bin)",
                              ylabel="students", value_fmt=lambda v: f"{v:g}", width=450)
    tasks = summary["tasks"]
    task_chart = svg.bar_chart(
        [f"{k}" for k in tasks], [100 * v["mean_fraction"] for v in tasks.values()],
        title="Mean score per task (% of its points)", ylabel="% of points", ymax=100,
        color=svg.PALETTE[2], value_fmt=lambda v: f"{v:.0f}%", width=450)
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
    zero_rows = "".join(f"<tr><td>{escape(e['student'])}</td><td>{escape(e['reason'])}</td></tr>"
                        for e in summary["not_graded"])
    student_rows = "".join(
        f"<tr><td><a href=\"{quote(r['student'])}/feedback.html\">{escape(r['student'])}</a></td>"
        f"<td>{escape(r['name'])}</td><td>{escape(r['total'])} / {escape(r['max_score'])}</td>"
        f"<td class=\"muted\">{escape(r['note'])}</td></tr>" for r in rows)
    body = [
        f"<h1>Class report: {escape(summary['assignment'])}</h1>",
        f"<p class=\"muted\">{n} students; mean {summary['mean_total']:g}, median "
        f"{summary['median_total']:g} of {summary['max_score']:g} points. {escape(summary['layout'])}</p>",
        f"<div class=\"card plots\">{histogram}{task_chart}</div>",
        "<h2>What to reteach</h2>",
        "<div class=\"card\"><p class=\"muted\">A student counts for a mistake when a check ran "
        "their code and saw it. Code that raised, hung, crashed or was missing counts below instead."
        "</p>",
        f"<div class=\"plots\">{mistakes_chart}</div>",
        "<table><tr><th>mistake</th><th>students</th><th>lesson</th><th>who</th></tr>",
        "".join(mistake_rows), "</table>",
        f"<p>Code that did not run in at least one check: <b>{not_run['students']}</b> students.</p></div>",
        "<h2>Not graded (zero with a reason)</h2>",
        (f"<div class=\"card\"><table>{zero_rows}</table></div>" if zero_rows
         else "<div class=\"card muted\">None.</div>"),
        "<h2>Students</h2>",
        f"<div class=\"card\"><table><tr><th>student</th><th>name</th><th>total</th><th>note</th></tr>"
        f"{student_rows}</table></div>",
    ]
    return page(f"{summary['assignment']} class report", "".join(body))
