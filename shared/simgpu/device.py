"""One simulated device while it is active: config, clocks, memory, L2, and the trace.

The mode (mode.py) calls ``launch`` for each kernel, ``track`` for each new tensor and
``host_read`` whenever a value must reach the host; the patches (patches.py) call ``now``,
``synchronize`` and the rest. Time of one kernel is its roofline time (``kernel_seconds``).
"""
from __future__ import annotations

import torch

from shared.simgpu.cache import L2Cache
from shared.simgpu.clock import Clock
from shared.simgpu.costs import Op, nbytes
from shared.simgpu.memory import Memory
from shared.simgpu.trace import Recorder


def dtype_name(dtype) -> str:
    """'bfloat16' for torch.bfloat16 (and for a plain string)."""
    return str(dtype).removeprefix("torch.") if dtype is not None else "float32"


def kernel_seconds(cfg: dict, kind: str, moved_bytes: int, flops: float, dtype: str, l2: bool) -> float:
    """Roofline time of one kernel in seconds: max(bytes / bandwidth, FLOPs / peak).

    Args:
        cfg: a simulated-GPU config (profile.py).
        kind: 'matmul' runs at the matmul efficiency of the peak; others at the plain peak.
        moved_bytes: bytes read plus bytes written.
        flops: floating-point operations.
        dtype: dtype name, which picks the fraction of the 16-bit peak.
        l2: whether the working set is L2-resident (runs at l2_speedup x main memory).
    """
    bandwidth = cfg["bw_gbs"] * 1e9 * cfg["copy_efficiency"] * (cfg["l2_speedup"] if l2 else 1.0)
    peak = cfg["peak_tflops"] * 1e12 * cfg["dtype_peak"].get(dtype, cfg["dtype_peak"].get("float32", 1.0))
    if kind == "matmul":
        peak *= cfg["matmul_efficiency"]
    return max(moved_bytes / bandwidth, flops / peak)


class SimDevice:
    """The state of one active period of the simulated GPU."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.clock = Clock(cfg["clock_read_s"])
        self.cache = L2Cache(cfg["l2_bytes"])
        self.memory = Memory(cfg["memory_bytes"], on_free=self.cache.forget)
        self.record = Recorder()
        self.seen_kinds: set[str] = set()

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        """Host seconds since the start, read through a clock (advances it a little)."""
        return self.clock.read()

    def synchronize(self) -> None:
        """The host waits for everything queued on the device."""
        self.record.syncs += 1
        self.clock.wait(self.clock.device, self.cfg["sync_overhead_s"])

    def host_read(self) -> None:
        """A value must reach the host (.item(), .cpu(), printing): wait for the device."""
        self.record.host_reads += 1
        self.clock.wait(self.clock.device, self.cfg["sync_overhead_s"])

    def marker(self) -> float:
        """Queue a zero-length marker (an event record); return its device timestamp in seconds."""
        self.record.events += 1
        self.clock.spend(self.cfg["launch_overhead_s"])
        _start, end = self.clock.enqueue(0.0)
        if self.cfg["sync_launches"]:
            self.clock.wait(end)
        return end

    # ---------------------------------------------------------------- memory
    def track(self, tensor: torch.Tensor, new: bool) -> int:
        """Account ``tensor`` (OutOfMemoryError past capacity); its allocation id."""
        if new:
            self.clock.spend(self.cfg["alloc_s"])
        return self.memory.alloc_id(tensor)

    # --------------------------------------------------------------- kernels
    def launch(self, op: Op) -> None:
        """Queue one kernel: host pays the launch (and a first use); device runs its roofline time."""
        reads = self._touch_map(op.reads)
        writes = self._touch_map(op.writes)
        touched = dict(reads)
        for aid, size in writes.items():
            touched[aid] = max(size, touched.get(aid, 0))
        working_set = sum(touched.values())
        read_bytes = sum(nbytes(t) for t in op.reads)
        write_bytes = sum(nbytes(t) for t in op.writes)
        l2 = self.cache.hits(reads, working_set)
        seconds = kernel_seconds(self.cfg, op.kind, read_bytes + write_bytes, op.flops,
                                 dtype_name(op.dtype), l2)
        self.cache.touch(touched)
        self._run(op.kind, seconds)
        self.record.op(op.kind, read_bytes, write_bytes, working_set, l2, op.flops, seconds)

    def transfer(self, kind: str, n_bytes: int) -> None:
        """A host<->device copy ('h2d' or 'd2h') of ``n_bytes``; the host waits for it."""
        seconds = n_bytes / (self.cfg["h2d_gbs"] * 1e9)
        self.clock.wait(self.clock.device)
        self._run(kind, seconds)
        self.clock.wait(self.clock.device)
        self.record.op(kind, n_bytes if kind == "d2h" else 0, n_bytes if kind == "h2d" else 0,
                       n_bytes, False, 0.0, seconds)

    def _run(self, kind: str, seconds: float) -> None:
        if self.cfg["first_use"] and kind not in self.seen_kinds:
            self.clock.spend(self.cfg["first_use_s"])
            self.record.first_use.append(kind)
        self.seen_kinds.add(kind)
        self.clock.spend(self.cfg["launch_overhead_s"])
        _start, end = self.clock.enqueue(seconds)
        if self.cfg["sync_launches"]:
            self.clock.wait(end)

    def _touch_map(self, tensors) -> dict[int, int]:
        out: dict[int, int] = {}
        for t in tensors:
            if t.device.type != "meta":
                continue
            aid = self.memory.id_of(t)
            if aid is None:
                aid = self.memory.alloc_id(t)
            out[aid] = max(out.get(aid, 0), nbytes(t))
        return out

    def trace(self) -> dict:
        """The trace of this period so far (plain data)."""
        return self.record.as_dict(self.clock, self.memory, self.cfg)
