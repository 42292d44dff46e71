"""Every clock a Python program can read follows the simulated device (shared/simgpu/clocks.py).

The standard library's clock functions are enumerated, so that one a later Python adds fails here
until it is either answered by the simulator or named as no clock; each answered one is shown to
move by exactly the device's time across a kernel; polling an event and sleeping make progress.
"""
from __future__ import annotations

import datetime
import inspect
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import timeit
from pathlib import Path

import pytest
import torch

from shared import simgpu
from shared.simgpu import clockbase, clocks, hostclock, patches
from tests.helpers.simclock import H100, across_a_kernel

#: time's public callables that read no clock, and why.
NOT_CLOCKS = {
    "sleep": "answered too: passes virtual time (clocks.py)",
    "get_clock_info": "describes a clock, reads none",
    "mktime": "converts a given struct_time",
    "strptime": "parses a given string",
    "tzset": "reads the TZ variable",
    "clock_getres": "a clock's resolution, not its time",
    "clock_settime": "sets a clock (refused to unprivileged code anyway)",
    "clock_settime_ns": "sets a clock (refused to unprivileged code anyway)",
    "pthread_getcpuclockid": "a clock id, not a time",
    "struct_time": "a type",
}
#: datetime classes' public class methods that read no clock.
DATETIME_NOT_CLOCKS = {"combine", "fromisocalendar", "fromisoformat", "fromordinal", "fromtimestamp",
                       "strptime", "utcfromtimestamp"}
#: Types of reading outside time's functions that carry a time (a field named for one), and the
#: function the simulator answers for each, or why none is needed.
TIMED_RESULTS = {
    "os.times_result": "os.times",
    "resource.struct_rusage": "resource.getrusage",
    "os.stat_result": "a file's times say when it was written, by whom the clock does not decide",
}


def test_every_clock_function_of_the_time_module_is_answered_or_named_as_no_clock():
    simgpu.install()
    public = {n for n in dir(time) if not n.startswith("_") and callable(getattr(time, n))}
    answered = set(clocks.TIME_CLOCKS) | {"sleep"}
    assert public - answered - set(NOT_CLOCKS) == set(), "a clock the simulator does not answer"
    assert all(patches._ours(getattr(time, n)) for n in answered & public)


def test_every_kind_of_reading_with_a_time_in_it_outside_time_is_answered_or_named():
    """os and resource (and whatever a later Python adds there) cannot hand out a real time."""
    simgpu.install()
    found = {f"{module.__name__}.{name}" for module in (os, resource) for name, kind in vars(module).items()
             if isinstance(kind, type) and hasattr(kind, "n_fields")
             and any("time" in f or "elapsed" in f for f in dir(kind) if not f.startswith("_"))}
    assert found == set(TIMED_RESULTS), "a reading with a time in it the simulator does not answer"
    answered = [v for v in TIMED_RESULTS.values() if v in clocks.CLOCKS]
    assert answered == ["os.times", "resource.getrusage"]
    assert all(patches._ours(getattr(os if n.startswith("os.") else resource, n.split(".")[1]))
               for n in answered)


def test_every_clock_class_method_of_datetime_is_answered():
    simgpu.install()
    for patched in (datetime.datetime, datetime.date):
        assert getattr(patched, "_simgpu", False)
        original = patched._original
        constructors = {n for n in dir(original) if not n.startswith("_") and type(
            inspect.getattr_static(original, n)).__name__ in ("classmethod_descriptor", "classmethod")}
        readers = constructors - DATETIME_NOT_CLOCKS
        assert readers and readers <= set(clocks.DATETIME_CLOCKS), readers
        assert all(n in vars(patched) for n in readers)


def _reading(name: str):
    """A function reading clock ``name`` in seconds."""
    if name.startswith("time."):
        attr = name.split(".", 1)[1]
        kind = clocks.TIME_CLOCKS.get(attr)
        fn = getattr(time, attr)
        if kind in ("mono", "wall"):
            return fn
        if kind in ("mono_ns", "wall_ns"):
            return lambda: fn() / 1e9
        if kind == "id":
            return lambda: fn(time.CLOCK_MONOTONIC)
        if kind == "id_ns":
            return lambda: fn(time.CLOCK_MONOTONIC) / 1e9
    if name == "timeit.default_timer":
        return timeit.default_timer
    if name.startswith("datetime."):
        return lambda: getattr(datetime.datetime, name.rsplit(".", 1)[1])().timestamp() \
            if name.endswith(("now", "today")) else None
    return None


SECOND_CLOCKS = [c for c in clocks.CLOCKS if _reading(c) is not None and "utcnow" not in c
                 and c != "datetime.datetime.today"]


@pytest.mark.parametrize("name", SECOND_CLOCKS)
def test_each_clock_moves_by_the_devices_time_across_a_kernel(name):
    """Two readings around a copy that waits for the device differ by the copy's device time."""
    moved, kernel = across_a_kernel(_reading(name))
    assert moved == pytest.approx(kernel, rel=1e-3, abs=2e-6)   # datetime resolves 1 us


def test_timeit_in_every_usual_form_times_the_device():
    simgpu.install()
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
        step = lambda: b.copy_(a)        # noqa: E731 - the style under test
        readings = [timeit.timeit(step, number=5), timeit.Timer(step).timeit(5),
                    min(timeit.repeat(step, number=5, repeat=2))]
    for seconds in readings:
        assert seconds == pytest.approx(5 * kernel, rel=1e-3)


def test_polling_an_event_ends_and_sleeping_passes_virtual_time():
    simgpu.install()
    with simgpu.active(dict(H100, sync_launches=False)) as dev:
        a = torch.empty(2**28, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        b.copy_(a)
        end.record()
        polls = 0
        while not end.query():          # valid CUDA: each query costs the host poll_s
            polls += 1
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
        assert 0 < polls <= kernel / dev.cfg["poll_s"] + 2
        assert start.elapsed_time(end) == pytest.approx(kernel * 1e3, rel=1e-3)
        t0 = time.perf_counter()
        time.sleep(2.5)
        assert time.perf_counter() - t0 == pytest.approx(2.5, abs=1e-6)


def test_outside_a_simulation_every_clock_is_the_real_one():
    simgpu.install()
    assert abs(time.time() - time.time.__wrapped__()) < 5
    assert abs(datetime.datetime.now().timestamp() - time.time.__wrapped__()) < 5
    assert isinstance(datetime.datetime(2020, 1, 1), datetime.datetime)


def _real(fn):
    return getattr(fn, "__wrapped__", fn)


def test_the_virtual_clocks_start_at_the_real_clocks_readings(monkeypatch):
    """The date, the time since boot and the CPU time used read as on this machine: each virtual
    clock lies between the real one before the device started and the real one after it ended
    plus the device's time (a fixed epoch or a small perf_counter would give the simulator away).
    As in a fresh process: no earlier period's readings to stay above."""
    simgpu.install()
    monkeypatch.setattr(clockbase, "_last", {})
    names = ("time", "perf_counter", "monotonic", "process_time")
    before = {n: _real(getattr(time, n))() for n in names}
    before["boot"] = _real(time.clock_gettime)(time.CLOCK_BOOTTIME)
    before["elapsed"] = _real(os.times)().elapsed
    with simgpu.active(H100) as dev:
        torch.empty(2**30, dtype=torch.uint8, device="cuda").fill_(1)
        seen = {n: getattr(time, n)() for n in names}
        seen["boot"] = time.clock_gettime(time.CLOCK_BOOTTIME)
        seen["elapsed"] = os.times().elapsed
        host_s = dev.trace()["host_s"]
    after = {n: _real(getattr(time, n))() for n in names}
    after["boot"] = _real(time.clock_gettime)(time.CLOCK_BOOTTIME)
    after["elapsed"] = _real(os.times)().elapsed
    step = 1 / clockbase.STEPS_PER_S              # a base is the real reading rounded up to a step
    for name, value in seen.items():
        assert before[name] - 0.01 <= value <= after[name] + host_s + step + 0.01, name   # os.times: 10 ms ticks
    assert seen["perf_counter"] == pytest.approx(seen["monotonic"], abs=1e-3)   # one clock, as on Linux


def test_what_a_coarse_clock_reads_of_the_same_work_does_not_depend_on_when_the_device_started(monkeypatch):
    """datetime.now() counts whole microseconds and time.time()'s float resolves ~0.24 us: a
    window of a few microseconds (copies queued without a synchronize) reads 1, 2 or 3 us by where
    the readings fall between ticks. Started at any moment of the real clock, the device's readings
    of the same work round alike (wrong/nosync_end_datetime's verdict once followed the start)."""
    simgpu.install()
    real_start_ns = 1_780_000_000 * 10**9
    seen = set()
    for shift in range(0, 10**9, 10**9 // 97):          # starts at 97 points of a real second
        monkeypatch.setattr(clockbase, "_last", {})
        monkeypatch.setitem(clockbase._time_ns, "wall", lambda shift=shift: real_start_ns + shift)
        with simgpu.active(dict(H100, sync_launches=False, launch_overhead_s=1e-7)):
            a = torch.empty(2**28, dtype=torch.uint8, device="cuda")
            b = torch.empty_like(a)
            t0, f0 = datetime.datetime.now(), time.time()
            for _ in range(20):
                b.copy_(a)
            seen.add(((datetime.datetime.now() - t0).total_seconds(), time.time() - f0))
            torch.cuda.synchronize()
    assert len(seen) == 1, sorted(seen)


def _fractions(seed: int) -> list[float]:
    """What the date, the time since boot, the process's and the thread's CPU time read, modulo a
    quarter second, on a device of ``seed``."""
    with simgpu.active(dict(H100, seed=seed)):
        return [x % 0.25 for x in (time.time(), time.monotonic(), time.process_time(), time.thread_time())]


def test_the_date_the_time_since_boot_and_the_cpu_times_read_fractions_of_their_own(monkeypatch):
    """forged/t14_f_quarter_second_clock_bases_tell: a real machine's date, time since boot and CPU
    times read unrelated fractions of a second, where clocks that all started on quarter seconds
    agreed to the microsecond. Each starts on a fraction of its own, drawn from the device's seed:
    the same under one seed (a coarse clock's ticks fall alike in every run), others under another."""
    simgpu.install()
    monkeypatch.setattr(clockbase, "_last", {})
    one, again, other = _fractions(3), _fractions(3), _fractions(4)
    apart = [abs(a - b) for i, a in enumerate(one) for b in one[i + 1:]]
    assert min(apart) > 1e-3, one
    assert [b - a for a, b in zip(one, one[1:])] == pytest.approx([b - a for a, b in zip(again, again[1:])], abs=1e-5)
    assert [b - a for a, b in zip(one, one[1:])] != pytest.approx([b - a for a, b in zip(other, other[1:])], abs=1e-3)

CPU_CLOCKS = {
    "process_time": lambda: time.process_time(), "thread_time": lambda: time.thread_time(),
    "CLOCK_PROCESS_CPUTIME_ID": lambda: time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID),
    "CLOCK_THREAD_CPUTIME_ID": lambda: time.clock_gettime_ns(time.CLOCK_THREAD_CPUTIME_ID) / 1e9,
    "process_time_ns": lambda: time.process_time_ns() / 1e9,
    "getrusage": lambda: resource.getrusage(resource.RUSAGE_SELF).ru_utime,
    "getrusage_thread": lambda: resource.getrusage(resource.RUSAGE_THREAD).ru_utime,
    "os.times": lambda: os.times().user,
}


@pytest.mark.parametrize("name", sorted(CPU_CLOCKS))
def test_cpu_time_stands_still_while_sleeping_and_moves_while_waiting_on_the_device(name):
    """A sleeping process uses no CPU time; one waiting on the device does (a synchronize
    spin-waits), as much as the wait lasts."""
    simgpu.install()
    read = CPU_CLOCKS[name]
    tick = 0.01 if name == "os.times" else 2e-6       # os.times counts 10 ms ticks, getrusage us
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        before = read()
        time.sleep(2.5)
        slept = read() - before
        before = read()
        for _ in range(40):
            b.copy_(a)
        waited = read() - before
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    assert abs(slept) <= tick
    assert waited == pytest.approx(40 * kernel, abs=tick + 1e-3 * 40 * kernel)


def test_a_blocking_events_wait_sleeps_and_a_spinning_wait_uses_cpu_time():
    """cudaEventBlockingSync parks the waiting thread; the runtime's other waits spin. So across
    Event(blocking=True).synchronize() the CPU-time clocks stand still while perf_counter moves
    by the device's time, and across a plain event's they move with it
    (wrong/t13_w_cpu_clock_blocking_wait: process_time around a blocking wait sees the launches)."""
    simgpu.install()
    with simgpu.active(dict(H100, sync_launches=False, launch_overhead_s=1e-7)):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        moved = {}
        for blocking in (True, False):
            torch.cuda.synchronize()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(10):
                b.copy_(a)
            done = torch.cuda.Event(blocking=blocking)
            done.record()
            done.synchronize()
            moved[blocking] = (time.process_time() - cpu0, time.perf_counter() - wall0)
    (cpu_blocking, wall_blocking), (cpu_spinning, wall_spinning) = moved[True], moved[False]
    assert wall_blocking == pytest.approx(wall_spinning, rel=1e-6) and wall_blocking > 1e-3
    assert cpu_spinning == pytest.approx(wall_spinning, rel=1e-6)
    assert cpu_blocking < 1e-5                         # the ten launches alone


@pytest.mark.parametrize("clock,own", [("process_time", "cpu"), ("perf_counter", "host"), ("thread id", "cpu")])
def test_the_timed_window_is_kept_in_the_clock_the_call_read(clock, own):
    """A call that reads only CPU-time clocks has its window in CPU seconds too (own_s), which
    stand still while a blocking wait sleeps; any other clock's window is the host's."""
    simgpu.install()
    clock = (lambda: time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)) if clock == "thread id" else getattr(time, clock)
    with simgpu.active(dict(H100, sync_launches=False, launch_overhead_s=1e-7)):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        torch.cuda.synchronize()
        start = clock()
        for _ in range(10):
            b.copy_(a)
        done = torch.cuda.Event(blocking=True)
        done.record()
        done.synchronize()
        took = clock() - start
        timed = simgpu.trace()["timed"]
    assert timed["duration_s"] > 1e-3
    # (torch's first CUDA use in a process reads a clock too: the window may open a few reads earlier)
    assert timed["own_s"] == pytest.approx(took, rel=1e-6, abs=1e-8)
    assert (timed["own_s"] < 1e-5) if own == "cpu" else timed["own_s"] == timed["duration_s"]


def test_os_times_elapsed_follows_the_devices_time():
    """os.times().elapsed is a clock like the others: a sleep and the device's work move it."""
    simgpu.install()
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        before = os.times().elapsed
        time.sleep(2.5)
        for _ in range(40):
            b.copy_(a)
        moved = os.times().elapsed - before
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    assert moved == pytest.approx(2.5 + 40 * kernel, abs=0.0101)


def test_no_clock_goes_back_from_one_active_period_to_the_next():
    """A period whose virtual time ran ahead of the real clocks (a long sleep): the next period's
    clocks start no lower than where the last one's ended, as a real clock never goes back."""
    simgpu.install()
    readers = [time.perf_counter, time.time, time.process_time, lambda: os.times().elapsed]
    with simgpu.active(H100):
        time.sleep(30)
        torch.empty(2**30, dtype=torch.uint8, device="cuda").fill_(1)
        ended = [read() for read in readers]
    with simgpu.active(H100):
        started = [read() for read in readers]
    assert all(s >= e for s, e in zip(started, ended, strict=True)), (started, ended)


def _real_clock():
    return _real(time.perf_counter)()


def test_a_subprocess_run_with_a_timeout_ends_as_on_a_gpu_machine():
    """subprocess.run(timeout=...) polls the child with sleeps (Popen.wait). Those sleeps moved
    only the virtual clock, which raced past the timeout while the child still ran: TimeoutExpired
    (or, past a call's limit, a stopped call) by as much as the machine's load slowed the child.
    Now the sleeps pass real time while a child runs: the call returns the child's exit status
    and the clock moves no further than the real time spent (plus the reads' cost)."""
    simgpu.install()
    with simgpu.active(H100):
        real0, t0 = _real_clock(), time.perf_counter()
        done = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.4)"], timeout=5)
        virtual, real = time.perf_counter() - t0, _real_clock() - real0
    assert done.returncode == 0
    assert virtual <= real + 0.05


def test_a_thread_polling_a_worker_sees_its_clock_move_with_the_world():
    """A loop that sleeps until a worker thread finishes real work: the sleeps pass real time
    too, so the loop's clock moves no further than the world did (before: a few µs of real time
    per 10 ms of virtual, so the clock ran ahead of the worker by orders of magnitude)."""
    simgpu.install()
    with simgpu.active(H100):
        done = threading.Event()
        worker = threading.Thread(target=lambda: (threading.Event().wait(0.3), done.set()))
        real0, t0 = _real_clock(), time.perf_counter()
        worker.start()
        while not done.is_set():
            time.sleep(0.01)
        virtual, real = time.perf_counter() - t0, _real_clock() - real0
        worker.join()
    assert 0 < virtual <= real + 0.05


ALONE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from shared import simgpu
simgpu.install()
real = time.perf_counter.__wrapped__
with simgpu.active(simgpu.config("h100")):
    real0, t0 = real(), time.perf_counter()
    time.sleep(30)
    print(time.perf_counter() - t0, real() - real0)
"""


def test_a_program_alone_in_its_process_sleeps_no_real_time():
    """No child, no other thread, no timer (a fresh process): a sleep moves only the virtual
    clock, so grading stays quick and a program that sleeps forever passes a call's limit by the
    device's clock at once."""
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", ALONE, root], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    virtual, real = map(float, done.stdout.split())
    assert virtual == pytest.approx(30, abs=1e-3) and real < 30


WITH_A_CHILD = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from shared import simgpu
simgpu.install()
with simgpu.active(simgpu.config("h100")):
    child = os.fork()
    if child == 0:
        time.sleep(5)
        os._exit(0)
    t0 = time.perf_counter()
    for _ in range(20):
        time.sleep(0.01)
    print(time.perf_counter() - t0)
    os.kill(child, 9)
    os.waitpid(child, 0)
"""


def test_a_thread_alone_beside_a_child_process_passes_its_sleeps():
    """A thread alone in its process that never gave the device work, beside a child process
    (the world moves, so its sleeps pass real time): each sleep still moves its clock. Before, it
    moved by the loop's CPU time only, so a loop sleeping until a time it read (a fork bomb's, or a
    parent's deadline while its child works) lasted hundreds of times as long in real time."""
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", WITH_A_CHILD, root], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) >= 0.2


def test_a_loop_waiting_for_a_timer_signal_sees_its_clock_move_with_the_world():
    """A watchdog's signal.setitimer (or alarm) fires in real time: a loop sleeping until it
    fires passes real time, so its clock reads about the timer's length, not many times it."""
    simgpu.install()
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        with simgpu.active(H100):
            real0, t0 = _real_clock(), time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            while not fired:
                time.sleep(0.01)
            virtual, real = time.perf_counter() - t0, _real_clock() - real0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert 0 < virtual <= real + 0.05


#: How a thread that runs no device work passes its time: sleeps (a progress reporter), or waits
#: on an event that times out (a watchdog; shared/simgpu/waits.py passes them as sleeps).
IDLE = {"sleeps": lambda stop: time.sleep(0.01), "waits": lambda stop: stop.wait(0.005)}


@pytest.mark.parametrize("idle", sorted(IDLE))
def test_a_reporter_threads_sleeps_do_not_add_to_the_device_threads_time(idle):
    """A thread that runs no device work (a progress reporter, a watchdog) sleeps or waits in real
    time beside the timing thread, as on a GPU machine: the timed window reads the device's work
    alone, however many of its sleeps fall inside it (before, each added its length to the one
    host clock)."""
    simgpu.install()
    with simgpu.active(H100) as dev:
        a = torch.empty(2**26, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        torch.cuda.synchronize()
        stop = threading.Event()

        def report():
            while not stop.is_set():
                IDLE[idle](stop)
        reporter = threading.Thread(target=report)
        reporter.start()
        t0 = time.perf_counter()
        for _ in range(20):
            b.copy_(a)
            hostclock.real_sleep(0.01)          # real time passes (no clock the program reads): the reporter sleeps
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        stop.set()
        reporter.join()
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    assert elapsed == pytest.approx(20 * kernel, rel=0.05)


@pytest.mark.parametrize("sync_launches", [True, False])
def test_a_sleep_overlaps_queued_work_and_only_what_follows_the_work_is_idle(sync_launches):
    """A wait that times out while copies are queued passes beside them, as on a GPU, also on the
    seeded device, which waited at each launch (the wait is covered by that waiting); a sleep after
    the device ran out of work is idle (``idle_s``) and lengthens the window; one after the last
    clock reading is no part of it. A CPU-time clock never runs backwards meanwhile. The waits the
    host asked in the window (``waited_s``) count the overlapped one in full."""
    simgpu.install()
    with simgpu.active(dict(H100, sync_launches=sync_launches, launch_overhead_s=1e-7)):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        torch.cuda.synchronize()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(10):
            b.copy_(a)
        queued = time.perf_counter() - start if not sync_launches else None
        threading.Event().wait(0.001)                  # far shorter than ten 1 GiB copies
        assert time.process_time() >= cpu
        torch.cuda.synchronize()
        work = time.perf_counter() - start
        time.sleep(0.002)                              # after them: idle on either device
        took = time.perf_counter() - start
        time.sleep(0.5)                                # after the last reading: none of it
        timed = simgpu.trace()["timed"]
    assert queued is None or queued < 1e-4
    assert work > 0.005 and took == pytest.approx(work + 0.002, rel=1e-6)
    assert timed["duration_s"] >= took * (1 - 1e-9)       # the window holds the readings
    assert timed["idle_s"] == pytest.approx(0.002, rel=1e-3)
    assert timed["waited_s"] == pytest.approx(0.003, rel=1e-6)     # asked: the overlapped wait too


def test_the_query_that_finds_the_work_done_is_a_wait_for_it_not_idle():
    """good/t15_g_stream_query_sleep0: a loop that polls query() until the copy is done and then
    reads the clock waited for the device as a synchronize does; only queries after one already
    found it done pad the window. Before, that first query's cost was idle, which at a small size
    was 5% of the window and read as the host-idle slip."""
    simgpu.install()
    with simgpu.active(dict(H100, sync_launches=True)):      # the seeded device: the copy is done at its launch
        a = torch.empty(2**24, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        stream = torch.cuda.current_stream()
        torch.cuda.synchronize()
        start = time.perf_counter()
        b.copy_(a)
        while not stream.query():
            time.sleep(0)
        time.perf_counter() - start
        spun = simgpu.trace()["timed"]
        start = time.perf_counter()
        b.copy_(a)
        while not stream.query():
            pass
        stream.query()                          # the work was found done: this one waits on nothing
        time.perf_counter() - start
        padded = simgpu.trace()["timed"]
    assert spun["duration_s"] > 0 and spun["idle_s"] == 0
    assert padded["idle_s"] == pytest.approx(H100["poll_s"], rel=1e-6)


def test_queries_asked_after_the_device_ran_out_of_work_are_idle_as_a_sleep_is():
    """A window padded with stream or event queries after the work finished (a pace that spins
    instead of sleeping) waits on nothing, as a sleep there does: idle; queries that find the work
    still running are a wait for the device, as a synchronize is, and not idle."""
    simgpu.install()
    with simgpu.active(dict(H100, sync_launches=False)):
        a = torch.empty(2**28, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        end = torch.cuda.Event()
        torch.cuda.synchronize()
        start = time.perf_counter()
        b.copy_(a)
        end.record()
        while not end.query():                  # the work still runs: no idle
            pass
        busy = time.perf_counter() - start
        stream = torch.cuda.current_stream()
        for _ in range(1000):                   # nothing left to run: every one is idle
            stream.query()
        took = time.perf_counter() - start
        timed = simgpu.trace()["timed"]
    assert took > busy > 0
    assert timed["idle_s"] == pytest.approx(took - busy, rel=0.05)
