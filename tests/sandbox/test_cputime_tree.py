"""A child's CPU seconds read again and again through files kept open (cputime.Tree): the same
figure as reading /proc afresh, processes that come and go counted or dropped, no file left open."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.sandbox import cputime

#: A parent that starts a CPU-bound grandchild when told (a line on stdin), then waits.
PARENT = ("import subprocess, sys\n"
          "sys.stdin.readline()\n"
          "kid = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
          "print(kid.pid, flush=True)\n"
          "sys.stdin.readline()\n"
          "kid.kill(); kid.wait()\n"
          "print('gone', flush=True)\n"
          "sys.stdin.readline()\n")


@pytest.fixture
def parent():
    proc = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    yield proc
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _say(proc) -> str:
    proc.stdin.write("\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def _open_files() -> set[str]:
    return {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")}


def test_a_grandchild_started_after_the_first_reading_is_counted_and_dropped_when_gone(parent):
    tree = cputime.Tree(parent.pid)
    try:
        first = tree.seconds()
        kid = int(_say(parent))
        while tree.seconds() < first + 0.3:        # the grandchild's CPU, however busy the machine
            time.sleep(0.05)
        assert any(f"/proc/{kid}/" in path for path in _open_files())
        assert _say(parent) == "gone"
        after = tree.seconds()
        assert not any(f"/proc/{kid}/" in path for path in _open_files())
        assert abs(after - cputime.tree_seconds(parent.pid)) < 0.05   # the reaped kid's CPU stays, as read afresh
        assert after >= first + 0.3
    finally:
        tree.close()
    assert not any(f"/proc/{parent.pid}/" in path for path in _open_files())


def test_a_process_gone_reads_as_nothing(parent):
    tree = cputime.Tree(parent.pid)
    assert tree.seconds() >= 0
    os.killpg(parent.pid, signal.SIGKILL)
    parent.wait()
    assert tree.seconds() == 0.0
    assert not any(f"/proc/{parent.pid}/" in path for path in _open_files())
    tree.close()


def _proc_fds() -> dict[int, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("/proc/") and not target.startswith("/proc/self"):
                out[int(fd)] = target
    return out


def test_the_files_of_a_process_with_no_children_stay_open_between_readings(parent):
    tree = cputime.Tree(parent.pid)
    try:
        tree.seconds()
        first = _proc_fds()
        tree.seconds()
        assert _proc_fds() == first
        assert any(path.endswith("/children") for path in first.values())
    finally:
        tree.close()
