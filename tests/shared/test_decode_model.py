"""The decoder against a plain full-sequence oracle written here: grouped-query attention, RMSNorm,
SwiGLU, rotary embeddings and routing, computed step by step through the KV cache, must give the
logits that a causal forward over the whole sequence gives."""
import math

import pytest
import torch

from shared.decode.config import NORM_EPS, ROPE_THETA, DecoderConfig
from shared.decode.model import Decoder, MixtureOfExperts

DENSE = DecoderConfig(key="t-dense", name="t", hidden=64, layers=2, heads=4, kv_heads=2, head_dim=24,
                      intermediate=96, vocab=50, tied=True)
MOE = DecoderConfig(key="t-moe", name="t", hidden=64, layers=2, heads=6, kv_heads=2, head_dim=16,
                    intermediate=40, vocab=70, tied=False, experts=5, experts_per_token=2, qk_norm=True)


def random_decoder(cfg, *, batch, positions, seed=1):
    model = Decoder(cfg, batch=batch, max_positions=positions, dtype=torch.float32, device=torch.device("cpu"))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            std = 0.3 if name.endswith("norm.weight") else 1 / math.sqrt(p.shape[-1])
            p.copy_((1.0 if name.endswith("norm.weight") else 0.0) + std * torch.randn(p.shape, generator=gen))
    return model


# ---- the oracle: a causal forward over the whole sequence, in float64, no cache -------------------
def rms(x, w):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + NORM_EPS) * w


def rope(x, t):  # x (..., T, heads, D)
    d = x.shape[-1]
    inv = ROPE_THETA ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = t[:, None].double() * inv  # (T, D/2)
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)


def swiglu(h, gate, up, down):
    return (torch.nn.functional.silu(h @ gate.T) * (h @ up.T)) @ down.T


def oracle_logits(model, seq):
    cfg = model.cfg
    P = {n: p.detach().double() for n, p in model.named_parameters()}
    B, T = seq.shape
    x = P["embedding"][seq]
    pos = torch.arange(T)
    for i in range(cfg.layers):
        pre = f"layers.{i}."
        h = rms(x, P[pre + "attn_norm.weight"])
        q = (h @ P[pre + "attn.q"].T).view(B, T, cfg.heads, cfg.head_dim)
        k = (h @ P[pre + "attn.k"].T).view(B, T, cfg.kv_heads, cfg.head_dim)
        v = (h @ P[pre + "attn.v"].T).view(B, T, cfg.kv_heads, cfg.head_dim)
        if cfg.qk_norm:
            q, k = rms(q, P[pre + "attn.q_norm.weight"]), rms(k, P[pre + "attn.k_norm.weight"])
        q, k = rope(q, pos), rope(k, pos)
        k, v = k.repeat_interleave(cfg.group, dim=2), v.repeat_interleave(cfg.group, dim=2)
        scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(cfg.head_dim)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        att = torch.einsum("bhts,bshd->bthd", scores.softmax(-1), v).reshape(B, T, -1)
        x = x + att @ P[pre + "attn.o"].T
        h = rms(x, P[pre + "mlp_norm.weight"])
        if not cfg.is_moe:
            x = x + swiglu(h, P[pre + "mlp.gate"], P[pre + "mlp.up"], P[pre + "mlp.down"])
            continue
        out = torch.zeros_like(h)
        for b in range(B):
            for t in range(T):
                s = h[b, t] @ P[pre + "mlp.router"].T
                top = s.topk(cfg.experts_per_token)
                for w, e in zip(top.values.softmax(-1), top.indices):
                    out[b, t] += w * swiglu(h[b, t], P[pre + "mlp.gate"][e], P[pre + "mlp.up"][e],
                                            P[pre + "mlp.down"][e])
        x = x + out
    head = P["embedding"] if cfg.tied else P["lm_head"]
    return rms(x, P["norm.weight"]) @ head.T


@pytest.mark.parametrize("cfg", [DENSE, MOE], ids=["dense-tied", "moe-qknorm"])
@pytest.mark.parametrize("batch", [1, 3])
def test_cached_decode_matches_the_full_sequence_oracle(cfg, batch):
    steps = 7
    model = random_decoder(cfg, batch=batch, positions=steps)
    seq = torch.randint(0, cfg.vocab, (batch, steps), generator=torch.Generator().manual_seed(5))
    expected = oracle_logits(model, seq)
    with torch.inference_mode():
        for t in range(steps):
            got = model.logits(seq[:, t], t)
            torch.testing.assert_close(got.double(), expected[:, t], rtol=1e-4, atol=1e-4)


def test_the_kv_cache_is_preallocated_and_filled_in_place():
    model = random_decoder(DENSE, batch=2, positions=9)
    assert tuple(model.cache_k.shape) == (DENSE.layers, 2, DENSE.kv_heads, 9, DENSE.head_dim)
    before = (model.cache_k.data_ptr(), model.cache_v.data_ptr())
    tok = torch.tensor([1, 2])
    with torch.inference_mode():
        for t in range(9):
            tok = model.step(tok, t)
        assert tok.shape == (2,) and 0 <= int(tok.min()) and int(tok.max()) < DENSE.vocab
        with pytest.raises(ValueError, match="outside the KV cache"):
            model.step(tok, 9)
    assert (model.cache_k.data_ptr(), model.cache_v.data_ptr()) == before


@pytest.mark.parametrize("batch", [1, 3])
def test_moe_runs_only_the_routed_experts(batch):
    """Every expert no token chose is poisoned with NaN: the output stays finite and right."""
    model = random_decoder(MOE, batch=batch, positions=4)
    moe = model.layers[0].mlp
    assert isinstance(moe, MixtureOfExperts)
    x = torch.randn(batch, MOE.hidden, generator=torch.Generator().manual_seed(2))
    chosen = set((x @ moe.router.T).topk(MOE.experts_per_token, dim=-1).indices.flatten().tolist())
    assert len(chosen) < MOE.experts
    with torch.inference_mode():
        clean = moe(x)
        for e in set(range(MOE.experts)) - chosen:
            for w in (moe.gate, moe.up, moe.down):
                w[e] = float("nan")
        moe.experts_read.clear()
        poisoned = moe(x)
    assert torch.isfinite(poisoned).all()
    torch.testing.assert_close(poisoned, clean)
    assert moe.experts_read == [len(chosen)]
    if batch == 1:
        assert moe.experts_read == [MOE.experts_per_token]


def test_randomize_fills_weights_and_context_with_finite_random_values():
    model = Decoder(DENSE, batch=1, max_positions=8, dtype=torch.bfloat16, device=torch.device("cpu"))
    model.randomize(3, context=5)
    q = model.layers[0].attn.q
    assert torch.isfinite(q).all() and q.float().std() > 0
    assert not torch.equal(model.layers[0].attn.q, model.layers[0].attn.k[: q.shape[0]])
    assert torch.isfinite(model.cache_k[:, :, :, :5]).all() and model.cache_k[:, :, :, :5].float().std() > 0.5
    assert torch.equal(model.layers[1].attn_norm.weight, torch.ones_like(model.layers[1].attn_norm.weight))
