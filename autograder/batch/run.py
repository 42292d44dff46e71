"""grade-all from start to end: plan, execute, record, write the class files.

Order of work: settle the options against course.yml (autograder/batch/options.py); find the layout
and the submissions; open OUT and plan who is graded this run (autograder/batch/plan.py); give a
zero with a reason at once to entries with nothing gradable; hand the others to the executor
(autograder/batch/executors/) and record each outcome the moment it arrives
(autograder/batch/record.py); then write gradebook.csv, canvas.csv, checks.csv, summary.json and
summary.html from every student's results.json (autograder/batch/class_files.py). Ctrl-C (or
SIGTERM) stops the executor, writes the class files for what is finished, and exits 130; a rerun
picks up the rest.
"""
from __future__ import annotations

import contextlib
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import class_files, plan
from autograder.batch import extensions as kept_extensions
from autograder.batch.class_files import CANVAS, CHECKS, GRADEBOOK, LOG, SIMILARITY, SUMMARY_HTML, SUMMARY_JSON
from autograder.batch.executors.base import Incomplete, Job, Setup
from autograder.batch.options import BatchOptions, Settled, settle
from autograder.batch.progress import Progress
from autograder.batch.record import Context, Recorder
from autograder.classdata import discover, kept, moodle_dates, overrides, partial, regrades, store, zero
from autograder.core import course, terminal
from autograder.grading import budget


def grade_all(src, out, options: BatchOptions | None = None, *, the_course: course.Course | None = None,
              stream=None) -> int:
    """Grade the class in ``src`` into ``out``; the exit status (0 done, 1 when the grader failed
    on a student, a file could not be written or the executor left some ungraded, 130
    interrupted). Before anyone is graded, the options, the course, the extensions given and
    OUT/overrides.csv are checked: any problem is a UsageError (exit 2). ``the_course``: as the
    command line loaded it (None: ``course.load()``'s, for the Python API)."""
    raw = stream if stream is not None else sys.stderr
    stream = terminal.CleanStream(raw)   # names from the download are printed, never obeyed
    options = options if options is not None else BatchOptions()
    settled = settle(options, the_course if the_course is not None else course.load())
    layout = discover.discover(src, settled.asg, exclude=Path(out), stage=Path(out) / discover.STAGING)
    if settled.moodle_times is not None:
        layout = moodle_dates.attach(layout, settled.moodle_times, options.moodle_worksheet)
    wanted = plan.wanted(layout, options.student)
    key, full_key = plan.keys(settled)
    with store.Store(out, key) as st:   # an OUT that cannot be written is refused before any output
        plan.remember_keys(st.out, settled)
        ctx = open_run(st, layout, settled, full_key, stream)
        todo = plan.todo(st, layout, wanted, settled, full_key, stream)
        progress = Progress(len(todo), raw)   # draws its own bar; cleans what it shows
        run = Run(out, settled, layout, ctx, Recorder(ctx, todo, progress), progress)
        status, interrupted = execute(run, todo)
        return conclude(run, status, interrupted)


@dataclass(frozen=True)
class Run:
    """One grade-all run once OUT is open: ``out`` as given (the messages quote it), the settled
    options, the ``layout`` found, the record step's context and ``recorder``, the progress bar."""

    out: str | Path
    settled: Settled
    layout: discover.Layout
    ctx: Context
    recorder: Recorder
    progress: Progress


def open_run(st: store.Store, layout: discover.Layout, settled: Settled, full_key: str, stream) -> Context:
    """What this run records with: the layout found said, the extensions in force (those given
    added to OUT/extensions.csv) and OUT/overrides.csv validated against the class."""
    out, given = st.out, settled.options.extensions
    run_at = partial.now()
    print(f"found: {layout.description}: {len(layout.submissions)} submissions", file=stream)
    for note in layout.notes:
        print(f"  note: {note}", file=stream)
    ext = kept_extensions.add(out, given, run_at) if given else kept_extensions.stored(out)
    if ext:
        print(kept_extensions.in_force_line(ext, out), file=stream)
    ovr = plan.load_overrides(st.out, layout, settled.asg, stream, kept.absent(st, layout))
    known = {x for s in layout.submissions
             for x in (s.student, *(y for m in s.members for y in (m.sid, m.email, m.name, m.lms_id)))}
    unknown = sorted(set(ext) - known)
    if unknown:
        print(f"warning: {given or Path(out) / kept_extensions.NAME}: no such student in the "
              f"submissions: {', '.join(unknown[:8])}", file=stream)
    return Context(st, settled.asg, settled.options.only, st.key, full_key, run_at, ext, ovr, stream)


def execute(run: Run, todo: list[tuple[discover.Submission, str]]) -> tuple[int, bool]:
    """Zeros for the entries of ``todo`` with nothing gradable, then the rest on the executor, each
    outcome recorded as it arrives: (exit status so far, whether Ctrl-C or SIGTERM interrupted)."""
    stream, settled = run.ctx.stream, run.settled
    setup = Setup(run.ctx.store, settled.asg, settled.jobs, budget.watchdog_s(settled.budget_s), Path(run.out) / LOG,
                  run.progress, stream, settled.course.path)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        jobs = []
        for sub, digest in todo:
            if sub.problem:
                run.recorder.save(sub, digest, zero.zero_results(settled.asg, sub.problem), 0.0, graded=False)
            else:
                jobs.append(Job(sub.student, _payload(sub, settled), digest))
        if jobs:
            with contextlib.closing(settled.options.executor(setup).grade(jobs)) as outcomes:
                for outcome in outcomes:
                    run.recorder.outcome(outcome)
    except Incomplete as exc:
        print(exc, file=stream)
        return 1, False
    except KeyboardInterrupt:
        return 0, True
    except OSError as exc:   # OUT became unwritable for everyone (disk or quota full, its log)
        print(f"error: cannot write in {run.out}: {exc.strerror or exc}"
              f"{f' ({exc.filename})' if exc.filename else ''}; grading stopped", file=stream)
        return 1, False
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0, False


def _payload(sub: discover.Submission, settled: Settled) -> dict:
    """The worker's request for ``sub`` (autograder/batch/worker.py)."""
    o = settled.options
    return {"path": str(sub.path.resolve()), "assignment": settled.asg.name, "device": settled.device,
            "time_limit_s": o.time_limit_s, "budget_s": settled.budget_s, "only": sorted(o.only) if o.only else None}


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def conclude(run: Run, status: int, interrupted: bool) -> int:
    """The class files, the similarity report when asked, and the closing lines: the exit status."""
    out, stream = run.out, run.ctx.stream
    if run.settled.options.similarity and not interrupted:   # first: summary.html links its report
        from autograder.similarity import run as similar
        similar.write_report(run.layout, run.ctx.asg, Path(out) / SIMILARITY, stream=stream)
    try:
        entries = class_files.write_class_files(run.ctx, run.layout, run.recorder.unsaved)
    except OSError as exc:
        print(f"error: cannot write the class files in {out}: {exc.strerror or exc}"
              f"{f' ({exc.filename})' if exc.filename else ''}", file=stream)
        return 130 if interrupted else 1
    if interrupted:
        print(f"\ninterrupted: {run.progress.done} of {run.progress.total} graded this run; "
              f"rerun the same command to grade the rest", file=stream)
        return 130
    return closing_lines(run, entries, status)


def closing_lines(run: Run, entries: list, status: int) -> int:
    """What was written, the manual items left to score, the regrades logged, the students not
    saved and those the grader failed on; the exit status (1 for either of the last two)."""
    out, stream, asg, unsaved = run.out, run.ctx.stream, run.ctx.asg, run.recorder.unsaved
    st = run.ctx.store
    print(f"wrote {len(entries)} results, {GRADEBOOK}, {CANVAS}, {CHECKS}, {SUMMARY_JSON}, "
          f"{SUMMARY_HTML} in {out}", file=stream)
    for item in asg.manual:   # what is left for a person to score
        scored = sum(1 for _s, r in entries if any(t.get(overrides.MANUAL) and t.get("check") == item.id
                                                   for t in r.get("tests", [])))
        print(f"manual item {item.id}: scored for {scored} of {len(entries)} student(s)"
              f"{f'; score the rest in {Path(out) / overrides.NAME}' if scored < len(entries) else ''}",
              file=stream)
    if st.regraded:
        print(f"regrades: {st.regraded} score change(s) logged in {Path(out) / regrades.NAME}",
              file=stream)
    if unsaved:
        print(f"error: {len(unsaved)} student(s) graded but not saved in {out} (warnings above): "
              f"{', '.join(sorted(unsaved)[:8])}; fix the folder and rerun", file=stream)
        status = status or 1
    failed = sorted(s.student for s, r in entries if zero.is_grader_failure(r))
    if failed:
        print(f"error: the grader itself failed on {len(failed)} student(s): {', '.join(failed[:8])}"
              f"{' ...' if len(failed) > 8 else ''}; their cells in {GRADEBOOK}, {CANVAS} and {CHECKS} "
              f"are empty (not 0); fix the grader (see {Path(out) / LOG}) and rerun: they are "
              f"retried", file=stream)
        status = status or 1
    return status
