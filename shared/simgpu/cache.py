"""The L2 cache as resident byte ranges of allocations, least recently used first.

Residency is tracked by byte range, not by allocation: two slices (views) of one buffer are
different lines, so copying a large buffer in chunks finds each chunk cold unless that very range
was touched recently. An operation whose reads are all resident and whose working set fits runs
at L2 bandwidth; everything it touches then becomes resident, evicting the least recently used
ranges. A working set larger than the cache streams through it and leaves nothing resident.
"""
from __future__ import annotations

from collections import OrderedDict

#: A byte range of one allocation: (allocation id, first byte, one past the last byte).
Range = tuple[int, int, int]


def union_bytes(ranges: list[Range]) -> int:
    """Bytes covered by ``ranges`` (overlaps counted once)."""
    total = 0
    for _aid, spans in _by_allocation(ranges).items():
        end = -1
        for s, e in sorted(spans):
            if e <= end:
                continue
            total += e - max(s, end)
            end = e
    return total


def _by_allocation(ranges: list[Range]) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for aid, s, e in ranges:
        if e > s:
            out.setdefault(aid, []).append((s, e))
    return out


class L2Cache:
    """Resident ranges ((allocation id, start) -> end, LRU first) within ``capacity_bytes``."""

    def __init__(self, capacity_bytes: int):
        self.capacity = capacity_bytes
        self.lines: OrderedDict[tuple[int, int], int] = OrderedDict()
        self.used = 0

    def resident(self, aid: int, start: int, end: int) -> bool:
        """Whether bytes [start, end) of allocation ``aid`` are all in the cache."""
        spans = sorted((s, e) for (a, s), e in self.lines.items() if a == aid)
        at = start
        for s, e in spans:
            if s > at:
                break
            at = max(at, e)
            if at >= end:
                return True
        return at >= end

    def hits(self, reads: list[Range], working_set_bytes: int) -> bool:
        """Whether an op reading ``reads`` with this working set runs from L2."""
        if working_set_bytes > self.capacity:
            return False
        return all(self.resident(aid, s, e) for aid, s, e in reads if e > s)

    def touch(self, touched: list[Range]) -> None:
        """Make ``touched`` most recently used, evicting the oldest ranges past capacity."""
        if union_bytes(touched) > self.capacity:
            self.lines.clear()                        # streaming a larger set evicts everything
            self.used = 0
            return
        for aid, s, e in touched:
            if e > s:
                self._cut(aid, s, e)
                self.lines[(aid, s)] = e
                self.used += e - s
        while self.used > self.capacity and self.lines:
            (_aid, s), e = self.lines.popitem(last=False)
            self.used -= e - s

    def _cut(self, aid: int, start: int, end: int) -> None:
        """Remove bytes [start, end) of ``aid`` from the resident lines (splitting lines)."""
        for (a, s), e in list(self.lines.items()):
            if a != aid or e <= start or s >= end:
                continue
            del self.lines[(a, s)]
            self.used -= e - s
            for ks, ke in ((s, start), (end, e)):
                if ke > ks:                       # the parts outside the cut stay, as old as they were
                    self.lines[(a, ks)] = ke
                    self.lines.move_to_end((a, ks), last=False)
                    self.used += ke - ks

    def forget(self, aid: int) -> None:
        """Drop every range of allocation ``aid`` (freed)."""
        for (a, s), e in list(self.lines.items()):
            if a == aid:
                del self.lines[(a, s)]
                self.used -= e - s
