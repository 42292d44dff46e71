"""The objects a law's case is made of: a machine, a model, a decode setting.

Plain frozen dataclasses with units in their field names: the laws' cases in law_cases.json are
decoded into them (cases.py), strategies.py draws them, and the checks build their own bases from
them. Nothing here imports hypothesis, so grading never does.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """A machine: ``bw_gbs`` in GB/s (1e9 bytes/s), ``peak_tflops`` in TFLOP/s (1e12 FLOP/s)."""

    bw_gbs: float
    peak_tflops: float
    name: str = "a made-up device"

    @property
    def ridge(self) -> float:
        """FLOPs per byte where the roofs meet."""
        return self.peak_tflops * 1e12 / (self.bw_gbs * 1e9)


@dataclass(frozen=True)
class ModelShape:
    """A model: ``params_read`` parameters per token, ``bytes_per_weight`` bytes, KV cache shape."""

    params_read: float
    bytes_per_weight: float
    layers: int
    kv_heads: int
    head_dim: int
    bytes_per_value: float
    name: str = "a made-up model"

    @property
    def kv_bytes_per_token(self) -> float:
        """Bytes of K and V per token across all layers."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * self.bytes_per_value


@dataclass(frozen=True)
class DecodeConfig:
    """One decode setting: a GPU, a model, ``batch`` streams, ``context`` tokens each."""

    gpu: GpuSpec
    model: ModelShape
    batch: int
    context: int


#: Every type a case may hold besides tuples, numbers and strings, by the name the table uses.
TYPES: dict[str, type] = {cls.__name__: cls for cls in (GpuSpec, ModelShape, DecodeConfig)}
