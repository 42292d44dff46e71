"""A grade-all worker process: ``python -m autograder.batch.worker COURSE_FILE ASSIGNMENT [CHECKS]``.

It loads the course file it is given once, imports the assignment's grader once, starts a fork
server (autograder/sandbox/forkserver/) so every sandboxed child it launches is forked from a
process that already imported torch, then grades one submission per request. ``CHECKS``: the
comma-separated check ids the run grades (its ``--checks``), when not all: the server then
imports only what those checks' children need (autograder/grading/schedule.py ``server_imports``). Student code never
runs here: grade_submission runs it in sandboxed children, each a fresh process.

Protocol (JSON lines): the parent writes ``{"id", "path", "assignment", "device", "time_limit_s",
"budget_s", "only"}`` on stdin (``assignment``: the one the worker was started for; ``budget_s``: the
grading's budget, autograder/grading/budget.py, null for the default; ``only``: check ids, or null
for all); the worker answers on its original stdout with ``{"ready": true}`` once, then
``{"id", "results", "cpu_s"}`` per request, and at the end of its stdin
``{"bye": true, "cpu_s", "maxrss_kb", "children_maxrss_kb"}`` (CPU seconds of the worker and
everything it started; peak resident memory in KiB of the worker itself and of the largest process
below it). Everything else the worker or the grader prints goes to stderr (the parent's log).
"""
from __future__ import annotations

import json
import os
import resource
import sys
import traceback

from autograder.core import settings


def _set_pdeathsig() -> None:
    """Die with the parent (Linux): a killed grade-all leaves no worker behind."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _cpu_s() -> float:
    """CPU seconds of this worker and all it started: its reaped children, and the live fork
    server's own time and its reaped children's (read from /proc: the server is reaped only at
    the end of the run, so per submission its children count as the server reaps them)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + _server_cpu_s()


def _server_cpu_s() -> float:
    from autograder.sandbox import forkserver
    server = forkserver.active()
    if server is None:
        return 0.0
    try:
        with open(f"/proc/{server.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")   # utime stime cutime cstime


def grade_one(asg, job: dict) -> dict:
    """The results dict for one job of the assignment ``asg``: graded, a zero with the reason when
    grading refused it, or a grader failure (no score: autograder/classdata/zero.py) when the
    grader itself failed."""
    from autograder.classdata.zero import grader_failure, zero_results
    from autograder.core import lesson
    from autograder.core.errors import GraderError, UsageError
    from autograder.grading.grade import grade_submission

    if job.get("assignment", asg.name) != asg.name:
        return grader_failure(asg, f"this worker grades {asg.name!r}, not {job['assignment']!r}")
    try:
        only = set(job["only"]) if job.get("only") else None
        # one lane: grade-all's workers already keep every core busy (autograder/grading/lanes.py)
        results = grade_submission(job["path"], asg, job.get("device"), time_limit_s=job.get("time_limit_s"),
                                   only=only, budget_s=job.get("budget_s"), lanes=1)
    except UsageError as exc:                       # the grader refused the submission
        return zero_results(asg, str(exc))
    except GraderError as exc:                      # the grader's own failure: no score at all
        return grader_failure(asg, str(exc))
    except Exception as exc:  # one bad submission must not stop the worker
        traceback.print_exc(file=sys.stderr)
        return grader_failure(asg, f"{type(exc).__name__}: {exc}")
    try:
        data = lesson.plots_of(asg, job["path"])
    except Exception:  # plots are a nicety; a failure leaves them out
        traceback.print_exc(file=sys.stderr)
        data = None
    if data is not None:
        results[lesson.PLOTS_KEY] = data
    return _noted(asg, job["path"], _stamped(asg, results, only))


def _noted(asg, path, results: dict) -> dict:
    """``results`` with the note of a notebook handed in alone (the gradebook says why it is 0)."""
    from autograder.classdata import partial, zero
    from autograder.grading.grade import handed_in
    note = zero.notebook_note(path, handed_in(asg))
    if note:
        partial.batch_info(results)[zero.NOTE] = note
    return results


def _stamped(asg, results: dict, only) -> dict:
    """``results`` saying what they cover and when, with each graded check's code fingerprint
    (grade-all's partial merge and regrade log read them: autograder/classdata/partial.py)."""
    from autograder.batch import fingerprint
    from autograder.classdata import partial
    partial.mark(results, only, partial.now())
    checks = {t.get("check") for t in results.get("tests", []) if t.get("check")}
    partial.batch_info(results)[partial.FINGERPRINTS] = fingerprint.of_checks(asg, checks)
    return results


def main(argv=None) -> int:
    course_file, assignment, *checks = sys.argv[1:] if argv is None else argv
    _set_pdeathsig()
    parent = settings.BATCH_PARENT.get()            # kept: it tags every process of the run
    if parent is not None and os.getppid() != parent:   # grade-all died before we started
        return 1
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)                                   # stray prints go to the log, not the protocol
    sys.stdout = sys.stderr
    from autograder.core import course
    asg = course.load(course_file).assignment(assignment)
    plan = None
    if checks and checks[0]:                        # what the server imports depends on them
        from autograder.grading.grade import checks_for
        plan = checks_for(asg, set(checks[0].split(",")))
    if settings.FORKSERVER.get():
        from autograder.grading import schedule
        from autograder.sandbox import forkserver
        forkserver.start(wait=False, **schedule.server_imports(asg, plan))   # imported there while we import the grader
    from autograder.grading.grade import load_checks
    load_checks(asg)                                # the grader's imports, paid once per worker
    if settings.FORKSERVER.get():
        forkserver.active().wait_ready()
    protocol.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        before = _cpu_s()
        results = _finite(grade_one(asg, job))
        reply = {"id": job["id"], "results": results, "cpu_s": round(_cpu_s() - before, 3)}
        protocol.write(json.dumps(reply, allow_nan=False) + "\n")
    from autograder.sandbox import forkserver
    forkserver.stop()                               # reaped: its rusage joins ours
    protocol.write(json.dumps({
        "bye": True, "cpu_s": round(_cpu_s(), 3),
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "children_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}) + "\n")
    return 0


def _finite(value):
    """``value`` with every non-finite float replaced by None (results.json is strict JSON)."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main())
