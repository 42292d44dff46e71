"""Every clock a Python program can read follows the simulated device (shared/simgpu/clocks.py).

The standard library's clock functions are enumerated, so that one a later Python adds fails here
until it is either answered by the simulator or named as no clock; each answered one is shown to
move by exactly the device's time across a kernel; polling an event and sleeping make progress.
"""
from __future__ import annotations

import datetime
import inspect
import time
import timeit

import pytest
import torch

from shared import simgpu
from shared.simgpu import clocks, patches

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
#: Launches that wait and cost the host nothing: a clock reading moves by the device's time alone.
H100 = simgpu.config("h100", sync_launches=True, first_use=False, launch_overhead_s=0.0, alloc_s=0.0, kernel_jitter=0.0,
                     sync_overhead_s=0.0, clock_read_s=1e-9)


def test_every_clock_function_of_the_time_module_is_answered_or_named_as_no_clock():
    simgpu.install()
    public = {n for n in dir(time) if not n.startswith("_") and callable(getattr(time, n))}
    answered = set(clocks.TIME_CLOCKS) | {"sleep"}
    assert public - answered - set(NOT_CLOCKS) == set(), "a clock the simulator does not answer"
    assert all(patches._ours(getattr(time, n)) for n in answered & public)


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
    simgpu.install()
    read = _reading(name)
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        before = read()
        b.copy_(a)
        after = read()
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    assert after - before == pytest.approx(kernel, rel=1e-3, abs=2e-6)   # datetime resolves 1 us


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
