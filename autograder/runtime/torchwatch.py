"""The torch calls a student function made, recorded while it runs (``TorchWatch``).

The sandboxed child uses it for a call the grader asks to watch (autograder/runtime/child.py), the
real-GPU tier in its own child (autograder/lessons/why17/realgpu_pair.py). torch is imported on
first use.

torch's function modes are per thread, and a correct function may do its work on a worker thread
it starts and joins, or on a thread pool's worker that an earlier call started. So ``install``
(the child calls it before any student code runs; ``TorchWatch`` calls it too) has every thread
started from then on carry a relay (shared/thread_start.py, the hook the simulated GPU's threads
use): while a watch is active, the relay records the thread's torch calls into it; otherwise it
only passes them on. A watch records what its own thread calls itself, so a thread that runs a
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
    """A context manager recording the torch calls made inside it, on any thread (``_make_classes``)."""
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
    """The TorchFunctionMode classes behind TorchWatch and the relay, built once."""
    if not _classes:
        from torch.overrides import TorchFunctionMode
        _classes.update(watch=_watch_class(TorchFunctionMode), relay=_relay_class(TorchFunctionMode))
    return _classes


def _key(func, args, kwargs, result) -> tuple:
    """What a call is counted as: its name and its tensors' shapes, dtypes and bytes, its result's bytes."""
    import torch
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
    out = result.nbytes if isinstance(result, torch.Tensor) else None
    return (getattr(func, "__name__", str(func)),
            tuple(tuple(t.shape) for t in tensors),
            tuple(str(t.dtype).removeprefix("torch.") for t in tensors),
            tuple(int(t.nbytes) for t in tensors), out)


def _watch_class(TorchFunctionMode):
    """The watch: ``summary()`` lists ``{"op", "shapes", "dtypes", "nbytes", "out_nbytes", "count"}``
    per distinct call: the function's name, the shapes, dtypes and sizes in bytes of its tensor
    arguments, the size of a tensor result, and how many times it was called. It lets a CPU check
    see that ``matmul_tflops(96, dtype=torch.float64)`` multiplied 96 x 96 float64 matrices."""

    class _Watch(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.counts: dict = {}
            self.owner = threading.get_ident()
            self.lock = threading.Lock()     # relays record from other threads

        def __enter__(self):
            self.owner = threading.get_ident()
            entered = super().__enter__()
            _active.append(self)
            return entered

        def __exit__(self, *exc):
            if self in _active:
                _active.remove(self)
            return super().__exit__(*exc)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            self.record(func, args, kwargs, result)
            return result

        def record(self, func, args, kwargs, result) -> None:
            with self.lock:
                if len(self.counts) < MAX_DISTINCT:
                    key = _key(func, args, kwargs, result)
                    self.counts[key] = self.counts.get(key, 0) + 1

        def summary(self) -> list:
            return [{"op": op, "shapes": [list(s) for s in shapes], "dtypes": list(dtypes),
                     "nbytes": list(nbytes), "out_nbytes": out, "count": count}
                    for (op, shapes, dtypes, nbytes, out), count in self.counts.items()]

    return _Watch


def _relay_class(TorchFunctionMode):
    class _Relay(TorchFunctionMode):
        """A worker thread's torch calls, into every active watch of another thread."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            here = threading.get_ident()
            for watch in tuple(_active):
                if watch.owner != here:
                    watch.record(func, args, kwargs, result)
            return result

    return _Relay
