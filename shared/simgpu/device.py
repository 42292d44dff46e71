"""The simulated device itself: config, clocks, L2, memory accounting and the trace (no torch).

It lives with the grader. Student code reaches it only through requests in plain data, the
ones a CUDA program makes of a GPU (``handle``): allocations with their sizes, kernel launches
with the byte ranges they touch and their stream, event records and queries, synchronize; it
answers only what a CUDA program gets back (clock readings, event queries, elapsed times). The
profile (bandwidth, peak, L2 speed), the seed, the clocks and the trace never leave it, so a
student's process can learn them only by measuring. ``python -m shared.simgpu`` and in-process
tests hold it in the same process (frontend.LocalLink).

Time of one kernel is its roofline time (``kernel_seconds``, roofline.py), scaled by a seeded jitter
(``cfg["kernel_jitter"]``): two runs of one kernel differ, as on a GPU.
"""
from __future__ import annotations

import random

from shared.simgpu.cache import L2Cache, union_bytes
from shared.simgpu.clock import DEFAULT_STREAM, Clock
from shared.simgpu.roofline import kernel_seconds, roofs
from shared.simgpu.trace import Recorder
from shared.simgpu.window import Timeline

#: Kernel kinds a launch may name.
KINDS = frozenset({"copy", "matmul", "fill", "random", "elementwise", "reduction"})
#: Host<->device copy kinds.
TRANSFERS = frozenset({"h2d", "d2h"})
#: PyTorch's messages (aten/src/ATen/cuda/CUDAEvent.h) when elapsed_time comes too early.
NOT_COMPLETED = "Both events must be completed before calculating elapsed time."
NOT_RECORDED = "Both events must be recorded before calculating elapsed time."
#: Most byte ranges one launch may name, and largest ids and sizes a request may carry.
MAX_RANGES = 64
#: L2 lines one call may visit (shared/simgpu/cache.py's ``work``). Honest programs visit a few per
#: launch: 64,000 launches of a benchmark's autorange visit about 200,000. Past this, the call
#: is stopped: a request naming thousands of tiny ranges costs the grader no more than this.
MAX_CACHE_WORK = 5_000_000
MAX_ID = 2**62
MAX_BYTES = 2**62
#: Kernels and transfers the device's activity log keeps per process (CUPTI's buffers are bounded
#: too), and the most one answer of it carries.
MAX_ACTIVITY = 100_000
ACTIVITY_PAGE = 10_000
#: Longest host sleep one request may ask for, in seconds (time.sleep cuts longer ones to it).
MAX_SLEEP_S = 3600.0


def dtype_name(dtype) -> str:
    """'bfloat16' for torch.bfloat16 (and for a plain string)."""
    return str(dtype).removeprefix("torch.") if dtype is not None else "float32"


class BadRequest(ValueError):
    """A device request that no CUDA program could make (wrong op, field or value)."""


class OverBudget(BadRequest):
    """A call that made the device model do more bookkeeping than any CUDA program needs, or ran
    past its time limit by the device's clock."""


def _whole(x, low: int = 0, high: int = MAX_BYTES) -> bool:
    """Whether ``x`` is an int (not a bool) from ``low`` to ``high``; a plain int is decided first
    (every value a decoded request holds), as a launch checks several."""
    return (type(x) is int or (isinstance(x, int) and not isinstance(x, bool))) and low <= x <= high


def _int(message: dict, key: str, low: int = 0, high: int = MAX_BYTES) -> int:
    value = message.get(key)
    if not _whole(value, low, high):
        raise BadRequest(f"device request {message.get('op')!r}: bad {key} {value!r:.40}")
    return value


def _stream(message: dict, key: str = "stream", optional: bool = False) -> int | None:
    if optional and message.get(key) is None:
        return None
    return _int(message, key, 0, 1 << 20)


def _ranges(message: dict, key: str) -> list[tuple[int, int, int]]:
    value = message.get(key)
    if not isinstance(value, list) or len(value) > MAX_RANGES:
        raise BadRequest(f"device request 'launch': bad {key}")
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 3:
            raise BadRequest(f"device request 'launch': bad byte range in {key}")
        aid, start, end = item
        # plain ints, as every decoded request holds, are checked inline (a launch names several)
        plain = type(aid) is int and type(start) is int and type(end) is int and \
            0 <= aid <= MAX_BYTES and 0 <= start <= end <= MAX_BYTES
        if not plain and (not (_whole(aid) and _whole(start) and _whole(end)) or end < start):
            raise BadRequest(f"device request 'launch': bad byte range in {key}")
        out.append((aid, start, end))
    return out


class SimDevice:
    """The state of one active period of the simulated GPU, driven by plain-data requests."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.floorless = dict(cfg, min_kernel_s=0.0)     # a kernel's time without the launch floor
        self._roofs: dict[tuple[str, str, bool], tuple[float, float]] = {}   # ``roofs`` of floorless, kept
        self.clock = Clock(cfg["clock_read_s"])
        self.cache = L2Cache(cfg["l2_bytes"])
        self.cache_work_at_call = 0
        self.call_limit_s: float | None = None       # seconds a call may run by this clock (begin_call)
        self.call_start_s = 0.0
        self.record = Recorder()
        self.timeline = Timeline(self.cfg["l2_bytes"])
        self.seen_kinds: set[str] = set()
        self.events: dict[int, float] = {}            # event id -> device timestamp, seconds
        self.allocations: dict[int, int] = {}         # allocation id -> bytes
        self.allocated = self.peak = self.largest = self.count = 0
        self.jitter = random.Random(f"simgpu-jitter\0{cfg['seed']}")
        self.activity: list[tuple[str, float, float]] = []   # (kind, start, end) per kernel, for the profiler
        self.ahead = 0.0     # host seconds spent waiting at launches (sync_launches) since it last saw the device
        self.told_done: float | None = None    # the device's end a query last found reached

    def begin_call(self, limit_s: float | None = None) -> None:
        """A new call starts on this device: its trace starts empty (allocations, kernels, clock
        reads), while what a process keeps between calls stays (first uses, L2, memory).
        ``limit_s``: the seconds a call may run, here by the device's clock (``handle`` stops a
        call past it, as a grader on a GPU stops one past its wall-clock limit)."""
        self.call_limit_s = limit_s
        self.call_start_s = self.clock.host
        self.record = Recorder()
        self.timeline = Timeline(self.cfg["l2_bytes"])
        self.largest = self.count = 0
        self.peak = self.allocated
        self.clock.reads = 0
        self.cache_work_at_call = self.cache.work

    # ------------------------------------------------------------ requests
    def handle(self, message: dict):
        """Carry out one request (see frontend.py for who sends what); its answer or None.

        Raises BadRequest for a request no CUDA program makes, and RuntimeError (PyTorch's
        message) for an elapsed time asked of events that did not complete.
        """
        if not isinstance(message, dict):
            raise BadRequest("a device request must be an object")
        op = message.get("op")
        handler = _HANDLERS.get(op)
        if handler is None:
            raise BadRequest(f"unknown device request {op!r:.40}")
        out = handler(self, message)
        if op not in _KEEP_AHEAD:
            self.ahead = 0.0
        limit = self.call_limit_s
        if limit is not None and self.clock.host - self.call_start_s > limit:
            raise OverBudget(f"the call did not return within {limit:g} s by the simulated GPU's clock "
                             "(its sleeps and waits count), the limit of a call")
        return out

    def _alloc(self, m):
        aid, nbytes = _int(m, "aid", 1, MAX_ID), _int(m, "bytes")
        self.clock.spend(self.cfg["alloc_s"])
        if aid not in self.allocations:
            self.allocations[aid] = nbytes
            self.allocated += nbytes
            self.count += 1
            self.peak = max(self.peak, self.allocated)
            self.largest = max(self.largest, nbytes)

    def _free(self, m):
        aid = _int(m, "aid", 1, MAX_ID)
        nbytes = self.allocations.pop(aid, None)
        if nbytes is not None:
            self.allocated -= nbytes
            self.cache.forget(aid)

    def _reset_peak(self, _m):
        self.peak = self.allocated

    def _launch(self, m):
        kind = m.get("kind")
        if kind not in KINDS:
            raise BadRequest(f"device request 'launch': unknown kind {kind!r:.40}")
        reads, writes = _ranges(m, "reads"), _ranges(m, "writes")
        read_bytes, write_bytes = _int(m, "read_bytes"), _int(m, "write_bytes")
        flops = m.get("flops", 0.0)
        if isinstance(flops, bool) or not isinstance(flops, (int, float)) or not 0 <= flops < 1e30:
            raise BadRequest("device request 'launch': bad flops")
        dtype = m.get("dtype")
        if not isinstance(dtype, str) or len(dtype) > 40:
            raise BadRequest("device request 'launch': bad dtype")
        self.launch(kind, reads, writes, read_bytes, write_bytes, float(flops), dtype, _stream(m))

    def launch(self, kind: str, reads, writes, read_bytes: int, write_bytes: int, flops: float,
               dtype: str, stream: int = DEFAULT_STREAM) -> None:
        """Queue one kernel: host pays the launch (and a first use); device runs its roofline time."""
        touched = list(reads) + list(writes)
        working_set = union_bytes(touched)
        l2 = self.cache.hits(list(reads), working_set)
        jitter = self._jitter()
        roof = self._roofs.get((kind, dtype, l2))
        if roof is None:
            roof = self._roofs[(kind, dtype, l2)] = roofs(self.floorless, kind, dtype, l2)
        busy = kernel_seconds(self.floorless, kind, read_bytes + write_bytes, flops, dtype, l2, roof) * jitter
        seconds = max(busy, self.cfg["min_kernel_s"] * jitter)   # what only the launch floor explains: seconds - busy
        self.cache.touch(touched, working_set)
        if self.cache.work - self.cache_work_at_call > MAX_CACHE_WORK:
            raise OverBudget(f"the simulated GPU tracked more than {MAX_CACHE_WORK:,} cache ranges in one "
                             "call, far more than any CUDA program makes it track")
        # cuBLAS loads one set of kernels per dtype: a float32 matmul does not warm up a bf16 one
        launched = self.clock.host
        start, end = self._run(kind, seconds, stream, f"matmul:{dtype}" if kind == "matmul" else kind)
        self.record.op(kind, read_bytes, write_bytes, working_set, l2, flops, seconds)
        self.timeline.kernel(kind, start, end, writes, flops, seconds - busy, launched)
        self._log(kind, start, end)

    def _transfer(self, m):
        kind = m.get("kind")
        if kind not in TRANSFERS:
            raise BadRequest(f"device request 'transfer': unknown kind {kind!r:.40}")
        self.transfer(kind, _int(m, "bytes"), _stream(m))

    def transfer(self, kind: str, n_bytes: int, stream: int = DEFAULT_STREAM) -> None:
        """A host<->device copy ('h2d' or 'd2h') of ``n_bytes``; the host waits for it."""
        jitter = self._jitter()
        busy = n_bytes / (self.cfg["h2d_gbs"] * 1e9) * jitter
        seconds = max(busy, self.cfg["min_kernel_s"] * jitter)
        self.clock.wait(self.clock.tail(stream))
        start, end = self._run(kind, seconds, stream)
        self.clock.wait(self.clock.tail(stream))
        self.timeline.kernel(kind, start, end, [(0, 0, n_bytes)], 0.0, seconds - busy)
        self._log(kind, start, end)
        self.record.op(kind, n_bytes if kind == "d2h" else 0, n_bytes if kind == "h2d" else 0,
                       n_bytes, False, 0.0, seconds)

    def _log(self, kind: str, start: float, end: float) -> None:
        if len(self.activity) < MAX_ACTIVITY:
            self.activity.append((kind, start, end))

    def _activity(self, m) -> dict:
        """What a profiler's device activity reads (CUPTI on a GPU): the kernels and transfers
        this process ran from index ``from`` on, ``[kind, start s, end s]`` each (device time),
        at most ACTIVITY_PAGE; ``next``: the index after the last one returned. Each timestamp
        returned marks the timed region, as a clock reading does."""
        first = min(_int(m, "from", 0, MAX_ID), len(self.activity))
        page = self.activity[first:first + ACTIVITY_PAGE]
        for _kind, start, end in page:       # device timestamps a program reads: clock readings
            self.timeline.mark(start)
            self.timeline.mark(end)
        return {"next": first + len(page), "kernels": [list(k) for k in page]}

    def _jitter(self) -> float:
        """The next kernel's time factor: uniform within 1 +/- ``kernel_jitter``, from the seeded stream."""
        return 1.0 + self.cfg["kernel_jitter"] * (2.0 * self.jitter.random() - 1.0)

    def _run(self, kind: str, seconds: float, stream: int, first_use_key: str | None = None):
        """Queue ``seconds`` of device work; the first work of each ``first_use_key`` (default:
        its kind) on this device pays the one-time cost. (start, end) in device seconds."""
        key = first_use_key or kind
        if self.cfg["first_use"] and key not in self.seen_kinds:
            self.clock.spend(self.cfg["first_use_s"])
            self.record.first_use.append(key)
        self.seen_kinds.add(key)
        self.clock.spend(self.cfg["launch_overhead_s"])
        start, end = self.clock.enqueue(seconds, stream)
        if self.cfg["sync_launches"]:
            self._wait_at_launch(end)
        return start, end

    def _wait_at_launch(self, until_s: float) -> None:
        """The host waits for work it just launched (sync_launches), as a GPU's host would not."""
        before = self.clock.host
        self.clock.wait(until_s)
        self.ahead += self.clock.host - before

    def _sync(self, m):
        """The host waits for everything queued on the device (or on one stream)."""
        stream = _stream(m, optional=True)
        self.record.syncs += 1
        until = self.clock.device if stream is None else self.clock.tail(stream)
        self.clock.wait(until, self.cfg["sync_overhead_s"])

    def _host_read(self, m):
        """A value must reach the host (.item(), .cpu(), printing): wait for its stream."""
        self.record.host_reads += 1
        self.clock.wait(self.clock.tail(_stream(m)), self.cfg["sync_overhead_s"])

    def _sleep(self, m) -> float:
        """The host sleeps (or a wait times out) while the device runs on: its clock moves (at most
        MAX_SLEEP_S) less the seconds it waited at launches since it last saw the device, which on a
        GPU that work would still be running (the sleep overlaps it); the part after the device ran
        out of work is the timeline's idle. The seconds the clock moved."""
        seconds = m.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_SLEEP_S:
            raise BadRequest("device request 'sleep': bad seconds")
        self.timeline.wait(self.clock.host, float(seconds))
        covered = min(float(seconds), self.ahead)
        self.ahead -= covered
        idle_from = max(self.clock.host, self.clock.device)     # the device has run everything queued
        self.clock.spend(float(seconds) - covered)
        self.timeline.idle(idle_from, self.clock.host)
        return float(seconds) - covered

    def _now(self, m) -> float:
        """Host seconds since the start, read through a clock (advances it a little); ``asleep_s``:
        the host's seconds asleep so far, ``cpu``: the reading is a CPU-time clock's."""
        asleep = m.get("asleep_s")
        if asleep is not None and (isinstance(asleep, bool) or not isinstance(asleep, (int, float))
                                   or not 0 <= asleep < float("inf")):
            raise BadRequest("device request 'now': bad asleep_s")
        at = self.clock.read()
        self.timeline.mark(at, asleep, m.get("cpu") is True)
        return at

    def _clock_seed(self, _m) -> int:
        """A number drawn from the seed (not the seed) from which the host's clocks draw fractions
        of their own (clockbase.py): a real machine's clocks read unrelated fractions of a second."""
        return random.Random(f"simgpu-clocks\0{self.cfg['seed']}").getrandbits(64)

    def _record(self, m):
        """Queue a zero-length marker (an event) on a stream: it completes with that stream's work."""
        event = _int(m, "event", 1, MAX_ID)
        self.record.events += 1
        self.clock.spend(self.cfg["launch_overhead_s"])
        at = self.clock.mark(_stream(m))
        if self.cfg["sync_launches"]:
            self._wait_at_launch(at)
        self.events[event] = at

    def _event_sync(self, m) -> float:
        """The host waits for an event; the host seconds it waited for the device."""
        self.record.syncs += 1
        at, before = self.events.get(_int(m, "event", 1, MAX_ID)), self.clock.host
        if at is None:
            return 0.0
        self.clock.wait(at, self.cfg["sync_overhead_s"])
        return max(0.0, at - before)

    def _query_event(self, m) -> bool:
        """Whether the device passed the event; each query costs the host ``poll_s``, so a loop
        that polls until it is done (valid CUDA) moves time forward and ends."""
        at = self.events.get(_int(m, "event", 1, MAX_ID))
        self._poll()
        return at is None or at <= self.clock.host

    def _query_stream(self, m) -> bool:
        self._poll()
        return self.clock.idle(_stream(m, optional=True))

    def _poll(self) -> None:
        """A query costs the host ``poll_s``; the first to find the device's work done is the host's
        wait for it, as a synchronize is; one asked after that waits on nothing, as a sleep would:
        the timeline's idle (a window padded with polls)."""
        before, done = self.clock.host, self.clock.idle()
        self.clock.spend(self.cfg["poll_s"])
        if done and self.told_done == self.clock.device:
            self.timeline.idle(before, self.clock.host)
        self.told_done = self.clock.device if self.clock.idle() else None

    def _wait_event(self, m):
        at = self.events.get(_int(m, "event", 1, MAX_ID))
        if at is not None:
            self.clock.stream_waits(_stream(m), at)

    def _wait_stream(self, m):
        self.clock.stream_waits(_stream(m), self.clock.tail(_stream(m, "other")))

    def _elapsed(self, m) -> float:
        """Milliseconds between two recorded events; RuntimeError unless both completed."""
        start, end = (self.events.get(_int(m, k, 1, MAX_ID)) for k in ("start", "end"))
        if start is None or end is None:
            raise RuntimeError(NOT_RECORDED)
        if not (start <= self.clock.host and end <= self.clock.host):
            raise RuntimeError(NOT_COMPLETED)
        self.timeline.mark(start)
        self.timeline.mark(end)
        return (end - start) * 1e3

    def idle(self) -> bool:
        """Whether the device has finished everything queued, as seen from the host now."""
        return self.clock.idle()

    def trace(self) -> dict:
        """The trace of this period so far (plain data, see shared.simgpu.trace)."""
        return dict(self.record.as_dict(self.clock, self, self.cfg), timed=self.timeline.summary())


_HANDLERS = {
    "alloc": SimDevice._alloc, "free": SimDevice._free, "reset_peak": SimDevice._reset_peak,
    "launch": SimDevice._launch, "transfer": SimDevice._transfer, "sync": SimDevice._sync,
    "host_read": SimDevice._host_read, "now": SimDevice._now, "record": SimDevice._record,
    "event_sync": SimDevice._event_sync, "query_event": SimDevice._query_event,
    "query_stream": SimDevice._query_stream, "wait_event": SimDevice._wait_event,
    "wait_stream": SimDevice._wait_stream, "elapsed": SimDevice._elapsed, "sleep": SimDevice._sleep,
    "activity": SimDevice._activity, "clock_seed": SimDevice._clock_seed,
}
#: Requests after which a sleep still overlaps the launches the host waited for (no clock reading,
#: synchronize, query or host read saw the device meanwhile).
_KEEP_AHEAD = frozenset({"launch", "record", "alloc", "free", "reset_peak", "wait_event", "wait_stream",
                         "clock_seed", "sleep"})
#: Requests whose answer the sender may wait for (a blocking event's wait: how long it slept); the
#: others are queued and sent in batches.
ASKS = frozenset({"now", "query_event", "query_stream", "elapsed", "activity", "event_sync", "clock_seed", "sleep"})
