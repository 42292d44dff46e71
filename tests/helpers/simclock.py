"""What a clock reads across one kernel on the simulated device, for the tests of its clocks."""
from __future__ import annotations

import torch

from shared import simgpu

#: Launches that wait and cost the host nothing: a clock reading moves by the device's time alone.
H100 = simgpu.config("h100", sync_launches=True, first_use=False, launch_overhead_s=0.0, alloc_s=0.0, kernel_jitter=0.0,
                     sync_overhead_s=0.0, clock_read_s=1e-9)


def across_a_kernel(read) -> tuple[float, float]:
    """(how far ``read()`` moved across a 1 GiB copy that waits for the device, the copy's device
    seconds), on ``H100`` after one copy that warms it up."""
    simgpu.install()
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        before = read()
        b.copy_(a)
        after = read()
        kernel = dev.trace()["op_groups"][-1]["seconds_each"]
    return after - before, kernel
