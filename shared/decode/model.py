"""A Llama-architecture decoder for timing decode steps, with random weights.

Grouped-query attention, RMSNorm, SwiGLU MLPs, rotary embeddings, a KV cache preallocated for
``max_positions`` positions, and mixture-of-experts layers that run (and so read) only the experts
their tokens were routed to. Weights are random: a step's speed depends on the bytes it reads and
the work it does, never on the values.

Shapes: ``batch`` streams decode in lockstep, one token each per step; hidden states are
(batch, hidden); the cache of one layer is (batch, kv_heads, max_positions, head_dim).
Built on the ``meta`` device it allocates nothing, so the bytes of the largest configs can be
counted without the memory.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from shared.decode.config import NORM_EPS, ROPE_THETA, DecoderConfig

#: Standard deviation of the random weights: small enough that no activation overflows fp16.
INIT_STD = 0.02


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight, computed in fp32, over the last dimension."""

    def __init__(self, dim: int, *, dtype, device):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype, device=device), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)
        return xf.to(x.dtype) * self.weight


def _weight(*shape, dtype, device) -> nn.Parameter:
    return nn.Parameter(torch.empty(*shape, dtype=dtype, device=device), requires_grad=False)


#: Random values tiled into every weight (a prime, so rows of different tensors start apart).
POOL = 1_048_573


def _tile(t: torch.Tensor, pool: torch.Tensor, *, offset: int) -> None:
    """Fill ``t`` with consecutive windows of ``pool`` (length 2 x POOL), starting at ``offset``."""
    flat = t.view(-1) if t.is_contiguous() else None
    if flat is None:  # a slice of the cache: fill through a contiguous copy
        tmp = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        _tile(tmp, pool, offset=offset)
        t.copy_(tmp)
        return
    start, off = 0, offset % POOL
    while start < flat.numel():
        n = min(POOL, flat.numel() - start)
        flat[start:start + n].copy_(pool[off:off + n])
        start, off = start + n, (off + n) % POOL


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of ``x`` (..., head_dim) by the angles of one position (half-split layout)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Attention(nn.Module):
    """Grouped-query attention over a preallocated KV cache; one new position per step."""

    def __init__(self, cfg: DecoderConfig, *, dtype, device):
        super().__init__()
        self.cfg = cfg
        self.q = _weight(cfg.heads * cfg.head_dim, cfg.hidden, dtype=dtype, device=device)
        self.k = _weight(cfg.kv_heads * cfg.head_dim, cfg.hidden, dtype=dtype, device=device)
        self.v = _weight(cfg.kv_heads * cfg.head_dim, cfg.hidden, dtype=dtype, device=device)
        self.o = _weight(cfg.hidden, cfg.heads * cfg.head_dim, dtype=dtype, device=device)
        self.q_norm = RMSNorm(cfg.head_dim, dtype=dtype, device=device) if cfg.qk_norm else None
        self.k_norm = RMSNorm(cfg.head_dim, dtype=dtype, device=device) if cfg.qk_norm else None

    def forward(self, x, pos: int, cos, sin, cache_k, cache_v):
        """x (batch, hidden) at position ``pos``; writes K/V at ``pos``, attends to 0..pos."""
        cfg, batch = self.cfg, x.shape[0]
        q = F.linear(x, self.q).view(batch, cfg.heads, cfg.head_dim)
        k = F.linear(x, self.k).view(batch, cfg.kv_heads, cfg.head_dim)
        v = F.linear(x, self.v).view(batch, cfg.kv_heads, cfg.head_dim)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        cache_k[:, :, pos] = k
        cache_v[:, :, pos] = v
        keys, values = cache_k[:, :, :pos + 1], cache_v[:, :, :pos + 1]
        # The `group` query heads that share a K/V head become that head's queries: no K/V copy.
        q = q.view(batch, cfg.kv_heads, cfg.group, cfg.head_dim)
        out = F.scaled_dot_product_attention(q, keys, values)
        return F.linear(out.reshape(batch, cfg.heads * cfg.head_dim), self.o)


class SwiGLU(nn.Module):
    """down(silu(gate x) * up x): the dense MLP."""

    def __init__(self, cfg: DecoderConfig, *, dtype, device):
        super().__init__()
        self.gate = _weight(cfg.intermediate, cfg.hidden, dtype=dtype, device=device)
        self.up = _weight(cfg.intermediate, cfg.hidden, dtype=dtype, device=device)
        self.down = _weight(cfg.hidden, cfg.intermediate, dtype=dtype, device=device)

    def forward(self, x):
        return F.linear(F.silu(F.linear(x, self.gate)) * F.linear(x, self.up), self.down)


class MixtureOfExperts(nn.Module):
    """A router and ``experts`` SwiGLU experts stored as stacked tensors; each token goes to its
    ``experts_per_token`` highest-scoring experts, weighted by a softmax over their scores.

    A step runs each distinct expert chosen by any of its tokens once, on those tokens only, so it
    reads exactly the union of the chosen experts: ``experts_per_token`` experts at batch 1, at most
    min(experts, batch x experts_per_token) at larger batch. ``experts_read`` records that union
    size for every call, the bytes actually read. Reading the chosen indices on the host costs one
    device synchronization per layer on a GPU (a fused grouped-GEMM kernel would avoid it).
    """

    def __init__(self, cfg: DecoderConfig, *, dtype, device):
        super().__init__()
        self.cfg = cfg
        self.router = _weight(cfg.experts, cfg.hidden, dtype=dtype, device=device)
        self.gate = _weight(cfg.experts, cfg.intermediate, cfg.hidden, dtype=dtype, device=device)
        self.up = _weight(cfg.experts, cfg.intermediate, cfg.hidden, dtype=dtype, device=device)
        self.down = _weight(cfg.experts, cfg.hidden, cfg.intermediate, dtype=dtype, device=device)
        self.experts_read: list[int] = []

    def forward(self, x):
        scores = F.linear(x, self.router).float()
        top, chosen = torch.topk(scores, self.cfg.experts_per_token, dim=-1)
        weights = top.softmax(dim=-1).to(x.dtype)
        out = torch.zeros_like(x)
        if x.shape[0] == 1:
            experts = chosen[0].tolist()
            for slot, e in enumerate(experts):
                out += weights[0, slot] * self._expert(x, e)
        else:
            experts = torch.unique(chosen).tolist()
            for e in experts:
                rows, slot = (chosen == e).nonzero(as_tuple=True)
                y = self._expert(x[rows], e) * weights[rows, slot].unsqueeze(-1)
                out.index_add_(0, rows, y)
        self.experts_read.append(len(experts))
        return out

    def _expert(self, x, e: int):
        return F.linear(F.silu(F.linear(x, self.gate[e])) * F.linear(x, self.up[e]), self.down[e])


class Layer(nn.Module):
    """Pre-norm transformer block: x + attn(norm x), then h + mlp(norm h)."""

    def __init__(self, cfg: DecoderConfig, *, dtype, device):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.hidden, dtype=dtype, device=device)
        self.attn = Attention(cfg, dtype=dtype, device=device)
        self.mlp_norm = RMSNorm(cfg.hidden, dtype=dtype, device=device)
        mlp = MixtureOfExperts if cfg.is_moe else SwiGLU
        self.mlp = mlp(cfg, dtype=dtype, device=device)

    def forward(self, x, pos, cos, sin, cache_k, cache_v):
        h = x + self.attn(self.attn_norm(x), pos, cos, sin, cache_k, cache_v)
        return h + self.mlp(self.mlp_norm(h))


class Decoder(nn.Module):
    """The whole decoder with its KV cache: ``step(tokens, pos)`` returns the next tokens (greedy).

    Args:
        cfg: the model's shape.
        batch: streams decoded together.
        max_positions: KV cache length per stream (context + tokens to generate).
        dtype: weights, activations and cache (torch.bfloat16, float16 or float32).
        device: where everything lives; ``torch.device('meta')`` allocates nothing.
    """

    def __init__(self, cfg: DecoderConfig, *, batch: int, max_positions: int, dtype, device):
        super().__init__()
        self.cfg, self.batch, self.max_positions = cfg, batch, max_positions
        self.embedding = _weight(cfg.vocab, cfg.hidden, dtype=dtype, device=device)
        self.layers = nn.ModuleList(Layer(cfg, dtype=dtype, device=device) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden, dtype=dtype, device=device)
        self.lm_head = None if cfg.tied else _weight(cfg.vocab, cfg.hidden, dtype=dtype, device=device)
        shape = (cfg.layers, batch, cfg.kv_heads, max_positions, cfg.head_dim)
        self.cache_k = torch.empty(shape, dtype=dtype, device=device)
        self.cache_v = torch.empty(shape, dtype=dtype, device=device)
        inv_freq = ROPE_THETA ** (-torch.arange(0, cfg.head_dim, 2, dtype=torch.float32) / cfg.head_dim)
        self.inv_freq = inv_freq.to(device)

    @property
    def output_projection(self) -> torch.Tensor:
        """The (vocab, hidden) matrix the logits come from: the embedding table when tied."""
        return self.embedding if self.lm_head is None else self.lm_head

    def randomize_units(self, context: int = 0) -> int:
        """How many times ``randomize`` calls its ``tick``: once per weight tensor and per cache layer."""
        return len(list(self.parameters())) + (2 * self.cfg.layers if context else 0)

    def randomize(self, seed: int = 0, *, context: int = 0, tick=None) -> None:
        """Fill the weights with random values (std INIT_STD; norms stay 1) and the first ``context``
        cache positions with random K/V (std 1), as if a prompt of ``context`` tokens had been read.

        Drawing a billion normals takes seconds on a CPU, so each tensor is tiled from a pool of
        POOL random values (a prime count) at a different offset: values repeat, speed is the same.
        ``tick`` (optional) is called after each tensor and cache layer (see ``randomize_units``).
        """
        tick = tick or (lambda: None)
        gen = torch.Generator(device="cpu").manual_seed(seed)
        pool = torch.randn(2 * POOL, generator=gen).to(device=self.embedding.device)
        with torch.no_grad():
            for index, (name, p) in enumerate(self.named_parameters()):
                if not name.endswith("norm.weight"):
                    _tile(p, pool * INIT_STD, offset=index * 7919)
                tick()
            if context:
                for cache in (self.cache_k, self.cache_v):
                    for layer in range(self.cfg.layers):
                        _tile(cache[layer, :, :, :context], pool, offset=layer * 104729)
                        tick()

    def moe_layers(self) -> list[MixtureOfExperts]:
        """The mixture-of-experts MLPs, one per layer (empty for a dense model)."""
        return [layer.mlp for layer in self.layers if isinstance(layer.mlp, MixtureOfExperts)]

    def step(self, tokens: torch.Tensor, pos: int) -> torch.Tensor:
        """One decode step: ``tokens`` (batch,) at position ``pos`` -> next tokens (batch,), argmax."""
        return self.logits(tokens, pos).argmax(dim=-1)

    def logits(self, tokens: torch.Tensor, pos: int) -> torch.Tensor:
        """Logits (batch, vocab) of the tokens after ``tokens`` (batch,) at position ``pos``; writes
        their K/V into the cache at ``pos``."""
        if not 0 <= pos < self.max_positions:
            raise ValueError(f"position {pos} is outside the KV cache (0..{self.max_positions - 1})")
        angles = pos * self.inv_freq
        cos, sin = angles.cos().to(self.embedding.dtype), angles.sin().to(self.embedding.dtype)
        x = F.embedding(tokens, self.embedding)
        for i, layer in enumerate(self.layers):
            x = layer(x, pos, cos, sin, self.cache_k[i], self.cache_v[i])
        return F.linear(self.norm(x), self.output_projection)
