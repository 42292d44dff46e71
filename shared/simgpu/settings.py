"""The simulator settings GPU checks compare, each isolating one way a measurement can lie.

    ideal:  the seeded device; launches wait; launches, allocations and syncs cost the host
            nothing, a clock read 1 ns (the resolution of perf_counter_ns); no first-use cost:
            the timer sees exactly the device's time, whatever the code's style (chunks,
            repeats, Timer)
    async:  the seeded device with asynchronous launches (ASYNC_LAUNCH_S of host time each):
            a timer that does not wait for the device reads only how fast Python queues work
    cold:   ideal, plus the one-time cost of the first op of each kind: a timer without a
            warm-up pays it

``base`` is what a student's machine runs (``python -m shared.simgpu``, the public tests), in a
fixed order; the hidden grader adds devices of its own and draws the order (autograder/gpu/probe.py).
"""
from __future__ import annotations

from shared.simgpu.profile import config

#: Host seconds per launch in the asynchronous setting: a fast host, so that kernels shorter than
#: a real launch (a tiny buffer, a chunked copy) are not launch-bound there and a missing
#: synchronize is the only thing that moves a ratio.
ASYNC_LAUNCH_S = 1e-7
#: Host seconds per clock read on the ideal device: perf_counter_ns's resolution.
CLOCK_READ_S = 1e-9


def ideal(profile: str, seed: int | None) -> dict:
    """The seeded device with every host-side cost removed (see the module's table)."""
    return config(profile, seed, sync_launches=True, first_use=False, launch_overhead_s=0.0,
                  alloc_s=0.0, sync_overhead_s=0.0, clock_read_s=CLOCK_READ_S)


def base(profile: str, seed: int | None) -> dict:
    """{ideal, async, cold} configs, ``factors`` (each setting's speed over the seeded device's:
    none here) and ``order`` (the order their calls run in)."""
    cfg = ideal(profile, seed)
    return {
        "ideal": cfg,
        "async": dict(cfg, sync_launches=False, launch_overhead_s=ASYNC_LAUNCH_S),
        "cold": dict(cfg, first_use=True),
        "factors": {},
        "order": ["ideal", "async", "cold"],
    }
