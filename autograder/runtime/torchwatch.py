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
"""
from __future__ import annotations

import sys
import threading

from shared import thread_start

#: The watches active now, in any thread of the process.
_active: list = []
#: Most distinct calls a watch keeps (a call's record stays small whatever the function does).
MAX_DISTINCT = 2000
#: The relay's class and the watch's, built on first use (torch loads lazily).
_classes: dict = {}


def TorchWatch():
    """A context manager recording the aten ops run inside it, on any thread (``_make_classes``)."""
    install()
    return _make_classes()["watch"]()


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
    """(the op's result, its record key or None): an op made of others reaches a mode whole
    where autograd is off (inference_mode); its parts are recorded one by one instead."""
    from shared.simgpu import dispatch
    if dispatch.is_composite(func):
        with mode:
            out = func.decompose(*args, **kwargs)
        if out is not NotImplemented:
            return out, None
    out = func(*args, **kwargs)
    return out, _key(dispatch.effects(func, args, kwargs, out))


def _key(effects) -> tuple | None:
    """What an op is counted as: its name, its tensor arguments' shapes, dtypes and bytes, the
    bytes it read (its arguments it does not write) and wrote, and its FLOPs; None for a view or
    an allocation (no work)."""
    if effects is None:
        return None
    name, read, written, flops = effects
    tensors = [t for t in read if t.numel() > 1] + written
    return (name, tuple(tuple(t.shape) for t in tensors), tuple(str(t.dtype).removeprefix("torch.") for t in tensors),
            sum(int(t.nbytes) for t in read), sum(int(t.nbytes) for t in written), float(flops))


def _watch_class(TorchDispatchMode):
    """The watch: ``summary()`` lists ``{"op", "shapes", "dtypes", "read_bytes", "written_bytes",
    "flops", "count"}`` per distinct aten op: its name; the shapes and dtypes of the tensors it
    read (one-element scalars left out), then of those it wrote; the bytes it read and wrote; its
    FLOPs by torch's registry (0 for an op not in it); how many times it ran. It lets a CPU check
    see that ``matmul_tflops(96, dtype=torch.float64)`` ran ``mm``s of 2 * 96**3 FLOPs on float64
    96 x 96 matrices, however the Python spelled them."""

    class _Watch(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.counts: dict = {}
            self.owner = threading.get_ident()
            self.lock = threading.Lock()     # relays record from other threads

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False      # torch would import torch._dynamo (seconds) at this mode's first op

        def __enter__(self):
            self.owner = threading.get_ident()
            entered = super().__enter__()
            _active.append(self)
            return entered

        def __exit__(self, *exc):
            if self in _active:
                _active.remove(self)
            return super().__exit__(*exc)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out, key = _dispatch(self, func, args, kwargs or {})
            self.record(key)
            return out

        def record(self, key) -> None:
            if key is None:
                return
            with self.lock:
                if key in self.counts or len(self.counts) < MAX_DISTINCT:
                    self.counts[key] = self.counts.get(key, 0) + 1

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
            out, key = _dispatch(self, func, args, kwargs or {})
            here = threading.get_ident()
            for watch in tuple(_active):
                if watch.owner != here:
                    watch.record(key)
            return out

    return _Relay
