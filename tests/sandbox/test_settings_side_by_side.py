"""The simulated-GPU settings' children run side by side: each setting still in a process of its
own, the verdicts those of one-after-another, and the shared reference asked one request at a time.

``PerFileSandbox.run_settings`` runs a module's per-setting jobs (shared/simgpu/judging.py,
``Session.prefetch``) up to ``lanes`` at once, each in a fresh child that lives for its job.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from autograder.core import course, lesson
from autograder.core.errors import GraderError, StudentTimeout
from autograder.grading.grade import _on_gpu, checks_for, grade_submission
from autograder.lessons.why17.fixtures import build
from autograder.sandbox import forkserver
from autograder.sandbox.parent import Limits
from autograder.sandbox.perfile import PerFileSandbox
from autograder.sandbox.serial import OneAtATime
from shared.simgpu import settings as simsettings
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test grades through the fork server this module starts.
pytestmark = pytest.mark.slow

MODULE = ("import os\n"
          "TOKEN = os.urandom(8).hex()   # one per process\n\n"
          "def token(tag):\n"
          "    print(tag)\n"
          "    return TOKEN\n")


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    """Children fork from a process that already imported torch."""
    forkserver.start(**lesson.server_imports(course.load().assignment()))
    yield
    forkserver.stop()


def _configs() -> list[dict]:
    cfgs = simsettings.base("h100-sxm", 7)
    return [cfgs[name] for name in cfgs["order"]]


def _sandbox(tmp_path: Path) -> PerFileSandbox:
    (tmp_path / "m.py").write_text(MODULE)
    return PerFileSandbox(tmp_path, Limits(time_limit_s=60), heavy=("m",), preload=("torch",), simgpu=True)


def test_two_lanes_run_two_settings_at_once(tmp_path):
    """Each job waits for the other at a barrier: one after another, the first would wait alone
    until the barrier's timeout and break it."""
    barrier = threading.Barrier(2, timeout=60)
    box = _sandbox(tmp_path)
    box.run_settings("m", [(cfg, barrier.wait) for cfg in _configs()[:2]], lanes=2)
    assert not barrier.broken


def test_each_setting_runs_in_a_process_of_its_own_and_its_output_keeps_the_jobs_order(tmp_path):
    box = _sandbox(tmp_path)
    cfgs = _configs()
    tokens: dict[int, str] = {}
    second_done = threading.Event()

    def job(index: int, cfg: dict):
        def run():
            if index == 0:
                second_done.wait(60)            # the first job ends last
            tokens[index] = box.call("m", "token", (f"job {index}",), sim=cfg)[0]
            if index == 1:
                second_done.set()
        return run

    try:
        box.run_settings("m", [(cfg, job(i, cfg)) for i, cfg in enumerate(cfgs)], lanes=2)
        assert len(set(tokens.values())) == len(cfgs)          # four settings, four processes
        printed = box.output()
        assert [printed.index(f"job {i}") for i in range(len(cfgs))] == sorted(
            printed.index(f"job {i}") for i in range(len(cfgs)))
        assert box.starts == 1                                  # no restart was needed
    finally:
        box.close()


def test_a_job_that_asks_for_another_setting_is_the_graders_failure(tmp_path):
    box = _sandbox(tmp_path)
    first, second = _configs()[:2]
    caught: list[Exception] = []

    def stray():
        try:
            box.call("m", "token", ("x",), sim=second)
        except GraderError as exc:
            caught.append(exc)

    try:
        box.run_settings("m", [(first, stray)], lanes=2)
    finally:
        box.close()
    assert caught and "another setting" in str(caught[0])


def test_the_shared_reference_answers_one_request_at_a_time():
    class Slow:
        limits = "the box's own"
        inside = most = 0

        def call(self, *args, **kwargs):
            Slow.inside += 1
            Slow.most = max(Slow.most, Slow.inside)
            time.sleep(0.01)
            Slow.inside -= 1
            return args

    shared = OneAtATime(Slow())
    threads = [threading.Thread(target=lambda: [shared.call(i) for i in range(5)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Slow.most == 1 and shared.limits == "the box's own"


@pytest.mark.parametrize("name", ["good_events", "wrong_no_sync", "wrong_flops_n3", "wrong_tiny_measured"])
def test_side_by_side_settings_give_the_verdicts_of_one_after_another(name, tmp_path):
    asg = course.load().assignment()
    gpu = {c.id for _task, cs in checks_for(asg) for c in cs if _on_gpu(c)}
    folder = build.gpu_submission(name, tmp_path / name)
    graded = [{t["check"]: (t["status"], t["output"]) for t in grade_submission(folder, only=gpu, lanes=lanes)["tests"]}
              for lanes in (1, 2)]
    assert graded[0] == graded[1] and set(graded[0]) == gpu


def test_a_grading_runs_one_lane_per_cpu_it_may_use_unless_told():
    from autograder.grading import grade, schedule

    assert 1 <= schedule.default_lanes() <= schedule.MAX_LANES
    for asked, lanes in ((None, schedule.default_lanes()), (1, 1), (0, 1), (3, 3)):
        p = grade.plan(ROOT / "solutions" / "why17", only={"law_kv_linear"}, lanes=asked)
        p.submission.cleanup()
        assert p.lanes == lanes


def test_a_failed_job_stops_the_others_at_once(tmp_path):
    """A grader failure (or Ctrl-C) in one setting's job kills the children still running: a
    job waiting on a hanging call returns at once instead of after its time limit, and asks for
    no new child."""
    from autograder.core.errors import StudentError, StudentTimeout

    # a loop, not a sleep: on the simulated GPU, sleeping moves the device's clock and returns
    (tmp_path / "m.py").write_text("def hang():\n    while True:\n        pass\n")
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=300), heavy=("m",), preload=("torch",), simgpu=True)
    first, second = _configs()[:2]
    seen: list[BaseException] = []

    def hangs():
        for _ in range(2):
            try:
                box.call("m", "hang", sim=second)
            except Exception as exc:    # the first call is killed, the second refused
                seen.append(exc)

    def fails():
        time.sleep(0.2)                 # the other job is starting its child, or calling
        raise RuntimeError("the grader slipped")

    try:
        with pytest.raises(RuntimeError, match="slipped"):
            box.run_settings("m", [(first, fails), (second, hangs)], lanes=2)
    finally:
        box.close()
    assert len(seen) == 2 and not any(isinstance(e, StudentTimeout) for e in seen), [repr(e) for e in seen]
    # killed while it started or ran (one line, never a time limit), then refused
    assert isinstance(seen[0], (StudentError, GraderError)) and isinstance(seen[1], GraderError)


def test_a_hang_on_the_real_device_does_not_end_the_function_on_the_simulated_gpu(tmp_path):
    """A function too slow for the grading CPU (flops_peak_plausible times it there) is still
    judged on the simulated GPU; a hang there costs one limit for every setting."""
    (tmp_path / "slow.py").write_text(
        "import time\nimport torch\n\n"
        "def peak():\n"
        "    if not torch.cuda.is_available():\n"
        "        time.sleep(600)          # too slow for this CPU\n"
        "    return 1.0\n\n"
        "def hang():\n"
        "    while torch.cuda.is_available():   # a busy loop: sleeping moves the device's clock\n"
        "        pass\n"
        "    return 2.0\n")
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=1.5), heavy=("slow",), preload=("torch",), simgpu=True)
    first, second = _configs()[:2]
    try:
        with pytest.raises(StudentTimeout):
            box.call("slow", "peak")
        assert box.call("slow", "hang")[0] == 2.0
        assert box.call("slow", "peak", sim=first)[0] == 1.0    # (the child's first device call)
        with pytest.raises(StudentTimeout) as hung:
            box.call("slow", "hang", sim=first)
        with pytest.raises(StudentTimeout) as again:  # not run again on another setting:
            box.call("slow", "hang", sim=second)
        assert again.value is hung.value              # the first hang's error, raised again
    finally:
        box.close()
