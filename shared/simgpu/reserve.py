"""The device memory PyTorch's CUDA caching allocator holds, as the student's process reads it.

The allocator reserves memory from the device in segments and keeps a block freed by a tensor for
the next request that fits, returning cached segments to the device only at
``torch.cuda.empty_cache()``. So what is reserved (torch.cuda.memory_reserved, memory_stats,
and the memory the driver, NVML and nvidia-smi see the process hold) stays up after ``del``, and
mem_get_info's free memory with it, as on a GPU. Sizes come from c10/cuda/CUDACachingAllocator.cpp:
a block of at most kSmallSize (1 MiB) comes from the small pool's 2 MiB segments (kSmallBuffer),
a larger one from the large pool, whose segment is 20 MiB (kLargeBuffer) for a block under
kMinLargeAlloc (10 MiB), else the block rounded up to kRoundLarge (2 MiB).

A request takes the smallest cached free block of its pool that holds it, splitting off the rest
(best fit, as the allocator does); freed blocks are not merged with their neighbours.
A request that would push what is reserved past the device's capacity first releases the cache,
as the allocator does before it reports out of memory (``num_alloc_retries``).
"""
from __future__ import annotations

import bisect

SMALL_SIZE, SMALL_SEGMENT = 2**20, 2 * 2**20
MIN_LARGE_ALLOC, LARGE_SEGMENT, ROUND_LARGE = 10 * 2**20, 20 * 2**20, 2 * 2**20
POOLS = ("small_pool", "large_pool")
#: Cached free blocks a pool keeps apart; past this many its smaller half counts as one block (the
#: allocator merges a freed block with free neighbours; the model keeps its bookkeeping bounded).
MAX_FREE_BLOCKS = 4096
#: memory_stats' counters (each with all, small_pool and large_pool; current, peak, allocated, freed).
STATS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
         "active_bytes", "inactive_split_bytes", "requested_bytes")


def pool_of(block: int) -> str:
    """The pool a block of ``block`` bytes comes from."""
    return "small_pool" if block <= SMALL_SIZE else "large_pool"


def segment_bytes(block: int) -> int:
    """Bytes of the segment the allocator reserves for a block no cached memory can hold."""
    if block <= SMALL_SIZE:
        return SMALL_SEGMENT
    if block < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return -(-block // ROUND_LARGE) * ROUND_LARGE


class Reserve:
    """Reserved and cached bytes per pool, and memory_stats' counters, for ``capacity`` bytes."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.retries = 0
        self.peak = 0                   # the most bytes reserved at once (since ``reset_peak``)
        self._free: dict[str, list[int]] = {pool: [] for pool in POOLS}   # cached free blocks, bytes
        self._stats = {(stat, pool): {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
                       for stat in STATS for pool in POOLS}

    @property
    def reserved(self) -> int:
        """Bytes reserved from the device, in every segment of both pools."""
        return sum(self._stats["reserved_bytes", p]["current"] for p in POOLS)

    def _move(self, pool: str, *changes: tuple[str, int]) -> None:
        """Each (counter, signed amount) of ``changes`` applied to ``pool``: current, peak, and
        allocated or freed (one call for all of a block's counters: every launch allocates)."""
        for stat, amount in changes:
            entry = self._stats[stat, pool]
            entry["current"] += amount
            entry["allocated" if amount > 0 else "freed"] += abs(amount)
            if entry["current"] > entry["peak"]:
                entry["peak"] = entry["current"]

    def _take(self, pool: str, block: int) -> bool:
        """Hand out ``block`` bytes from the smallest cached free block that holds them."""
        free = self._free[pool]
        at = bisect.bisect_left(free, block)
        if at == len(free):
            return False
        best = free.pop(at)
        if best > block:
            self._keep(pool, best - block)
        return True

    def _keep(self, pool: str, size: int) -> None:
        """A free block of ``size`` bytes into the pool's cache (kept sorted)."""
        free = self._free[pool]
        bisect.insort(free, size)
        if len(free) > MAX_FREE_BLOCKS:       # the smallest half as one block: a bounded list
            half = len(free) // 2
            free[:half] = [sum(free[:half])]
            free.sort()

    def alloc(self, block: int, requested: int) -> None:
        """A block of ``block`` bytes (``requested`` asked) is handed out."""
        pool = pool_of(block)
        if not self._take(pool, block):
            segment = segment_bytes(block)
            if self.reserved + segment > self.capacity:
                self.empty()
                self.retries += 1
            self._move(pool, ("reserved_bytes", segment), ("segment", 1))
            self.peak = max(self.peak, self.reserved)
            if segment > block:
                self._keep(pool, segment - block)
        self._count(pool, block, requested, 1)

    def free(self, block: int, requested: int) -> None:
        """A block handed out is back in its pool's cache."""
        pool = pool_of(block)
        self._keep(pool, block)
        self._count(pool, block, requested, -1)

    def _count(self, pool: str, block: int, requested: int, sign: int) -> None:
        """memory_stats' counters of one block handed out (``sign`` 1) or given back (-1)."""
        self._move(pool, ("allocation", sign), ("active", sign), ("allocated_bytes", sign * block),
                   ("active_bytes", sign * block), ("requested_bytes", sign * requested))

    def empty(self) -> None:
        """torch.cuda.empty_cache: each pool keeps the segments its live blocks need (their bytes
        in whole small segments or large rounding units), the rest goes back to the device."""
        for pool in POOLS:
            live = self._stats["allocated_bytes", pool]["current"]
            unit = SMALL_SEGMENT if pool == "small_pool" else ROUND_LARGE
            keep = -(-live // unit) * unit
            self._move(pool, ("reserved_bytes", keep - self._stats["reserved_bytes", pool]["current"]))
            self._free[pool] = [keep - live] if keep > live else []
            blocks = self._stats["allocation", pool]["current"]
            self._move(pool, ("segment", min(blocks, self._stats["segment", pool]["current"])
                              - self._stats["segment", pool]["current"]))

    def reset_peak(self) -> None:
        """torch.cuda.reset_peak_memory_stats: every peak restarts from its current value."""
        for entry in self._stats.values():
            entry["peak"] = entry["current"]
        self.peak = self.reserved

    def stats(self) -> dict:
        """torch.cuda.memory_stats_as_nested_dict's answer: every counter per pool and in all."""
        out: dict = {"num_alloc_retries": self.retries, "num_ooms": 0, "num_sync_all_streams": 0,
                     "num_device_alloc": self._stats["segment", "small_pool"]["allocated"]
                     + self._stats["segment", "large_pool"]["allocated"],
                     "num_device_free": self._stats["segment", "small_pool"]["freed"]
                     + self._stats["segment", "large_pool"]["freed"], "max_split_size": -1}
        for stat in STATS:
            pools = {pool: dict(self._stats[stat, pool]) for pool in POOLS}
            pools["all"] = {key: sum(pools[p][key] for p in POOLS) for key in ("current", "allocated", "freed")}
            pools["all"]["peak"] = self.peak if stat == "reserved_bytes" else \
                max(pools["all"]["current"], sum(pools[p]["peak"] for p in POOLS))
            out[stat] = pools
        return out
