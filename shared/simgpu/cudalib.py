"""The rest of torch.cuda a program may call on the simulated device: its random number
generator, NVTX ranges, torch.compile, and what the CUDA software stack reports.

A CPU build of torch has none of them working: ``torch.cuda.manual_seed`` asks the CUDA runtime
for the current device, NVTX is not linked, and torch.compile would generate GPU kernels. Each
answers here as a CUDA build does (patches.py installs them with the other dispatchers):

- the generator: one per device, seeded with CUDA's default seed until a program seeds it; its
  state is CUDA's 16 bytes (seed and Philox offset, little-endian), which ``get_rng_state`` and
  ``set_rng_state`` (and so ``torch.random.fork_rng``) exchange;
- NVTX: ``range_push`` and ``range_pop`` return the nesting depth, ``range_start`` an id, as
  torch's bindings of the NVTX library do;
- torch.compile: while a device is active the function runs eagerly, op by op, on the device.
  The kernels a compiler would fuse are the same copies and matmuls this lesson times; its
  one-time compilation falls in a warm-up;
- the stack: cuDNN is there (``torch.backends.cudnn.is_available`` and ``version``) and the
  driver reports its CUDA version (``torch._C._cuda_getDriverVersion``), as on a GPU machine with
  PyTorch's CUDA wheels (shared/data/simgpu.yml, ``software``).
"""
from __future__ import annotations

import functools
import random

import torch

from shared.simgpu import profile, state

#: The seed of a CUDA generator nobody seeded (c10's default_rng_seed_val).
DEFAULT_SEED = 67280421310721
_MASK = 2**64 - 1


def _rng(dev) -> dict:
    found = getattr(dev, "rng", None)
    if found is None:
        found = dev.rng = {"seed": DEFAULT_SEED, "offset": 0}
    return found


def _manual_seed(dev, seed, *_args, **_kwargs):
    _rng(dev).update(seed=int(seed) & _MASK, offset=0)


def _seed(dev, *_args, **_kwargs):
    _manual_seed(dev, random.SystemRandom().getrandbits(64))


def _initial_seed(dev, *_args, **_kwargs) -> int:
    return _rng(dev)["seed"]


def _get_state(dev, *_args, **_kwargs) -> torch.Tensor:
    rng = _rng(dev)
    data = rng["seed"].to_bytes(8, "little") + rng["offset"].to_bytes(8, "little")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def _set_state(dev, new_state, *_args, **_kwargs) -> None:
    data = bytes(torch.as_tensor(new_state, dtype=torch.uint8).tolist())
    if len(data) != 16:
        raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {len(data)}")
    _rng(dev).update(seed=int.from_bytes(data[:8], "little"), offset=int.from_bytes(data[8:], "little"))


def _set_states(dev, new_states, *_args, **_kwargs) -> None:
    for new_state in new_states:
        _set_state(dev, new_state)


RANDOM = {
    "manual_seed": _manual_seed, "manual_seed_all": _manual_seed, "seed": _seed, "seed_all": _seed,
    "initial_seed": _initial_seed, "get_rng_state": _get_state, "set_rng_state": _set_state,
    "get_rng_state_all": lambda dev, *_a, **_k: [_get_state(dev)],
    "set_rng_state_all": _set_states,
}


def _nvtx_depth(dev) -> list:
    found = getattr(dev, "nvtx", None)
    if found is None:
        found = dev.nvtx = [0, 0]      # nesting depth, ranges started
    return found


def _range_push(dev, *_args, **_kwargs) -> int:
    depth = _nvtx_depth(dev)
    depth[0] += 1
    return depth[0] - 1


def _range_pop(dev, *_args, **_kwargs) -> int:
    depth = _nvtx_depth(dev)
    depth[0] = max(depth[0] - 1, -1)
    return depth[0]


def _range_start(dev, *_args, **_kwargs) -> int:
    depth = _nvtx_depth(dev)
    depth[1] += 1
    return depth[1]


NVTX = {"range_push": _range_push, "range_pop": _range_pop, "range_start": _range_start,
        "range_end": lambda dev, *_a, **_k: None, "mark": lambda dev, *_a, **_k: None}


def compile_wrapper(original):
    """torch.compile as installed: while a device is active a compiled function runs eagerly;
    otherwise (and for what it returns then) torch's own compile."""
    def compile_(model=None, **kwargs):
        if model is None:                       # @torch.compile(mode=...): a decorator
            return lambda fn: compile_(fn, **kwargs)
        compiled = []

        @functools.wraps(model)
        def run(*args, **kw):
            if state.current() is not None:
                return model(*args, **kw)
            if not compiled:
                compiled.append(original(model, **kwargs))
            return compiled[0](*args, **kw)

        if isinstance(model, torch.nn.Module):
            return model if state.current() is not None else original(model, **kwargs)
        return run

    compile_.__doc__ = original.__doc__
    compile_.__wrapped__ = original
    return compile_


def software(key: str) -> int:
    """A figure of the CUDA software stack a GPU machine reports (simgpu.yml, ``software``)."""
    return profile.constants()["software"][key]


CUDNN = {"is_available": lambda dev: True, "version": lambda dev: software("cudnn_version")}


def install(patch) -> None:
    """Install the dispatchers; ``patch(owner, attr, sim)`` is patches._patch."""
    for attr, sim in CUDNN.items():
        patch(torch.backends.cudnn, attr, sim)
    patch(torch._C, "_cuda_getDriverVersion", lambda dev: software("driver_api_version"))
    for owner in (torch.cuda, torch.cuda.random):
        for attr, sim in RANDOM.items():
            patch(owner, attr, sim)
    for attr, sim in NVTX.items():
        patch(torch.cuda.nvtx, attr, sim)
