"""The submitting side of ``grade-all --executor slurm``: plan, submit, follow, report.

grade-all (autograder/batch/run.py) discovers the class, opens OUT's store (holding its lock
until the end), decides what is left to grade and writes the class files afterwards, exactly as
with the local executor (autograder/batch/executors/base.py: the interface both implement). In
between, instead of worker processes, this executor:

1. refuses to start while an array from an earlier run into the same OUT is still queued or
   running (two arrays would grade the same students at once);
2. cuts the remaining submissions into slices and submits one job array, a task per slice
   (autograder/batch/executors/slurm/task.py runs on the nodes and writes into OUT);
3. follows the array: each student whose results land in OUT is yielded to grade-all as an
   outcome already saved (it steps the progress bar), and each change of the tasks' states
   (pending, running, done, failed) is a line of its own;
4. reports the tasks that failed (scancel, time limit, node failure, preemption) and the students
   they left ungraded: a rerun of the same command submits just those.

Ctrl-C cancels the array (finished students stay saved) and is re-raised for grade-all to handle.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Generator, Iterator

from autograder.batch.executors.base import Incomplete, Job, Outcome, Setup
from autograder.batch.executors.slurm import plan, queue
from autograder.batch.executors.slurm.options import SlurmOptions
from autograder.core.errors import UsageError

#: Seconds between two looks at the queue and at OUT.
POLL_S = 2.0
#: A task squeue has never shown counts as pending this long after submission, then as gone.
UNSEEN_GRACE_S = 60.0
#: Seconds to wait for the files of a task that exited 0 to show on the submitting host (NFS).
SETTLE_S = 60.0
#: Consecutive seconds of failing squeue calls (controller unreachable) before giving up.
QUEUE_OUTAGE_S = 600.0


class SlurmExecutor:
    """Grades grade-all's jobs as one Slurm job array into the run's store (``setup.store``)."""

    def __init__(self, options: SlurmOptions, setup: Setup, *, poll_s: float = POLL_S):
        self.options = options
        self.setup = setup
        self.poll_s = poll_s

    def grade(self, jobs: list[Job]) -> Generator[Outcome, None, None]:
        """Submit ``jobs`` as one array and yield an Outcome (``saved``: the array task saved it)
        for each student whose results land in OUT; Incomplete at the end when failed tasks left
        some ungraded (each named, with its log). Closed early or interrupted: the array is
        cancelled (finished students stay saved)."""
        job_id, manifest, run = self._submit(jobs)
        try:
            words, known = yield from self._follow(job_id, manifest, {j.key: j for j in jobs})
        except (KeyboardInterrupt, GeneratorExit):
            try:
                queue.cancel(job_id)
                print(f"\ncancelled job array {job_id}", file=self.setup.stream)
            except queue.SlurmError as exc:
                print(f"\ncould not cancel job array {job_id}: {exc}", file=self.setup.stream)
            raise
        self._report(job_id, manifest, run, words, known)

    def _submit(self, jobs: list[Job]) -> tuple[str, plan.Manifest, Path]:
        """Plan the slices, write the run folder (manifest, job script) and submit the array:
        (its job id, the manifest, the run folder)."""
        s = self.setup
        out = Path(s.store.out).resolve()
        refuse_if_active(out)
        parts = plan.slices([{"student": j.key, "digest": j.digest, "payload": j.payload} for j in jobs],
                            self.options.students_per_task)
        run = plan.new_run(out)
        manifest = plan.Manifest(out=str(out), assignment=s.assignment.name, key=s.store.key,
                                 workers=self.options.workers, budget_s=s.budget_s, slices=parts,
                                 course=str(s.course_file))
        manifest.write(run)
        script = plan.write_script(run)
        argv = self.options.sbatch_argv(len(parts), str(run / plan.LOG_PATTERN))
        job_id = queue.submit(str(script), argv)
        plan.write_job(run, job_id, ["sbatch", *argv, str(script)])
        where = f" on partition {self.options.partition}" if self.options.partition else ""
        print(f"submitted job array {job_id}{where}: {len(parts)} tasks of up to "
              f"{self.options.students_per_task} students; logs in {run}", file=s.stream, flush=True)
        return job_id, manifest, run

    # ------------------------------------------------------------------ following the array
    def _follow(self, job_id: str, manifest: plan.Manifest, jobs: dict[str, Job]):
        """Poll until no task is pending or running, yielding each student saved meanwhile;
        returns (each task's word, its last Slurm state)."""
        waiting = {j["student"]: j["digest"] for part in manifest.slices for j in part}
        stream = self.setup.stream
        submitted = last_ok = time.monotonic()
        known: dict[int, str] = {}
        shown = None
        while True:
            try:
                seen = queue.task_states(job_id)
                last_ok = time.monotonic()
                known.update(seen)
            except queue.SlurmError as exc:
                if time.monotonic() - last_ok > QUEUE_OUTAGE_S:
                    raise
                print(f"warning: {exc}; retrying", file=stream, flush=True)
                seen = None
            words = task_words(len(manifest.slices), seen, known,
                               young=time.monotonic() - submitted < UNSEEN_GRACE_S)
            yield from self._saved(waiting, jobs)
            line = state_line(job_id, words)
            if line != shown:
                self.setup.progress.print_over(line)
                shown = line
            if all(w in (queue.DONE, queue.FAILED, queue.GONE) for w in words.values()):
                break
            time.sleep(self.poll_s)
        # A task that exited 0 saved its whole slice; on NFS the submitting host may see the last
        # files a little late (attribute caches), so wait for them before calling anyone missing.
        settle = time.monotonic() + SETTLE_S
        while time.monotonic() < settle and any(
                words[i] == queue.DONE and any(j["student"] in waiting for j in part)
                for i, part in enumerate(manifest.slices)):
            time.sleep(self.poll_s)
            yield from self._saved(waiting, jobs)
        yield from self._saved(waiting, jobs)
        return words, known

    def _saved(self, waiting: dict[str, str], jobs: dict[str, Job]) -> Iterator[Outcome]:
        """An Outcome for each student of ``waiting`` (student -> planned hash) now done in the
        store, taken out of ``waiting``."""
        st = self.setup.store
        for student in [s for s, d in waiting.items() if st.is_done(s, d)]:
            del waiting[student]
            record = st.record(student)
            yield Outcome(jobs[student], st.results(student), None,
                          record.seconds if record is not None else 0.0, saved=True)

    def _report(self, job_id, manifest: plan.Manifest, run: Path, words, known) -> None:
        """A line per task that left students ungraded; Incomplete when there is one."""
        st, stream = self.setup.store, self.setup.stream
        missing_total = 0
        for i, part in enumerate(manifest.slices):
            missing = [j["student"] for j in part if not st.is_done(j["student"], j["digest"])]
            if not missing:
                continue
            missing_total += len(missing)
            state = known.get(i, "never seen")
            if words[i] == queue.GONE:
                state = f"no longer known to squeue or sacct; last seen {state}"
            print(f"task {job_id}_{i} ({state}) left {len(missing)} of {len(part)} students "
                  f"ungraded ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); "
                  f"log: {run / plan.LOG_PATTERN.replace('%a', str(i))}", file=stream)
        if missing_total:
            raise Incomplete(f"{missing_total} students not graded: rerun the same command to grade "
                             f"just them")


def task_words(n: int, seen: dict[int, str] | None, known: dict[int, str], *, young: bool) -> dict[int, str]:
    """Each of ``n`` tasks in one word.

    ``seen``: what squeue/sacct said this time (None: no answer); ``known``: the last state ever
    seen. A task they have forgotten keeps a final word (done, failed) or is ``gone``; one never
    seen is pending while the array is young or the queue did not answer, else gone.
    """
    words = {}
    for i in range(n):
        if seen is not None and i in seen:
            words[i] = queue.category(seen[i])
        elif i in known:
            word = queue.category(known[i])
            words[i] = word if word in (queue.DONE, queue.FAILED) or seen is None else queue.GONE
        else:
            words[i] = queue.PENDING if young or seen is None else queue.GONE
    return words


def refuse_if_active(out: Path) -> None:
    """UsageError when an array of an earlier run into ``out`` is still pending or running."""
    for run in plan.runs(out):
        job_id = plan.read_job(run)
        if job_id is None:
            continue
        try:
            states = queue.task_states(job_id)
        except queue.SlurmError:
            continue
        active = [s for s in states.values() if queue.category(s) in (queue.PENDING, queue.RUNNING)]
        if active:
            raise UsageError(f"--out {out}: job array {job_id} of an earlier run is still grading "
                             f"into it ({len(active)} tasks pending or running); wait for it "
                             f"(squeue -j {job_id}) or cancel it (scancel {job_id}), then rerun")


def state_line(job_id: str, words: dict[int, str]) -> str:
    """``array 12: 2 pending, 1 running, 3 done, 1 failed`` (zero counts left out, but 'done')."""
    counts = {w: 0 for w in (queue.PENDING, queue.RUNNING, queue.DONE, queue.FAILED, queue.GONE)}
    for w in words.values():
        counts[w] += 1
    parts = [f"{n} {w}" for w, n in counts.items() if n or w == queue.DONE]
    return f"array {job_id}: " + ", ".join(parts)
