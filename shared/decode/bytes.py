"""Bytes read per decode step, by formula from the decoder's shape (no torch needed).

One step turns ``batch`` tokens into ``batch`` next tokens. It reads:

- every weight of every layer once (the attention projections, the norms, and the MLP; for a
  mixture of experts the router and only the experts that the step's tokens were routed to);
- the final norm and the whole output projection (for a tied model that is the embedding table);
- one row of the input embedding per token (a lookup, not the whole table);
- every stream's KV cache at the positions it attends to: the cached context plus the new token.

Left out, each below 0.1% of a step for every config in the tables: activations, the new K/V
written into the cache, the logits, the rotary angles.

Units: parameters counted one by one, bytes, ``bytes_per_value`` in bytes (2 for bf16).
Lesson: The Idea (one token, one trip through every weight; The KV cache is also bytes; Every way
around the wall: mixture of experts).
"""
from __future__ import annotations

from dataclasses import dataclass

from shared.decode.config import DecoderConfig

#: Bytes per value of each dtype the benchmark offers (weights, activations and KV cache).
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


def attention_params(cfg: DecoderConfig) -> int:
    """Parameters of one layer's attention: Q, K, V, O projections (+ q/k norms for Qwen3)."""
    q_and_o = 2 * cfg.hidden * cfg.heads * cfg.head_dim
    k_and_v = 2 * cfg.hidden * cfg.kv_heads * cfg.head_dim
    qk_norms = 2 * cfg.head_dim if cfg.qk_norm else 0
    return q_and_o + k_and_v + qk_norms


def expert_params(cfg: DecoderConfig) -> int:
    """Parameters of one SwiGLU MLP (one expert of a mixture): gate, up and down projections."""
    return 3 * cfg.hidden * cfg.intermediate


def layer_params_read(cfg: DecoderConfig, experts_read: float | None = None) -> float:
    """Parameters one layer reads in a step: attention, two norms, router and ``experts_read`` MLPs.

    ``experts_read`` is the number of distinct experts the step's tokens were routed to in this
    layer (None: ``experts_per_token``, what a step at batch 1 reads); ignored for a dense model.
    """
    params = attention_params(cfg) + 2 * cfg.hidden
    if not cfg.is_moe:
        return params + expert_params(cfg)
    if experts_read is None:
        experts_read = cfg.experts_per_token
    if not cfg.experts_per_token <= experts_read <= cfg.experts:
        raise ValueError(f"experts_read must be between {cfg.experts_per_token} and {cfg.experts} "
                         f"for {cfg.key}, got {experts_read}")
    return params + cfg.hidden * cfg.experts + experts_read * expert_params(cfg)


def resident_params(cfg: DecoderConfig) -> int:
    """Every parameter the decoder holds in memory (all experts; the embedding once if tied)."""
    layers = cfg.layers * int(layer_params_read(cfg, cfg.experts))
    tables_ = cfg.vocab * cfg.hidden * (1 if cfg.tied else 2)
    return layers + tables_ + cfg.hidden


def weight_params_read(cfg: DecoderConfig, experts_read: float | None = None) -> float:
    """Parameters streamed by one step, leaving out the embedding rows: every layer, the final
    norm and the output projection. ``experts_read`` as in :func:`layer_params_read`."""
    return cfg.layers * layer_params_read(cfg, experts_read) + cfg.hidden + cfg.vocab * cfg.hidden


def kv_bytes_per_position(cfg: DecoderConfig, bytes_per_value: float) -> float:
    """KV cache bytes per position of one stream: 2 (K, V) x layers x kv_heads x head_dim x bytes."""
    return 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * bytes_per_value


def expected_experts_read(cfg: DecoderConfig, batch: int) -> float:
    """Distinct experts per layer a step reads at ``batch`` if routing were uniform and independent:
    experts x (1 - (1 - experts_per_token / experts) ** batch). Exactly ``experts_per_token`` at batch 1."""
    if not cfg.is_moe:
        raise ValueError(f"{cfg.key} is not a mixture of experts")
    return cfg.experts * (1.0 - (1.0 - cfg.experts_per_token / cfg.experts) ** batch)


@dataclass(frozen=True)
class StepBytes:
    """Bytes one decode step reads, by kind."""

    weights: float         # layers, final norm, output projection (active experts only)
    embedding_rows: float  # one input-embedding row per stream
    kv_cache: float        # every stream's K and V at the positions attended

    @property
    def total(self) -> float:
        """All bytes the step reads."""
        return self.weights + self.embedding_rows + self.kv_cache


def step_bytes(cfg: DecoderConfig, bytes_per_value: float, *, batch: int, positions: int,
               experts_read: float | None = None) -> StepBytes:
    """Bytes read by one step of ``batch`` streams that each attend to ``positions`` positions
    (cached context + the new token), weights and cache both stored at ``bytes_per_value`` bytes."""
    return StepBytes(
        weights=weight_params_read(cfg, experts_read) * bytes_per_value,
        embedding_rows=batch * cfg.hidden * bytes_per_value,
        kv_cache=batch * positions * kv_bytes_per_position(cfg, bytes_per_value),
    )
