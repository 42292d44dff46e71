"""Hardware and model tables, loaded from ``shared/data/*.yml``; every row carries its source.

Units are in field names: ``bw_gbs`` in GB/s (1e9 bytes/s), ``peak_bf16_tflops`` in TFLOP/s
(1e12 FLOP/s), ``l2_bytes`` and ``memory_bytes`` in bytes, parameter counts in parameters.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from shared import yamlfile

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Device:
    """One hardware profile. ``peak_bf16_tflops`` is None where the part has no BF16."""

    key: str
    name: str
    bw_gbs: float
    l2_bytes: int
    source: str
    peak_bf16_tflops: float | None = None
    memory_bytes: int | None = None
    aliases: tuple[str, ...] = ()
    peak_is_assumption: bool = False
    peak_fp16_tflops: float | None = None
    measured_bw_gbs: float | None = None
    measured_l2_gbs: float | None = None
    measured_bf16_tflops: float | None = None

    @property
    def ridge_flops_per_byte(self) -> float | None:
        """Peak FLOP/s over bandwidth in FLOPs per byte, or None without a BF16 peak."""
        if self.peak_bf16_tflops is None:
            return None
        return self.peak_bf16_tflops * 1e12 / (self.bw_gbs * 1e9)


@dataclass(frozen=True)
class Shape:
    """A decoder's shape, all that allocating its tensors needs (shared/decode builds a model from
    one). Sizes are counts: ``hidden`` values per token vector, ``head_dim`` values per head,
    ``intermediate`` values in one MLP (one expert's MLP for a mixture of experts)."""

    key: str
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    experts: int | None = None
    experts_per_token: int | None = None
    qk_norm: bool = False  # RMSNorm on each query and key head (Qwen3), head_dim weights each

    def __post_init__(self):
        for field in ("hidden", "layers", "heads", "kv_heads", "head_dim", "intermediate", "vocab"):
            value = getattr(self, field)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{self.key}: {field} must be a positive integer, got {value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.key}: heads ({self.heads}) must be a multiple of kv_heads "
                             f"({self.kv_heads}) for grouped-query attention")
        if self.head_dim % 2:
            raise ValueError(f"{self.key}: head_dim must be even for rotary embeddings, got {self.head_dim}")
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError(f"{self.key}: experts and experts_per_token go together")
        if self.is_moe and not 0 < self.experts_per_token <= self.experts:
            raise ValueError(f"{self.key}: experts_per_token must be between 1 and experts "
                             f"({self.experts}), got {self.experts_per_token}")

    @property
    def is_moe(self) -> bool:
        """True for a mixture of experts (each MLP split into ``experts`` routed experts)."""
        return self.experts is not None

    @property
    def group(self) -> int:
        """Query heads that share one key/value head (grouped-query attention)."""
        return self.heads // self.kv_heads


@dataclass(frozen=True, kw_only=True)
class Model(Shape):
    """One model config: its shape and parameter counts (in parameters), with its source."""

    total_params: int
    source: str
    active_params: int | None = None

    @property
    def embedding_params(self) -> int:
        """Parameters of the input embedding table (vocab x hidden)."""
        return self.vocab * self.hidden

    def params_read(self, *, whole_checkpoint: bool = False) -> int:
        """Parameters read per decode token (active experts only for MoE models).

        The input embedding is a one-row lookup, so it is left out unless ``whole_checkpoint``;
        a tied model streams its embedding anyway as the output projection.
        """
        params = self.active_params if self.active_params is not None else self.total_params
        if whole_checkpoint or self.tied:
            return params
        return params - self.embedding_params

    def kv_bytes_per_token(self, bytes_per_value: float = 2.0) -> float:
        """KV cache bytes per token of context: 2 (K, V) x layers x kv_heads x head_dim x bytes."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * bytes_per_value


@dataclass(frozen=True)
class Format:
    """A weight format: average bits per weight over the file."""

    key: str
    bits_per_weight: float
    source: str

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8.0


@dataclass(frozen=True)
class Fraction:
    """A practical fraction of spec bandwidth, with its source."""

    key: str
    low: float
    high: float
    source: str


def _load(name: str) -> dict:
    with open(DATA / name, encoding="utf-8") as fh:
        return yamlfile.safe_load(fh)


@functools.cache
def devices() -> dict[str, Device]:
    """All hardware profiles by key."""
    rows = _load("hardware.yml")["devices"]
    return {key: Device(key=key, **{k: (tuple(v) if k == "aliases" else v) for k, v in row.items()})
            for key, row in rows.items()}


@functools.cache
def fractions() -> dict[str, Fraction]:
    """Practical fractions of spec bandwidth by key."""
    return {key: Fraction(key=key, **row) for key, row in _load("hardware.yml")["fractions"].items()}


@functools.cache
def models() -> dict[str, Model]:
    """All model configs by key."""
    return {key: Model(key=key, **row) for key, row in _load("models.yml")["models"].items()}


@functools.cache
def formats() -> dict[str, Format]:
    """Weight formats by key."""
    return {key: Format(key=key, **row) for key, row in _load("models.yml")["formats"].items()}


def _lookup(table: dict, name: str, what: str):
    wanted = name.strip().lower()
    for key, row in table.items():
        if wanted == key or wanted in getattr(row, "aliases", ()):
            return row
    known = ", ".join(sorted(table))
    raise KeyError(f"unknown {what} {name!r}; known: {known}")


def device(name: str) -> Device:
    """The hardware profile named ``name`` (a key or an alias such as 'h100' or 'spark')."""
    return _lookup(devices(), name, "device")


#: A model word of a hardware row's name: letters then digits ('h100', 't4', 'gb10') or four digits ('4090').
_MODEL_WORD = re.compile(r"[a-z]+\d+[a-z]*|\d{4}")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def device_for_gpu_name(gpu_name: str) -> Device | None:
    """The hardware row of a GPU by the name torch reports (``torch.cuda.get_device_name``), or None.

    'NVIDIA H100 80GB HBM3' -> h100-sxm, 'NVIDIA A100-SXM4-80GB' -> a100-80gb, 'Tesla T4' -> t4.
    A row matches when every model word of its name ('h100', 'gb10', '4090') is a whole word of
    ``gpu_name`` (so 'NVIDIA L40S' is not an L4, nor 'NVIDIA GH200' an H200); among several, the
    one sharing most of its name's words with ``gpu_name``; ties go to the table's order.
    """
    words = set(_words(gpu_name))
    best, best_score = None, -1
    for dev in devices().values():
        name_words = _words(dev.name)
        models = [w for w in name_words if _MODEL_WORD.fullmatch(w)]
        if not models or not all(m in words for m in models):
            continue
        score = sum(w in words for w in name_words)
        if score > best_score:
            best, best_score = dev, score
    return best


def model(name: str) -> Model:
    """The model config named ``name`` (a key such as 'llama-3.1-8b')."""
    return _lookup(models(), name, "model")


def weight_format(name: str) -> Format:
    """The weight format named ``name`` (bf16, fp8, int4, q4_k_m, ...)."""
    return _lookup(formats(), name, "format")
