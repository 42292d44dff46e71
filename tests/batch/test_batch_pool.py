"""The worker pool: a hang past the budget, a worker that dies, a worker that will not start.

The budget test runs the real worker on a real submission that hangs. The death tests run a
stand-in worker: a few lines of Python speaking the same JSON-lines protocol that SIGKILL
themselves on a chosen submission, as the kernel's out-of-memory killer would; a real worker
cannot be made to die on cue without it.
"""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from autograder.batch import progress as bar
from autograder.batch.executors import local as pool
from autograder.batch.executors.base import Job
from autograder.lessons.why17.fixtures.classes import write_student
from tests.helpers.paths import ROOT

STAND_IN = textwrap.dedent("""
    import json, os, signal, sys
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        if "die" in job["path"]:
            os.kill(os.getpid(), signal.SIGKILL)
        print(json.dumps({"id": job["id"], "results": {"score": 1, "tests": []}, "cpu_s": 0.0}),
              flush=True)
    print(json.dumps({"bye": True, "cpu_s": 0.5, "maxrss_kb": 1024, "children_maxrss_kb": 2048}),
          flush=True)
""")


#: A stand-in worker that shares one core with busy loops outside its tree and spins until it has
#: used the job's "cpu_s" seconds of CPU: the work fits the budget, the wall time does not.
STARVED = textwrap.dedent("""
    import json, os, sys, time
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        start = time.process_time()
        while time.process_time() - start < job["cpu_s"]:
            pass
        print(json.dumps({"id": job["id"], "results": {"score": 1, "tests": []}}), flush=True)
""")
#: Busy loops pinned to the stand-in's core, each in a session of its own as the pool's worker is
#: (the kernel's autogroups share a core between sessions first): the stand-in gets at most a
#: quarter of the core. Each says when it runs there.
BUSY = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); print(flush=True)\n"
        "while True: pass")


def _run(jobs, *, workers=2, budget_s=60.0, argv=None):
    p = pool.Pool(workers, budget_s=budget_s, worker_argv=argv)
    outcomes = list(p.outcomes(jobs))
    return {o.job.key: o for o in outcomes}, p


def test_a_dying_worker_is_replaced_the_job_retried_once_then_zeroed(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    jobs = [Job(k, {"path": f"/class/{k}"}) for k in ("a", "die", "b", "c", "d")]
    out, p = _run(jobs, argv=[sys.executable, str(script)])
    assert sorted(out) == ["a", "b", "c", "d", "die"]
    assert all(out[k].results == {"score": 1, "tests": []} for k in "abcd")
    assert out["die"].results is None and out["die"].job.attempts == 2
    assert "killed by SIGKILL" in out["die"].failure and "twice" in out["die"].failure
    assert [(s.maxrss_kb, s.children_maxrss_kb) for s in p.stats] == [(1024, 2048)] * len(p.stats)


def test_a_grading_starved_by_a_busy_machine_is_not_charged_its_wall_time(tmp_path):
    script = tmp_path / "starved.py"
    script.write_text(STARVED)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, start_new_session=True)
            for _ in range(3)]
    try:
        for proc in busy:
            proc.stdout.readline()   # pinned and spinning
        # 0.9 CPU s at a quarter of a core at most: past the 1 s budget in wall time, within it in CPU
        out, _ = _run([Job("slow", {"path": "/x", "cpu_s": 0.9})], workers=1, budget_s=1.0,
                      argv=[sys.executable, str(script)])
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    assert out["slow"].failure is None and out["slow"].results == {"score": 1, "tests": []}
    assert out["slow"].seconds > 1.0   # it did run past the budget in wall time, starved


def test_a_worker_that_cannot_start_stops_the_run_with_a_reason(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit(4)\n")
    with pytest.raises(RuntimeError, match="did not start: the grading worker exited with code 4"):
        _run([Job("a", {"path": "/x"})], argv=[sys.executable, str(script)])


@pytest.mark.slow
def test_a_hang_past_the_budget_is_zeroed_and_the_batch_goes_on(tmp_path):
    hang = write_student(tmp_path, "hang", "hang")
    good = write_student(tmp_path, "stub", "stubs")
    payload = {"assignment": "why17", "device": None, "time_limit_s": 600, "only": ["sync_present"]}
    jobs = [Job("hang", {"path": str(hang), **payload}), Job("stub", {"path": str(good), **payload})]
    out, _ = _run(jobs, workers=1, budget_s=8, argv=pool.worker_argv(ROOT / "course.yml", "why17"))
    assert out["hang"].results is None and "budget of 8 s" in out["hang"].failure
    assert out["stub"].results is not None      # graded by a fresh worker after the kill
    assert [t["check"] for t in out["stub"].results["tests"]] == ["sync_present"]


def test_a_worker_told_its_checks_need_no_torch_starts_a_server_without_it(tmp_path):
    """The run's --checks reach the worker: for checks no child of which needs torch or matplotlib
    its fork server imports neither (seconds saved per worker), and it still grades."""
    import json
    from pathlib import Path

    argv = pool.worker_argv(ROOT / "course.yml", "why17", pool.checks_of([Job("a", {"only": ["measure_file"]})]))
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=ROOT, text=True)
    try:
        assert json.loads(proc.stdout.readline())["ready"] is True
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        server = [Path(f"/proc/{c}/cmdline").read_bytes().split(b"\0") for c in children]
        assert len(server) == 1 and server[0][2] == b"autograder.sandbox.forkserver"
        preload, later = server[0][4], server[0][6]
        assert preload == b"" and later == b""
        job = {"id": "a", "path": str(ROOT / "solutions" / "why17"), "assignment": "why17", "device": None,
               "time_limit_s": None, "only": ["measure_file"]}
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert [t["check"] for t in reply["results"]["tests"]] == ["measure_file"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_the_checks_a_worker_is_told_are_every_job_asks_or_none_for_all():
    jobs = [Job("a", {"only": ["sync_present"]}), Job("b", {"only": ["measure_file", "sync_present"]})]
    assert pool.checks_of(jobs) == ["measure_file", "sync_present"]
    assert pool.checks_of(jobs + [Job("c", {"only": None})]) is None
    assert pool.worker_argv("c.yml", "why17", None)[-2:] == ["c.yml", "why17"]
    assert pool.worker_argv("c.yml", "why17", ["x", "y"])[-3:] == ["c.yml", "why17", "x,y"]


def test_progress_line_shows_done_total_rate_and_time_left():
    stream = io.StringIO()
    progress = bar.Progress(4, stream)
    progress.step("alice 90/100")
    line = stream.getvalue().strip()
    assert line.startswith("[######..................] 1/4") and "/min" in line
    assert "left " in line and line.endswith("last: alice 90/100")
    assert bar.clock(3725) == "1:02:05" and bar.clock(65) == "1:05"


def test_zeros_without_grading_do_not_inflate_the_rate():
    stream = io.StringIO()
    progress = bar.Progress(3, stream)
    progress.step("empty 0/100", graded=False)
    assert " 0.0/min  left --:--" in stream.getvalue()
