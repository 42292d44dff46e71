"""What an active period did, as plain data: op counts, bytes, FLOPs, allocations, clocks.

Ops with the same kind, bytes, working set and cache outcome are grouped with a count, so the
trace of a 50-iteration loop stays a few lines long (at most MAX_GROUPS groups are kept).
"""
from __future__ import annotations

#: Most op groups kept in a trace; later new groups are counted in ``groups_dropped``.
MAX_GROUPS = 200


class Recorder:
    """Accumulates ops, syncs and reads during one active period."""

    def __init__(self):
        self.ops = 0
        self.bytes_moved = 0
        self.flops = 0.0
        self.busy_s = 0.0
        self.syncs = 0
        self.host_reads = 0
        self.events = 0
        self.first_use = []
        self.largest_copy_bytes = 0
        self.largest_copy_working_set_bytes = 0
        self.groups: dict[tuple, dict] = {}
        self.dropped = 0

    def op(self, kind: str, read_bytes: int, write_bytes: int, working_set_bytes: int,
           l2: bool, flops: float, seconds: float) -> None:
        """One kernel ran on the device for ``seconds``."""
        self.ops += 1
        self.bytes_moved += read_bytes + write_bytes
        self.flops += flops
        self.busy_s += seconds
        if kind == "copy":
            self.largest_copy_bytes = max(self.largest_copy_bytes, write_bytes)
            self.largest_copy_working_set_bytes = max(self.largest_copy_working_set_bytes,
                                                      working_set_bytes)
        key = (kind, read_bytes, write_bytes, working_set_bytes, l2, flops)
        group = self.groups.get(key)
        if group is None:
            if len(self.groups) >= MAX_GROUPS:
                self.dropped += 1
                return
            group = self.groups[key] = {
                "kind": kind, "read_bytes": read_bytes, "write_bytes": write_bytes,
                "working_set_bytes": working_set_bytes, "l2": l2, "flops": flops,
                "seconds_each": seconds, "count": 0}
        group["count"] += 1

    def as_dict(self, clock, memory, cfg: dict) -> dict:
        """The trace: plain JSON-able data (see shared.simgpu.trace)."""
        return {
            "profile": cfg["profile"], "seed": cfg["seed"], "l2_bytes": cfg["l2_bytes"],
            "memory_bytes": cfg["memory_bytes"],
            "sync_launches": cfg["sync_launches"], "first_use": cfg["first_use"],
            "ops": self.ops, "host_s": clock.host, "device_s": clock.device, "busy_s": self.busy_s,
            "bytes_moved": self.bytes_moved, "flops": self.flops,
            "syncs": self.syncs, "host_reads": self.host_reads, "clock_reads": clock.reads,
            "events_recorded": self.events, "first_use_kinds": list(self.first_use),
            "allocations": memory.count, "largest_alloc_bytes": memory.largest,
            "peak_allocated_bytes": memory.peak, "allocated_bytes": memory.allocated,
            "largest_copy_bytes": self.largest_copy_bytes,
            "largest_copy_working_set_bytes": self.largest_copy_working_set_bytes,
            "op_groups": [dict(g) for g in self.groups.values()], "groups_dropped": self.dropped,
        }
