"""Numeric drills generated from the lesson's formulas, with hardware and models drawn at random
from shared.tables. Each drill carries its answer, unit, worked answer and the section to reread.

Formulas come from one place: ``shared.tables`` (Model.params_read, Model.kv_bytes_per_token,
Device.ridge_flops_per_byte) and ``shared.decode.ceiling``. Units: GB = 1e9 bytes, GB/s, TFLOP/s,
KiB = 1024 bytes, seconds, tokens/s.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from shared import tables
from shared.decode import ceiling

#: Weight formats the drills draw from (keys of the tables' formats).
FORMATS = ("bf16", "fp8", "int4", "q4_k_m")


@dataclass(frozen=True)
class Drill:
    """One numeric question and its worked answer."""

    prompt: str
    answer: float
    unit: str
    worked: str
    reread: str

    def accepts(self, value: float, tolerance: float) -> bool:
        """True when ``value`` is within ``tolerance`` (relative) of the answer."""
        return abs(value - self.answer) <= tolerance * abs(self.answer)


def fmt(x: float) -> str:
    """A number for people: about four significant figures, thousands separated."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _sci(x: float) -> str:
    """3 significant figures in e-notation without the plus sign: 1.61e13."""
    return f"{x:.3g}".replace("e+", "e")


def _real_models() -> list[tables.Model]:
    return [m for key, m in sorted(tables.models().items()) if "not a real model" not in m.source]


def _devices(*, with_peak: bool = False) -> list[tables.Device]:
    rows = [d for _, d in sorted(tables.devices().items())]
    return [d for d in rows if d.peak_bf16_tflops is not None] if with_peak else rows


def _params_phrase(m: tables.Model) -> str:
    if m.active_params is not None:
        return (f"{fmt(m.total_params / 1e9)}B parameters, {fmt(m.active_params / 1e9)}B of them active per token "
                f"(a mixture of experts)")
    return f"{fmt(m.total_params / 1e9)}B parameters"


def decode_ceiling(rng: random.Random) -> Drill:
    """Batch-1 tokens/s ceiling: bandwidth / (parameters read x bytes per weight)."""
    m, d = rng.choice(_real_models()), rng.choice(_devices())
    fmt_ = tables.weight_format(rng.choice(FORMATS))
    whole = m.tied or rng.random() < 0.5
    params = m.params_read(whole_checkpoint=whole)
    gb = params * fmt_.bytes_per_weight / 1e9
    answer = ceiling.tokens_per_s(d.bw_gbs, gb * 1e9)
    if m.tied:
        counting = "The output projection is the embedding table (tied), so every weight streams."
    elif whole:
        counting = "Count the whole checkpoint."
    else:
        counting = (f"Leave out the input embedding ({fmt(m.embedding_params / 1e9)}B parameters): "
                    "a token reads one row of it.")
    reread = {"bf16": "One token, one trip through every weight"}.get(fmt_.key, "Every way around the wall: quantization")
    if m.active_params is not None:
        reread = "Every way around the wall: mixture of experts"
    return Drill(
        prompt=(f"{m.name} ({_params_phrase(m)}) in {fmt_.key} ({fmt_.bits_per_weight:g} bits per weight) on "
                f"{d.name} ({fmt(d.bw_gbs)} GB/s), batch 1, short context. {counting} "
                f"What is the tokens/s ceiling?"),
        answer=answer, unit="tokens/s",
        worked=(f"{params / 1e9:.4g}B x {fmt_.bytes_per_weight:g} B = {gb:.2f} GB per token; "
                f"{fmt(d.bw_gbs)} GB/s ÷ {gb:.2f} GB = {fmt(answer)} tokens/s"),
        reread=reread)


def kv_per_token(rng: random.Random) -> Drill:
    """KV cache bytes per token of context: 2 x layers x kv_heads x head_dim x bytes, in KiB."""
    m = rng.choice(_real_models())
    bytes_per_value, name = rng.choice(((2, "bf16"), (1, "fp8")))
    n = m.kv_bytes_per_token(bytes_per_value)
    return Drill(
        prompt=(f"{m.name}: {m.layers} layers, {m.kv_heads} key/value heads of {m.head_dim} values, KV cache "
                f"in {name}. How many KiB of KV cache does one token of context take?"),
        answer=n / 1024, unit="KiB",
        worked=(f"2 (K, V) x {m.layers} x {m.kv_heads} x {m.head_dim} x {bytes_per_value} B = {n:,.0f} B "
                f"= {fmt(n / 1024)} KiB"),
        reread="The KV cache is also bytes")


def kv_at_context(rng: random.Random) -> Drill:
    """KV cache bytes read per step for ``batch`` streams of ``context`` tokens, in GB."""
    m = rng.choice(_real_models())
    batch, context = rng.choice((1, 8, 32)), rng.choice((4096, 32768, 131072))
    per = m.kv_bytes_per_token(2)
    gb = batch * context * per / 1e9
    return Drill(
        prompt=(f"{m.name} ({m.layers} layers, {m.kv_heads} KV heads of {m.head_dim}, bf16 cache) serves "
                f"{batch} stream{'s' if batch > 1 else ''} of {context:,} tokens each. How many GB of KV "
                f"cache does one decode step read?"),
        answer=gb, unit="GB",
        worked=(f"2 x {m.layers} x {m.kv_heads} x {m.head_dim} x 2 B = {per:,.0f} B per token; "
                f"{batch} x {context:,} x {per:,.0f} B = {fmt(gb)} GB"),
        reread="The KV cache is also bytes")


def ridge_point(rng: random.Random) -> Drill:
    """Ridge point: peak FLOP/s / bandwidth, in FLOPs per byte."""
    d = rng.choice(_devices(with_peak=True))
    ridge = d.ridge_flops_per_byte
    return Drill(
        prompt=(f"{d.name}: {fmt(d.peak_bf16_tflops)} TFLOP/s of dense bf16 and {fmt(d.bw_gbs)} GB/s. "
                f"Where is its ridge point, in FLOPs per byte?"),
        answer=ridge, unit="FLOPs/byte",
        worked=f"{fmt(d.peak_bf16_tflops)}e12 FLOP/s ÷ {fmt(d.bw_gbs)}e9 B/s = {fmt(ridge)} FLOPs/byte",
        reread="Arithmetic intensity: work per byte")


def batch_total(rng: random.Random) -> Drill:
    """Total tokens/s at a batch: one step reads the weights once plus every stream's KV cache."""
    m = rng.choice([m for m in _real_models() if m.active_params is None])
    d = rng.choice(_devices(with_peak=True))
    batch, context = rng.choice((8, 16, 32, 64)), rng.choice((1024, 4096))
    per_stream, total = ceiling.batch_ceiling(m, 2.0, d, batch=batch, context=context)
    weights = ceiling.weight_bytes(m, 2.0) / 1e9
    kv = batch * context * m.kv_bytes_per_token(2) / 1e9
    flops_s = 2 * m.params_read() * batch / (d.peak_bf16_tflops * 1e12)
    bytes_s = (weights + kv) / d.bw_gbs
    bound = "memory-bound" if bytes_s >= flops_s else "compute-bound"
    return Drill(
        prompt=(f"{m.name} in bf16 ({fmt(m.params_read() / 1e9)}B parameters read per step, "
                f"{m.kv_bytes_per_token(2):,.0f} B of KV cache per token) on {d.name} ({fmt(d.bw_gbs)} GB/s, "
                f"{fmt(d.peak_bf16_tflops)} TFLOP/s): {batch} streams, each at {context:,} tokens of context. "
                f"What is the total tokens/s ceiling?"),
        answer=total, unit="tokens/s",
        worked=(f"a step reads {weights:.2f} GB of weights + {batch} x {context:,} x {m.kv_bytes_per_token(2):,.0f} B "
                f"= {kv:.2f} GB of KV cache: {weights + kv:.2f} GB ÷ {fmt(d.bw_gbs)} GB/s = {bytes_s * 1e3:.2f} ms; "
                f"its 2 x {fmt(m.params_read() / 1e9)}B x {batch} FLOPs take {flops_s * 1e3:.2f} ms ({bound}); "
                f"{batch} tokens per {max(bytes_s, flops_s) * 1e3:.2f} ms = {fmt(total)} tokens/s "
                f"({fmt(per_stream)} per stream)"),
        reread="Every way around the wall: batching")


def prefill_time(rng: random.Random) -> Drill:
    """Ideal prefill seconds: 2 x parameters x prompt tokens / peak FLOP/s."""
    m = rng.choice([m for m in _real_models() if m.active_params is None])
    d = rng.choice(_devices(with_peak=True))
    prompt_tokens = rng.choice((1000, 2000, 8000))
    seconds = ceiling.prefill_seconds(m, prompt_tokens, d)
    return Drill(
        prompt=(f"{m.name} ({fmt(m.total_params / 1e9)}B parameters) on {d.name} "
                f"({fmt(d.peak_bf16_tflops)} TFLOP/s): how many seconds does an ideal prefill of a "
                f"{prompt_tokens:,}-token prompt take?"),
        answer=seconds, unit="s",
        worked=(f"2 x {fmt(m.total_params / 1e9)}e9 x {prompt_tokens:,} = {_sci(2 * m.total_params * prompt_tokens)} FLOPs "
                f"÷ {fmt(d.peak_bf16_tflops)}e12 FLOP/s = {fmt(seconds)} s"),
        reread="Prefill is the opposite workload")


#: Every kind of drill, in the order a session cycles through them.
KINDS = (decode_ceiling, kv_per_token, ridge_point, batch_total, kv_at_context, prefill_time)


def make(rng: random.Random, n: int) -> list[Drill]:
    """``n`` drills: the kinds in a shuffled order (repeating after all have come), values drawn from ``rng``."""
    order = list(KINDS)
    rng.shuffle(order)
    return [order[i % len(order)](rng) for i in range(n)]
