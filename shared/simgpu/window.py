"""The timed region of one call: what the device did between the clock reads that bracket it.

A timing function reads a clock (any host clock, or CUDA events whose elapsed time it asks)
before and after the work it times. The device keeps a timeline of one call: every kernel and
host-link transfer with its device start and end, and every mark (a host clock reading, or the
device time of an event whose elapsed time was asked). The timed region runs from the first
mark to the last; ``summary`` says what ran inside it, so a verdict can hold the returned number
to the work that was actually timed: copies of how many bytes of one buffer, matmuls of how many
FLOPs each, transfers over the host link, kernels so short that their launch latency dominates.

A region read too wide (a clock read during a time-based warm-up) only adds work to it, so the
summaries below are used only where more work cannot hide a mistake: the largest extent a copy
wrote, the largest matmul, whether any device copy ran at all.
"""
from __future__ import annotations

import bisect
import statistics

from shared.simgpu.cache import union_bytes

#: Most kernels one call's timeline keeps (a longer call keeps its first ones and says so).
MAX_KERNELS = 20_000
#: Most clock readings one call's timeline keeps for its spans (the first and last are always kept).
MAX_MARKS = 20_000


class Timeline:
    """Kernels and marks of one call, device seconds."""

    def __init__(self, l2_bytes: int = 0):
        self.l2_bytes = l2_bytes         # a copy of at most this many bytes may run in the cache
        self.kernels: list[tuple] = []   # (kind, start, end, write ranges, flops, launch_s)
        self.first_mark: float | None = None
        self.last_mark: float | None = None
        self.marks: list[float] = []
        self.idles: list[tuple[float, float]] = []   # (start, end): the host slept, the device had nothing to run
        self.waits: list[tuple[float, float]] = []   # (host time, seconds): a sleep or timed-out wait asked
        self.first_asleep: float | None = None   # host seconds asleep at the first mark (None: unknown)
        self.last_asleep: float | None = None    # ... and at the last, when that reading is a CPU clock's
        self.truncated = False

    def kernel(self, kind: str, start: float, end: float, writes, flops: float, launch_s: float,
               host: float | None = None) -> None:
        """One kernel or transfer; ``launch_s``: the part of its time only the launch floor explains;
        ``host``: the host's time when it was launched (default: its start)."""
        if len(self.kernels) >= MAX_KERNELS:
            self.truncated = True
            return
        self.kernels.append((kind, start, end, tuple(writes), flops, launch_s, start if host is None else host))

    def mark(self, at: float, asleep: float | None = None, cpu: bool = False) -> None:
        """A clock reading (host seconds) or an event's device time used in an elapsed time;
        ``asleep``: the host's seconds asleep so far (a clock reading's); ``cpu``: the reading is a
        CPU-time clock's, which stands still while the host sleeps."""
        if self.first_mark is None or at < self.first_mark:
            self.first_asleep = asleep
        if self.last_mark is None or at >= self.last_mark:
            self.last_asleep = asleep if cpu else None
        self.first_mark = at if self.first_mark is None else min(self.first_mark, at)
        self.last_mark = at if self.last_mark is None else max(self.last_mark, at)
        if len(self.marks) < MAX_MARKS:
            self.marks.append(at)

    def idle(self, start: float, end: float) -> None:
        """Seconds ``start`` to ``end`` the host slept or waited (a wait that timed out) while the
        device had run all it was given: time no device speeds up."""
        if end > start and len(self.idles) < MAX_MARKS:
            self.idles.append((start, end))

    def wait(self, at: float, seconds: float) -> None:
        """The host asked to sleep or wait ``seconds`` at host time ``at``, however much of it
        overlapped queued work."""
        if len(self.waits) < MAX_MARKS:
            self.waits.append((at, seconds))

    def summary(self) -> dict:
        """What ran in the timed region (all kernels when the call read no clock): plain data.

        Keys: window_s ([first mark, last mark] or None), duration_s (seconds between them),
        kernels, copies, copy_bytes (written by the region's copies; each read as many),
        copy_extent_bytes (the most bytes of one allocation that copies wrote), fill_bytes (by
        fills and random fills), transfers and transfer_bytes (over the host link), matmuls,
        matmul_flops, matmul_max_flops (of one matmul), idle_s (of duration_s, the host slept or
        waited with the device's work all done: ``idle``), waited_s (the seconds of the sleeps and
        waits asked in it, overlapped or not: ``wait``), own_s (duration_s as the clock that closed
        the window measures it: less the host's sleeps in it when that is a CPU-time clock, which
        stands still while the host sleeps), latency_share and matmul_latency_share (of
        the device time of the region's kernels, or its matmuls, the part only the launch floor
        explains: launch-bound work), truncated, and launched: the copy_bytes and matmul_flops of
        the copies and matmuls launched in the region, finished or not, and how many of them were
        ``running`` at its last mark (the clock stopped before the device finished).
        """
        low, high, eps = self.first_mark, self.last_mark, 1e-12
        if low is None:
            inside, launched = self.kernels, []
        else:
            inside = [k for k in self.kernels if k[1] >= low - eps and k[2] <= high + eps]
            # launched in it: started after its first mark, launched before its last (may run past it)
            launched = [k for k in self.kernels if k[0] in ("copy", "matmul") and k[1] >= low - eps
                        and k[6] <= high + eps]
        copies = [k for k in inside if k[0] == "copy"]
        transfers = [k for k in inside if k[0] in ("h2d", "d2h")]
        matmuls = [k for k in inside if k[0] == "matmul"]
        by_alloc: dict[int, list] = {}
        for k in copies:
            for r in k[3]:
                by_alloc.setdefault(r[0], []).append(r)
        extent = max((union_bytes(rs) for rs in by_alloc.values()), default=0)
        busy = sum(k[2] - k[1] for k in inside)
        latency = sum(k[5] for k in inside)
        matmul_busy = sum(k[2] - k[1] for k in matmuls)
        matmul_latency = sum(k[5] for k in matmuls)
        duration = (self.last_mark - self.first_mark) if self.first_mark is not None else 0.0
        return {
            "window_s": None if self.first_mark is None else [self.first_mark, self.last_mark],
            "duration_s": duration,
            "own_s": self._own(duration),
            "idle_s": sum(max(0.0, min(end, high) - max(start, low)) for start, end in self.idles)
            if low is not None else 0.0,
            "waited_s": sum(seconds for at, seconds in self.waits if low is not None and low <= at < high),
            "copy_bytes": sum(_written(k) for k in copies),
            "fill_bytes": sum(_written(k) for k in inside if k[0] in ("fill", "random")),
            "matmul_flops": sum(k[4] for k in matmuls),
            "kernels": len(inside), "copies": len(copies), "copy_extent_bytes": extent,
            "transfers": len(transfers), "transfer_bytes": sum(_written(k) for k in transfers),
            "matmuls": len(matmuls), "matmul_max_flops": max((k[4] for k in matmuls), default=0.0),
            "latency_share": latency / busy if busy > 0 else 0.0,
            "matmul_latency_share": matmul_latency / matmul_busy if matmul_busy > 0 else 0.0,
            "truncated": self.truncated,
            "launched": {"copy_bytes": sum(_written(k) for k in launched if k[0] == "copy"),
                         "matmul_flops": sum(k[4] for k in launched if k[0] == "matmul"),
                         "running": sum(k[1] < high - eps and k[2] > high + eps for k in launched)},
            **self._clean_spans(),
        }

    def _own(self, duration: float) -> float:
        """``duration`` less the host's sleeps between the first and last marks, when the last is
        a CPU-time clock's reading (and the first's sleeps are known)."""
        if self.last_asleep is None or self.first_asleep is None:
            return duration
        return max(0.0, duration - (self.last_asleep - self.first_asleep))

    def _clean_spans(self) -> dict:
        """The spans between consecutive clock readings that hold copies (or matmuls) and no fill:
        their copy bytes and seconds, their matmul FLOPs and seconds (a number timed rep by rep,
        refilling the source between reps outside each rep's window, or read between its own two
        clock readings after a log line's, is that work's rate over these spans), and the slowest,
        median and fastest of their rates (copy bytes or FLOPs per second). Copy spans whose copies
        each fit in the L2 count toward those rates only when no span copied more: main memory's
        rate is read off spans that ran from main memory; the fastest copy span of all is kept
        beside them (``copy_span_fastest``), as is the fastest matmul span
        (``matmul_span_fastest``), each also counting the share of a kernel that a reading split
        (``_shared_rates``)."""
        marks = sorted(set(self.marks))
        kernels = sorted(self.kernels, key=lambda k: k[1])
        starts = [k[1] for k in kernels]
        copy_bytes, flops, seconds, matmul_s, eps = 0, 0.0, 0.0, 0.0, 1e-12
        copy_rates, matmul_rates = [], []
        for low, high in zip(marks, marks[1:]):
            first, last = bisect.bisect_left(starts, low - eps), bisect.bisect_right(starts, high + eps)
            inside = [k for k in kernels[first:last] if k[2] <= high + eps]
            if any(k[0] in ("fill", "random") for k in inside):
                continue
            if any(k[0] == "copy" for k in inside):
                copied = sum(_written(k) for k in inside if k[0] == "copy")
                copy_bytes += copied
                seconds += high - low
                in_cache = max(_written(k) for k in inside if k[0] == "copy") <= self.l2_bytes
                copy_rates.append((in_cache, copied / (high - low) if high > low else 0.0))
            if any(k[0] == "matmul" for k in inside):
                done = sum(k[4] for k in inside if k[0] == "matmul")
                flops += done
                matmul_s += high - low
                matmul_rates.append(done / (high - low) if high > low else 0.0)
        shared = _shared_rates(marks, kernels)
        fastest = max((r for _c, r in copy_rates), default=None)
        return {"clean_copy_bytes": copy_bytes, "clean_s": seconds,
                "clean_matmul_flops": flops, "clean_matmul_s": matmul_s,
                "copy_span_rates": _spread([r for c, r in copy_rates if not c] or [r for _c, r in copy_rates]),
                "copy_span_fastest": max(fastest or 0.0, shared["copy"]) or fastest,
                "matmul_span_rates": _spread(matmul_rates), "matmul_span_fastest": shared["matmul"]}


def _shared_rates(marks: list[float], kernels: list[tuple]) -> dict[str, float]:
    """The fastest rate (copy bytes, or matmul FLOPs, per second) of the spans between consecutive
    clock readings that hold no fill, each kernel counted in each span by the share of its run
    inside it: a reading taken while the work runs (an event loop's, another thread's) splits the
    work between two spans instead of dropping the kernel it fell in from both. 0 when none ran."""
    work = {"copy": [0.0] * max(len(marks) - 1, 0), "matmul": [0.0] * max(len(marks) - 1, 0)}
    filled = set()
    for kernel in kernels:
        kind, start, end = kernel[:3]
        if end <= start:
            continue
        i = max(bisect.bisect_right(marks, start) - 1, 0)
        while i < len(marks) - 1 and marks[i] < end:
            inside = min(end, marks[i + 1]) - max(start, marks[i])
            if inside > 0 and kind in ("fill", "random"):
                filled.add(i)
            elif inside > 0 and kind in work:
                amount = _written(kernel) if kind == "copy" else kernel[4]
                work[kind][i] += amount * inside / (end - start)
            i += 1
    return {kind: max((w / (marks[i + 1] - marks[i]) for i, w in enumerate(done)
                       if w > 0 and i not in filled and marks[i + 1] > marks[i]), default=0.0)
            for kind, done in work.items()}


def _spread(rates: list[float]) -> list[float] | None:
    """[slowest, median, fastest] of ``rates`` (None when there are none)."""
    return [min(rates), statistics.median(rates), max(rates)] if rates else None


def _written(kernel) -> int:
    return sum(r[2] - r[1] for r in kernel[3])
