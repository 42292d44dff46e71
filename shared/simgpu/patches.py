"""Dispatchers installed over every clock (clocks.py), torch.cuda.* and torch.accelerator.*.

Each dispatcher asks whether a simulation is active (state.current()): if so it answers from
the simulated device (virtual clock, device properties, synchronize, events); if not it calls
the original, so outside ``active()`` everything behaves exactly as before. ``install()`` must
run before student modules are imported, so that ``from time import perf_counter`` binds the
dispatcher.
"""
from __future__ import annotations

import collections
import contextlib
import time
import timeit

import torch

from shared.simgpu import autocast, clocks, cudalib, events, graphs, libclocks, mode, profiling, state, threads, waits
from shared.simgpu.events import SimEvent, SimStream
from shared.simgpu.properties import _CudaDeviceProperties

_ORIGINALS: dict[tuple[object, str], object] = {}
_MISSING = object()
#: The dispatchers installed (functions and classes): known here, not by a mark on them that a
#: program could read.
_OURS: set = set()


def _patch(owner, attr: str, sim, current=state.current) -> None:
    """Replace ``owner.attr`` with a dispatcher: ``sim(device, *args)`` while ``current()`` gives a
    device, else the original (clocks.py passes its own ``current``: the CPU clock answers too)."""
    original = getattr(owner, attr, _MISSING)
    if _ours(original):
        return
    _ORIGINALS[(owner, attr)] = original

    def dispatch(*args, **kwargs):
        device = current()
        if device is not None:
            return sim(device, *args, **kwargs)
        if original is _MISSING:
            raise AttributeError(f"{getattr(owner, '__name__', owner)} has no attribute {attr!r}")
        return original(*args, **kwargs)

    _OURS.add(dispatch)
    dispatch.__name__ = attr
    dispatch.__qualname__ = getattr(original, "__qualname__", attr)
    home = getattr(original, "__module__", None)      # where torch's own function says it lives
    dispatch.__module__ = home if isinstance(home, str) else getattr(owner, "__name__", None)
    dispatch.__doc__ = getattr(original, "__doc__", None)
    dispatch.__wrapped__ = original
    _disguise(dispatch, original)
    setattr(owner, attr, dispatch)


def _disguise(dispatch, original) -> None:
    """Give ``dispatch`` the code location of ``original`` when that is Python code (torch's own
    functions): inspect.getsourcefile, getsource and a traceback's file then name torch's file,
    as they do on a GPU, not this one. Builtins (time.perf_counter) have no code to copy."""
    code = getattr(original, "__code__", None)
    if code is not None:
        dispatch.__code__ = dispatch.__code__.replace(
            co_filename=code.co_filename, co_name=code.co_name, co_qualname=code.co_qualname,
            co_firstlineno=code.co_firstlineno)


def _patch_class(owner, attr: str, sim) -> None:
    """Replace class ``owner.attr`` with a subclass whose construction dispatches the same way.

    A subclass, not a function, so that code subclassing it (torch._dynamo subclasses
    torch.Event) and isinstance checks keep working.
    """
    original = getattr(owner, attr)
    if _ours(original):
        return
    _ORIGINALS[(owner, attr)] = original

    def __new__(cls, *args, **kwargs):
        device = state.current()
        if device is not None and cls is dispatch:
            return sim(device, *args, **kwargs)
        if cls is dispatch:
            return original(*args, **kwargs)   # not a dispatch instance, so __init__ is not re-run
        return original.__new__(cls, *args, **kwargs)

    dispatch = type(attr, (original,), {"__new__": __new__, "__module__": original.__module__,
                                        "__doc__": original.__doc__})
    _OURS.add(dispatch)
    setattr(owner, attr, dispatch)


def _patch_generator() -> None:
    """torch.Generator(device='cuda') on the simulated device: a host generator that says it is on
    cuda:0 (tensors there hold no values, so nothing is drawn from it on the device)."""
    original = torch.Generator
    if _ours(original):
        return
    _ORIGINALS[(torch, "Generator")] = original

    def __new__(cls, device="cpu"):
        simulated = state.current() is not None and mode.is_cuda_like(device)
        obj = original.__new__(cls, device="cpu" if simulated else device)
        obj._on_device = simulated
        return obj

    def device(self):
        return torch.device("cuda", 0) if getattr(self, "_on_device", False) else original.device.__get__(self)

    torch.Generator = type("Generator", (original,), {
        "__new__": __new__, "device": property(device),
        "__module__": original.__module__, "__doc__": original.__doc__})
    _OURS.add(torch.Generator)


def _patch_storage_device() -> None:
    """A simulated tensor's storage reports cuda:0, as its tensor does (it lives on meta)."""
    original = torch._C.StorageBase.device
    if (torch.UntypedStorage, "device") in _ORIGINALS:
        return
    _ORIGINALS[(torch.UntypedStorage, "device")] = _MISSING

    def device(self):
        found = original.__get__(self)
        return torch.device("cuda", 0) if found.type == "meta" and state.current() is not None else found

    torch.UntypedStorage.device = property(device)


def installed() -> bool:
    """Whether the dispatchers are in place."""
    return _ours(time.perf_counter)


def _ours(thing) -> bool:
    """Whether ``thing`` is one of the dispatchers installed here."""
    try:
        return thing in _OURS
    except TypeError:          # unhashable: not ours
        return False


# -------------------------------------------------------------- the answers
def _sync(dev, *_args, **_kwargs):
    dev.synchronize()


def _mem_get_info(dev, *_args, **_kwargs):
    """(free, total) bytes as the driver counts them: all but what the process holds (its caching
    allocator's reserve and its CUDA context's memory, frontend.py ``held_bytes``)."""
    return max(dev.memory.capacity - dev.held_bytes(), 0), dev.memory.capacity


#: torch.cuda.set_sync_debug_mode's names for its modes.
SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def _set_sync_debug_mode(dev, debug_mode, *_args, **_kwargs):
    """The mode kept for get_sync_debug_mode, as a CUDA build keeps it (the device warns of no sync)."""
    if isinstance(debug_mode, str) and debug_mode not in SYNC_DEBUG_MODES:
        raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
    dev.sync_debug_mode = SYNC_DEBUG_MODES[debug_mode] if isinstance(debug_mode, str) else int(debug_mode)


def _empty_cache(dev, *_args, **_kwargs):
    dev.memory.reserve.empty()
    dev.hold()


def _stats_flat(dev, *_args, **_kwargs):
    """torch.cuda.memory_stats: the nested counters as dotted keys, sorted."""
    flat = []

    def walk(prefix, value):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else key, item)
        else:
            flat.append((prefix, value))
    walk("", dev.memory.reserve.stats())
    return collections.OrderedDict(sorted(flat))


def _reset_peak(dev, *_args, **_kwargs):
    dev.memory.reset_peak()
    dev.post({"op": "reset_peak"})


def _nothing(dev, *_args, **_kwargs):
    return None


def _stream(dev, stream_id=None):
    """A stream object of torch's own class where CUDA is not built (events.install_bases)."""
    return events.make_stream(dev, stream_id) if events.placeholders() else SimStream(dev, stream_id)


def _new_stream(dev, *_args, **_kwargs):
    return _stream(dev)


def _current_stream(dev, *_args, **_kwargs):
    return _stream(dev, dev.stream)


def _default_stream(dev, *_args, **_kwargs):
    return _stream(dev, 0)


def _stream_context(dev, stream=None, *_args, **_kwargs):
    sim = getattr(stream, "_sim", stream)
    return sim if isinstance(sim, SimStream) else contextlib.nullcontext()


def _set_stream(dev, stream=None, *_args, **_kwargs):
    sim = getattr(stream, "_sim", stream)
    if isinstance(sim, SimStream):
        dev.stream = sim.stream_id


def _event(dev, *args, **kwargs):
    kwargs.pop("device", None)
    if events.placeholders():
        return torch.cuda.Event(*args, **kwargs)
    return SimEvent(dev, *args, **kwargs)


def _properties(dev, device=None, *_args, **_kwargs):
    if mode.ordinal(device) not in (None, 0):
        raise AssertionError("Invalid device id")       # torch's own check, one GPU here
    return _CudaDeviceProperties(dev.cfg)


def _capability(props) -> tuple[int, int]:
    return props.major, props.minor


def _set_device(dev, device=None, *_args, **_kwargs):
    mode.check_ordinal(device)


def _null_context(dev, *_args, **_kwargs):
    return contextlib.nullcontext()


CUDA = {
    "is_available": lambda dev: True,
    "is_initialized": lambda dev: True,
    "init": _nothing,
    "device_count": lambda dev: 1,
    "current_device": lambda dev: 0,
    "set_device": _set_device,
    "synchronize": _sync,
    "current_stream": _current_stream,
    "default_stream": _default_stream,
    "stream": _stream_context,
    "set_stream": _set_stream,
    "get_device_name": lambda dev, *a, **k: _properties(dev, *a, **k).name,
    "get_device_properties": _properties,
    "get_device_capability": lambda dev, *a, **k: _capability(_properties(dev, *a, **k)),
    "mem_get_info": _mem_get_info,
    "memory_allocated": lambda dev, *_a, **_k: dev.memory.allocated,
    "max_memory_allocated": lambda dev, *_a, **_k: dev.memory.peak,
    "memory_reserved": lambda dev, *_a, **_k: dev.memory.reserve.reserved,
    "max_memory_reserved": lambda dev, *_a, **_k: dev.memory.reserve.peak,
    "memory_stats": _stats_flat,
    "memory_stats_as_nested_dict": lambda dev, *_a, **_k: dev.memory.reserve.stats(),
    "reset_peak_memory_stats": _reset_peak,
    "reset_max_memory_allocated": _reset_peak,
    "empty_cache": _empty_cache,
    "graph_pool_handle": lambda dev, *_a, **_k: (0, 0),
    "set_sync_debug_mode": _set_sync_debug_mode,
    "get_sync_debug_mode": lambda dev, *_a, **_k: getattr(dev, "sync_debug_mode", 0),
}

ACCELERATOR = {
    "is_available": lambda dev: True,
    "current_accelerator": lambda dev, *_a, **_k: torch.device("cuda"),
    "device_count": lambda dev: 1,
    "synchronize": _sync,
    "current_device_index": lambda dev: 0,
    "current_device_idx": lambda dev: 0,
    "set_device_index": _nothing,
    "set_device_idx": _nothing,
    "current_stream": _current_stream,
    "set_stream": _set_stream,
}


def install() -> None:
    """Put the dispatchers in place (idempotent). Call before importing student modules."""
    if installed():
        return
    clocks.install(_patch)
    waits.install(_patch)
    _disguise(libclocks.lookup, libclocks.ORIGINAL_LOOKUP)
    libclocks.install()
    threads.install()
    for attr, sim in CUDA.items():
        _patch(torch.cuda, attr, sim)
    for attr, sim in ACCELERATOR.items():
        _patch(torch.accelerator, attr, sim)
    _patch_class(torch, "Event", _event)
    _patch(torch.backends.cuda, "is_built", lambda dev: True)
    cudalib.install(_patch)
    _patch(torch, "clear_autocast_cache", autocast.clear)      # an autocast region's end
    if (torch, "compile") not in _ORIGINALS:     # compiled before or while active: both run on it
        _ORIGINALS[(torch, "compile")] = torch.compile
        torch.compile = cudalib.compile_wrapper(torch.compile)
        _disguise(torch.compile, _ORIGINALS[(torch, "compile")])
        _OURS.add(torch.compile)
    graphs.install()
    profiling.install()
    _patch_generator()
    _patch_storage_device()
    _patch(torch._C, "_host_emptyCache", _nothing)          # torch.cuda.graph's entry calls it
    _patch(torch.cuda, "is_current_stream_capturing", graphs.capturing)
    _patch(torch.cuda.graphs, "is_current_stream_capturing", graphs.capturing)
    if not events.install_bases():                  # a build with CUDA: subclasses stand in
        _patch_class(torch.cuda, "Event", _event)
        _patch_class(torch.cuda, "Stream", _new_stream)
    _patch_class(torch.cuda, "device", _null_context)
    torch.cuda.OutOfMemoryError = torch.OutOfMemoryError


def uninstall() -> None:
    """Put every original back (for tests of the dispatchers themselves)."""
    for (owner, attr), original in _ORIGINALS.items():
        if original is _MISSING:
            delattr(owner, attr)
        else:
            setattr(owner, attr, original)
    clocks.uninstall()
    libclocks.uninstall()
    threads.uninstall()
    profiling.uninstall()
    _ORIGINALS.clear()
    timeit.default_timer = time.perf_counter
