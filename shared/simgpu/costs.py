"""One kernel of the simulated device: its kind, the tensors it reads and writes, its FLOPs.

dispatch.py derives it from each aten op; time comes later (device.py): max(bytes / bandwidth,
FLOPs / peak), the roofline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Op:
    """One kernel: ``kind`` (copy, matmul, fill, random, elementwise, reduction), tensors, FLOPs."""

    kind: str
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    flops: float = 0.0
    dtype: torch.dtype | None = None


def layout(t: torch.Tensor) -> tuple[int, int, int]:
    """(first byte, one past the last byte, bytes moved) of ``t``: ``byte_range`` and ``nbytes`` in
    one pass over its shape and strides (a launch asks both of each tensor it reads and writes)."""
    size = t.element_size()
    start = t.storage_offset() * size
    if t.is_contiguous():                   # the usual tensor: its elements, back to back
        moved = t.numel() * size
        return start, start + moved, moved
    distinct = extent = 1
    for n, stride in zip(t.shape, t.stride(), strict=True):
        if stride != 0 or n == 0:
            distinct *= n
        if n > 1:
            extent += (n - 1) * abs(stride)
    if distinct == 0:
        return start, start, 0
    return start, start + extent * size, distinct * size


def nbytes(t: torch.Tensor) -> int:
    """Bytes a kernel moves to or from memory for ``t``: its distinct elements times their size.
    Views count their part; a dimension expanded with stride 0 repeats the same bytes, which the
    caches serve after the first read, so one byte expanded to n counts one byte, not n."""
    return layout(t)[2]


def byte_range(t: torch.Tensor) -> tuple[int, int]:
    """[first byte, one past the last byte) of ``t`` within its storage: a slice or view covers
    its own part of the allocation, not the whole of it (empty for an empty tensor)."""
    start, end, _moved = layout(t)
    return start, end


def same_data(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` are the same elements of the same storage: a copy between them is
    skipped, as PyTorch's copy_ does (aten/src/ATen/native/Copy.cpp, copy_impl)."""
    return (a.untyped_storage()._cdata == b.untyped_storage()._cdata and a.dtype == b.dtype
            and a.storage_offset() == b.storage_offset() and a.shape == b.shape
            and a.stride() == b.stride())
