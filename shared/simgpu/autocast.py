"""torch.autocast('cuda') on the simulated device.

On a GPU, autocast sits in torch's dispatcher (the AutocastCUDA key): inside a ``torch.autocast``
region, ops on its lower-precision list (matrix products, linear, convolutions) cast their
floating inputs to the region's dtype first. Simulated tensors live on ``meta``, which has no
autocast key, so the simulated dispatcher (dispatch.py) applies the same rule: each such op
casts its inputs through a costed conversion kernel, as the GPU does, then runs in the region's
dtype. As torch does, the cast of a leaf tensor that requires grad (a weight) is made once per
region and reused (its cast cache), until the outermost region ends (torch.clear_autocast_cache).
"""
from __future__ import annotations

import threading

import torch

#: aten ops (their overload packet names) autocast runs in the region's lower-precision dtype on
#: CUDA: PyTorch's "CUDA Ops that can autocast to float16" (docs: Automatic Mixed Precision).
LOWER = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "matmul", "linear",
    "chain_matmul", "linalg_multi_dot", "prelu", "convolution", "_convolution", "conv1d",
    "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell",
})

#: id(leaf tensor) -> (the leaf, its cast), for the current outermost region.
_CACHE: dict[int, tuple] = {}
#: The region's dtype as the torch call now running saw it (None: no region). The dispatcher
#: masks autocast while a Python mode handles an op, so SimMode notes it first (``enter``).
_SEEN = threading.local()


def enter():
    """Note the autocast region of the torch call starting now; returns what to ``leave`` with."""
    before = getattr(_SEEN, "dtype", None)
    _SEEN.dtype = torch.get_autocast_dtype("cuda") if torch.is_autocast_enabled("cuda") else None
    return before


def leave(before) -> None:
    _SEEN.dtype = before


def dtype(name: str):
    """The dtype op ``name`` runs in now: the autocast region's for a listed op inside one, else None."""
    return getattr(_SEEN, "dtype", None) if name in LOWER else None


def cast(mode, args, kwargs, to, is_sim):
    """``args`` and ``kwargs`` with each floating simulated tensor not of dtype ``to`` cast to it
    (costed: the conversion runs under ``mode``), cached casts of weights reused."""
    def one(value):
        if isinstance(value, (list, tuple)):
            return type(value)(one(v) for v in value)
        if not (is_sim(value) and value.is_floating_point() and value.dtype != to):
            return value
        cacheable = value.is_leaf and value.requires_grad and torch.is_autocast_cache_enabled()
        found = _CACHE.get(id(value)) if cacheable else None
        if found is not None and found[0] is value and found[1].dtype == to:
            return found[1]
        with mode:
            out = value.detach().to(to)
        if cacheable:
            _CACHE[id(value)] = (value, out)
        return out

    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def clear(_dev=None, *_args, **_kwargs) -> None:
    """The end of the outermost autocast region: its cached casts are gone."""
    _CACHE.clear()
