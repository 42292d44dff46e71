"""A process forked while the simulated GPU is active holds no device, as CUDA gives a child
forked after initialization none: its device use raises torch's own error, its clocks are real.
Real forks of this process; each child reports through a pipe and leaves with os._exit."""
from __future__ import annotations

import json
import os
import time

import torch

from shared import simgpu

H100 = simgpu.config("h100")

def _in_child(action) -> dict:
    """Fork, run ``action`` in the child; what it raised (type and message) or 'ok'."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            action()
            out = {"result": "ok"}
        except BaseException as exc:     # the child reports whatever it met, then leaves
            out = {"result": type(exc).__name__, "message": str(exc)}
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def test_a_forked_childs_device_use_raises_torchs_fork_error_and_the_parent_keeps_its_device():
    n = 2**20
    with simgpu.active(H100):
        src = torch.empty(n, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        cases = {"allocate": lambda: torch.empty(n, dtype=torch.uint8, device="cuda"),
                 "synchronize": torch.cuda.synchronize,
                 "properties": lambda: torch.cuda.get_device_properties(0).total_memory,
                 "copy": lambda: (dst.copy_(src), torch.cuda.synchronize())}
        for name, action in cases.items():
            got = _in_child(action)
            assert got["result"] == "RuntimeError", (name, got)
            assert got["message"].startswith("Cannot re-initialize CUDA in forked subprocess"), (name, got)
        dst.copy_(src)                   # the parent's device is as it was: one copy, its bytes
        torch.cuda.synchronize()
    groups = [g for g in simgpu.trace()["op_groups"] if g["kind"] == "copy"]
    assert [(g["read_bytes"], g["write_bytes"], g["count"]) for g in groups] == [(n, n, 1)]


def test_a_forked_childs_clocks_are_the_real_ones():
    with simgpu.active(H100):
        def real_clock():
            virtual = time.perf_counter()
            time.sleep(0.05)
            assert time.perf_counter() - virtual >= 0.05
        assert _in_child(real_clock) == {"result": "ok"}


def test_a_fork_without_an_active_device_leaves_the_child_as_it_was():
    assert _in_child(lambda: torch.ones(4).add_(1)) == {"result": "ok"}
