"""A call's time limit counts CPU time while the child runs (autograder/sandbox/cputime.py)."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from autograder.sandbox import cputime
from autograder.sandbox.parent import Limits, Sandbox


@pytest.fixture
def child():
    """Start ``python -c code`` in a process group of its own; the whole group (a grandchild too)
    is killed after the test, so no busy loop outlives it to load the tests that follow."""
    started = []

    def start(code: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _spent(pid: int, seconds: float) -> None:
    """Wait until ``pid`` has used ``seconds`` of CPU (however long a busy machine takes)."""
    while cputime.tree_seconds(pid) < seconds:
        time.sleep(0.05)


def test_a_running_child_past_its_wall_limit_gets_the_rest_of_its_cpu_limit(child):
    proc = child("while True: pass")
    _spent(proc.pid, 0.3)
    now = time.monotonic()
    more = cputime.starved_for(proc.pid, 0.0, now - 0.3, limit_s=100.0)
    assert 0 < more <= 100.0


def test_a_child_that_used_its_cpu_limit_is_charged(child):
    proc = child("while True: pass")
    _spent(proc.pid, 0.3)
    now = time.monotonic()
    assert cputime.starved_for(proc.pid, 0.0, now - 0.3, limit_s=0.2) == 0


def test_a_blocked_child_is_a_hang_charged_at_once(child):
    proc = child("import time; time.sleep(600)")
    time.sleep(0.2)
    now = time.monotonic()
    assert cputime.starved_for(proc.pid, 0.0, now - 60, limit_s=100.0) == 0


def _throttle(pid: int, stop: threading.Event, run_s: float = 0.02, stopped_s: float = 0.08) -> None:
    """Keep ``pid``'s process group stopped most of the time: a child starved of the CPU, as on a
    machine whose every core is busy (SIGSTOP / SIGCONT, not a load that depends on the machine)."""
    group = os.getpgid(pid)
    while not stop.is_set():
        os.killpg(group, signal.SIGSTOP)
        time.sleep(stopped_s)
        os.killpg(group, signal.SIGCONT)
        time.sleep(run_s)


def test_a_starved_child_past_the_sandbox_limit_in_wall_time_is_not_charged(tmp_path):
    """The sandbox's longest call counts CPU seconds: a CPU-bound call starved to a fifth of a core
    runs five times its CPU time in wall time and still returns."""
    code = ("import time\n"
            "def burn(seconds):\n"
            "    end = time.process_time() + seconds\n"
            "    while time.process_time() < end:\n"
            "        pass\n"
            "    return 'done'\n")
    (tmp_path / "m.py").write_text(code)
    with Sandbox(tmp_path, Limits(time_limit_s=1.0), preload=(), simgpu=False) as box:
        assert box.call("m", "burn", (0.0,))[0] == "done"      # started and imported, unthrottled
        stop, group = threading.Event(), os.getpgid(box.child.proc.pid)
        throttle = threading.Thread(target=_throttle, args=(box.child.proc.pid, stop), daemon=True)
        throttle.start()
        started = time.monotonic()
        try:
            value, _ = box.call("m", "burn", (0.4,))
        finally:
            stop.set()
            throttle.join()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGCONT)
        assert value == "done"
        assert time.monotonic() - started > 1.0       # it did run past the limit in wall time


def test_the_cpu_of_processes_below_the_child_counts(child):
    proc = child("import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])")
    _spent(proc.pid, 0.3)                   # the grandchild's seconds, seen through the child
    assert cputime.tree_seconds(proc.pid) >= 0.3



def _grandchild(pid: int) -> int:
    """The one process below ``pid``, found through every thread's list (waits for it)."""
    while True:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found = f.read().split()
            if found:
                return int(found[0])
        time.sleep(0.05)


def test_the_cpu_of_a_process_started_by_a_second_thread_counts(child):
    """A child with two threads lists its children per thread: do the seconds of a busy process
    that its second thread started count too (a one-thread child reads its one list only)?"""
    proc = child("import subprocess, sys, threading\n"
                 "t = threading.Thread(target=subprocess.run, args=([sys.executable, '-c', 'while True: pass'],))\n"
                 "t.start(); t.join()")
    busy = _grandchild(proc.pid)
    while cputime._stat(busy)[0] < 0.3:      # its own seconds (however long a busy machine takes)
        time.sleep(0.05)
    with open(f"/proc/{proc.pid}/stat") as f:
        assert int(f.read().rsplit(")", 1)[1].split()[17]) == 2      # the main thread and the starter
    assert cputime.tree_seconds(proc.pid) >= 0.3
