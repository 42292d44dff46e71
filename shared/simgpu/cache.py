"""The L2 cache as a set of resident allocations, least recently used first.

An operation whose reads are all resident and whose working set fits runs at L2 bandwidth;
everything it touches then becomes resident, evicting the least recently used allocations.
A working set larger than the cache leaves nothing of itself behind (streaming evicts).
"""
from __future__ import annotations

from collections import OrderedDict


class L2Cache:
    """Resident allocations (allocation id -> bytes touched) within ``capacity_bytes``."""

    def __init__(self, capacity_bytes: int):
        self.capacity = capacity_bytes
        self.lines: OrderedDict[int, int] = OrderedDict()
        self.used = 0

    def hits(self, reads: dict[int, int], working_set_bytes: int) -> bool:
        """Whether an op reading ``reads`` (id -> bytes) with this working set runs from L2."""
        if working_set_bytes > self.capacity:
            return False
        return all(self.lines.get(aid, -1) >= size for aid, size in reads.items())

    def touch(self, touched: dict[int, int]) -> None:
        """Make ``touched`` (id -> bytes) most recently used, evicting the oldest past capacity."""
        total = sum(touched.values())
        for aid, size in touched.items():
            self.forget(aid)
            if total <= self.capacity:
                self.lines[aid] = size
                self.used += size
        while self.used > self.capacity and self.lines:
            _aid, size = self.lines.popitem(last=False)
            self.used -= size

    def forget(self, aid: int) -> None:
        """Drop allocation ``aid`` (freed, or about to be re-inserted)."""
        size = self.lines.pop(aid, None)
        if size is not None:
            self.used -= size
