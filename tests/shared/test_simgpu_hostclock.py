"""During a real-CPU call every clock reads the process's CPU time (shared/simgpu/hostclock.py).

A process stopped between two readings (SIGSTOP, then SIGCONT STOP_S later: what the scheduler
does to a process waiting for a core) reads almost no time passed on any clock; outside
``cpu_time()`` the same clocks read real time; a sleep counts; work on a worker thread counts.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from shared import simgpu
from shared.simgpu import hostclock
from tests.helpers.paths import ROOT

#: Seconds the test keeps the process stopped between its two readings.
STOP_S = 1.0
#: The clocks a timing function may read, as expressions of the child script.
READERS = ("time.perf_counter()", "time.perf_counter_ns() / 1e9", "time.monotonic()", "time.time()",
           "timeit.default_timer()", "time.process_time()", "time.thread_time()",
           "time.clock_gettime(time.CLOCK_MONOTONIC)", "datetime.datetime.now().timestamp()")
SCRIPT = f"""
import contextlib, datetime, sys, time, timeit
from shared import simgpu
from shared.simgpu import hostclock
simgpu.install()
readers = [lambda: {", lambda: ".join(READERS)}]
with hostclock.cpu_time() if sys.argv[1] == "cpu" else contextlib.nullcontext():
    before = [read() for read in readers]
    print("ready", flush=True)
    sys.stdin.readline()
    after = [read() for read in readers]
print(" ".join(repr(b - a) for a, b in zip(before, after)), flush=True)
"""


def _stopped_between_readings(mode: str) -> list[float]:
    """Seconds each of READERS moved while the child was stopped for STOP_S between its readings."""
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == "ready"
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(STOP_S)
        os.kill(child.pid, signal.SIGCONT)
        out, _ = child.communicate("go\n", timeout=120)
    finally:
        child.kill()
    return [float(x) for x in out.split()]


def test_a_stopped_process_reads_no_time_passed_on_any_clock():
    moved = _stopped_between_readings("cpu")
    assert len(moved) == len(READERS)
    slow = {reader: s for reader, s in zip(READERS, moved) if not 0 < s < STOP_S / 2}
    assert slow == {}


def test_outside_a_real_cpu_call_the_clocks_read_real_time():
    moved = dict(zip(READERS, _stopped_between_readings("real")))
    assert moved["time.perf_counter()"] >= STOP_S
    assert moved["time.time()"] >= STOP_S * 0.99


def test_a_sleep_counts_as_at_least_its_length():
    simgpu.install()
    with hostclock.cpu_time():
        start = time.perf_counter()
        time.sleep(0.05)
        assert time.perf_counter() - start >= 0.05


def test_work_on_a_worker_thread_counts():
    """A function that runs its timed work on a thread and waits for it is timed as when quiet."""
    simgpu.install()
    spent = []
    real_ns = getattr(time.clock_gettime_ns, "__wrapped__", time.clock_gettime_ns)   # the worker's own

    def work():
        begin = real_ns(time.CLOCK_THREAD_CPUTIME_ID)
        total = 0
        for i in range(3_000_000):
            total += i
        spent.append((real_ns(time.CLOCK_THREAD_CPUTIME_ID) - begin) / 1e9)

    with hostclock.cpu_time():
        start = time.perf_counter()
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        elapsed = time.perf_counter() - start
    # the process's CPU clock is exact for a thread that has ended, within a scheduler tick
    # (at most 10 ms) of the waiting thread's own accounting
    assert elapsed >= spent[0] - 0.011
