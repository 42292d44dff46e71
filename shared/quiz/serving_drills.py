"""Numeric drills for two serving items of the interview card: how many streams' KV caches fit in the
memory the weights leave free, and one user's speed at a given batch.

Models and devices come from ``shared.tables`` (every row with its source), drawn only where the
weights fit with room (``shared.quiz.drill.placement``); the KV cache is bf16 (2 bytes per value).
Units: GB = 1e9 bytes, GB/s, TFLOP/s = 1e12 FLOP/s, tokens/s, streams.
"""
from __future__ import annotations

import math
import random

from shared import tables
from shared.decode import ceiling
from shared.quiz.drill import Drill, devices, fmt, memory, placement, real_models, resident_bytes
from shared.quiz.slips import Slip, gib_mixups

#: Weight formats these drills draw from (keys of the tables' formats).
FORMATS = ("bf16", "fp8", "int4")
#: Bytes per cached key or value (bf16).
KV_BYTES = 2

KV = "The KV cache is also bytes"
BATCHING = "Every way around the wall: batching"


def kv_streams_fit(rng: random.Random) -> Drill:
    """Streams whose KV caches fit in the memory the weights leave: floor((memory - weights) / (context
    x KV bytes per token)), in streams."""
    context = rng.choice((4096, 8192, 32768, 131072))

    def one_stream(m: tables.Model) -> float:
        return context * m.kv_bytes_per_token(KV_BYTES)

    m, d, fmt_ = placement(rng, real_models(), devices(), FORMATS, extra_bytes=one_stream)
    weights = resident_bytes(m, fmt_.bytes_per_weight)
    per_stream = one_stream(m)
    free = d.memory_bytes - weights
    answer = math.floor(free / per_stream)
    return Drill(
        prompt=(f"{m.name} in {fmt_.key} ({fmt(m.total_params / 1e9)}B parameters held in memory) on the {d.name} "
                f"({d.memory_bytes / 1e9:g} GB): {m.layers} layers, {m.kv_heads} KV heads of {m.head_dim}, a bf16 KV "
                f"cache. Every stream holds {context:,} tokens of context. Leaving activations and the runtime "
                f"aside, how many streams' KV caches fit in the memory the weights leave free?"),
        answer=answer, unit="streams",
        worked=(f"weights {fmt(weights / 1e9)} GB of {d.memory_bytes / 1e9:g} GB leave {fmt(free / 1e9)} GB; one "
                f"stream's cache is 2 x {m.layers} x {m.kv_heads} x {m.head_dim} x 2 B x {context:,} = "
                f"{fmt(per_stream / 1e9)} GB; {fmt(free / 1e9)} ÷ {fmt(per_stream / 1e9)} = {free / per_stream:.3g}, "
                f"so {answer:,} whole stream{'' if answer == 1 else 's'}: memory caps the batch long before "
                f"the arithmetic does"),
        reread=KV,
        slips=(Slip("the factor 2 of K and V left out: each token caches a key and a value",
                    math.floor(2 * free / per_stream)),
               Slip("the weights not taken out: their bytes share the device's memory with every cache",
                    math.floor(d.memory_bytes / per_stream)),
               Slip("one token's cache per stream: a stream caches every token of its context",
                    math.floor(free / m.kv_bytes_per_token(KV_BYTES)))),
        memory=memory(m, d, fmt_, extra_bytes=per_stream))


def per_user_at_batch(rng: random.Random) -> Drill:
    """One stream's tokens/s ceiling at a batch: 1 / step time, where a step reads the weights once and
    every stream's KV cache and takes the longer of its bytes and its FLOPs."""
    batch, context = rng.choice((4, 16, 64)), rng.choice((1024, 8192))

    def caches(m: tables.Model) -> float:
        return batch * context * m.kv_bytes_per_token(KV_BYTES)

    m, d, bf16 = placement(rng, [m for m in real_models() if m.active_params is None], devices(with_peak=True),
                           ("bf16",), extra_bytes=caches)
    per_user, total = ceiling.batch_ceiling(m, 2.0, d, batch=batch, context=context)
    weights, kv = m.params_read() * 2 / 1e9, caches(m) / 1e9
    alone, _ = ceiling.batch_ceiling(m, 2.0, d, batch=1, context=context)
    bytes_s, flops_s = (weights + kv) / d.bw_gbs, 2 * m.params_read() * batch / (d.peak_bf16_tflops * 1e12)
    return Drill(
        prompt=(f"{m.name} in bf16 ({fmt(m.params_read() / 1e9)}B parameters read per step, "
                f"{m.kv_bytes_per_token(KV_BYTES):,.0f} B of KV cache per token) on the {d.name} ({fmt(d.bw_gbs)} "
                f"GB/s, {fmt(d.peak_bf16_tflops)} TFLOP/s) serves {batch} users, each at {context:,} tokens of "
                f"context. What tokens/s ceiling does ONE user see?"),
        answer=per_user, unit="tokens/s",
        worked=(f"a step reads {weights:.2f} GB of weights once + {kv:.2f} GB of KV cache for all {batch}: "
                f"{weights + kv:.2f} GB ÷ {fmt(d.bw_gbs)} GB/s = {bytes_s * 1e3:.2f} ms (its FLOPs take "
                f"{flops_s * 1e3:.2f} ms); each user gets one token per step: {fmt(per_user)} tokens/s, against "
                f"{fmt(alone)} alone; the total is {fmt(total)}: batching raises the total, not one user's speed"),
        reread=BATCHING,
        slips=(Slip("the total given for one user: the server's total is the batch times one user's speed", total),
               Slip("one user's speed alone: a batch never makes one user faster", alone),
               Slip("weights re-read per stream: one read of the weights serves every user in the step",
                    1 / max((batch * weights + kv) / d.bw_gbs, flops_s)),
               Slip("the KV cache left out: every user's cache is read each step",
                    1 / max(weights / d.bw_gbs, flops_s)),
               *gib_mixups(per_user)),
        memory=memory(m, d, bf16, extra_bytes=caches(m)))


#: The serving drills (the coverage table in docs/quiz.md names each).
KINDS = (kv_streams_fit, per_user_at_batch)
