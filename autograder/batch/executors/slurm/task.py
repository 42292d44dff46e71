"""One array task on a node: ``python -m autograder.batch.executors.slurm.task MANIFEST`` (the job script runs it).

It grades slice ``SLURM_ARRAY_TASK_ID`` of the manifest with the local executor's own pieces: the
worker pool (autograder/batch/executors/local.py: isolation, watchdog, one retry after a worker
death), grade-all's record step (autograder/batch/record.py: the feedback page, the store's atomic
per-student writes into the shared OUT). A student already
graded with the planned content and grading key is skipped, so a requeued or resubmitted task
picks up where the dead one stopped. The submitting grade-all holds OUT's lock for the whole
array; tasks write without taking it, each only its own students' folders.

Exit status: 0 when every student of the slice is saved; 1 when the task cannot grade (bad
manifest, another course.yml on the node, workers that do not start); 130 on SIGTERM/SIGINT
(scancel, time limit, preemption), after killing its workers. Output goes to the task's log.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from autograder.batch import record
from autograder.batch.executors.base import Job, Outcome
from autograder.batch.executors.local import Pool, checks_of, worker_argv
from autograder.batch.executors.slurm.plan import Manifest
from autograder.batch.plan import grading_key
from autograder.classdata import partial, store
from autograder.classdata.discover import Submission
from autograder.classdata.zero import zero_results
from autograder.core import course
from autograder.core.errors import UsageError
from autograder.reports import gradebook

#: Exit status when Slurm stopped the task (scancel, time limit, preemption send SIGTERM).
INTERRUPTED = 130


class UnlockedStore(store.Store):
    """OUT's store as an array task opens it: the same reads and atomic writes, without taking
    OUT's lock, which the submitting grade-all holds for the whole array."""

    def __init__(self, out, key):  # Store's attributes, without the flock
        self.out = Path(out)
        self.key = key
        self._lock = None
        self.regraded = 0

    def close(self) -> None:
        pass


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def grade_slice(manifest_path: Path, index: int, stream=None) -> int:
    """Grade slice ``index`` of the manifest at ``manifest_path``; the exit status."""
    stream = stream if stream is not None else sys.stdout
    try:
        manifest = Manifest.read(manifest_path)
        jobs = manifest.slices[index]
    except (OSError, ValueError, TypeError, IndexError) as exc:
        print(f"error: {manifest_path}: slice {index}: {exc}", file=stream)
        return 1
    try:
        asg = course.load(manifest.course).assignment(manifest.assignment)
    except UsageError as exc:
        print(f"error: {manifest_path}: {exc}", file=stream)
        return 1
    if not _same_grading(manifest, asg, jobs, stream):
        return 1
    st = UnlockedStore(manifest.out, manifest.key)
    todo = [j for j in jobs if not st.is_done(j["student"], j["digest"])]
    print(f"task {index}: {len(jobs)} students, {len(jobs) - len(todo)} already graded, "
          f"grading {len(todo)} with {manifest.workers} worker(s)", file=stream, flush=True)
    if not todo:
        return 0
    by_key = {j["student"]: j for j in todo}
    run_at = partial.now()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    pending = [Job(j["student"], j["payload"], j["digest"]) for j in todo]
    workers = Pool(min(manifest.workers, len(todo)), budget_s=manifest.budget_s, log=sys.stderr,
                   worker_argv=worker_argv(manifest.course, manifest.assignment, checks_of(pending)))
    started = time.monotonic()
    try:
        with contextlib.closing(workers.outcomes(pending)) as outcomes:
            for outcome in outcomes:   # closed on any error: the workers are killed
                _save(st, manifest, asg, by_key[outcome.job.key], outcome, run_at, stream)
    except KeyboardInterrupt:
        print(f"task {index}: stopped by a signal; finished students are saved", file=stream)
        return INTERRUPTED
    except RuntimeError as exc:
        print(f"error: task {index}: {exc}", file=stream)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"task {index}: done in {time.monotonic() - started:.1f} s", file=stream)
    return 0


def _same_grading(manifest: Manifest, asg, jobs: list[dict], stream) -> bool:
    """Whether this checkout computes the manifest's grading key for every job (else a line)."""
    for job in jobs:
        p = job["payload"]
        key = grading_key(asg, p["device"], p.get("time_limit_s"), p.get("only"))
        if key != manifest.key:
            print(f"error: this node's checkout grades {manifest.assignment} differently from the "
                  f"submitting host (grading key {key} != {manifest.key}): course.yml or the "
                  f"grader changed; rerun grade-all", file=stream)
            return False
    return True


def _save(st: store.Store, manifest: Manifest, asg, job: dict, outcome: Outcome, run_at: str, stream) -> None:
    """Save one student as the local executor does: merged into a stored full result, logged in
    regrades.csv (the submitting grade-all re-applies late work with the class's metadata
    afterwards; the overrides a stored result carries are kept)."""
    results = outcome.results if outcome.results is not None else zero_results(
        asg, outcome.failure or "grading failed", execution_time=outcome.seconds)
    p = job["payload"]
    ctx = record.Context(st, asg, set(p["only"]) if p.get("only") else None, manifest.key,
                         grading_key(asg, p["device"], p.get("time_limit_s"), None), run_at,
                         extensions={}, stream=stream)
    sub = Submission(student=job["student"], path=Path(p["path"]), members=())
    results = record.record(ctx, sub, job["digest"], results, outcome.seconds)
    score = sum(gradebook.task_scores(results, [t.id for t in asg.tasks]).values())
    print(f"graded {job['student']} {score:.4g}/{asg.max_score:g} in {outcome.seconds:.1f} s",
          file=stream, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m autograder.batch.executors.slurm.task MANIFEST (in a Slurm array task)",
              file=sys.stderr)
        return 2
    raw = os.environ.get("SLURM_ARRAY_TASK_ID", "")
    if not raw.isdigit():
        print("error: SLURM_ARRAY_TASK_ID is not set: run this as a task of the job array that "
              "grade-all --executor slurm submits", file=sys.stderr)
        return 2
    return grade_slice(Path(argv[0]), int(raw))


if __name__ == "__main__":
    sys.exit(main())
