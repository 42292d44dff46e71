"""grade-all's record step: each student's grading saved in OUT the moment it arrives.

``record`` saves one grading (merged into the stored full result when the run graded some checks
only, changes logged in regrades.csv, OUT/overrides.csv's rows and the late verdict applied);
``Recorder`` does it for each outcome an executor yields and steps the progress bar. A write that
fails for one student costs only that student's files (a warning; the class files take the
result all the same), unless the disk or quota is full: then grading stops.
"""
from __future__ import annotations

import dataclasses
import errno
from dataclasses import dataclass
from typing import TextIO

from autograder.batch import submitted
from autograder.batch.executors.base import Outcome
from autograder.batch.progress import Progress
from autograder.classdata import dates, overrides, partial, regrades, store, zero
from autograder.classdata.discover import Submission
from autograder.core import late
from autograder.core.course import Assignment
from autograder.reports import feedback_html, gradebook

#: errno values of a failed write that every later write in OUT would meet too (disk or quota
#: full): grading stops; any other failure costs only that student's files.
OUT_GONE = frozenset({errno.ENOSPC, errno.EDQUOT})


@dataclass(frozen=True)
class Context:
    """What saving a grading needs, fixed before anyone is graded: OUT's ``store``, the
    assignment ``asg``, ``only`` (the --checks ids, or None), this run's grading ``key`` and the
    ``full_key`` of a full grading, ``run_at`` (when the run started, ISO 8601 UTC), the
    ``extensions`` in force (name -> late.Extension), ``overrides_of`` (student -> their rows of
    OUT/overrides.csv; None: keep the overrides a stored result carries, as a Slurm task that
    reads no overrides.csv does) and the ``stream`` warnings go to."""

    store: store.Store
    asg: Assignment
    only: set[str] | None
    key: str
    full_key: str
    run_at: str
    extensions: dict
    overrides_of: dict | None = None
    stream: TextIO | None = None


def record(ctx: Context, sub: Submission, digest: str, results: dict, seconds: float) -> dict:
    """Save one student's new grading: merged into the stored full result when this run graded
    some checks only and there is one; logged in regrades.csv where it changes a stored score;
    with OUT/overrides.csv's rows and the late verdict. The results as saved."""
    st = ctx.store
    stored, old_rec = st.results(sub.student), st.record(sub.student)
    old = overrides.strip(stored) if stored is not None else None   # compared as the grader gave it
    has_full = (old is not None and old_rec is not None and old_rec.full and old_rec.hash == digest
                and old_rec.key == ctx.full_key and not partial.is_partial(old) and not partial.failed(old))
    rec_key, full = ctx.key, ctx.only is None
    if ctx.only is not None and has_full:
        if partial.failed(results):   # this run could not grade; the full result stands
            print(f"warning: {sub.student}: this run did not grade ({gradebook.note_of(results)}); "
                  f"the stored full result is kept", file=ctx.stream)
            return stored
        results = partial.merge(old, results, ctx.only, ctx.run_at)
        rec_key, full = ctx.full_key, True
    if old is not None and old_rec is not None and not zero.is_grader_failure(old):   # a failure had no score
        rows = regrades.changes(ctx.run_at, sub.student, old, results, old_rec, digest, rec_key,
                                compare_total=full and not partial.is_partial(old), out=st.out)
        regrades.append(st.out, rows)
        st.regraded += len(rows)
    results = finish(sub, results, ctx.asg, ctx.extensions, ctx.overrides_of, stored,
                     when=dated(ctx, sub, digest))
    if stored is not None and old_rec is not None:
        logged = overrides.log_rows(ctx.run_at, sub.student, stored, results)
        regrades.append(st.out, logged)
        st.regraded += len(logged)
    st.save(sub.student, digest, results, feedback_html.render(sub.student, results, ctx.asg),
            seconds=seconds, source=str(sub.path), key=rec_key, full=full,
            checks=() if ctx.only is None else ctx.only, graded_at=ctx.run_at,
            members=[dataclasses.asdict(m) for m in sub.members])
    return results


def finish(sub, results: dict, asg, extensions: dict, overrides_of: dict | None, stored: dict | None = None,
           when: submitted.Submitted | None = None) -> dict:
    """``results`` as exported: OUT/overrides.csv's rows for the student applied (``overrides_of``
    None: the overrides ``stored`` carries, kept), then the late verdict on the submission time
    ``when`` (default: read from the submission now) (a grader failure has no score, so neither)."""
    rows = overrides_of.get(sub.student, []) if overrides_of is not None else overrides.decisions(stored)
    results = overrides.apply(results, rows, asg)
    if zero.is_grader_failure(results):
        return results
    return with_late(sub, results, asg, extensions, when)


def dated(ctx: Context, sub: Submission, digest: str) -> submitted.Submitted:
    """When ``sub`` (content hash ``digest``) was handed in: the platform's word, else the date
    OUT/submitted.csv recorded the first time these files were seen (recorded now when none is),
    so no rerun, copy of the download or --force re-dates it (autograder/classdata/dates.py);
    Moodle's worksheet is recorded there too, and takes the place of a date from the files."""
    found = submitted.submission_time(sub, ctx.asg.handed_in)
    if not submitted.kept_on_first_sight(found) or not digest:
        return found
    when, source = dates.first_seen(ctx.store.out, sub.student, digest, found.when, found.source,
                                    ctx.run_at or partial.now())
    return submitted.Submitted(when, source)


def extension_of(sub: Submission, extensions: dict) -> late.Extension | None:
    """The extension granted to ``sub`` (by folder name, or a member's sid, email, name or LMS id)."""
    for name in (sub.student, *(x for m in sub.members for x in (m.sid, m.email, m.name, m.lms_id))):
        if name and name in extensions:
            return extensions[name]
    return None


def with_late(sub, results: dict, asg, extensions: dict, when: submitted.Submitted | None = None) -> dict:
    """``results`` with the late verdict of course.yml's policy on the submission time ``when``
    (none: unchanged but for a stale verdict removed)."""
    policy = getattr(asg, "late", None)
    if policy is None:
        return late.apply(results, None, None, "") if late.RESULTS_KEY in results else results
    when = when if when is not None else submitted.submission_time(sub, asg.handed_in)
    extension = extension_of(sub, extensions)
    moment = when.when
    if moment is None and when.source == submitted.CANVAS_LATE:
        moment = late.just_after_due(policy, extension)
    return late.apply(results, policy, moment, when.source, extension)


class Recorder:
    """Records each outcome of this run's ``todo`` ((submission, content hash) pairs) as it
    arrives and steps the ``progress`` bar. ``unsaved``: student -> results graded this run whose
    files could not be written (the class files take them all the same)."""

    def __init__(self, ctx: Context, todo: list[tuple[Submission, str]], progress: Progress):
        self.ctx = ctx
        self.progress = progress
        self.by_key = {sub.student: (sub, digest) for sub, digest in todo}
        self.unsaved: dict[str, dict] = {}

    def outcome(self, outcome: Outcome) -> None:
        """Save what an executor yielded (a zero with its failure reason when there are no
        results); an outcome the executor saved itself is only counted."""
        sub, digest = self.by_key[outcome.job.key]
        if outcome.saved:
            self._step(sub, outcome.results or {}, graded=True)
            return
        results = outcome.results if outcome.results is not None else zero.zero_results(
            self.ctx.asg, outcome.failure or "grading failed", execution_time=outcome.seconds)
        self.save(sub, digest, results, outcome.seconds)

    def save(self, sub: Submission, digest: str, results: dict, seconds: float, graded: bool = True) -> None:
        """Record ``results``; ``graded`` False for a zero given without grading (the rate does
        not count it). OSError when OUT's disk or quota is full."""
        try:
            results = record(self.ctx, sub, digest, results, seconds)
        except OSError as exc:
            if exc.errno in OUT_GONE:   # every other student would fail the same way
                raise
            print(f"warning: {sub.student}: cannot save in {self.ctx.store.folder(sub.student)} "
                  f"({exc.strerror or exc}); the class files take this run's result", file=self.ctx.stream)
            results = finish(sub, results, self.ctx.asg, self.ctx.extensions, self.ctx.overrides_of,
                             when=submitted.submission_time(sub, self.ctx.asg.handed_in))
            self.unsaved[sub.student] = results
        self._step(sub, results, graded)

    def _step(self, sub: Submission, results: dict, graded: bool) -> None:
        if zero.is_grader_failure(results):
            self.progress.step(f"{sub.student} GRADER FAILED (no score)", graded=graded)
        else:
            self.progress.step(f"{sub.student} {late.raw_score(results):.4g}/{self.ctx.asg.max_score:g}",
                               graded=graded)
