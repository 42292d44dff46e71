"""Torch dtypes as plain data: ``Dtype('float32')`` names one without importing torch.

The grader passes ``Dtype`` markers as arguments (``matmul_tflops(96, dtype=Dtype('float64'))``)
and gets them back from student code; only the sandboxed child turns them into torch dtypes
(``to_torch``), importing torch when one is present.
"""
from __future__ import annotations


class Dtype:
    """A torch dtype named without importing torch in the parent (``Dtype('float32')``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Dtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Dtype", self.name))


def to_torch(value):
    """Turn Dtype markers into torch dtypes (torch is imported only when one is present)."""
    if isinstance(value, Dtype):
        import torch
        return getattr(torch, value.name)
    if isinstance(value, list):
        return [to_torch(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_torch(v) for v in value)
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    return value
