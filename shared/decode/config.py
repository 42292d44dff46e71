"""The decoder's shape, built from a model row of ``shared.tables``.

Sizes are counts: ``hidden`` values per token vector, ``head_dim`` values per head,
``intermediate`` values in one MLP (one expert's MLP for a mixture of experts).
"""
from __future__ import annotations

from dataclasses import dataclass

from shared import tables

#: Rotary base. It changes the angles, never the bytes or the time of a step
#: (Llama 3 configs use 500000, Mixtral and Qwen3 1e6), so one value serves every config.
ROPE_THETA = 500_000.0

#: RMSNorm epsilon (1e-5 in Llama 3's config.json); it changes no byte and no timing.
NORM_EPS = 1e-5


@dataclass(frozen=True)
class DecoderConfig:
    """Everything the decoder needs to allocate its tensors."""

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
    qk_norm: bool = False

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


def from_table(name: str) -> DecoderConfig:
    """The decoder config of the model ``name`` in ``shared/data/models.yml`` (KeyError if unknown)."""
    row = tables.model(name)
    return from_model(row)


def from_model(row: tables.Model) -> DecoderConfig:
    """The decoder config of one ``tables.Model`` row."""
    return DecoderConfig(
        key=row.key, name=row.name, hidden=row.hidden, layers=row.layers, heads=row.heads,
        kv_heads=row.kv_heads, head_dim=row.head_dim, intermediate=row.intermediate,
        vocab=row.vocab, tied=row.tied, experts=row.experts,
        experts_per_token=row.experts_per_token, qk_norm=row.qk_norm)


def all_configs() -> dict[str, DecoderConfig]:
    """Every model in the tables, 'tiny' included, by key."""
    return {key: from_model(row) for key, row in tables.models().items()}
