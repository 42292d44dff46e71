"""The simulated GPU itself, in-process: config, clocks, async launches, events, L2, first use,
memory and OutOfMemoryError, the torch styles student code uses, and determinism."""
from __future__ import annotations

import contextlib
import inspect
import os
import platform
import threading
import time
import timeit
import weakref

import pytest
import torch

from shared import simgpu
from shared.simgpu import patches
from tests.helpers import reference

simgpu.install()


bw = reference.load("bw")
flops = reference.load("flops")

MIB = 2**20
H100 = simgpu.config("h100")


# ------------------------------------------------------------------ config
def test_every_gpu_in_the_hardware_table_has_a_profile_with_its_numbers():
    from shared import tables
    keys = simgpu.gpu_keys()
    assert {"h100-sxm", "h200", "dgx-spark", "a100-40gb", "rtx-4090", "t4"} <= set(keys)
    for key in keys:
        cfg = simgpu.config(key)
        dev = tables.device(key)
        assert cfg["bw_gbs"] == dev.bw_gbs and cfg["l2_bytes"] == dev.l2_bytes
        assert cfg["memory_bytes"] == dev.memory_bytes


def test_seeded_profiles_are_reproducible_and_differ_by_seed():
    a, b = simgpu.config("h100", seed=12345), simgpu.config("h100", seed=12345)
    assert a == b
    others = [simgpu.config("h100", seed=s) for s in range(20)]
    assert len({c["bw_gbs"] for c in others}) == 20
    for c in others:
        assert 1.5 * H100["l2_bytes"] <= c["l2_bytes"] + MIB <= 2.5 * H100["l2_bytes"] + 2 * MIB
        assert 0.7 * H100["bw_gbs"] <= c["bw_gbs"] <= 1.3 * H100["bw_gbs"]
        assert 2.5 <= c["l2_speedup"] <= 4.0


def test_bad_configs_are_refused_with_one_line_naming_the_field():
    with pytest.raises(ValueError, match="ddr5"):
        simgpu.config("ddr5")
    with pytest.raises(ValueError, match="unknown device 'nope'"):
        simgpu.config("nope")
    with pytest.raises(ValueError, match="warp_speed"):
        simgpu.config("h100", warp_speed=2)
    bad = dict(H100, bw_gbs=-1.0)
    with pytest.raises(ValueError, match="bw_gbs"):
        simgpu.validate(bad)
    missing = {k: v for k, v in H100.items() if k != "l2_bytes"}
    with pytest.raises(ValueError, match="l2_bytes"):
        simgpu.validate(missing)
    with pytest.raises(ValueError, match="l2_bytes"):
        with simgpu.active(missing):
            pass


# ------------------------------------------------- outside a simulation
def test_outside_active_everything_behaves_as_the_originals():
    assert patches.installed()
    original = patches._ORIGINALS[(torch.cuda, "is_available")]
    assert torch.cuda.is_available() == original() is False
    with pytest.raises(Exception) as caught:
        torch.cuda.synchronize()
    with pytest.raises(type(caught.value)):
        patches._ORIGINALS[(torch.cuda, "synchronize")]()
    before = patches._ORIGINALS[(time, "perf_counter")]()
    now = time.perf_counter()
    assert before <= now <= patches._ORIGINALS[(time, "perf_counter")]()
    assert abs(time.time() - patches._ORIGINALS[(time, "time")]()) < 60
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    assert timeit.default_timer is time.perf_counter


def test_every_thread_of_the_process_shares_the_one_device():
    """A worker thread (or a pool's) reads the device's clock and runs its work on the device,
    as every thread of a CUDA process sees the one GPU."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    seen = {}

    def timed():
        a = torch.empty(2**26, device="cuda")
        b = torch.empty_like(a)
        torch.cuda.synchronize()
        start = time.perf_counter()
        b.copy_(a)
        torch.cuda.synchronize()
        return time.perf_counter() - start, b.device

    with simgpu.active(H100) as dev:
        worker = threading.Thread(target=lambda: seen.update(thread=timed(), cuda=torch.cuda.is_available()))
        worker.start()
        worker.join()
        with ThreadPoolExecutor(2) as pool:
            pooled = pool.submit(timed).result()
        assert dev.clock.reads >= 4
    assert seen["cuda"] is True and seen["thread"][1] == torch.device("cuda", 0)
    for seconds, _ in (seen["thread"], pooled):
        assert 2 * 2**28 / seconds / 1e9 < H100["bw_gbs"]   # a 256 MiB copy's device time


def test_a_pool_worker_kept_from_an_earlier_device_reads_the_new_devices_clock():
    """``python -m shared.simgpu`` prints each call on a device of its own. A pool kept at module
    level starts its worker on the first; on the next device that worker is still one of the
    process's threads, and a GPU's clock is every thread's: it must time the new device's copies
    by the new device's clock (it read the real clock, and printed thousands of GB/s)."""
    from concurrent.futures import ThreadPoolExecutor

    def timed():
        a = torch.empty(2**26, device="cuda")
        b = torch.empty_like(a)
        torch.cuda.synchronize()
        start = time.perf_counter()
        b.copy_(a)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    pool = ThreadPoolExecutor(1)
    try:
        with simgpu.active(H100):
            first = pool.submit(timed).result()
        with simgpu.active(H100) as dev:
            reads = dev.clock.reads
            second = pool.submit(timed).result()
            assert dev.clock.reads >= reads + 2          # the worker read this device's clock
    finally:
        pool.shutdown()
    assert second == pytest.approx(first, rel=0.02)      # the same copy on the same device


def test_a_thread_that_was_running_before_the_device_keeps_the_real_clock():
    """A notebook kernel's heartbeat or message thread, running before the device was activated,
    polls and sleeps on the real clocks: it neither reads the device's clock nor moves it."""
    import threading
    go, done = threading.Event(), threading.Event()
    seen = {}

    def background():          # started before the device, as a kernel's threads are
        go.wait()
        before = dev.clock.reads
        start = time.perf_counter()
        for _ in range(1000):
            time.perf_counter()
        time.sleep(0.01)
        seen.update(real=time.perf_counter() - start, reads=dev.clock.reads - before)
        done.set()

    worker = threading.Thread(target=background)
    worker.start()
    with simgpu.active(H100) as dev:
        go.set()
        done.wait(30)
    worker.join()
    assert seen["reads"] == 0        # the device's clock was neither read nor moved from that thread
    assert seen["real"] >= 0.01      # and that thread's sleep took real time

def test_install_is_idempotent():
    dispatcher = time.perf_counter
    simgpu.install()
    assert time.perf_counter is dispatcher and time.perf_counter.__wrapped__ is not dispatcher


# -------------------------------------------------------------- clocks
def test_every_clock_advances_on_every_read():
    with simgpu.active(H100):
        for clock in (time.perf_counter, time.perf_counter_ns, time.time, time.monotonic,
                      timeit.default_timer):
            assert clock() < clock()


def test_launches_are_asynchronous_and_synchronize_waits():
    with simgpu.active(H100) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            b.copy_(a)
        queued = time.perf_counter() - t0
        torch.cuda.synchronize()
        done = time.perf_counter() - t0
        copy_s = 2 * 2**30 / (H100["bw_gbs"] * 1e9 * H100["copy_efficiency"])
        assert queued < 10 * 10e-6                         # launch overhead only
        assert done == pytest.approx(10 * copy_s, rel=0.01)  # the device's roofline time
        assert dev.clock.idle()


@pytest.mark.parametrize("wait", ["cuda", "accelerator", "item", "cpu", "tolist", "print", "event"])
def test_host_reads_and_every_synchronize_wait_for_the_device(wait, capsys):
    with simgpu.active(H100) as dev:
        a = torch.zeros(2**28, device="cuda")
        a.add_(1)
        end = torch.cuda.Event()
        end.record()
        assert not dev.clock.idle()
        {"cuda": torch.cuda.synchronize, "accelerator": torch.accelerator.synchronize,
         "item": lambda: a.sum().item(), "cpu": lambda: a[:4].cpu(), "tolist": lambda: a[:3].tolist(),
         "print": lambda: print(a), "event": end.synchronize}[wait]()
        assert dev.clock.idle()


def test_events_raise_like_pytorch_before_completion_and_time_after():
    with simgpu.active(H100):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)                                         # warm-up: the first use is not timed
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            b.copy_(a)
        end.record()
        with pytest.raises(RuntimeError, match="Both events must be completed before calculating elapsed time"):
            start.elapsed_time(end)
        end.synchronize()
        ms = start.elapsed_time(end)
        assert ms == pytest.approx(5 * 2 * 2**30 / (H100["bw_gbs"] * 1e9 * H100["copy_efficiency"]) * 1e3, rel=0.01)
        with pytest.raises(RuntimeError, match="enable_timing"):
            torch.Event().elapsed_time(torch.Event())


# ------------------------------------------------------- L2 and first use
def test_small_working_sets_run_at_l2_speed_once_resident():
    with simgpu.active(dict(H100, kernel_jitter=0.0)):     # the model's own speed-up, without jitter
        a = torch.empty(16 * MIB, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        b.copy_(a)
        b.copy_(a)
    cold, warm = [g for g in simgpu.trace()["op_groups"] if g["kind"] == "copy"]
    assert (cold["l2"], warm["l2"]) == (False, True)
    assert cold["seconds_each"] / warm["seconds_each"] == pytest.approx(H100["l2_speedup"])


def test_first_use_of_each_kind_costs_once():
    with simgpu.active(H100) as dev:
        a = torch.empty(MIB, device="cuda")
        b = torch.empty_like(a)
        t0 = dev.clock.host
        b.copy_(a)
        first = dev.clock.host - t0
        t0 = dev.clock.host
        b.copy_(a)
        second = dev.clock.host - t0
        a.view(1024, 1024) @ a.view(1024, 1024)
        a.view(1024, 1024) @ a.view(1024, 1024)
        h = a.to(torch.bfloat16).view(1024, 1024)     # cuBLAS loads kernels per dtype
        h @ h
    assert first - second == pytest.approx(H100["first_use_s"])
    assert simgpu.trace()["first_use_kinds"] == ["copy", "matmul:float32", "matmul:bfloat16"]
    with simgpu.active(simgpu.config("h100", first_use=False)):
        b.copy_(a)
    assert simgpu.trace()["first_use_kinds"] == []


# ---------------------------------------------------------------- memory
def test_trace_keys_are_the_documented_ones():
    import re
    with simgpu.active(H100):
        torch.empty(4, device="cuda").add_(1)
    documented = set(re.findall(r"\b([a-z][a-z0-9_]+)\b", simgpu.trace.__doc__.split("Keys:")[1]))
    trace = simgpu.trace()
    assert set(trace) <= documented
    assert set(trace["op_groups"][0]) <= documented


def test_memory_reads_back_in_the_caching_allocators_512_byte_blocks():
    """One float32 element takes a 512-byte block, 513 bytes two; an empty tensor none; what
    memory_allocated, its peak, memory_reserved and mem_get_info report all count blocks."""
    with simgpu.active(H100):
        free0, _total = torch.cuda.mem_get_info()
        grew = []
        kept = []
        for n_bytes in (4, 512, 513, 0, 3 * 2**20 + 1):
            before = torch.cuda.memory_allocated()
            kept.append(torch.empty(n_bytes, dtype=torch.uint8, device="cuda"))
            grew.append(torch.cuda.memory_allocated() - before)
        assert grew == [512, 512, 1024, 0, 3 * 2**20 + 512]
        assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated() == sum(grew)
        assert torch.cuda.max_memory_allocated() == sum(grew)
        assert free0 - torch.cuda.mem_get_info()[0] == torch.cuda.memory_reserved()
        before = torch.cuda.memory_allocated()
        t = torch.empty(1, device="cuda")
        assert torch.cuda.memory_allocated() - before == 512
        del t
        assert torch.cuda.memory_allocated() == before


def test_a_tensor_an_in_place_op_returns_on_every_launch_holds_its_storage_once():
    """copy_ returns its target at each launch: the target keeps one hold on its storage, not one
    per launch (a benchmark's 300,000 copies left 300,000 finalizers on it), and its block is
    freed when it goes."""
    with simgpu.active(H100):
        src = torch.empty(2**20, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        dst.copy_(src)
        held = weakref.getweakrefcount(dst)
        for _ in range(1000):
            dst.copy_(src)
        assert weakref.getweakrefcount(dst) == held
        before = torch.cuda.memory_allocated()
        del dst
        assert before - torch.cuda.memory_allocated() == 2**20 and src.is_cuda


def test_the_caching_allocator_keeps_freed_memory_reserved_until_empty_cache():
    """As PyTorch's caching allocator: a freed block stays reserved (memory_reserved, memory_stats,
    mem_get_info's free memory) and serves the next request that fits; empty_cache gives it back.
    Segments: a small block takes a 2 MiB one, a 3 MiB block a 20 MiB one, 1 GiB its own size."""
    with simgpu.active(H100):
        free0 = torch.cuda.mem_get_info()[0]
        small = torch.empty(4, device="cuda")
        mid = torch.empty(3 * 2**20, dtype=torch.uint8, device="cuda")
        assert torch.cuda.memory_reserved() == 2 * 2**20 + 20 * 2**20
        big = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        held = torch.cuda.memory_reserved()
        assert held == 22 * 2**20 + 2**30 and free0 - torch.cuda.mem_get_info()[0] == held
        del big
        assert torch.cuda.memory_reserved() == held and torch.cuda.memory_allocated() == 512 + 3 * 2**20
        again = torch.empty(2**29, dtype=torch.uint8, device="cuda")        # fits in the cached GiB
        assert torch.cuda.memory_reserved() == held
        stats = torch.cuda.memory_stats()
        assert stats["reserved_bytes.all.current"] == held and stats["segment.all.current"] == 3
        assert stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated()
        assert stats["allocation.small_pool.current"] == 1 and stats["allocation.large_pool.current"] == 2
        del again, mid
        torch.cuda.empty_cache()
        assert torch.cuda.memory_reserved() == 2 * 2**20                     # the small block's segment
        assert torch.cuda.mem_get_info()[0] == free0 - 2 * 2**20
        assert torch.cuda.max_memory_reserved() == held and small.is_cuda


def test_big_buffers_cost_no_memory_and_past_capacity_raise_oom():
    with simgpu.active(H100):
        free, total = torch.cuda.mem_get_info()
        assert total == H100["memory_bytes"]
        a = torch.empty(50 * 10**9, dtype=torch.uint8, device="cuda")
        assert torch.cuda.memory_allocated() == 50 * 10**9
        with pytest.raises(torch.cuda.OutOfMemoryError, match="CUDA out of memory"):
            torch.empty(40 * 10**9, dtype=torch.uint8, device="cuda")
        del a
        assert torch.cuda.memory_allocated() == 0
        b = torch.empty(40 * 10**9, dtype=torch.uint8, device="cuda")
        assert torch.cuda.max_memory_allocated() == 50 * 10**9
        del b
    assert simgpu.trace()["largest_alloc_bytes"] == 50 * 10**9


def test_device_properties_describe_the_profile():
    cfg = simgpu.config("dgx-spark", seed=3)
    with simgpu.active(cfg):
        props = torch.cuda.get_device_properties(0)
        assert props.L2_cache_size == cfg["l2_bytes"] and props.total_memory == cfg["memory_bytes"]
        assert (props.major, props.minor, props.multi_processor_count) == (12, 1, 48)
        # the name the driver reports for the part, not the profile's title
        assert torch.cuda.get_device_name() == props.name == "NVIDIA GB10" != cfg["name"]
        assert torch.cuda.get_device_capability() == (12, 1)
        for other in (1, "cuda:1", torch.device("cuda", 1)):        # one GPU: as CUDA answers
            with pytest.raises(AssertionError, match="Invalid device id"):
                torch.cuda.get_device_properties(other)
            with pytest.raises(RuntimeError, match="invalid device ordinal"):
                torch.empty(1, device=other)
            with pytest.raises(RuntimeError, match="invalid device ordinal"):
                torch.cuda.set_device(other)
        assert torch.empty(2, device="cuda:0").type() == "torch.cuda.FloatTensor"
        assert torch.empty(2, device="cuda").type("torch.cuda.HalfTensor").type() == "torch.cuda.HalfTensor"
        assert torch.cuda.is_available() and torch.accelerator.is_available()
        assert torch.accelerator.current_accelerator().type == "cuda"


# ------------------------------------------------------ the torch styles
STYLES = {
    "to": lambda n: torch.zeros(n, dtype=torch.uint8).to("cuda"),
    "cuda": lambda n: torch.zeros(n // 4).cuda(),
    "device object": lambda n: torch.empty(n // 2, dtype=torch.float16, device=torch.device("cuda")),
    "cuda:0": lambda n: torch.ones(n // 8, dtype=torch.float64, device="cuda:0"),
    "randn": lambda n: torch.randn(n // 2, dtype=torch.bfloat16, device="cuda"),
    "full": lambda n: torch.full((n // 4,), 3.0, device="cuda"),
    "default device": lambda n: _default_device(n),
}


def _default_device(n):
    with torch.device("cuda"):
        return torch.empty(n, dtype=torch.uint8)


@torch.jit.script
def _scripted_copy(dst: torch.Tensor, src: torch.Tensor):
    dst.copy_(src)


@pytest.mark.parametrize("make", STYLES, ids=list(STYLES))
@pytest.mark.parametrize("copy", ["copy_", "slice", "clone", "add out", "torchscript", "storage"])
def test_every_style_of_copy_moves_read_plus_write_bytes(make, copy):
    """Spellings that pass through __torch_function__ and those that do not (TorchScript, a
    storage's copy_) reach the device the same way, at torch's dispatcher."""
    n = 64 * MIB
    with simgpu.active(H100):
        src = STYLES[make](n)
        assert src.device == torch.device("cuda", 0) and src.is_cuda and str(src.device) == "cuda:0"
        dst = torch.empty_like(src)
        {"copy_": lambda: dst.copy_(src), "slice": lambda: dst.__setitem__(slice(None), src),
         "clone": lambda: src.clone(), "add out": lambda: torch.add(src, 0, out=dst),
         "torchscript": lambda: _scripted_copy(dst, src),
         "storage": lambda: dst.untyped_storage().copy_(src.untyped_storage())}[copy]()
    groups = [g for g in simgpu.trace()["op_groups"] if g["kind"] in ("copy", "elementwise")]
    assert [(g["read_bytes"], g["write_bytes"]) for g in groups] == [(n, n)]


@pytest.mark.parametrize("source", ["one byte", "one row"])
def test_a_copy_from_a_source_expanded_with_stride_zero_is_a_fill_of_its_distinct_bytes(source):
    """A copy from ``expand``-ed data is a fill on a GPU: the caches serve the repeated bytes,
    so the copy moves what it writes, not twice that, and no copy is timed (a program that
    reports it as a copy's bytes times no copy)."""
    n, row = 64 * MIB, 4096
    with simgpu.active(H100):
        src = {"one byte": lambda: torch.zeros(1, dtype=torch.uint8, device="cuda").expand(n),
               "one row": lambda: torch.zeros(1, row, dtype=torch.uint8, device="cuda").expand(n // row, row)}[source]()
        torch.empty(src.shape, dtype=torch.uint8, device="cuda").copy_(src)
    groups = [(g["kind"], g["read_bytes"], g["write_bytes"]) for g in simgpu.trace()["op_groups"]
              if g["write_bytes"] == n]
    assert groups == [("fill", 1 if source == "one byte" else row, n)]


def test_a_batch_of_one_broadcast_against_a_matrix_is_one_matmul_and_no_copy():
    """torch.matmul folds a (1, n, n) @ (n, n) product into mm through views (_unsafe_view among
    them): on a GPU that is one kernel, so nothing but the matmul is costed."""
    n = 512
    with simgpu.active(H100):
        a = torch.empty(1, n, n, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(n, n, dtype=torch.bfloat16, device="cuda")
        assert (a @ b).shape == (1, n, n)
    assert [g["kind"] for g in simgpu.trace()["op_groups"]] == ["matmul"]


@pytest.mark.parametrize("matmul", ["@", "matmul", "mm", "bmm", "addmm", "linear"])
def test_matmuls_count_two_flops_per_multiply_add(matmul):
    m, k, n = 64, 128, 32
    with simgpu.active(H100):
        a = torch.randn(m, k, device="cuda")
        b = torch.randn(k, n, device="cuda")
        out = {"@": lambda: a @ b, "matmul": lambda: torch.matmul(a, b), "mm": lambda: a.mm(b),
               "bmm": lambda: torch.bmm(a[None], b[None]),
               "addmm": lambda: torch.addmm(torch.zeros(m, n, device="cuda"), a, b),
               "linear": lambda: torch.nn.functional.linear(a, b.T)}[matmul]()
        assert tuple(out.shape[-2:]) == (m, n) and out.is_cuda
    assert [g["flops"] for g in simgpu.trace()["op_groups"] if g["kind"] == "matmul"] == [2.0 * m * k * n]


def test_a_matmul_repeated_at_other_shapes_is_counted_at_each_shape():
    # FLOPs are remembered by the op's argument shapes: a repeat at another shape is no repeat
    with simgpu.active(H100):
        for m, k in ((64, 32), (128, 32), (64, 32), (64, 96)):
            a, b = torch.empty(m, k, device="cuda"), torch.empty(k, 16, device="cuda")
            torch.mm(a, b)
    flops = {g["flops"] for g in simgpu.trace()["op_groups"] if g["kind"] == "matmul"}   # one group a shape
    assert flops == {2.0 * m * k * 16 for m, k in ((64, 32), (128, 32), (64, 96))}


def test_the_cuda_stack_reports_cudnn_a_driver_and_a_contexts_memory_as_a_gpu_machine_does():
    with simgpu.active(H100):
        free, total = torch.cuda.mem_get_info()
        context = total - free - torch.cuda.memory_reserved()
        answers = (torch.backends.cudnn.is_available(), torch.backends.cudnn.version(),
                   torch._C._cuda_getDriverVersion())
    assert answers == (True, 90800, 12080)
    assert 200 * 2**20 < context < 2**30          # a CUDA context's memory, outside torch's allocator


#: The system calls a thread waiting in poll(2) shows in /proc (poll and ppoll on x86_64, ppoll on aarch64).
POLL_CALLS = {"x86_64": {"7", "271"}, "aarch64": {"73"}}


def _thread_states() -> dict[str, tuple[str, str]]:
    """This process's threads: name (/proc's comm) -> (scheduler state: R running, S waiting;
    the system call it waits in, by number, or '' where /proc does not say)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/comm") as fh:
            name = fh.read().strip()
        with open(f"/proc/self/task/{tid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        try:
            with open(f"/proc/self/task/{tid}/syscall") as fh:
                call = fh.read().split()[0]
        except OSError:
            call = ""
        out[name] = (state, call)
    return out


def test_a_process_using_the_device_shows_the_cuda_runtimes_event_thread_waiting():
    """As the CUDA runtime starts one in a process that uses a GPU: listed by /proc, not by
    threading (a native thread), and off the CPU, waiting in poll(2) as the runtime's does."""
    with simgpu.active(H100):
        torch.empty(8, device="cuda").copy_(torch.empty(8, device="cuda"))
        torch.cuda.synchronize()
        states = _thread_states()
        python = [t.name for t in threading.enumerate()]
    state, call = states.get("cuda-EvtHandlr", ("", ""))
    assert state == "S"
    if call and platform.machine() in POLL_CALLS:
        assert call in POLL_CALLS[platform.machine()]
    assert not any("cuda" in name for name in python)


EVENT_THREAD_AFTER_CLOSE = """
import json, os, sys, threading
sys.path.insert(0, sys.argv[1])
import torch
from shared import simgpu
from shared.simgpu.profile import config
simgpu.install()
with simgpu.active(config("h100-sxm")):
    torch.empty(8, device="cuda").zero_()
    os.closerange(3, 1 << 16)                  # a program that closes every descriptor it did not open
    def handler():
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm") as fh:
                if fh.read().strip() == "cuda-EvtHandlr":
                    with open(f"/proc/self/task/{tid}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                    return fields[0], int(fields[11]) + int(fields[12])
    threading.Event().wait(0.2)
    before = handler()
    threading.Event().wait(0.5)
    after = handler()
print(json.dumps([before, after]))
"""


def test_the_event_thread_never_spins_when_a_program_closes_its_descriptor():
    """A program that closes every descriptor (a daemon's habit) closes the pipe the event thread
    polls; poll then returns at once, and the thread must wait on, off the CPU, not loop."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", EVENT_THREAD_AFTER_CLOSE, root], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (state, ticks), (state_after, ticks_after) = json.loads(done.stdout.strip().splitlines()[-1])
    assert state == state_after == "S" and ticks_after == ticks


def test_formatting_pinning_and_comparisons_of_simulated_tensors():
    with simgpu.active(H100):
        x = torch.ones(1, device="cuda")
        assert f"{x.sum():.1f}" == "0.0"                     # no values: zeros
        host = torch.empty(16, pin_memory=True).pin_memory()
        y = host.to("cuda", non_blocking=True)
        assert y.is_cuda and torch.equal(y, y) and bool((y == y).all())


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)),
                                    ((4,), (4, 5)), ((7, 4), (4,))])
def test_matmul_results_have_torchs_shapes_and_errors(shapes):
    expected_shape = (torch.empty(shapes[0]) @ torch.empty(shapes[1])).shape
    with simgpu.active(H100):
        a, b = torch.empty(shapes[0], device="cuda"), torch.empty(shapes[1], device="cuda")
        assert (a @ b).shape == expected_shape
        with pytest.raises(RuntimeError):
            a @ torch.empty(3, 3, device="cuda")


def test_factory_spellings_keep_torchs_meaning():
    with simgpu.active(H100):
        t = torch.randn(size=(3, 4), device="cuda")
        assert t.shape == (3, 4) and t.is_cuda
        host = torch.empty_like(t, device="cpu")
        assert host.device.type == "cpu" and host.shape == (3, 4)
        g = torch.Generator().manual_seed(0)
        assert torch.rand(5, generator=g, device="cuda", dtype=torch.float16).dtype == torch.float16
        assert torch.full_like(t, 2.0, dtype=torch.float64).dtype == torch.float64


def test_views_cost_nothing_and_elementwise_ops_cost_their_bytes():
    with simgpu.active(H100):
        a = torch.empty(MIB, device="cuda")
        a.view(1024, 1024).T[:10]
        ops_after_views = simgpu.trace()["ops"]
        (a * 2 + 1).sum()          # two unary maps into fresh buffers: copies, for memory
        (a * a).sum()              # a binary map: elementwise work
    trace = simgpu.trace()
    assert ops_after_views == 0
    assert [g["kind"] for g in trace["op_groups"]] == ["copy", "copy", "reduction", "elementwise"]


# ------------------------------------------------- the reference on the model
def test_reference_sweep_is_deterministic_bit_for_bit_and_shows_the_cliff():
    cfg = simgpu.config("h100", seed=99)
    runs = []
    for _ in range(2):
        with simgpu.active(cfg):
            runs.append((bw.bandwidth_sweep(), flops.matmul_tflops(8192)))
    assert runs[0] == runs[1]
    sweep = runs[0][0]
    assert set(sweep) == {8, 32, 128, 512, 2048, 8192}
    assert sweep[8] > 1.5 * sweep[8192]                   # an 8 MiB copy lives in the L2
    assert sweep[8192] == pytest.approx(cfg["bw_gbs"] * cfg["copy_efficiency"], rel=0.01)


def test_sizes_past_memory_are_left_out_of_the_sweep():
    with simgpu.active(simgpu.config("t4")):
        sweep = bw.bandwidth_sweep(sizes_mb=(8, 4096, 8192))   # two 8 GiB buffers exceed 16 GB
    assert set(sweep) == {8, 4096}


def test_measured_bandwidth_reads_the_l2_and_uses_4x_it():
    cfg = simgpu.config("h100", seed=5)
    with simgpu.active(cfg):
        bw.measured_bandwidth()
    assert simgpu.trace()["largest_copy_bytes"] >= 4 * cfg["l2_bytes"]


# ------------------------------------------------- byte ranges, self-copies, streams
def test_l2_residency_is_by_byte_range_so_slices_of_a_big_buffer_stream_from_memory():
    l2 = H100["l2_bytes"]
    with simgpu.active(H100):
        src = torch.empty(8 * l2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        for d, s in zip(dst.chunk(64), src.chunk(64), strict=True):
            d.copy_(s)                                    # each slice is new to the cache
        small = torch.empty(l2 // 4, dtype=torch.uint8, device="cuda")
        out = torch.empty_like(small)
        out.copy_(small)
        out.copy_(small)                                  # the same range again: resident
        out[: l2 // 16].copy_(small[: l2 // 16])          # part of a resident range: resident
    copies = [g for g in simgpu.trace()["op_groups"] if g["kind"] == "copy"]
    chunk, cold, warm, part = copies
    assert chunk["count"] == 64 and chunk["l2"] is False
    assert (cold["l2"], warm["l2"], part["l2"]) == (False, True, True)


def test_a_copy_onto_its_own_storage_costs_nothing_as_in_pytorch():
    with simgpu.active(H100) as dev:
        buf = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        host = dev.clock.host
        buf.copy_(buf)
        buf[:10].copy_(buf[:10])
        assert dev.clock.host == host and simgpu.trace()["ops"] == 0
        buf[:10].copy_(buf[10:20])                        # another range of the same storage: a copy
    assert simgpu.trace()["ops"] == 1


def test_an_event_measures_only_its_own_streams_work_until_streams_wait():
    with simgpu.active(simgpu.config("h100", first_use=False)):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        side = torch.cuda.Stream()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.cuda.stream(side):
            assert torch.cuda.current_stream() == side
            b.copy_(a)
        end.record()                                      # the default stream did nothing
        torch.cuda.synchronize()
        unordered = start.elapsed_time(end)
        start.record()
        with torch.cuda.stream(side):
            b.copy_(a)
        torch.cuda.current_stream().wait_stream(side)
        end.record()
        torch.cuda.synchronize()
        ordered = start.elapsed_time(end)
    copy_ms = 2 * 2**30 / (H100["bw_gbs"] * 1e9 * H100["copy_efficiency"]) * 1e3
    assert unordered < copy_ms / 100
    assert ordered == pytest.approx(copy_ms, rel=0.01)


def test_stream_synchronize_waits_for_its_stream_only_and_device_synchronize_for_all():
    with simgpu.active(simgpu.config("h100", first_use=False)) as dev:
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            b.copy_(a)
        torch.cuda.current_stream().synchronize()
        assert not side.query() and not dev.clock.idle()
        torch.cuda.synchronize()
        assert side.query() and dev.clock.idle()


def test_matmuls_launch_asynchronously_pay_a_first_use_and_never_beat_the_peak():
    with simgpu.active(H100) as dev:
        x = torch.empty(8192, 8192, dtype=torch.bfloat16, device="cuda")
        t0 = dev.clock.host
        x @ x
        first = dev.clock.host - t0
        t0 = dev.clock.host
        for _ in range(10):
            x @ x
        queued = dev.clock.host - t0
        torch.cuda.synchronize()
        done = dev.clock.host - t0
    seconds = 2 * 8192**3 / (H100["peak_tflops"] * 1e12 * H100["matmul_efficiency"])
    launch = H100["launch_overhead_s"] + H100["alloc_s"]                  # each result is allocated
    assert first == pytest.approx(H100["first_use_s"] + launch)
    assert queued == pytest.approx(10 * launch)                           # asynchronous
    assert 2 * 8192**3 * 10 / done / 1e12 <= H100["peak_tflops"]         # the ceiling
    assert done >= 10 * seconds


MATMUL_SPELLINGS = {
    "einsum": lambda a, b, c: torch.einsum("ij,jk->ik", a, b),
    "addmm_": lambda a, b, c: c.addmm_(a, b, beta=0),
    "linalg.matmul": lambda a, b, c: torch.linalg.matmul(a, b),
    "tensordot": lambda a, b, c: torch.tensordot(a, b, dims=1),
    "multi_dot": lambda a, b, c: torch.linalg.multi_dot([a, b]),
    "linear": lambda a, b, c: torch.nn.functional.linear(a, b),
    "matmul out=": lambda a, b, c: torch.matmul(a, b, out=c),
    "bmm of one pair": lambda a, b, c: torch.bmm(a[None], b[None]),
}


@pytest.mark.parametrize("inference", [False, True], ids=["grad", "inference_mode"])
@pytest.mark.parametrize("spelling", MATMUL_SPELLINGS)
def test_every_spelling_of_a_matmul_is_costed_by_its_flops(spelling, inference):
    """However the Python spells an n x n matmul, the device runs 2 n^3 FLOPs of matmul (torch's
    FLOP registry, at the dispatcher), also where autograd is off and composite ops arrive whole."""
    n = 1024
    with simgpu.active(H100), (torch.inference_mode() if inference else contextlib.nullcontext()):
        a, b, c = (torch.empty(n, n, dtype=torch.bfloat16, device="cuda") for _ in range(3))
        MATMUL_SPELLINGS[spelling](a, b, c)
        torch.cuda.synchronize()
    groups = [g for g in simgpu.trace()["op_groups"] if g["kind"] == "matmul"]
    assert [(g["flops"], g["count"]) for g in groups] == [(2.0 * n**3, 1)]


COPY_SPELLINGS = {
    "copy_": lambda src, dst: dst.copy_(src),
    "setitem": lambda src, dst: dst.__setitem__(slice(None), src),
    "clone": lambda src, dst: src.clone(),
    "index_copy_": lambda src, dst: dst.view(-1, 4096).index_copy_(
        0, torch.arange(len(src) // 4096, device="cuda"), src.view(-1, 4096)),
    "cat": lambda src, dst: torch.cat([src[: len(src) // 2], src[len(src) // 2:]]),
    "to(copy=True)": lambda src, dst: src.to("cuda", copy=True),
}


@pytest.mark.parametrize("spelling", COPY_SPELLINGS)
def test_every_spelling_of_a_copy_reads_and_writes_its_bytes(spelling):
    n = 2**26
    with simgpu.active(H100):
        src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
        torch.cuda.synchronize()
        COPY_SPELLINGS[spelling](src, dst)
        torch.cuda.synchronize()
    copies = [g for g in simgpu.trace()["op_groups"] if g["kind"] == "copy"]
    assert sum(g["write_bytes"] * g["count"] for g in copies) == 4 * n
    assert sum(g["read_bytes"] * g["count"] for g in copies) == pytest.approx(4 * n, rel=0.01)  # + an index


def test_a_cuda_graph_runs_its_captured_copies_at_replay():
    """Capture records the kernels without running them; each replay runs them all."""
    n = 2**28
    with simgpu.active(H100):
        src, dst = torch.empty(n, dtype=torch.uint8, device="cuda"), torch.empty(n, dtype=torch.uint8, device="cuda")
        dst.copy_(src)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(10):
                dst.copy_(src)
        torch.cuda.synchronize()
        start = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    assert isinstance(graph, torch.cuda.CUDAGraph)
    copy_s = 2 * n / (H100["bw_gbs"] * 1e9 * H100["copy_efficiency"])
    assert seconds == pytest.approx(10 * copy_s, rel=0.05)
    assert sum(g["count"] for g in simgpu.trace()["op_groups"] if g["kind"] == "copy") == 11


def test_nothing_a_program_reads_says_the_device_is_simulated():
    """Name, properties, version, addresses, printing and the classes of events and streams are
    what a CUDA program sees on a GPU; a patch of torch.cuda.Event runs as it would there."""
    with simgpu.active(H100):
        a, b = torch.empty(1024, device="cuda"), torch.empty(1024, device="cuda")
        props = torch.cuda.get_device_properties(0)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        stream = torch.cuda.Stream()
        patched = torch.cuda.Event.elapsed_time
        try:
            torch.cuda.Event.elapsed_time = lambda self, other: -1.0
            start.record()
            end.record()
            end.synchronize()
            assert start.elapsed_time(end) == -1.0
        finally:
            torch.cuda.Event.elapsed_time = patched
        seen = [torch.cuda.get_device_name(0), repr(props), repr(a), repr(start), repr(stream), torch.version.cuda]
        assert torch.version.cuda is not None and props.memory_clock_rate > 0 and props.memory_bus_width > 0
        assert type(props).__name__ == "_CudaDeviceProperties"
        assert 0 != a.data_ptr() != b.data_ptr() != 0 and a[1:].data_ptr() == a.data_ptr() + 4
        assert type(start) is torch.cuda.Event and type(stream) is torch.cuda.Stream
        assert type(torch.cuda.current_stream()) is torch.cuda.Stream
    assert not any("simulated" in text.lower() or "meta" in text for text in seen), seen


def test_the_source_of_every_patched_torch_function_is_torchs_own():
    """A program that asks inspect where torch.cuda.synchronize (or any function the device
    stands in for) is written finds the original's file and source (torch's), as on a GPU."""
    patched = {(owner, attr): original for (owner, attr), original in patches._ORIGINALS.items()
               if inspect.isfunction(original)}
    assert (torch.cuda, "synchronize") in patched and len(patched) > 20
    with simgpu.active(H100):
        for (owner, attr), original in patched.items():
            function = getattr(owner, attr)
            assert function is not original
            assert inspect.getsourcefile(function) == inspect.getsourcefile(original), (owner, attr)
            assert inspect.getsource(function) == inspect.getsource(original), (owner, attr)
        assert inspect.getsourcefile(torch.cuda.synchronize).startswith(os.path.dirname(torch.__file__))
        torch.cuda.synchronize()


def test_spans_without_fills_give_the_rate_of_the_matmuls_between_their_own_clock_readings():
    """A log line's clock reading, then random inputs, then matmuls between their own two readings:
    the window from the first reading to the last holds the fills, the span of the matmuls' own
    readings does not, and its FLOPs over its seconds are the rate the program reports."""
    n, iters = 1024, 5
    with simgpu.active(H100):
        time.perf_counter()                                       # a log line's timestamp
        a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        a @ b
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            a @ b
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    timed = simgpu.trace()["timed"]
    assert timed["fill_bytes"] > 0 and timed["clean_matmul_flops"] == iters * 2 * n**3
    assert timed["clean_matmul_s"] == pytest.approx(seconds, rel=1e-9)


def _timed_pair(cfg):
    """Two perf_counter timings of one 256 x 256 matmul, each between synchronizes."""
    with simgpu.active(cfg):
        a = torch.empty(256, 256, dtype=torch.bfloat16, device="cuda")
        out = []
        for _ in range(2):
            torch.cuda.synchronize()
            start = time.perf_counter()
            a @ a
            torch.cuda.synchronize()
            out.append(time.perf_counter() - start)
    return out


def test_repeated_timings_of_one_kernel_differ_as_on_a_gpu_and_the_seed_repeats_them():
    """A kernel's time is scaled by a factor drawn within 1 +/- kernel_jitter from a stream the
    seed starts: two timings of one kernel differ, and the same config repeats them bit for bit."""
    cfg = simgpu.config("h100", seed=7, first_use=False)
    first, second = _timed_pair(cfg)
    assert first != second
    assert abs(first / second - 1) <= 2.5 * cfg["kernel_jitter"]
    assert _timed_pair(cfg) == [first, second]
    assert _timed_pair(simgpu.config("h100", seed=8, first_use=False)) != [first, second]


CONCEALED = """
import sys, threading, time
import torch
from shared import simgpu
simgpu.install()
simgpu.conceal()
names = [m for m in sys.modules if "simgpu" in m]
homes = {torch.cuda.synchronize.__module__, time.perf_counter.__module__}
marks = [n for n in (*dir(torch.cuda.synchronize), *dir(torch.cuda.Event)) if "sim" in n.lower()]
with simgpu.active(simgpu.config("h100")):
    src = torch.empty(2**24, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    seen = []
    def work():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        dst.copy_(src)
        torch.cuda.synchronize()
        seen.append(time.perf_counter() - t0)
    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    work()
print(names, sorted(homes), marks, [m for m in sys.modules if "simgpu" in m], len(seen), min(seen) > 0)
"""


def test_once_concealed_no_module_name_shows_the_simulator_and_the_device_still_runs():
    """The grader's child conceals the simulator (autograder/runtime/runner.py): sys.modules names
    none of its modules, its dispatchers say they are torch's and time's and carry no mark of it,
    and the device still
    runs copies, on the main thread and on a worker thread started while it is active."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", CONCEALED], cwd=root, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "[] ['time', 'torch.cuda'] [] [] 2 True"


def test_a_profile_with_the_cuda_activity_lists_each_kernel_with_its_device_time():
    """As CUPTI does on a GPU: one CUDA event per copy run inside the profile (none of the copies
    before it), whose device times add up to the device's time for those copies; a CPU-only
    profile lists no device event."""
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.autograd.DeviceType.CUDA
    host_free = dict(H100, sync_launches=True, first_use=False, launch_overhead_s=0.0, sync_overhead_s=0.0)
    with simgpu.active(host_free):        # the host adds nothing to the clock but the kernels' time
        src = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        dst.copy_(src)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            start = time.perf_counter()
            for _ in range(4):
                dst.copy_(src)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - start
        with profile(activities=[ProfilerActivity.CPU]) as cpu_only:
            dst.copy_(src)
    kernels = [e for e in prof.events() if e.device_type == cuda]
    assert [e.name for e in kernels] == ["Memcpy DtoD (Device -> Device)"] * 4
    assert sum(e.device_time for e in kernels) / 1e6 == pytest.approx(seconds, rel=1e-3)
    assert not [e for e in cpu_only.events() if e.device_type == cuda]


def test_a_profile_of_the_cuda_activity_alone_lists_the_kernels_and_no_cpu_op():
    """A CUDA build profiles the CUDA activity alone (CUPTI); a CPU build of torch refuses it as
    legacy profiling without the CPU, which the simulated device must not show
    (good/t12_g_profiler_kernels)."""
    from torch.profiler import ProfilerActivity, profile

    with simgpu.active(H100):
        src = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                dst.copy_(src)
            torch.cuda.synchronize()
    kinds = [e.device_type for e in prof.events()]
    assert kinds == [torch.autograd.DeviceType.CUDA] * 3


def test_the_sync_debug_mode_is_kept_as_a_cuda_build_keeps_it():
    """torch.cuda.set_sync_debug_mode needs CUDA's own library on a CPU build; on the simulated
    device it is kept and read back, and a bad name refused in torch's words."""
    with simgpu.active(H100):
        assert torch.cuda.get_sync_debug_mode() == 0
        torch.cuda.set_sync_debug_mode("warn")
        assert torch.cuda.get_sync_debug_mode() == 1
        torch.cuda.set_sync_debug_mode(0)
        assert torch.cuda.get_sync_debug_mode() == 0
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            torch.cuda.set_sync_debug_mode("loud")


@pytest.mark.parametrize("spelling", ["mul out", "add scalar out", "neg out"])
def test_a_unary_map_into_another_buffer_is_a_copy_and_a_binary_one_is_not(spelling):
    """b = q * a (STREAM's Scale) reads one buffer and writes another of its size: for memory it
    is a copy, and the checks count it as one; a + b reads two and stays elementwise work."""
    n = 16 * MIB
    with simgpu.active(H100):
        a, b = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
        out = torch.empty_like(a)
        {"mul out": lambda: torch.mul(a, 1, out=out), "add scalar out": lambda: torch.add(a, 0, out=out),
         "neg out": lambda: torch.neg(a, out=out)}[spelling]()
        torch.add(a, b, out=out)
        torch.add(a, b)
    kinds: dict = {}
    for g in simgpu.trace()["op_groups"]:
        kinds[g["kind"]] = kinds.get(g["kind"], 0) + g["count"]
    assert (kinds.get("copy"), kinds.get("elementwise")) == (1, 2)
