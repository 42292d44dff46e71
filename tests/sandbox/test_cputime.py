"""A call's time limit counts CPU time while the child runs (autograder/sandbox/cputime.py)."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from autograder.sandbox import cputime


@pytest.fixture
def child():
    started = []

    def start(code: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _spent(pid: int, seconds: float) -> None:
    """Wait until ``pid`` has used ``seconds`` of CPU (however long a busy machine takes)."""
    while cputime.tree_seconds(pid) < seconds:
        time.sleep(0.05)


def test_a_running_child_past_its_wall_limit_gets_the_rest_of_its_cpu_limit(child):
    proc = child("while True: pass")
    _spent(proc.pid, 0.3)
    now = time.monotonic()
    more = cputime.starved_for(proc.pid, 0.0, now - 0.3, limit_s=100.0, ceiling=now + 1000)
    assert 0 < more <= 100.0


def test_a_child_that_used_its_cpu_limit_is_charged(child):
    proc = child("while True: pass")
    _spent(proc.pid, 0.3)
    now = time.monotonic()
    assert cputime.starved_for(proc.pid, 0.0, now - 0.3, limit_s=0.2, ceiling=now + 1000) == 0


def test_a_blocked_child_is_a_hang_charged_at_once(child):
    proc = child("import time; time.sleep(600)")
    time.sleep(0.2)
    now = time.monotonic()
    assert cputime.starved_for(proc.pid, 0.0, now - 60, limit_s=100.0, ceiling=now + 1000) == 0


def test_no_call_outlives_the_ceiling(child):
    proc = child("while True: pass")
    _spent(proc.pid, 0.3)
    now = time.monotonic()
    assert cputime.starved_for(proc.pid, 0.0, now - 0.3, limit_s=100.0, ceiling=now) == 0


def test_the_cpu_of_processes_below_the_child_counts(child):
    proc = child("import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])")
    _spent(proc.pid, 0.3)                   # the grandchild's seconds, seen through the child
    assert cputime.tree_seconds(proc.pid) >= 0.3
