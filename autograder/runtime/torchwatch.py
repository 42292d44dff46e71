"""The torch work a student function did, recorded while it runs (``TorchWatch``).

It records at torch's dispatcher, where every Python spelling of the same work arrives as the
same aten ops (``torch.linalg.multi_dot``, ``torch.chain_matmul`` and ``a @ b`` all reach ``mm``;
``dst[:] = src`` reaches ``copy_``): each op's bytes read and written and its FLOPs, read the way
the simulated GPU costs it (shared/simgpu/dispatch.py: FLOPs from torch's registry, views and
allocations silent, the written arguments from the op's schema).

The sandboxed child uses it for a call the grader asks to watch (autograder/runtime/child.py), the
real-GPU tier in its own child (autograder/lessons/why17/realgpu_pair.py). torch is imported on
first use.

torch's dispatch modes are per thread, and a correct function may do its work on a worker thread
it starts and joins, or on a thread pool's worker that an earlier call started. So ``install``
(the child calls it before any student code runs; ``TorchWatch`` calls it too) has every thread
started from then on carry a relay (shared/thread_start.py, the hook the simulated GPU's threads
use): while a watch is active, the relay records the thread's aten ops into it; otherwise it
only passes them on. A watch records what its own thread runs itself, so a thread that runs a
watch of its own counts nothing twice.

A watch also keeps the call's *trace*: every clock reading the graded code makes during a real-CPU
call (the call's CPU clock, shared/simgpu/hostclock.py, tells them) in order among the ops, so
that a check can judge the work inside a timed region (between the readings that bracket it)
apart from the work around it (autograder/lessons/why17/checks/timed.py). Readings with no op
between them are kept as one run (its first and last reading); each stretch of ops between two
runs keeps how many times each distinct op ran and which bytes the ops that move data wrote
(address ranges, merged).
"""
from __future__ import annotations

import sys
import threading

from shared import thread_start

#: The watches active now, in any thread of the process.
_active: list = []
#: Most distinct calls a watch keeps (a call's record stays small whatever the function does).
MAX_DISTINCT = 2000
#: Most runs of clock readings a trace keeps; later readings are counted as dropped.
MAX_READINGS = 4096
#: Most disjoint address ranges a stretch of the trace keeps (the smallest go first beyond it).
MAX_SPANS = 64
#: The relay's class and the watch's, built on first use (torch loads lazily).
_classes: dict = {}


def TorchWatch(clock=None):
    """A context manager recording the aten ops run inside it, on any thread (``_make_classes``),
    and the readings of ``clock`` (shared/simgpu/hostclock.py's CpuClock of the call, or None)
    among them."""
    install()
    return _make_classes()["watch"](clock)


def install() -> None:
    """Threads started from now on carry the relay into the active watches (idempotent)."""
    thread_start.add(_relay)


def _relay():
    """The relay mode for a thread starting now; None where torch is not loaded (no torch work)."""
    if "torch" not in sys.modules:
        return None
    return _make_classes()["relay"]()


def _make_classes() -> dict:
    """The TorchDispatchMode classes behind TorchWatch and the relay, built once."""
    if not _classes:
        from torch.utils._python_dispatch import TorchDispatchMode
        _classes.update(watch=_watch_class(TorchDispatchMode), relay=_relay_class(TorchDispatchMode))
    return _classes


def _dispatch(mode, func, args, kwargs):
    """(the op's result, (its record key or None, the address ranges it moved data into)): an op
    made of others reaches a mode whole where autograd is off (inference_mode); its parts are
    recorded one by one instead."""
    from shared.simgpu import dispatch
    if dispatch.is_composite(func):
        with mode:
            out = func.decompose(*args, **kwargs)
        if out is not NotImplemented:
            return out, (None, ((), ()))
    out = func(*args, **kwargs)
    effects = dispatch.effects(func, args, kwargs, out)
    return out, (_key(effects), _spans(effects))


def _spans(effects) -> tuple:
    """(the address ranges [start, end) an op that moves data (reads at least the bytes it
    writes, and writes some) wrote, those it read): each tensor's from its address over the
    memory its elements occupy (an expanded tensor's one element, once); ((), ()) for any other
    op or a tensor without an address."""
    if effects is None:
        return (), ()
    _name, read, written, _flops = effects
    wrote = sum(int(t.nbytes) for t in written)
    if not wrote or sum(int(t.nbytes) for t in read) < wrote:
        return (), ()
    return tuple(filter(None, map(_extent, written))), tuple(filter(None, map(_extent, read)))


def _extent(t) -> tuple | None:
    """[start, end) of the memory a tensor's elements occupy, at most its bytes; None without one."""
    try:
        start = int(t.data_ptr())
    except (RuntimeError, NotImplementedError):
        return None
    if not start or not t.numel():
        return None
    from shared.simgpu import costs
    first, last = costs.byte_range(t)
    return start, start + min(int(t.nbytes), last - first)


def _merge(spans: list, new) -> list:
    """``spans`` (sorted, disjoint) with the ranges ``new`` added, overlapping or touching ones
    merged; beyond MAX_SPANS the smallest are dropped."""
    out = []
    for start, end in sorted([*map(tuple, spans), *new]):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    if len(out) > MAX_SPANS:
        out = sorted(sorted(out, key=lambda s: s[0] - s[1])[:MAX_SPANS])
    return out


def _key(effects) -> tuple | None:
    """What an op is counted as: its name, its tensor arguments' shapes, dtypes and bytes, the
    bytes it read (its arguments it does not write) and wrote, and its FLOPs; None for a view or
    an allocation (no work)."""
    if effects is None or any(t.is_meta for t in effects[2]):
        return None                  # a view, an allocation, or work on no memory (meta)
    name, read, written, flops = effects
    tensors = [t for t in read if t.numel() > 1] + written
    return (name, tuple(tuple(t.shape) for t in tensors), tuple(str(t.dtype).removeprefix("torch.") for t in tensors),
            sum(int(t.nbytes) for t in read), sum(int(t.nbytes) for t in written), float(flops))


class _Timeline:
    """A watch's trace: runs of clock readings with no op between them, and the stretches of ops
    before, between and after them. ``lock`` is the watch's: readings come from any thread."""

    def __init__(self, lock):
        self.lock = lock
        self.runs: list = []             # [first, last, how many] of each run of readings
        self.stretches: list = [{}]      # per stretch: {key: count}
        self.spans: list = [([], [])]    # per stretch: the merged address ranges written, read
        self.dropped = 0

    def op(self, key, spans) -> None:
        stretch = self.stretches[-1]
        stretch[key] = stretch.get(key, 0) + 1
        written, read = self.spans[-1]
        self.spans[-1] = (_merge(written, spans[0]), _merge(read, spans[1]))

    def reading(self, seconds: float) -> None:
        """It joins the run before it when no op ran since, else starts a run (and the stretch
        of ops after it); beyond MAX_READINGS runs it is only counted."""
        with self.lock:
            if self.runs and not self.stretches[-1]:
                self.runs[-1][1] = seconds
                self.runs[-1][2] += 1
            elif len(self.runs) >= MAX_READINGS:
                self.dropped += 1
            else:
                self.runs.append([seconds, seconds, 1])
                self.stretches.append({})
                self.spans.append(([], []))

    def as_dict(self, index: dict) -> dict:
        """``readings``, one ``[first, last, how many]`` (seconds) per run of readings with no
        op between; ``stretches``, one more than the runs (before the first, between each two,
        after the last), each a list of ``[index, count]`` (``index``: an op's key -> its place
        in the watch's ``summary()``); ``written``, per stretch the merged address ranges
        ``[start, end)`` its data-moving ops wrote, and ``read`` those they read;
        ``dropped_readings``, readings beyond MAX_READINGS runs (not placed)."""
        return {"readings": [list(run) for run in self.runs],
                "stretches": [[[index[k], c] for k, c in stretch.items()] for stretch in self.stretches],
                "written": [[list(s) for s in written] for written, _read in self.spans],
                "read": [[list(s) for s in read] for _written, read in self.spans],
                "dropped_readings": self.dropped}


def _watch_class(TorchDispatchMode):
    """The watch: ``summary()`` lists ``{"op", "shapes", "dtypes", "read_bytes", "written_bytes",
    "flops", "count"}`` per distinct aten op: its name; the shapes and dtypes of the tensors it
    read (one-element scalars left out), then of those it wrote; the bytes it read and wrote; its
    FLOPs by torch's registry (0 for an op not in it); how many times it ran. It lets a CPU check
    see that ``matmul_tflops(96, dtype=torch.float64)`` ran ``mm``s of 2 * 96**3 FLOPs on float64
    96 x 96 matrices, however the Python spelled them."""

    class _Watch(TorchDispatchMode):
        def __init__(self, clock=None):
            super().__init__()
            self.counts: dict = {}
            self.owner = threading.get_ident()
            self.lock = threading.Lock()     # relays record from other threads
            self.timeline = _Timeline(self.lock)
            self.clock = clock               # the CPU clock whose readings it is told

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False      # torch would import torch._dynamo (seconds) at this mode's first op

        def __enter__(self):
            self.owner = threading.get_ident()
            entered = super().__enter__()
            _active.append(self)
            if self.clock is not None:
                self.clock.readers.append(self.timeline.reading)
            return entered

        def __exit__(self, *exc):
            if self.clock is not None and self.timeline.reading in self.clock.readers:
                self.clock.readers.remove(self.timeline.reading)
            if self in _active:
                _active.remove(self)
            return super().__exit__(*exc)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out, (key, spans) = _dispatch(self, func, args, kwargs or {})
            self.record(key, spans)
            return out

        def record(self, key, spans=((), ())) -> None:
            if key is None:
                return
            with self.lock:
                if key in self.counts or len(self.counts) < MAX_DISTINCT:
                    self.counts[key] = self.counts.get(key, 0) + 1
                    self.timeline.op(key, spans)

        def trace(self) -> dict:
            """The call as the graded code's clock saw it (``_Timeline.as_dict``)."""
            with self.lock:
                return self.timeline.as_dict({key: i for i, key in enumerate(self.counts)})

        def summary(self) -> list:
            return [{"op": op, "shapes": [list(s) for s in shapes], "dtypes": list(dtypes), "read_bytes": read,
                     "written_bytes": written, "flops": flops, "count": count}
                    for (op, shapes, dtypes, read, written, flops), count in self.counts.items()]

    return _Watch


def _relay_class(TorchDispatchMode):
    class _Relay(TorchDispatchMode):
        """A worker thread's aten ops, into every active watch of another thread."""

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not _active:
                return func(*args, **(kwargs or {}))
            out, (key, spans) = _dispatch(self, func, args, kwargs or {})
            here = threading.get_ident()
            for watch in tuple(_active):
                if watch.owner != here:
                    watch.record(key, spans)
            return out

    return _Relay
