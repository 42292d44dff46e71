"""The local executor: N worker processes on this machine grading submissions in parallel, with a
watchdog per submission.

Each worker (autograder/batch/worker.py) runs in its own session, so killing its process group
takes its fork server along (and the fork server's children die with it: PR_SET_PDEATHSIG). One
pathological submission cannot stall or kill the batch:

- a submission that runs past ``budget_s`` seconds has its worker killed and gets a zero with that
  reason; a fresh worker takes the next submission. The budget is counted as a call's time limit
  is (autograder/sandbox/cputime.py): past it in wall-clock time, a worker whose processes were
  running all along but starved by a busy machine gets the rest in CPU seconds, so how busy the
  machine is never turns a grading into a zero;
- a worker that dies while grading (crash, out of memory) is replaced and the submission is tried
  once more on a fresh worker; a second death gives a zero with the reason;
- the per-call time, memory and output limits inside a submission are the sandbox's (grade.py).

The parent never imports torch; it only reads and writes JSON lines.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Generator, Iterator, TextIO

from autograder.batch.executors.base import Incomplete, Job, Outcome, Setup
from autograder.core import settings
from autograder.sandbox import cputime

#: Seconds a worker may take to start (import the grader, start its fork server).
STARTUP_TIMEOUT_S = 300.0
#: Times a submission is tried when its worker dies under it (a crash, not a timeout).
ATTEMPTS = 2


@dataclass
class _Worker:
    proc: subprocess.Popen
    buffer: bytes = b""
    ready: bool = False
    job: Job | None = None
    started: float = field(default_factory=time.monotonic)
    deadline: float = 0.0
    cpu_at_start: float = 0.0   # CPU seconds of the worker's process tree when its job was sent


@dataclass
class WorkerStats:
    """Resource use a worker reported when it stopped (CPU seconds, peak memory in KiB)."""

    cpu_s: float
    maxrss_kb: int
    children_maxrss_kb: int


class LocalExecutor:
    """grade-all's default executor: the jobs on at most ``setup.workers`` worker processes of this
    machine (a Pool), their stderr appended to OUT/grade-all.log; one line per worker's resource
    use at the end."""

    def __init__(self, setup: Setup):
        self.setup = setup

    def grade(self, jobs: list[Job]) -> Generator[Outcome, None, None]:
        s = self.setup
        with open(s.log, "ab") as log:
            workers = Pool(min(s.workers, len(jobs)), budget_s=s.budget_s, log=log,
                           worker_argv=worker_argv(s.course_file, s.assignment.name, checks_of(jobs)))
            try:
                yield from workers.outcomes(jobs)
            except RuntimeError as exc:   # a worker that does not start: nobody can be graded
                raise Incomplete(f"error: {exc} ({s.log})") from None
        report_stats(workers.stats, s.stream)


def report_stats(stats: list[WorkerStats], stream) -> None:
    for i, s in enumerate(stats):
        print(f"worker {i + 1}: {s.cpu_s:.1f} CPU s, peak memory {s.maxrss_kb / 1024:.0f} MiB "
              f"(largest process it started: {s.children_maxrss_kb / 1024:.0f} MiB)", file=stream)


def worker_argv(course_file, assignment: str, checks: list[str] | None = None) -> list[str]:
    """The command of a worker grading ``assignment`` of the course in ``course_file``
    (autograder/batch/worker.py): the course travels as an argument, never in the environment.
    ``checks``: the check ids its jobs ask for (``checks_of``), when not all."""
    argv = [sys.executable, "-m", "autograder.batch.worker", str(course_file), assignment]
    return argv + [",".join(checks)] if checks else argv


def checks_of(jobs) -> list[str] | None:
    """Every check id the ``jobs`` ask for (their payloads' ``only``), sorted; None when one asks
    for all of them (a worker then prepares for every check)."""
    asked = [job.payload.get("only") for job in jobs]
    if not asked or any(not only for only in asked):
        return None
    return sorted({check for only in asked for check in only})


class Pool:
    """Grade ``Job``s on ``jobs`` worker processes started with ``worker_argv``; ``outcomes``
    yields one Outcome per job."""

    def __init__(self, jobs: int, *, budget_s: float, worker_argv: list[str], log: TextIO | int | None = None,
                 env: dict | None = None):
        self.jobs = max(1, int(jobs))
        self.budget_s = float(budget_s)
        self.log = log
        self.worker_argv = list(worker_argv)
        self.env = env
        self.stats: list[WorkerStats] = []
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self.queue: list[Job] = []   # jobs not sent yet (a job whose worker died goes back first)
        self.pending = 0             # jobs without an outcome yet

    # ------------------------------------------------------------------ workers
    def _start_worker(self) -> _Worker:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        env = dict(os.environ if self.env is None else self.env)
        env[settings.BATCH_PARENT.name] = str(os.getpid())
        proc = subprocess.Popen(self.worker_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self.log if self.log is not None else subprocess.DEVNULL,
                                cwd=root, env=env, start_new_session=True)
        worker = _Worker(proc=proc, deadline=time.monotonic() + STARTUP_TIMEOUT_S)
        os.set_blocking(proc.stdout.fileno(), False)
        self.selector.register(proc.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def _kill(self, worker: _Worker) -> None:
        try:
            self.selector.unregister(worker.proc.stdout)
        except (KeyError, ValueError):
            pass
        try:
            os.killpg(worker.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (worker.proc.stdin, worker.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            worker.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        if worker in self.workers:
            self.workers.remove(worker)

    def _send(self, worker: _Worker, job: Job) -> bool:
        worker.job = job
        job.attempts += 1
        worker.deadline = time.monotonic() + self.budget_s
        worker.started = time.monotonic()
        worker.cpu_at_start = cputime.tree_seconds(worker.proc.pid)
        try:
            worker.proc.stdin.write((json.dumps({"id": job.key, **job.payload}) + "\n").encode())
            worker.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _messages(self, worker: _Worker) -> tuple[list[dict], bool]:
        """Complete JSON lines read from ``worker`` and whether it reached end of file."""
        eof = False
        while True:
            try:
                chunk = os.read(worker.proc.stdout.fileno(), 1 << 20)
            except BlockingIOError:
                break
            except OSError:
                eof = True
                break
            if not chunk:
                eof = True
                break
            worker.buffer += chunk
        out = []
        while b"\n" in worker.buffer:
            line, worker.buffer = worker.buffer.split(b"\n", 1)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                out.append(message)
        return out, eof

    @staticmethod
    def _death(worker: _Worker) -> str:
        try:
            code = worker.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the grading worker stopped answering"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hint = " (most likely out of memory)" if -code == signal.SIGKILL else ""
            return f"the grading worker was killed by {name}{hint}"
        return f"the grading worker exited with code {code}"

    # ------------------------------------------------------------------ the loop
    def outcomes(self, jobs: list[Job]) -> Iterator[Outcome]:
        """Grade every job, yielding each Outcome as it finishes (its worker already has the next
        job). RuntimeError when a worker does not start. On KeyboardInterrupt, or when the caller
        closes the generator early, the workers are killed (and the interrupt propagates)."""
        self.queue = list(jobs)
        self.pending = len(self.queue)
        try:
            while self.pending:
                while self.queue and len(self.workers) < min(self.jobs, self.pending):
                    self._start_worker()
                self._dispatch(self.queue)
                now = time.monotonic()
                wait = min((w.deadline for w in self.workers if w.deadline), default=now + 1.0) - now
                for key, _mask in self.selector.select(timeout=max(0.0, min(wait, 1.0))):
                    yield from self._answers(key.data)
                yield from self._overdue()
        except BaseException:
            for worker in list(self.workers):
                self._kill(worker)
            raise
        self.close()

    def _answers(self, worker: _Worker) -> Iterator[Outcome]:
        """What ``worker`` has said since: ready, a job's results, or its death (the job tried once
        more on a fresh worker, then a zero with the reason)."""
        messages, eof = self._messages(worker)
        for message in messages:
            if message.get("ready"):
                worker.ready, worker.deadline = True, 0.0
            elif worker.job is not None and message.get("id") == worker.job.key:
                job, worker.job, worker.deadline = worker.job, None, 0.0
                self.pending -= 1
                outcome = Outcome(job, message.get("results"), None,
                                  time.monotonic() - worker.started, message.get("cpu_s"))
                self._dispatch(self.queue)   # the worker grades the next while we store this one
                yield outcome
        if eof:
            reason = self._death(worker)
            job = worker.job
            self._kill(worker)
            if job is not None:
                if job.attempts < ATTEMPTS:
                    self.queue.insert(0, job)
                else:
                    self.pending -= 1
                    yield Outcome(job, None, f"grading stopped twice: {reason}",
                                  time.monotonic() - worker.started)
            elif not worker.ready:
                raise RuntimeError(f"a grading worker did not start: {reason}; "
                                   f"see the log for its error")

    def _overdue(self) -> Iterator[Outcome]:
        """A zero for each job past its budget (its worker killed); RuntimeError for a worker that
        did not start in time."""
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.deadline and now > worker.deadline:
                job = worker.job
                more = job and cputime.starved_for(worker.proc.pid, worker.cpu_at_start, worker.started,
                                                   self.budget_s)
                if more:   # running all along, starved by a busy machine: the rest in CPU seconds
                    worker.deadline = now + more
                    continue
                self._kill(worker)
                if job is not None:
                    self.pending -= 1
                    yield Outcome(job, None,
                                  f"grading took longer than the budget of {self.budget_s:g} s "
                                  f"per submission, in CPU seconds or waiting on nothing (a hang in "
                                  f"the code, or far too slow)",
                                  now - worker.started)
                elif not worker.ready:
                    raise RuntimeError("a grading worker did not start within "
                                       f"{STARTUP_TIMEOUT_S:g} s")

    def _dispatch(self, queue: list[Job]) -> None:
        """Send the next job of ``queue`` to each ready worker that has none."""
        for worker in list(self.workers):
            if worker.ready and worker.job is None and queue:
                job = queue.pop(0)
                if not self._send(worker, job):
                    queue.insert(0, job)
                    job.attempts -= 1
                    self._kill(worker)

    def close(self) -> None:
        """Let idle workers finish (EOF on stdin), collecting what they report."""
        for worker in list(self.workers):
            try:
                worker.proc.stdin.close()
            except OSError:
                pass
        deadline = time.monotonic() + 30
        for worker in list(self.workers):
            os.set_blocking(worker.proc.stdout.fileno(), True)
            try:
                rest = worker.proc.stdout.read()
            except OSError:
                rest = b""
            for line in (worker.buffer + (rest or b"")).splitlines():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("bye"):
                    self.stats.append(WorkerStats(float(message.get("cpu_s", 0.0)),
                                                  int(message.get("maxrss_kb", 0)),
                                                  int(message.get("children_maxrss_kb", 0))))
            try:
                worker.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            self._kill(worker)
        self.selector.close()
