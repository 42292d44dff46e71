"""grade-all's plan: who is graded this run, under which grading key.

A student is graded when their stored files are damaged (they heal first), when ``--force`` or
``--student`` asks, when their submission or the grading key changed since their stored result,
or when the grader itself failed on them last time (a grader failure is retried). Everyone else
is skipped, counted in one line.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from autograder.batch import fingerprint
from autograder.batch.options import Settled
from autograder.classdata import discover, entries, overrides, regrades, store, zero
from autograder.core.errors import UsageError


def grading_key(asg, device: str, time_limit_s: float | None, only=None) -> str:
    """What else a grade depends on besides the submission: the assignment as course.yml sets it
    (points, limits, tasks; not its late policy, which is applied without regrading), every file
    that can change a verdict (autograder/batch/fingerprint.py: the grader package, the engine,
    shared/simgpu, the lesson's GPU rubric, the reference), the device, any time-limit override
    and a --checks subset. A change regrades everyone."""
    data = json.dumps(key_parts(asg, device, time_limit_s, only), sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def key_parts(asg, device: str, time_limit_s: float | None, only=None) -> dict:
    """What ``grading_key`` digests: the settings (``course.yml <key>``, ``device``,
    ``time_limit_s``, ``only``) and the grader's one digest of its deciding files."""
    settings = dataclasses.asdict(asg)
    settings.pop("late", None)
    return {"assignment": settings, "device": device, "grader": fingerprint.grader_digest(asg),
            "time_limit_s": time_limit_s, "only": sorted(only) if only else None}


def remember_keys(out: Path, settled: Settled) -> None:
    """OUT/.grading-keys.json, with this run's keys: the settings and each deciding file's
    hash, so a later regrade's log names what changed (autograder/classdata/regrades.py)."""
    o = settled.options
    files = fingerprint.manifest(settled.asg)
    for only in {None, tuple(sorted(o.only)) if o.only else None}:
        parts = key_parts(settled.asg, settled.device, o.time_limit_s, only)
        settings = {f"course.yml {k}": v for k, v in parts.pop("assignment").items()}
        settings.update({k: v for k, v in parts.items() if k != "grader"})
        regrades.remember_key(out, grading_key(settled.asg, settled.device, o.time_limit_s, only),
                              files, json.loads(json.dumps(settings, default=str)))


def keys(settled: Settled) -> tuple[str, str]:
    """(this run's grading key, the key of a full grading under the same settings): they differ
    only with --checks."""
    o = settled.options
    return (grading_key(settled.asg, settled.device, o.time_limit_s, o.only),
            grading_key(settled.asg, settled.device, o.time_limit_s, None))


def select(layout: discover.Layout, name: str) -> discover.Submission:
    """The submission of ``name`` (its folder name under OUT, or a member's sid, email, name or LMS id)."""
    for sub in layout.submissions:
        if name == sub.student or any(name in (m.sid, m.email, m.name, m.lms_id) for m in sub.members if name):
            return sub
    known = ", ".join(s.student for s in layout.submissions[:8])
    raise UsageError(f"--student {name!r}: no such student in the submissions (e.g. {known})")


def wanted(layout: discover.Layout, student: str | None) -> set[str]:
    """The students asked for: ``student`` alone (UsageError when the class has no such student),
    else everyone."""
    return {select(layout, student).student} if student else {s.student for s in layout.submissions}


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


def todo(st: store.Store, layout: discover.Layout, wanted: set[str], settled: Settled, full_key: str,
         stream) -> list[tuple[discover.Submission, str]]:
    """(submission, content hash) of everyone graded this run, in the layout's order: the
    damaged, and those of ``wanted`` not done (plan.py's docstring); a line counting the others,
    skipped."""
    o = settled.options
    chosen = []
    for sub in layout.submissions:   # a damaged student is regraded even beside --student
        if heal(st, sub.student, stream):
            chosen.append((sub, store.content_hash(sub)))
        elif sub.student in wanted:
            digest = store.content_hash(sub)
            if (o.force or o.student or not st.is_done(sub.student, digest, keys=(full_key,) if o.only else ())
                    or zero.is_grader_failure(st.results(sub.student))):   # a grader failure is retried
                chosen.append((sub, digest))
    skipped = len(wanted - {sub.student for sub, _ in chosen})
    if skipped:
        print(f"skipping {skipped} already graded (unchanged since; --force regrades)", file=stream)
    return chosen


def load_overrides(out: Path, layout: discover.Layout, asg, stream=None, away=()) -> dict:
    """OUT/overrides.csv (its header written when OUT has none), validated against the class and
    the students ``away`` (kept in OUT, not in this download): student folder name -> its
    overrides. UsageError (a line per bad row) before anyone is graded; a row naming nobody OUT
    or the download knows is a warning line on ``stream`` and is not applied."""
    from autograder.grading.grade import load_checks
    path = overrides.ensure_template(out)
    names = entries.names_of((*layout.submissions, *away))
    check_ids: dict[str, list[str]] = {}
    for check in load_checks(asg).values():
        check_ids.setdefault(check.task, []).append(check.id)
    groups = {sub.student: tuple(m.name or m.sid or m.email for m in sub.members)
              for sub in (*layout.submissions, *away) if len(sub.members) > 1}
    names.update({f"{overrides.GROUP}{folder}": folder for folder in groups})
    unknown: list[str] = []
    try:
        return overrides.load(path, asg, names, check_ids, unknown=unknown, groups=groups)
    finally:
        for line in unknown:
            print(f"warning: {line}; the row is not applied", file=stream)
