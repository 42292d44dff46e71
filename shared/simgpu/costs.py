"""What one torch call costs the simulated device: its kind, bytes read and written, FLOPs.

The mode hands over the call's name, its simulated input tensors and its simulated results;
``classify`` says which tensors the kernel reads and writes and how many FLOPs it does. Time
comes later (device.py): max(bytes / bandwidth, FLOPs / peak), the roofline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

#: Calls that only allocate: no kernel runs.
ALLOC_ONLY = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
                        "empty_permuted"})
#: Calls that allocate and fill with a constant or a range.
FILL = frozenset({"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "new_zeros",
                  "new_ones", "new_full", "arange", "linspace", "logspace", "eye", "tensor",
                  "as_tensor", "fill_", "zero_", "fill_diagonal_"})
#: Calls that fill with random numbers.
RANDOM = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
                    "randperm", "normal", "normal_", "uniform_", "random_", "bernoulli_",
                    "exponential_", "cauchy_", "log_normal_", "geometric_"})
#: Calls that copy one tensor into another.
COPY = frozenset({"copy_", "clone", "contiguous", "to", "cuda", "type", "__setitem__",
                  "index_copy_", "copy"})
#: Matrix products: FLOPs = 2 * (elements of the result) * (length of the contracted dim).
MATMUL = frozenset({"matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "__matmul__",
                    "__rmatmul__", "linear", "mv", "addmv", "dot", "vdot", "inner"})
#: Matmul-family calls whose first argument is an added term, not a factor.
ADD_FIRST = frozenset({"addmm", "baddbmm", "addbmm", "addmv"})


@dataclass
class Op:
    """One kernel: ``kind`` (copy, matmul, fill, random, elementwise, reduction), tensors, FLOPs."""

    kind: str
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    flops: float = 0.0
    dtype: torch.dtype | None = None


def nbytes(t: torch.Tensor) -> int:
    """Bytes a kernel touches in ``t``: its elements times their size (views count their part)."""
    return t.numel() * t.element_size()


def byte_range(t: torch.Tensor) -> tuple[int, int]:
    """[first byte, one past the last byte) of ``t`` within its storage: a slice or view covers
    its own part of the allocation, not the whole of it."""
    size = t.element_size()
    start = t.storage_offset() * size
    if t.numel() == 0:
        return start, start
    extent = 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride(), strict=True) if n > 1)
    return start, start + extent * size


def same_data(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` are the same elements of the same storage: a copy between them is
    skipped, as PyTorch's copy_ does (aten/src/ATen/native/Copy.cpp, copy_impl)."""
    return (a.untyped_storage()._cdata == b.untyped_storage()._cdata and a.dtype == b.dtype
            and a.storage_offset() == b.storage_offset() and a.shape == b.shape
            and a.stride() == b.stride())


def classify(name: str, args: tuple, inputs: list, outputs: list, new_outputs: bool) -> Op | None:
    """The kernel behind call ``name``, or None when it launches none (views, metadata, alloc).

    Args:
        name: the torch function's name ('copy_', 'matmul', ...).
        args: its positional arguments (the tensor ``self`` first for methods).
        inputs: the simulated tensors among the arguments, in order.
        outputs: the simulated tensors it returned.
        new_outputs: whether some result lives on storage that did not exist before the call.
    """
    if name in ALLOC_ONLY:
        return None
    in_place = name.endswith("_") and not name.startswith("__") or name == "__setitem__" \
        or (name.startswith("__i") and name.endswith("__"))
    if not outputs and not in_place:
        return None
    if not new_outputs and not in_place:
        return None                                   # a view, or a result that is an input
    dtype = (outputs or inputs)[0].dtype if (outputs or inputs) else None
    if name == "__setitem__":
        dst = args[0][args[1]] if isinstance(args[0], torch.Tensor) else None
        dst = dst if isinstance(dst, torch.Tensor) else args[0]
        value = args[2] if len(args) > 2 else None
        if isinstance(value, torch.Tensor) and any(value is t for t in inputs[1:]):
            return Op("copy", reads=[value], writes=[dst], dtype=dst.dtype)
        return Op("fill", writes=[dst], dtype=dst.dtype)
    if name in FILL or name in RANDOM:
        kind = "fill" if name in FILL else "random"
        return Op(kind, writes=[args[0]] if in_place else outputs, dtype=dtype)
    if name in MATMUL:
        factors = [t for t in args if isinstance(t, torch.Tensor)]
        if name in ADD_FIRST:
            factors = factors[1:]
        k = factors[0].shape[-1] if factors and factors[0].dim() > 0 else 1
        out = outputs[0] if outputs else args[0]
        return Op("matmul", reads=inputs, writes=[out], flops=2.0 * max(out.numel(), 1) * k,
                  dtype=factors[0].dtype if factors else dtype)
    if name == "copy_":
        return Op("copy", reads=inputs[1:2], writes=[args[0]], dtype=args[0].dtype)
    if name in COPY:
        return Op("copy", reads=inputs[:1], writes=outputs[:1], dtype=dtype)
    writes = [args[0]] if in_place else outputs
    elements = max((t.numel() for t in inputs), default=0)
    out_elements = sum(t.numel() for t in writes)
    kind = "reduction" if out_elements < elements else "elementwise"
    return Op(kind, reads=inputs, writes=writes, flops=float(max(elements, out_elements)), dtype=dtype)
