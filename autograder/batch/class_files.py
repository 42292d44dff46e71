"""grade-all's last step: the class files in OUT, from every finished student.

gradebook.csv, canvas.csv and checks.csv (the exports: an edited copy is moved aside,
autograder/batch/exports.py), partial.csv (results graded with --checks and no full result to
merge into: never in the exports), summary.json and summary.html. OUT/overrides.csv and the late
verdicts are brought up to date on the way: a new override, extension or policy needs no regrade.
"""
from __future__ import annotations

import json

from autograder.batch import exports, submitted
from autograder.batch import extensions as kept_extensions
from autograder.batch.record import Context, dated, finish
from autograder.classdata import dates, discover, kept, overrides, partial, regrades, store
from autograder.core import late
from autograder.reports import checks_csv, feedback_html, gradebook, summary, summary_html

GRADEBOOK = "gradebook.csv"
CANVAS = "canvas.csv"
SUMMARY_JSON = "summary.json"
SUMMARY_HTML = "summary.html"
LOG = "grade-all.log"
PARTIAL = "partial.csv"
SIMILARITY = "similarity"
CHECKS = "checks.csv"
assert {GRADEBOOK, CANVAS, SUMMARY_JSON, SUMMARY_HTML, LOG, PARTIAL, regrades.NAME, SIMILARITY, CHECKS,
        overrides.NAME, kept_extensions.NAME, dates.NAME, discover.STAGING} == discover.RESERVED


def write_class_files(ctx: Context, layout: discover.Layout, unsaved: dict | None = None) -> list:
    """gradebook.csv, canvas.csv, checks.csv, summary.json and summary.html from every finished
    student of ``layout``, with a warning line for partial results (they go to partial.csv) and,
    under a late policy, a line counting the late. ``unsaved``: student -> results graded this run
    whose files could not be written (they are exported all the same). The entries exported
    ((submission, results) pairs)."""
    entries, partials = current(ctx, layout, unsaved or {})
    out, asg, stream = ctx.store.out, ctx.asg, ctx.stream
    generated = {GRADEBOOK: gradebook.gradebook_csv(entries, asg), CANVAS: gradebook.canvas_csv(entries, asg),
                 CHECKS: checks_csv.checks_csv(entries, asg)}
    exports.write(out, generated, ctx.run_at, stream)
    if partials or (out / PARTIAL).exists():
        store.atomic_write(out / PARTIAL, gradebook.gradebook_csv(partials, asg))
    if partials and stream is not None:
        names = [s.student for s, _ in partials]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        print(f"warning: {len(names)} partial result(s) (graded with --checks, no full result to "
              f"merge into) left out of {GRADEBOOK} and {CANVAS}: {shown}; they are in {PARTIAL}; "
              f"grade them without --checks", file=stream)
    if getattr(asg, "late", None) is not None and stream is not None:
        print(late_line(entries + partials, asg), file=stream)
    everyone = sorted(entries + partials, key=lambda e: e[0].student)
    data = summary.build(everyone, asg, layout.description,
                         partial=[s.student for s, _ in partials],
                         regraded=regrades.total_changes(out))
    store.atomic_write(out / SUMMARY_JSON, json.dumps(data, indent=2) + "\n")
    present = [name for name in summary_html.CLASS_FILES if (out / name).is_file()]
    store.atomic_write(out / SUMMARY_HTML, summary_html.render(data, gradebook.rows(everyone, asg), present))
    return entries


def current(ctx: Context, layout: discover.Layout, unsaved: dict) -> tuple[list, list]:
    """(full entries, partial entries): each finished student's results with OUT/overrides.csv
    and the late verdict as they stand now (a change is logged in regrades.csv and the student's
    pages rewritten). A student whose stored files are damaged and were not regraded (an
    interrupted run) is left out with a warning line."""
    st, stream = ctx.store, ctx.stream
    entries, partials = [], []
    away = kept.absent(st, layout)
    if away and stream is not None:
        print(f"kept {len(away)} student(s) graded before but not in this download, marked absent in "
              f"{GRADEBOOK} and {CANVAS}: {', '.join(s.student for s in away[:8])}"
              f"{' ...' if len(away) > 8 else ''}", file=stream)
    for sub in (*layout.submissions, *away):
        if sub.student in unsaved:
            fresh = unsaved[sub.student]
        else:
            results = st.results(sub.student)
            if results is None or st.record(sub.student) is None:
                problem = st.damage(sub.student)
                if problem and stream is not None:
                    print(f"warning: {sub.student}: {problem}; left out of the class files until a "
                          f"rerun regrades it", file=stream)
                continue
            when = _time_of(ctx, sub, results)
            fresh = finish(sub, results, ctx.asg, ctx.extensions, ctx.overrides_of, results, when=when)
            if fresh != results:
                logged = overrides.log_rows(ctx.run_at or partial.now(), sub.student, results, fresh)
                regrades.append(st.out, logged)
                st.regraded += len(logged)
                st.write_pages(sub.student, fresh, feedback_html.render(sub.student, fresh, ctx.asg))
        _warn_clamped(st.out, sub.student, fresh, stream)
        (partials if partial.is_partial(fresh) else entries).append((sub, fresh))
    return entries, partials


def _warn_clamped(out, student: str, results: dict, stream) -> None:
    """A warning line per override that asked for a score outside the item's points."""
    for o in overrides.clamped(results) if stream is not None else ():
        print(f"warning: {out / overrides.NAME} row {o['row']}: {student}'s {o['item']} would score "
              f"{o['asked']:g} with {overrides.asking(o)}, outside 0 to {o['most']:g}; counted as "
              f"{o['points']:g}", file=stream)


def _time_of(ctx: Context, sub: discover.Submission, results: dict):
    """The submission time of a stored result under a late policy (None without one): a student
    not in this download keeps the time their verdict was judged on; the others are dated as
    when graded (autograder/batch/record.py ``dated``)."""
    if getattr(ctx.asg, "late", None) is None:
        return None
    if sub.layout == kept.ABSENT:
        before = kept.stored_time(results)
        if before is not None:
            return submitted.Submitted(*before)
    return dated(ctx, sub, ctx.store.record(sub.student).hash)


def late_line(entries, asg) -> str:
    """One line for the TA: how many were late under the policy, and where the times came from;
    a second, a warning, when most of the class is late (a wrong due date or wrong times)."""
    verdicts = [r.get(late.RESULTS_KEY) or {} for _s, r in entries]
    sources: dict[str, int] = {}
    for v in verdicts:
        source = str(v.get("time_source", "")).split(" (", 1)[0]
        sources[source] = sources.get(source, 0) + 1
    n_late = sum(1 for v in verdicts if v.get("days_late"))
    where = ", ".join(f"{k} {n}" for k, n in sorted(sources.items()))
    line = (f"late work: {n_late} of {len(verdicts)} late (due {asg.late.due.isoformat()}, policy "
            f"{asg.late.policy}); submission times from: {where}")
    if len(verdicts) > 1 and n_late * 2 > len(verdicts):
        line += (f"\nwarning: most of the class ({n_late} of {len(verdicts)}) is late: check course.yml's "
                 f"due date and the times' sources above before exporting (a download copied "
                 f"without its files' times dates them when copied)")
    return line
