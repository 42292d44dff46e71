"""N worker processes grading submissions in parallel, with a watchdog and a progress bar.

Each worker (autograder/batch/worker.py) runs in its own session, so killing its process group
takes its fork server along (and the fork server's children die with it: PR_SET_PDEATHSIG). One
pathological submission cannot stall or kill the batch:

- a submission that runs past ``budget_s`` seconds of wall clock has its worker killed and gets a
  zero with that reason; a fresh worker takes the next submission;
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
from typing import Callable, TextIO

from autograder.core import settings

#: Seconds a worker may take to start (import the grader, start its fork server).
STARTUP_TIMEOUT_S = 300.0
#: Times a submission is tried when its worker dies under it (a crash, not a timeout).
ATTEMPTS = 2


@dataclass
class Job:
    """One submission to grade: ``key`` is the student; ``payload`` goes to the worker as is."""

    key: str
    payload: dict
    attempts: int = 0


@dataclass
class Outcome:
    """What came back for one job: ``results`` from the worker, or ``failure`` (a reason)."""

    job: Job
    results: dict | None
    failure: str | None
    seconds: float
    cpu_s: float | None = None


@dataclass
class _Worker:
    proc: subprocess.Popen
    buffer: bytes = b""
    ready: bool = False
    job: Job | None = None
    started: float = field(default_factory=time.monotonic)
    deadline: float = 0.0


@dataclass
class WorkerStats:
    """Resource use a worker reported when it stopped (CPU seconds, peak memory in KiB)."""

    cpu_s: float
    maxrss_kb: int
    children_maxrss_kb: int


class Progress:
    """done/total, rate, time left and the last result, on one line (a line each when not a tty)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24):
        self.total = total
        self.done = 0
        self.timed = 0          # steps that took grading (zeros given without grading do not)
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, last: str = "") -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        per_s = self.timed / elapsed
        rate = per_s * 60
        left = (self.total - self.done) / per_s if per_s > 0 else None
        filled = int(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        eta = _clock(left) if left is not None else "--:--"
        tail = f"  last: {last}" if last else ""
        return f"[{bar}] {self.done}/{self.total}  {rate:.1f}/min  left {eta}{tail}"

    def step(self, last: str = "", graded: bool = True) -> None:
        """One more student finished; ``graded`` False for a zero given without grading (it does
        not count in the rate)."""
        self.done += 1
        self.timed += bool(graded)
        text = self.line(last)
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Pool:
    """Grade ``Job``s on ``jobs`` worker processes; ``run`` calls ``on_done`` once per job."""

    def __init__(self, jobs: int, *, budget_s: float, log: TextIO | int | None = None,
                 worker_argv: list[str] | None = None, env: dict | None = None):
        self.jobs = max(1, int(jobs))
        self.budget_s = float(budget_s)
        self.log = log
        self.worker_argv = worker_argv or [sys.executable, "-m", "autograder.batch.worker"]
        self.env = env
        self.stats: list[WorkerStats] = []
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()

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
    def run(self, jobs: list[Job], on_done: Callable[[Outcome], None]) -> None:
        """Grade every job; ``on_done`` runs in this process as each finishes. On
        KeyboardInterrupt the workers are killed and the interrupt propagates."""
        queue = list(jobs)
        pending = len(queue)
        try:
            while pending:
                while queue and len(self.workers) < min(self.jobs, pending):
                    self._start_worker()
                self._dispatch(queue)
                now = time.monotonic()
                wait = min((w.deadline for w in self.workers if w.deadline), default=now + 1.0) - now
                events = self.selector.select(timeout=max(0.0, min(wait, 1.0)))
                for key, _mask in events:
                    worker = key.data
                    messages, eof = self._messages(worker)
                    for message in messages:
                        if message.get("ready"):
                            worker.ready, worker.deadline = True, 0.0
                        elif worker.job is not None and message.get("id") == worker.job.key:
                            job, worker.job, worker.deadline = worker.job, None, 0.0
                            pending -= 1
                            outcome = Outcome(job, message.get("results"), None,
                                              time.monotonic() - worker.started, message.get("cpu_s"))
                            self._dispatch(queue)   # the worker grades the next while we store this one
                            on_done(outcome)
                    if eof:
                        reason = self._death(worker)
                        job = worker.job
                        self._kill(worker)
                        if job is not None:
                            if job.attempts < ATTEMPTS:
                                queue.insert(0, job)
                            else:
                                pending -= 1
                                on_done(Outcome(job, None, f"grading stopped twice: {reason}",
                                                time.monotonic() - worker.started))
                        elif not worker.ready:
                            raise RuntimeError(f"a grading worker did not start: {reason}; "
                                               f"see the log for its error")
                now = time.monotonic()
                for worker in list(self.workers):
                    if worker.deadline and now > worker.deadline:
                        job = worker.job
                        self._kill(worker)
                        if job is not None:
                            pending -= 1
                            on_done(Outcome(job, None,
                                            f"grading took longer than the budget of {self.budget_s:g} s "
                                            f"per submission (a hang in the code, or far too slow)",
                                            now - worker.started))
                        elif not worker.ready:
                            raise RuntimeError("a grading worker did not start within "
                                               f"{STARTUP_TIMEOUT_S:g} s")
        except BaseException:
            for worker in list(self.workers):
                self._kill(worker)
            raise
        self.close()

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
