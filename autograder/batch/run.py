"""grade-all from start to end: discover, skip what is done, grade the rest, write the class files.

Order of work: find the layout and the submissions; hash each one; give a zero with a reason at
once to entries with nothing gradable; grade the others on the pool, saving each student's files
the moment they arrive; then write gradebook.csv, canvas.csv, summary.json and summary.html from
every student's results.json. Ctrl-C (or SIGTERM) kills the workers, writes the class files for
what is finished, and exits 130; a rerun picks up the rest.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import sys
from pathlib import Path

from autograder.core import course
from autograder.batch import discover, store
from autograder.reports import feedback_html, gradebook, summary, summary_html
from autograder.batch.executors import local as pool
from autograder.batch.zero import zero_results
from autograder.core.errors import UsageError

GRADEBOOK = "gradebook.csv"
CANVAS = "canvas.csv"
SUMMARY_JSON = "summary.json"
SUMMARY_HTML = "summary.html"
LOG = "grade-all.log"
assert {GRADEBOOK, CANVAS, SUMMARY_JSON, SUMMARY_HTML, LOG} == discover.RESERVED
#: Default wall-clock budget of one submission, in per-call time limits (course.yml time_limit_s).
BUDGET_CALLS = 20


def grading_key(asg, device: str, time_limit_s: float | None, only=None) -> str:
    """What else a grade depends on besides the submission: the assignment as course.yml sets it
    (points, limits, tasks), the device, any time-limit override and a --checks subset. A change
    regrades everyone."""
    data = json.dumps({"assignment": dataclasses.asdict(asg), "device": device,
                       "time_limit_s": time_limit_s, "only": sorted(only) if only else None},
                      sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def select(layout: discover.Layout, name: str) -> discover.Submission:
    """The submission of ``name`` (its folder name under OUT, or a member's sid, email or name)."""
    for sub in layout.submissions:
        if name == sub.student or any(name in (m.sid, m.email, m.name) for m in sub.members):
            return sub
    known = ", ".join(s.student for s in layout.submissions[:8])
    raise UsageError(f"--student {name!r}: no such student in the submissions (e.g. {known})")


def grade_all(src, out, *, jobs: int | None = None, force: bool = False, student: str | None = None,
              assignment: str | None = None, device: str | None = None, budget_s: float | None = None,
              time_limit_s: float | None = None, only=None, stream=None, executor=None) -> int:
    """Grade the class in ``src`` into ``out``; the exit status (0 done, 130 interrupted).

    ``executor``: None grades on local worker processes; otherwise an object whose
    ``grade(st, jobs, digests, asg, budget_s=, progress=, stream=)`` grades the jobs elsewhere
    into the store and returns 0, or 1 when some were left ungraded
    (autograder/batch/executors/slurm/executor.py: a Slurm job array).
    """
    stream = stream if stream is not None else sys.stderr
    asg = course.load().assignment(assignment)
    device = device or asg.device
    if device not in course.DEVICES:
        raise UsageError(f"--device {device!r}: expected one of {', '.join(course.DEVICES)}")
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1")
    limit = float(time_limit_s or asg.time_limit_s)
    budget_s = float(budget_s or BUDGET_CALLS * limit)
    layout = discover.discover(src, asg, exclude=Path(out))
    chosen = [select(layout, student)] if student else list(layout.submissions)
    print(f"found: {layout.description}: {len(layout.submissions)} submissions", file=stream)
    for note in layout.notes:
        print(f"  note: {note}", file=stream)
    with store.Store(out, grading_key(asg, device, time_limit_s, only)) as st:
        todo = []
        for sub in chosen:
            digest = store.content_hash(sub)
            if force or student or not st.is_done(sub.student, digest):
                todo.append((sub, digest))
        skipped = len(chosen) - len(todo)
        if skipped:
            print(f"skipping {skipped} already graded (unchanged since; --force regrades)", file=stream)
        progress = pool.Progress(len(todo), stream)
        by_key = {sub.student: (sub, digest) for sub, digest in todo}

        def save(sub, digest, results, seconds, graded=True):
            st.save(sub.student, digest, results, feedback_html.render(sub.student, results, asg),
                    seconds=seconds, source=str(sub.path))
            score = sum(gradebook.task_scores(results, [t.id for t in asg.tasks]).values())
            progress.step(f"{sub.student} {score:.4g}/{asg.max_score:g}", graded=graded)

        def on_done(outcome: pool.Outcome):
            sub, digest = by_key[outcome.job.key]
            results = outcome.results if outcome.results is not None else zero_results(
                asg, outcome.failure or "grading failed", execution_time=outcome.seconds)
            save(sub, digest, results, outcome.seconds)

        interrupted = False
        status = 0
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            gradable = []
            for sub, digest in todo:
                if sub.problem:
                    save(sub, digest, zero_results(asg, sub.problem), 0.0, graded=False)
                else:
                    gradable.append(pool.Job(sub.student, {
                        "path": str(sub.path.resolve()), "assignment": asg.name, "device": device,
                        "time_limit_s": time_limit_s, "only": sorted(only) if only else None}))
            if gradable and executor is not None:
                status = executor.grade(st, gradable, {s.student: d for s, d in todo}, asg,
                                        budget_s=budget_s, progress=progress, stream=stream)
            elif gradable:
                with open(Path(out) / LOG, "ab") as log:
                    workers = pool.Pool(min(jobs, len(gradable)), budget_s=budget_s, log=log)
                    try:
                        workers.run(gradable, on_done)
                    except RuntimeError as exc:
                        print(f"error: {exc} ({Path(out) / LOG})", file=stream)
                        return 1
                    except OSError as exc:   # OUT became unwritable (disk full, removed)
                        print(f"error: cannot write in {out}: {exc.strerror or exc}", file=stream)
                        return 1
                    report_stats(workers.stats, stream)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            signal.signal(signal.SIGTERM, previous)
        entries = write_class_files(st, layout, asg)
        if interrupted:
            print(f"\ninterrupted: {progress.done} of {len(todo)} graded this run; "
                  f"rerun the same command to grade the rest", file=stream)
            return 130
        print(f"wrote {len(entries)} results, {GRADEBOOK}, {CANVAS}, {SUMMARY_JSON}, "
              f"{SUMMARY_HTML} in {out}", file=stream)
        return status


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def report_stats(stats: list[pool.WorkerStats], stream) -> None:
    for i, s in enumerate(stats):
        print(f"worker {i + 1}: {s.cpu_s:.1f} CPU s, peak memory {s.maxrss_kb / 1024:.0f} MiB "
              f"(largest process it started: {s.children_maxrss_kb / 1024:.0f} MiB)", file=stream)


def write_class_files(st: store.Store, layout: discover.Layout, asg) -> list:
    """gradebook.csv, canvas.csv, summary.json and summary.html from every finished student."""
    entries = []
    for sub in layout.submissions:
        results = st.results(sub.student)
        if results is not None and st.record(sub.student) is not None:
            entries.append((sub, results))
    out = st.out
    store.atomic_write(out / GRADEBOOK, gradebook.gradebook_csv(entries, asg))
    store.atomic_write(out / CANVAS, gradebook.canvas_csv(entries, asg))
    data = summary.build(entries, asg, layout.description)
    store.atomic_write(out / SUMMARY_JSON, json.dumps(data, indent=2) + "\n")
    store.atomic_write(out / SUMMARY_HTML, summary_html.render(data, gradebook.rows(entries, asg)))
    return entries
