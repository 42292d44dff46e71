"""The L2 cache as resident byte ranges of allocations, least recently used first.

Residency is tracked by byte range, not by allocation: two slices (views) of one buffer are
different lines, so copying a large buffer in chunks finds each chunk cold unless that very range
was touched recently. An operation whose reads are all resident and whose working set fits runs
at L2 bandwidth; everything it touches then becomes resident, evicting the least recently used
ranges. A working set larger than the cache streams through it and leaves nothing resident.

Cost: each allocation keeps its lines' starts sorted, so a lookup or a cut finds the lines it
overlaps by bisection and visits only those. Every line visited counts as one unit of ``work``;
the device stops a call whose cache work passes its budget (device.py), so no request, however
many ranges it names, costs the grader more than that.
"""
from __future__ import annotations

from bisect import bisect_right, insort
from collections import OrderedDict

#: A byte range of one allocation: (allocation id, first byte, one past the last byte).
Range = tuple[int, int, int]


def union_bytes(ranges: list[Range]) -> int:
    """Bytes covered by ``ranges`` (overlaps counted once)."""
    if len(ranges) <= 2:       # a launch's usual one read and one write: no grouping needed
        if not ranges:
            return 0
        (a1, s1, e1), (a2, s2, e2) = ranges[0], ranges[-1]
        first = e1 - s1 if e1 > s1 else 0
        if len(ranges) == 1:
            return first
        second = e2 - s2 if e2 > s2 else 0
        if a1 != a2 or not first or not second:
            return first + second
        return first + second - max(0, min(e1, e2) - max(s1, s2))
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
    """Resident ranges ((allocation id, start) -> end, LRU first) within ``capacity_bytes``.

    The lines of one allocation never overlap (a touch cuts what it covers first), so their starts,
    kept sorted per allocation (``_starts``), order their ends too.
    """

    def __init__(self, capacity_bytes: int):
        self.capacity = capacity_bytes
        self.lines: OrderedDict[tuple[int, int], int] = OrderedDict()
        self._starts: dict[int, list[int]] = {}
        #: Each line's place in the LRU order (``lines``' order): newer lines count up from 0,
        #: lines put back as the oldest count down.
        self._stamp: dict[tuple[int, int], int] = {}
        self._newest = self._oldest = 0
        self.used = 0
        #: Lines visited so far (lookups, cuts, evictions): the grader's cost of this cache.
        self.work = 0

    def _first_overlap(self, aid: int, start: int) -> tuple[list[int], int]:
        """(aid's sorted starts, index of its first line that may reach past ``start``)."""
        starts = self._starts.get(aid, [])
        i = bisect_right(starts, start) - 1
        if i < 0 or self.lines[(aid, starts[i])] <= start:
            i += 1
        return starts, i

    def resident(self, aid: int, start: int, end: int) -> bool:
        """Whether bytes [start, end) of allocation ``aid`` are all in the cache."""
        starts, i = self._first_overlap(aid, start)
        at = start
        while i < len(starts) and at < end:
            self.work += 1
            s = starts[i]
            if s > at:
                return False
            at = max(at, self.lines[(aid, s)])
            i += 1
        return at >= end

    def hits(self, reads: list[Range], working_set_bytes: int) -> bool:
        """Whether an op reading ``reads`` with this working set runs from L2."""
        if working_set_bytes > self.capacity:
            return False
        return all(self.resident(aid, s, e) for aid, s, e in reads if e > s)

    def touch(self, touched: list[Range], union: int | None = None) -> None:
        """Make ``touched`` most recently used, evicting the oldest ranges past capacity.
        ``union``: ``union_bytes(touched)`` when the caller has it already."""
        if (union_bytes(touched) if union is None else union) > self.capacity:
            self.work += len(self.lines)
            self.lines.clear()                        # streaming a larger set evicts everything
            self._starts.clear()
            self._stamp.clear()
            self.used = 0
            return
        lines, stamp = self.lines, self._stamp
        for aid, s, e in touched:
            if e <= s:
                continue
            if lines.get((aid, s)) == e:          # that very line (lines never overlap): newest now
                self.work += 1
                lines.move_to_end((aid, s))
                self._newest += 1
                stamp[(aid, s)] = self._newest
                continue
            self._cut(aid, s, e)
            self._add(aid, s, e)
        while self.used > self.capacity and self.lines:
            (aid, s), e = self.lines.popitem(last=False)
            del self._stamp[(aid, s)]
            self._drop_start(aid, s)
            self.used -= e - s
            self.work += 1

    def _add(self, aid: int, start: int, end: int, oldest: bool = False) -> None:
        self.lines[(aid, start)] = end
        if oldest:
            self.lines.move_to_end((aid, start), last=False)
            self._oldest -= 1
            self._stamp[(aid, start)] = self._oldest
        else:
            self._newest += 1
            self._stamp[(aid, start)] = self._newest
        insort(self._starts.setdefault(aid, []), start)
        self.used += end - start

    def _drop_start(self, aid: int, start: int) -> None:
        starts = self._starts[aid]
        del starts[bisect_right(starts, start) - 1]
        if not starts:
            del self._starts[aid]

    def _cut(self, aid: int, start: int, end: int) -> None:
        """Remove bytes [start, end) of ``aid`` from the resident lines (splitting lines)."""
        starts, i = self._first_overlap(aid, start)
        hit = []
        while i < len(starts) and starts[i] < end:
            hit.append(starts[i])
            i += 1
        if not hit:
            return
        self.work += len(hit)
        if len(hit) > 1:
            hit.sort(key=lambda s: self._stamp[(aid, s)])     # least recently used first
        for s in hit:
            e = self.lines.pop((aid, s))
            del self._stamp[(aid, s)]
            self._drop_start(aid, s)
            self.used -= e - s
            for ks, ke in ((s, start), (end, e)):
                if ke > ks:                       # the parts outside the cut stay, as old as they were
                    self._add(aid, ks, ke, oldest=True)

    def forget(self, aid: int) -> None:
        """Drop every range of allocation ``aid`` (freed)."""
        for s in self._starts.pop(aid, []):
            self.used -= self.lines.pop((aid, s)) - s
            del self._stamp[(aid, s)]
            self.work += 1
