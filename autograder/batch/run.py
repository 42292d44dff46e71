"""grade-all from start to end: discover, skip what is done, grade the rest, write the class files.

Order of work: find the layout and the submissions; hash each one; give a zero with a reason at
once to entries with nothing gradable; grade the others on the pool, saving each student's files
the moment they arrive; then write gradebook.csv, canvas.csv, summary.json and summary.html from
every student's results.json. Ctrl-C (or SIGTERM) kills the workers, writes the class files for
what is finished, and exits 130; a rerun picks up the rest.
"""
from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import signal
import sys
from pathlib import Path

from autograder.batch import exports, fingerprint, preflight, submitted
from autograder.batch import extensions as kept_extensions
from autograder.batch.executors import local as pool
from autograder.classdata import discover, overrides, partial, regrades, store, zero
from autograder.classdata.zero import zero_results
from autograder.core import course, late
from autograder.core.errors import UsageError
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
        overrides.NAME, kept_extensions.NAME, discover.STAGING} == discover.RESERVED
#: Default wall-clock budget of one submission, in per-call time limits (course.yml time_limit_s).
BUDGET_CALLS = 20
#: errno values of a failed write that every later write in OUT would meet too (disk or quota
#: full): grading stops; any other failure costs only that student's files.
OUT_GONE = frozenset({errno.ENOSPC, errno.EDQUOT})


def grading_key(asg, device: str, time_limit_s: float | None, only=None) -> str:
    """What else a grade depends on besides the submission: the assignment as course.yml sets it
    (points, limits, tasks; not its late policy, which is applied without regrading), the
    grader's check code (autograder/batch/fingerprint.py), the device, any time-limit override and
    a --checks subset. A change regrades everyone."""
    settings = dataclasses.asdict(asg)
    settings.pop("late", None)
    data = json.dumps({"assignment": settings, "device": device, "grader": fingerprint.grader_digest(asg),
                       "time_limit_s": time_limit_s, "only": sorted(only) if only else None},
                      sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def select(layout: discover.Layout, name: str) -> discover.Submission:
    """The submission of ``name`` (its folder name under OUT, or a member's sid, email, name or LMS id)."""
    for sub in layout.submissions:
        if name == sub.student or any(name in (m.sid, m.email, m.name, m.lms_id) for m in sub.members if name):
            return sub
    known = ", ".join(s.student for s in layout.submissions[:8])
    raise UsageError(f"--student {name!r}: no such student in the submissions (e.g. {known})")


def grade_all(src, out, *, jobs: int | None = None, force: bool = False, student: str | None = None,
              assignment: str | None = None, device: str | None = None, budget_s: float | None = None,
              time_limit_s: float | None = None, only=None, stream=None, executor=None,
              extensions: str | None = None, similarity: bool = False) -> int:
    """Grade the class in ``src`` into ``out``; the exit status (0 done, 1 when the grader failed
    on a student or a file could not be written, 130 interrupted).

    Before anyone is graded: the course is checked (autograder/batch/preflight.py), the
    extensions given are added to OUT/extensions.csv and OUT/overrides.csv is validated; any
    problem is a UsageError (exit 2).

    ``only``: grade these check ids; merged into each student's stored full result where there
    is one (autograder/classdata/partial.py). ``extensions``: a CSV of per-student extensions
    (autograder/core/late.py). ``similarity``: also write OUT/similarity/ (autograder/similarity).

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
    preflight.check(asg)
    if extensions:
        late.load_extensions(extensions)   # a bad file is refused before OUT is touched
    layout = discover.discover(src, asg, exclude=Path(out), stage=Path(out) / discover.STAGING)
    chosen = [select(layout, student)] if student else list(layout.submissions)
    full_key = grading_key(asg, device, time_limit_s, None)
    key = grading_key(asg, device, time_limit_s, only)
    run_at = partial.now()
    with store.Store(out, key) as st:   # an OUT that cannot be written is refused before any output
        print(f"found: {layout.description}: {len(layout.submissions)} submissions", file=stream)
        for note in layout.notes:
            print(f"  note: {note}", file=stream)
        ext = (kept_extensions.add(out, extensions, run_at) if extensions
               else kept_extensions.stored(out))
        if ext:
            print(kept_extensions.in_force_line(ext, out), file=stream)
        ovr = load_overrides(st.out, layout, asg)
        known = {x for s in layout.submissions
                 for x in (s.student, *(y for m in s.members for y in (m.sid, m.email, m.name, m.lms_id)))}
        unknown = sorted(set(ext) - known)
        if unknown:
            print(f"warning: {extensions or Path(out) / kept_extensions.NAME}: no such student in the "
                  f"submissions: {', '.join(unknown[:8])}", file=stream)
        todo = []
        wanted = {sub.student for sub in chosen}
        for sub in layout.submissions:   # a damaged student is regraded even beside --student
            if heal(st, sub.student, stream):
                todo.append((sub, store.content_hash(sub)))
            elif sub.student in wanted:
                digest = store.content_hash(sub)
                if (force or student or not st.is_done(sub.student, digest, keys=(full_key,) if only else ())
                        or zero.is_grader_failure(st.results(sub.student))):   # a grader failure is retried
                    todo.append((sub, digest))
        skipped = len(wanted - {sub.student for sub, _ in todo})
        if skipped:
            print(f"skipping {skipped} already graded (unchanged since; --force regrades)", file=stream)
        progress = pool.Progress(len(todo), stream)
        by_key = {sub.student: (sub, digest) for sub, digest in todo}
        unsaved: dict[str, dict] = {}   # graded this run, but their files could not be written

        def save(sub, digest, results, seconds, graded=True):
            try:
                results = record(st, sub, digest, results, seconds, asg=asg, only=only, key=key,
                                 full_key=full_key, run_at=run_at, extensions=ext, stream=stream,
                                 overrides_of=ovr)
            except OSError as exc:
                if exc.errno in OUT_GONE:   # every other student would fail the same way
                    raise
                print(f"warning: {sub.student}: cannot save in {st.folder(sub.student)} "
                      f"({exc.strerror or exc}); the class files take this run's result", file=stream)
                results = finish(sub, results, asg, ext, ovr)
                unsaved[sub.student] = results
            if zero.is_grader_failure(results):
                progress.step(f"{sub.student} GRADER FAILED (no score)", graded=graded)
            else:
                progress.step(f"{sub.student} {late.raw_score(results):.4g}/{asg.max_score:g}", graded=graded)

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
                        status = 1
                    else:
                        report_stats(workers.stats, stream)
        except KeyboardInterrupt:
            interrupted = True
        except OSError as exc:   # OUT became unwritable for everyone (disk or quota full, its log)
            print(f"error: cannot write in {out}: {exc.strerror or exc}"
                  f"{f' ({exc.filename})' if exc.filename else ''}; grading stopped", file=stream)
            status = 1
        finally:
            signal.signal(signal.SIGTERM, previous)
        try:
            entries = write_class_files(st, layout, asg, extensions=ext, stream=stream, unsaved=unsaved,
                                        overrides_of=ovr, run_at=run_at)
        except OSError as exc:
            print(f"error: cannot write the class files in {out}: {exc.strerror or exc}"
                  f"{f' ({exc.filename})' if exc.filename else ''}", file=stream)
            return 130 if interrupted else 1
        if similarity and not interrupted:
            from autograder.similarity import run as similar
            similar.write_report(layout, asg, Path(out) / SIMILARITY, stream=stream)
        if interrupted:
            print(f"\ninterrupted: {progress.done} of {len(todo)} graded this run; "
                  f"rerun the same command to grade the rest", file=stream)
            return 130
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


def load_overrides(out: Path, layout: discover.Layout, asg) -> dict:
    """OUT/overrides.csv (its header written when OUT has none), validated against the class:
    student folder name -> its overrides. UsageError (a line per bad row) before anyone is graded."""
    from autograder.grading.grade import load_checks
    path = overrides.ensure_template(out)
    names: dict[str, str] = {}
    for sub in layout.submissions:
        for m in sub.members:
            for name in (m.lms_id, m.name, m.email, m.sid):
                if name:
                    names.setdefault(name, sub.student)
    names.update({sub.student: sub.student for sub in layout.submissions})
    check_ids: dict[str, list[str]] = {}
    for check in load_checks(asg).values():
        check_ids.setdefault(check.task, []).append(check.id)
    return overrides.load(path, asg, names, check_ids)


def finish(sub, results: dict, asg, extensions: dict, overrides_of: dict | None, stored: dict | None = None) -> dict:
    """``results`` as exported: OUT/overrides.csv's rows for the student applied (``overrides_of``
    None: the overrides ``stored`` carries, kept), then the late verdict (a grader failure has no
    score, so neither)."""
    rows = overrides_of.get(sub.student, []) if overrides_of is not None else overrides.decisions(stored)
    results = overrides.apply(results, rows, asg)
    if zero.is_grader_failure(results):
        return results
    return with_late(sub, results, asg, extensions)


def heal(st: store.Store, student: str, stream) -> bool:
    """Whether ``student``'s stored files are damaged (store.Store.damage): then one warning line,
    what stands in the way moved aside, and the student is regraded."""
    problem = st.damage(student)
    if problem is None:
        return False
    try:
        moved = st.heal(student)
    except OSError as exc:
        moved, problem = [], f"{problem}; moving it aside failed ({exc.strerror})"
    aside = f" (moved aside: {', '.join(p.name for p in moved)})" if moved else ""
    print(f"warning: {student}: {problem}{aside}; regrading", file=stream)
    return True


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def report_stats(stats: list[pool.WorkerStats], stream) -> None:
    for i, s in enumerate(stats):
        print(f"worker {i + 1}: {s.cpu_s:.1f} CPU s, peak memory {s.maxrss_kb / 1024:.0f} MiB "
              f"(largest process it started: {s.children_maxrss_kb / 1024:.0f} MiB)", file=stream)


def extension_of(sub: discover.Submission, extensions: dict) -> late.Extension | None:
    """The extension granted to ``sub`` (by folder name, or a member's sid, email, name or LMS id)."""
    for name in (sub.student, *(x for m in sub.members for x in (m.sid, m.email, m.name, m.lms_id))):
        if name and name in extensions:
            return extensions[name]
    return None


def with_late(sub, results: dict, asg, extensions: dict) -> dict:
    """``results`` with the late verdict of course.yml's policy (none: unchanged but for a stale
    verdict removed)."""
    policy = getattr(asg, "late", None)
    if policy is None:
        return late.apply(results, None, None, "") if late.RESULTS_KEY in results else results
    when = submitted.submission_time(sub)
    return late.apply(results, policy, when.when, when.source, extension_of(sub, extensions))


def late_line(entries, asg) -> str:
    """One line for the TA: how many were late under the policy, and where the times came from."""
    verdicts = [r.get(late.RESULTS_KEY) or {} for _s, r in entries]
    sources: dict[str, int] = {}
    for v in verdicts:
        source = str(v.get("time_source", "")).split(" (", 1)[0]
        sources[source] = sources.get(source, 0) + 1
    n_late = sum(1 for v in verdicts if v.get("days_late"))
    where = ", ".join(f"{k} {n}" for k, n in sorted(sources.items()))
    return (f"late work: {n_late} of {len(verdicts)} late (due {asg.late.due.isoformat()}, policy "
            f"{asg.late.policy}); submission times from: {where}")


def record(st: store.Store, sub, digest: str, results: dict, seconds: float, *, asg, only, key: str,
           full_key: str, run_at: str, extensions: dict, stream, overrides_of: dict | None = None) -> dict:
    """Save one student's new grading: merged into the stored full result when this run graded
    some checks only and there is one; logged in regrades.csv where it changes a stored score;
    with OUT/overrides.csv's rows and the late verdict. The results as saved."""
    stored, old_rec = st.results(sub.student), st.record(sub.student)
    old = overrides.strip(stored) if stored is not None else None   # compared as the grader gave it
    has_full = (old is not None and old_rec is not None and old_rec.full and old_rec.hash == digest
                and old_rec.key == full_key and not partial.is_partial(old) and not partial.failed(old))
    rec_key, full = key, only is None
    if only is not None and has_full:
        if partial.failed(results):   # this run could not grade; the full result stands
            print(f"warning: {sub.student}: this run did not grade ({gradebook.note_of(results)}); "
                  f"the stored full result is kept", file=stream)
            return stored
        results = partial.merge(old, results, only, run_at)
        rec_key, full = full_key, True
    if old is not None and old_rec is not None and not zero.is_grader_failure(old):   # a failure had no score
        rows = regrades.changes(run_at, sub.student, old, results, old_rec, digest, rec_key,
                                compare_total=full and not partial.is_partial(old))
        regrades.append(st.out, rows)
        st.regraded += len(rows)
    results = finish(sub, results, asg, extensions, overrides_of, stored)
    if stored is not None and old_rec is not None:
        logged = overrides.log_rows(run_at, sub.student, stored, results)
        regrades.append(st.out, logged)
        st.regraded += len(logged)
    st.save(sub.student, digest, results, feedback_html.render(sub.student, results, asg),
            seconds=seconds, source=str(sub.path), key=rec_key, full=full,
            checks=() if only is None else only, graded_at=run_at)
    return results


def write_class_files(st: store.Store, layout: discover.Layout, asg, *, extensions=None,
                      stream=None, unsaved=None, overrides_of=None, run_at: str | None = None) -> list:
    """gradebook.csv, canvas.csv, checks.csv, summary.json and summary.html from every finished
    student; OUT/overrides.csv and the late verdicts brought up to date (a new override, extension
    or policy needs no regrade; a changed override is logged in regrades.csv). An export edited
    by hand since the last run is moved aside with a warning (autograder/batch/exports.py). Partial
    results (some checks only, no full result to merge into) go to partial.csv, not the exports,
    with a warning line. ``unsaved``: student -> results graded this run whose files could not be
    written (they are exported all the same). A student whose stored files are damaged and were
    not regraded (an interrupted run) is left out with a warning line. The entries exported."""
    entries, partials = [], []
    unsaved = unsaved or {}
    for sub in layout.submissions:
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
            fresh = finish(sub, results, asg, extensions or {}, overrides_of, results)
            if fresh != results:
                logged = overrides.log_rows(run_at or partial.now(), sub.student, results, fresh)
                regrades.append(st.out, logged)
                st.regraded += len(logged)
                st.write_pages(sub.student, fresh, feedback_html.render(sub.student, fresh, asg))
        (partials if partial.is_partial(fresh) else entries).append((sub, fresh))
    out = st.out
    generated = {GRADEBOOK: gradebook.gradebook_csv(entries, asg), CANVAS: gradebook.canvas_csv(entries, asg),
                 CHECKS: checks_csv.checks_csv(entries, asg)}
    exports.write(out, generated, run_at or partial.now(), stream)
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
