"""The L2 model: the same answers and eviction order as a plain linear scan (the specification),
at a cost that grows with the lines an operation overlaps, not with every line the cache holds;
and a call that makes the device track more ranges than its budget is stopped, not served."""
from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.simgpu import cache, config
from shared.simgpu import device as simdevice
from shared.simgpu.device import OverBudget, SimDevice


class LinearL2:
    """The model as first written: every lookup and cut scans every resident line."""

    def __init__(self, capacity: int):
        self.capacity, self.lines, self.used = capacity, OrderedDict(), 0

    def resident(self, aid, start, end):
        at = start
        for s, e in sorted((s, e) for (a, s), e in self.lines.items() if a == aid):
            if s > at:
                break
            at = max(at, e)
            if at >= end:
                return True
        return at >= end

    def touch(self, touched):
        if cache.union_bytes(touched) > self.capacity:
            self.lines.clear()
            self.used = 0
            return
        for aid, s, e in touched:
            if e > s:
                self.cut(aid, s, e)
                self.lines[(aid, s)] = e
                self.used += e - s
        while self.used > self.capacity and self.lines:
            (_a, s), e = self.lines.popitem(last=False)
            self.used -= e - s

    def cut(self, aid, start, end):
        for (a, s), e in list(self.lines.items()):
            if a != aid or e <= start or s >= end:
                continue
            del self.lines[(a, s)]
            self.used -= e - s
            for ks, ke in ((s, start), (end, e)):
                if ke > ks:
                    self.lines[(a, ks)] = ke
                    self.lines.move_to_end((a, ks), last=False)
                    self.used += ke - ks

    def forget(self, aid):
        for (a, s), e in list(self.lines.items()):
            if a == aid:
                del self.lines[(a, s)]
                self.used -= e - s


_range = st.tuples(st.integers(1, 3), st.integers(0, 200), st.integers(0, 60)).map(lambda r: (r[0], r[1], r[1] + r[2]))
_ops = st.lists(st.one_of(st.tuples(st.just("touch"), st.lists(_range, min_size=1, max_size=4)),
                          st.tuples(st.just("resident"), _range),
                          st.tuples(st.just("forget"), st.integers(1, 3))), min_size=1, max_size=40)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True)
@given(capacity=st.sampled_from([64, 100, 256]), ops=_ops)
def test_the_l2_answers_and_evicts_as_the_linear_scan_does(capacity, ops):
    fast, spec = cache.L2Cache(capacity), LinearL2(capacity)
    for op, arg in ops:
        if op == "touch":
            fast.touch(arg)
            spec.touch(arg)
        elif op == "resident":
            assert fast.resident(*arg) == spec.resident(*arg)
        else:
            fast.forget(arg)
            spec.forget(arg)
        assert list(fast.lines.items()) == list(spec.lines.items()) and fast.used == spec.used


def _tiny_ranges_launch(dev, i):
    """One launch naming 64 one-byte reads and 64 one-byte writes, each a new line (side by side)."""
    reads = [[1, 64 * i + j, 64 * i + j + 1] for j in range(64)]
    writes = [[1, 10**8 + 64 * i + j, 10**8 + 64 * i + j + 1] for j in range(64)]
    dev.handle({"op": "launch", "kind": "copy", "reads": reads, "writes": writes, "read_bytes": 64,
                "write_bytes": 64, "dtype": "float32", "stream": 0})


def test_many_tiny_ranges_cost_work_in_proportion_to_the_ranges_not_their_square():
    # The channel attack: a line of 224 launches x 64 one-byte ranges (28,672 lines resident) took
    # minutes when every lookup scanned every line. Here each range visits the lines it overlaps.
    dev = SimDevice(config("h100-sxm"))
    dev.handle({"op": "alloc", "aid": 1, "bytes": 2**30})
    dev.begin_call()
    for i in range(224):
        _tiny_ranges_launch(dev, i)
    assert len(dev.cache.lines) == 224 * 128
    assert dev.cache.work <= 2 * 224 * 128


def test_a_call_past_the_cache_budget_is_stopped(monkeypatch):
    monkeypatch.setattr(simdevice, "MAX_CACHE_WORK", 5_000)
    dev = SimDevice(config("h100-sxm"))
    dev.handle({"op": "alloc", "aid": 1, "bytes": 2**30})
    dev.begin_call()
    for i in range(10):
        _tiny_ranges_launch(dev, i)      # 1,280 lines, a few thousand visits: within the budget
    spanning = {"op": "launch", "kind": "copy", "reads": [[1, 0, 640]] * 64, "writes": [],
                "read_bytes": 640, "write_bytes": 0, "dtype": "float32", "stream": 0}
    with pytest.raises(OverBudget, match="more than 5,000 cache ranges"):
        dev.handle(spanning)              # 64 reads, each walking the 640 lines under it
    dev.begin_call()                      # the next call starts a budget of its own
    _tiny_ranges_launch(dev, 11)


def test_a_call_past_its_time_limit_by_the_devices_clock_is_stopped():
    """A call that sleeps or waits past the limit of a call by the device's clock is stopped at
    once, as a grader on a GPU stops it in wall seconds (a sleep loop costs no real time here)."""
    dev = SimDevice(config("h100-sxm"))
    dev.begin_call(60.0)
    for _ in range(59):
        dev.handle({"op": "sleep", "seconds": 1.0})
    with pytest.raises(OverBudget, match="did not return within 60 s by the simulated GPU's clock"):
        for _ in range(2):
            dev.handle({"op": "sleep", "seconds": 1.0})
    dev.begin_call(60.0)                  # the next call has a limit of its own
    dev.handle({"op": "sleep", "seconds": 30.0})
    dev.begin_call()                      # no limit given: none by the device's clock
    dev.handle({"op": "sleep", "seconds": 3600.0})


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(ranges=st.lists(_range, max_size=4))
def test_union_bytes_counts_each_byte_of_each_allocation_once(ranges):
    """A launch's usual one read and one write take a shortcut; any list counts what a set of
    (allocation, byte) pairs holds."""
    assert cache.union_bytes(ranges) == len({(aid, b) for aid, s, e in ranges for b in range(s, e)})


@pytest.mark.parametrize("bad", [[[1, 0]], [[1, 0, 4, 5]], [(1, 0, 4)], [[True, 0, 4]], [[1, False, 4]],
                                 [[1, 0, 4.0]], [[-1, 0, 4]], [[1, 0, simdevice.MAX_BYTES + 1]], [[1, 8, 4]],
                                 [[1, 0, 4], "x"]])
def test_a_launch_naming_a_malformed_byte_range_is_refused(bad):
    dev = SimDevice(config("h100-sxm"))
    with pytest.raises(simdevice.BadRequest, match="bad byte range in reads"):
        dev.handle({"op": "launch", "kind": "copy", "reads": bad, "writes": [], "read_bytes": 4,
                    "write_bytes": 0, "dtype": "float32", "stream": 0})
    assert dev.record.ops == 0
