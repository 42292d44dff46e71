"""The rest of torch.cuda a correct program calls works on the simulated device as on a CUDA
build (shared/simgpu/cudalib.py): seeding and the generator's state, NVTX ranges, torch.compile.
On this CPU build each raised before (no CUDA runtime, no NVTX, no GPU compiler)."""
from __future__ import annotations

import pytest
import torch

from shared import simgpu

H100 = simgpu.config("h100")


def _copies() -> int:
    return sum(g["count"] for g in simgpu.trace()["op_groups"] if g["kind"] == "copy")


def test_seeding_and_the_generators_state_answer_as_cuda_does():
    with simgpu.active(H100):
        assert torch.cuda.initial_seed() == 67280421310721     # CUDA's default seed
        torch.cuda.manual_seed(1234)
        assert torch.cuda.initial_seed() == 1234
        torch.manual_seed(99)                                  # seeds every device too
        assert torch.cuda.initial_seed() == 99
        state = torch.cuda.get_rng_state()
        assert state.dtype == torch.uint8 and state.shape == (16,) and state.device.type == "cpu"
        torch.cuda.manual_seed_all(7)
        torch.cuda.set_rng_state(state)
        assert torch.cuda.initial_seed() == 99
        assert [s.tolist() for s in torch.cuda.get_rng_state_all()] == [state.tolist()]
        with torch.random.fork_rng(devices=[0]):
            torch.cuda.manual_seed(5)
            a = torch.randn(64, 64, device="cuda")
        assert torch.cuda.initial_seed() == 99 and a.device == torch.device("cuda", 0)
        torch.cuda.seed()
        assert 0 <= torch.cuda.initial_seed() < 2**64


def test_nvtx_ranges_nest_as_the_library_reports():
    with simgpu.active(H100):
        assert torch.cuda.nvtx.range_push("outer") == 0
        assert torch.cuda.nvtx.range_push("inner") == 1
        assert torch.cuda.nvtx.range_pop() == 1
        assert torch.cuda.nvtx.range_pop() == 0
        torch.cuda.nvtx.mark("here")
        handle = torch.cuda.nvtx.range_start("span")
        torch.cuda.nvtx.range_end(handle)
        src = torch.empty(2**20, dtype=torch.uint8, device="cuda")
        with torch.cuda.nvtx.range("copy {}", 1):
            torch.empty_like(src).copy_(src)
        torch.cuda.synchronize()
        assert _copies() == 1


@pytest.mark.parametrize("when", ["before the device", "on the device"])
def test_a_compiled_function_runs_its_ops_on_the_device(when):
    def copy(dst, src):
        dst.copy_(src)

    compiled = torch.compile(copy) if when == "before the device" else None
    with simgpu.active(H100):
        compiled = compiled or torch.compile(mode="max-autotune")(copy)
        src = torch.empty(2**20, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        for _ in range(3):
            compiled(dst, src)
        torch.cuda.synchronize()
        assert _copies() == 3


def _kinds() -> dict:
    return {g["kind"]: g["count"] for g in simgpu.trace()["op_groups"]}


@pytest.mark.parametrize("weights", [True, False], ids=["leaf weights", "plain tensors"])
def test_autocast_runs_matmuls_in_its_dtype_casting_as_the_gpu_does(weights):
    """Inside torch.autocast('cuda') a matmul of fp32 operands casts them and runs in bf16; the
    cast of a weight (a leaf that requires grad) is made once per region, others each time."""
    n, reps = 1024, 3
    with simgpu.active(H100):
        a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
        if weights:
            a, b = torch.nn.Parameter(a), torch.nn.Parameter(b)
        torch.cuda.synchronize()
        before = _kinds().get("copy", 0)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            outs = [a @ b for _ in range(reps)]
        torch.cuda.synchronize()
        assert {o.dtype for o in outs} == {torch.bfloat16}
        assert _kinds()["matmul"] == reps
        assert _kinds().get("copy", 0) - before == (2 if weights else 2 * reps)
        assert (a @ b).dtype == torch.float32            # outside the region: as written
