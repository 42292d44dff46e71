"""A wait that times out passes its timeout on the simulated host's clock, as a sleep does
(shared/simgpu/waits.py); one that something wakes passes nothing more. Before, the clock stood
still across every such wait: forged/t14_f_select_timeout_tell told the simulator from a GPU by
timing one, and asyncio.sleep never returned."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import queue
import select
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from shared import simgpu
from shared.simgpu import hostclock, patches
from tests.helpers.simclock import H100

TIMEOUT_S = 0.02


def _queue_get():
    try:
        queue.Queue().get(timeout=TIMEOUT_S)
    except queue.Empty:
        pass


def _condition_wait():
    condition = threading.Condition()
    with condition:
        condition.wait(TIMEOUT_S)


def _pipe_wait():
    reader, writer = multiprocessing.connection.Pipe(duplex=False)
    try:
        multiprocessing.connection.wait([reader], TIMEOUT_S)
    finally:
        reader.close()
        writer.close()


def _selector_select():
    r, w = os.pipe()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(r, selectors.EVENT_READ)
            selector.select(TIMEOUT_S)
    finally:
        os.close(r)
        os.close(w)


def _thread_join():
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        thread.join(TIMEOUT_S)
        assert thread.is_alive()
    finally:
        release.set()
        thread.join()


def _mp_event_wait():
    multiprocessing.Event().wait(TIMEOUT_S)


#: Each wait, timing out after TIMEOUT_S, as a program writes it.
WAITS = {
    "select.select": lambda: select.select([], [], [], TIMEOUT_S),
    "Event.wait": lambda: threading.Event().wait(TIMEOUT_S),
    "Queue.get": _queue_get,
    "Condition.wait": _condition_wait,
    "Semaphore.acquire": lambda: threading.Semaphore(0).acquire(timeout=TIMEOUT_S),
    "DefaultSelector.select": _selector_select,
    "multiprocessing.connection.wait": _pipe_wait,
    "Thread.join": _thread_join,
    "multiprocessing.Event.wait": _mp_event_wait,
}


@pytest.mark.timeout(60)       # before, multiprocessing.connection.wait never reached its deadline
@pytest.mark.parametrize("name", sorted(WAITS))
def test_a_wait_that_times_out_passes_its_timeout_on_the_clock(name):
    simgpu.install()
    with simgpu.active(H100):
        torch.empty(8, device="cuda").zero_()            # this thread runs device work
        t0 = time.perf_counter()
        WAITS[name]()
        moved = time.perf_counter() - t0
    assert moved == pytest.approx(TIMEOUT_S, abs=1e-4), name


def test_a_wait_something_wakes_passes_nothing_more():
    simgpu.install()
    with simgpu.active(H100):
        torch.empty(8, device="cuda").zero_()
        ready = threading.Event()
        ready.set()
        t0 = time.perf_counter()
        woken = ready.wait(5.0)
        moved = time.perf_counter() - t0
    assert woken and moved < 1e-4


def test_on_the_cpu_clock_a_wait_that_times_out_lasts_at_least_its_timeout():
    """A real-CPU call's clocks read CPU time plus sleeps (hostclock.py): a wait that times out
    is idle time the program asked to spend, as a sleep is."""
    simgpu.install()
    with hostclock.cpu_time():
        t0 = time.perf_counter()
        select.select([], [], [], TIMEOUT_S)
        moved = time.perf_counter() - t0
    assert moved >= TIMEOUT_S


ASYNCIO = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
import torch
from shared import simgpu
simgpu.install()
with simgpu.active(simgpu.config("h100")):
    t0 = time.perf_counter()
    asyncio.run(asyncio.sleep(0.05))
    print(round(time.perf_counter() - t0, 3))
"""


def test_asyncio_sleep_returns_after_its_time():
    """asyncio's loop waits in a selector until its next deadline on the (virtual) monotonic
    clock; a clock that stood still across those waits never reached it (before: it spun until
    killed)."""
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", ASYNCIO, root], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.split()[-1]) == pytest.approx(0.05, abs=0.005)


def test_every_selector_the_platform_has_is_answered():
    """asyncio's loop waits in selectors.DefaultSelector; multiprocessing's in PollSelector."""
    simgpu.install()
    names = ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector", "DefaultSelector")
    present = [getattr(selectors, n) for n in names if hasattr(selectors, n)]
    assert len(present) >= 3 and all(patches._ours(kind.select) for kind in present), present


def test_a_callers_waits_beside_its_timing_worker_do_not_add_to_its_window():
    """A caller that warmed up on its own thread, then polls a worker's queue with a timeout while
    the worker times its copies (good/t15_g_worker_queue_get_timeout): on a GPU machine the
    caller's timed-out waits pass beside the worker's work. Before, the caller had run device
    work, so each timeout moved the one host clock inside the worker's window, as many times as
    real time let it (0.21x to 0.82x under s1)."""
    simgpu.install()
    with simgpu.active(H100) as dev:
        a = torch.empty(2**27, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)                                  # the caller's warm-up: it has run device work
        torch.cuda.synchronize()
        results: queue.Queue = queue.Queue()

        def worker():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                b.copy_(a)
                hostclock.real_sleep(0.002)         # real time passes while the worker times
            torch.cuda.synchronize()
            results.put(time.perf_counter() - t0)
        thread = threading.Thread(target=worker)
        thread.start()
        timeouts = 0
        while True:
            try:
                elapsed = results.get(timeout=0.001)
                break
            except queue.Empty:
                timeouts += 1
        thread.join()
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    assert timeouts > 0 and elapsed == pytest.approx(20 * kernel, rel=0.05)
