"""The student's side of the simulated GPU: what a CUDA program does, sent to the device.

The TorchFunctionMode (mode.py) and the patched torch.cuda / time functions (patches.py) talk to
a ``Frontend``. It turns tensors into plain data (allocation ids, byte ranges, streams) and
sends requests to the device (device.py) over a link; the device answers only what a CUDA
program gets back: clock readings, event queries, elapsed times. The frontend holds the
device's public description (its properties), its own account of allocations (for
OutOfMemoryError against the public total_memory), the current stream, and nothing else: no
bandwidth, peak, seed, clock or trace.

Links: ``LocalLink`` holds the device in this process (``python -m shared.simgpu``, tests);
``PipeLink`` sends requests to the grader's process over the child's protocol pipes
(autograder/runtime/runner.py), queuing those that need no answer and sending them with the
next one that does (or when the call ends).
"""
from __future__ import annotations

import itertools
import json
import threading

from shared.simgpu import state
from shared.simgpu.clock import DEFAULT_STREAM
from shared.simgpu.costs import Op, layout
from shared.simgpu.device import dtype_name
from shared.simgpu.memory import Memory

#: Requests that give the device no work: the host's clock, a sleep, the clocks' seed, and a free
#: (garbage collection runs on whichever thread it happens to).
HOST_ONLY = frozenset({"now", "sleep", "clock_seed", "free"})


class LocalLink:
    """The device in this process: every request goes straight to it."""

    def __init__(self, device):
        self.device = device

    def post(self, message: dict) -> None:
        self.device.handle(message)

    def ask(self, message: dict):
        return self.device.handle(message)

    def flush(self) -> None:
        return None


class PipeLink:
    """The device in the grader's process, over the child's pipes (one JSON line each way).

    ``send(dict)`` writes one line to the grader; ``readline()`` reads one from it. Requests
    that need no answer are queued (up to BATCH) and go with the next ``ask`` or ``flush``.
    """

    BATCH = 256

    def __init__(self, send, readline):
        self.send = send
        self.readline = readline
        self.queue: list[dict] = []

    def post(self, message: dict) -> None:
        self.queue.append(message)
        if len(self.queue) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if self.queue:
            self.send({"dev": self.queue})
            self.queue = []

    def ask(self, message: dict):
        self.send({"dev": self.queue, "ask": message})
        self.queue = []
        line = self.readline()
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict) or not ({"dev_reply", "dev_error"} & set(reply)):
            raise RuntimeError("the simulated GPU did not answer")
        if "dev_error" in reply:
            raise RuntimeError(str(reply["dev_error"]))
        return reply["dev_reply"]


class Frontend:
    """One active period of the simulated GPU as the student's process sees it."""

    def __init__(self, info: dict, link):
        self.cfg = info                       # public fields only (profile.public)
        self.link = link
        self.memory = Memory(info["memory_bytes"], on_free=self._freed, on_alloc=self._allocated)
        self._told = -1                       # the reserved bytes last told the driver (``hold``)
        self.stream = DEFAULT_STREAM          # the current stream (torch.cuda.stream(s) sets it)
        self._streams = itertools.count(DEFAULT_STREAM + 1)
        self._events = itertools.count(1)
        self.open = True
        self.slept_s = 0.0                    # host seconds asleep (time.sleep, a blocking event): no CPU time
        self.capture: list | None = None      # kernels a CUDA graph records instead of running
        self._lock = threading.RLock()        # every thread of the process talks to this device
        self.driver: int | None = None        # the thread that last gave the device work (``drives_here``)

    # ------------------------------------------------------------- plumbing
    def post(self, message: dict) -> None:
        self._driven(message)
        with self._lock:
            if self.open:
                self.link.post(message)

    def ask(self, message: dict):
        self._driven(message)
        with self._lock:
            return self.link.ask(message)

    def _driven(self, message: dict) -> None:
        if message["op"] not in HOST_ONLY:
            self.driver = threading.get_ident()

    def drives_here(self) -> bool:
        """Whether the calling thread is the one that last gave the device work or asked about it
        (a launch, a synchronize, an event's query): the thread whose sleeps and waits pass the
        device's time, not one that waits beside it while another thread times (clocks.waited)."""
        return self.driver == threading.get_ident()

    def close(self) -> None:
        """The period ends: queued requests go out; later frees (garbage collection) are dropped."""
        with self._lock:
            if self.open:
                self.link.flush()
                self.open = False

    def _allocated(self, aid: int, n_bytes: int) -> None:
        self.post({"op": "alloc", "aid": aid, "bytes": n_bytes})
        if self.memory.reserve.reserved != self._told:
            self.hold()                       # a new segment: the driver sees more memory held

    def _freed(self, aid: int) -> None:
        self.post({"op": "free", "aid": aid})   # the block stays reserved, in the allocator's cache

    def held_bytes(self) -> int:
        """Device memory this process holds, in bytes: what the caching allocator reserved and the
        CUDA context's own (what mem_get_info counts as taken, and the driver reports)."""
        return self.memory.reserve.reserved + state.part("cudalib").software("context_bytes")

    def hold(self) -> None:
        """Tell the driver the device memory this process holds (``held_bytes``) and the device's
        L2 size, which is drawn per submission (driver.py ``hold``)."""
        self._told = self.memory.reserve.reserved
        state.part("driver").hold(self.held_bytes(), self.cfg["l2_bytes"])

    # ------------------------------------------------------------- the host
    def now(self, cpu: bool = False) -> float:
        """Host seconds since the start (the device's virtual clock, read through it), telling the
        device the host's seconds asleep so far and whether a CPU-time clock is read (``cpu``),
        which stands still while the host sleeps."""
        return float(self.ask({"op": "now", "asleep_s": self.slept_s, "cpu": bool(cpu)}))

    def clock_seed(self) -> int:
        """The number the host's clocks draw their fractions from (the device's ``clock_seed``)."""
        return int(self.ask({"op": "clock_seed"}))

    def sleep(self, seconds: float) -> None:
        """time.sleep: the host's clock moves ``seconds`` while the device runs on (less what
        overlaps launches the seeded device waited for: the device's answer)."""
        self.slept_s += float(self.ask({"op": "sleep", "seconds": float(seconds)}))

    def synchronize(self, stream: int | None = None) -> None:
        """Wait for everything queued on the device (or on one stream)."""
        self.post({"op": "sync", "stream": stream})

    def host_read(self) -> None:
        """A value must reach the host: wait for the current stream."""
        self.post({"op": "host_read", "stream": self.stream})

    # --------------------------------------------------------------- tensors
    def track(self, tensor, new: bool) -> int:
        """Account ``tensor``'s storage (OutOfMemoryError past capacity); its allocation id."""
        return self.memory.alloc_id(tensor)

    def _ranges(self, tensors) -> tuple[list[list[int]], int]:
        """([allocation id, first byte, end byte] of each tensor on the device, the bytes all of
        ``tensors`` move: ``costs.nbytes``), one pass over each tensor's layout."""
        out, moved = [], 0
        for t in tensors:
            start, end, n_bytes = layout(t)
            moved += n_bytes
            if not t.is_meta:
                continue
            aid = self.memory.id_of(t)
            if aid is None:
                aid = self.memory.alloc_id(t)
            out.append([aid, start, end])
        return out, moved

    def launch(self, op: Op) -> None:
        """Queue one kernel on the current stream: the byte ranges it reads and writes, its FLOPs
        (or record it into the CUDA graph being captured)."""
        send = self.post if self.capture is None else self.capture.append
        reads, read_bytes = self._ranges(op.reads)
        writes, write_bytes = self._ranges(op.writes)
        send({"op": "launch", "kind": op.kind, "reads": reads, "writes": writes, "read_bytes": read_bytes,
              "write_bytes": write_bytes, "flops": float(op.flops), "dtype": dtype_name(op.dtype),
              "stream": self.stream})

    def transfer(self, kind: str, n_bytes: int) -> None:
        """A host<->device copy ('h2d' or 'd2h') of ``n_bytes``; the host waits for it."""
        self.post({"op": "transfer", "kind": kind, "bytes": int(n_bytes), "stream": self.stream})

    # ------------------------------------------------------ streams, events
    def new_stream(self) -> int:
        """A fresh stream id (torch.cuda.Stream()): a queue of its own, waiting for no other."""
        return next(self._streams)

    def record(self, stream: int | None) -> int:
        """Queue an event on ``stream`` (None: the current one); its id."""
        event = next(self._events)
        self.post({"op": "record", "event": event, "stream": self.stream if stream is None else stream})
        return event

    def event_query(self, event: int) -> bool:
        return bool(self.ask({"op": "query_event", "event": event}))

    def event_synchronize(self, event: int, idle: bool = False) -> None:
        """Wait for ``event``; with ``idle`` the wait is asleep (no CPU time), as a sleep is."""
        if idle:
            self.slept_s += float(self.ask({"op": "event_sync", "event": event}))
        else:
            self.post({"op": "event_sync", "event": event})

    def elapsed_ms(self, start: int, end: int) -> float:
        """Milliseconds between two events; RuntimeError (PyTorch's words) unless both completed."""
        return float(self.ask({"op": "elapsed", "start": start, "end": end}))

    def wait_event(self, stream: int | None, event: int) -> None:
        self.post({"op": "wait_event", "stream": self.stream if stream is None else stream, "event": event})

    def wait_stream(self, stream: int, other: int | None) -> None:
        self.post({"op": "wait_stream", "stream": stream, "other": self.stream if other is None else other})

    def stream_query(self, stream: int | None) -> bool:
        return bool(self.ask({"op": "query_stream", "stream": stream}))
