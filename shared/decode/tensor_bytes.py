"""Bytes one decode step reads, counted from the tensors a ``Decoder`` allocated.

Independent of the formula in ``shared.decode.bytes``: it walks the decoder's parameters and cache
and adds the bytes of each tensor (or of the slices of it) that a step touches. The two must agree.
Works on a decoder built on the ``meta`` device, which has shapes and dtypes but no memory.
"""
from __future__ import annotations

import torch

from shared.decode.bytes import StepBytes
from shared.decode.model import Decoder


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def resident_bytes(model: Decoder) -> int:
    """Bytes of every parameter the decoder holds (shared tensors counted once)."""
    seen = {id(p): p for p in model.parameters()}
    return sum(_nbytes(p) for p in seen.values())


def cache_bytes(model: Decoder) -> int:
    """Bytes of the preallocated KV cache (K and V, all layers, streams and positions)."""
    return _nbytes(model.cache_k) + _nbytes(model.cache_v)


def step_bytes(model: Decoder, *, positions: int, experts_read: list[float] | None = None) -> StepBytes:
    """Bytes read by one step in which every stream attends to ``positions`` positions.

    ``experts_read``: per MoE layer, the distinct experts the step ran (None: experts_per_token,
    the batch-1 case). The input embedding contributes one row per stream; a tied model's output
    projection is the same table, read whole.
    """
    moe = {id(m): i for i, m in enumerate(model.moe_layers())}
    skip = {id(model.embedding)}
    weights = 0.0
    for module in model.modules():
        if id(module) in moe:
            index = moe[id(module)]
            n = model.cfg.experts_per_token if experts_read is None else experts_read[index]
            weights += _nbytes(module.router)
            for stacked in (module.gate, module.up, module.down):
                weights += n * _nbytes(stacked[0])
                skip.add(id(stacked))
            skip.add(id(module.router))
    for p in model.parameters():  # parameters() yields a shared tensor once
        if id(p) not in skip:
            weights += _nbytes(p)
    weights += _nbytes(model.output_projection) if model.lm_head is None else 0
    row = model.embedding[0]
    embedding_rows = model.batch * _nbytes(row)
    kv = sum(_nbytes(cache[i, :, :, :positions]) for cache in (model.cache_k, model.cache_v)
             for i in range(model.cfg.layers))
    return StepBytes(weights=weights, embedding_rows=embedding_rows, kv_cache=kv)
