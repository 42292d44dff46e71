"""Numeric drills generated from the lesson's formulas, with hardware and models drawn at random
from shared.tables, and the registry of every kind of drill (these and ``shared.quiz.card_drills``).
Each drill carries its answer, unit, worked answer and the section to reread (``shared.quiz.drill``).

Formulas come from one place: ``shared.tables`` (Model.params_read, Model.kv_bytes_per_token,
Device.ridge_flops_per_byte) and ``shared.decode.ceiling``. Each drill also carries the answers of the
classic slips its formula invites (``shared.quiz.slips``), so a wrong answer can be named. Units:
GB = 1e9 bytes, GB/s, TFLOP/s, KiB = 1024 bytes, seconds, tokens/s.
"""
from __future__ import annotations

import random

from shared import tables
from shared.decode import ceiling
from shared.quiz import card_drills, serving_drills
from shared.quiz.drill import Drill, devices, fmt, memory, params_phrase, placement, real_models, sci
from shared.quiz.slips import GIB_PER_GB, GIB_TEXT, Slip, gib_mixups, scaled, unit_slips

#: Weight formats the drills draw from (keys of the tables' formats).
FORMATS = ("bf16", "fp8", "int4", "q4_k_m")


def decode_ceiling(rng: random.Random) -> Drill:
    """Batch-1 tokens/s ceiling: bandwidth / (parameters read x bytes per weight)."""
    m, d, fmt_ = placement(rng, real_models(), devices(), FORMATS)
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
    reread = {"bf16": "One token, one trip through every weight"}.get(
        fmt_.key, "Every way around the wall: quantization")
    if m.active_params is not None:
        reread = "Every way around the wall: mixture of experts"
    bits = fmt_.bits_per_weight
    slips = [
        Slip(f"bits for bytes: {bits:g} bits per weight used as {bits:g} bytes",
             d.bw_gbs * 1e9 / (params * bits)),
        scaled(answer, 1e-9, "bytes for GB: GB/s divided by bytes, not by GB (the 1e9 left out)"),
        scaled(answer, 1e9, "GB for bytes: bytes/s divided by GB (a 1e9 too many)"),
        Slip("bytes per weight left out: parameters divided into GB/s as if each were one byte",
             d.bw_gbs * 1e9 / params),
        *gib_mixups(answer),
    ]
    if m.active_params is not None:
        slips.append(Slip("every parameter counted: a mixture of experts reads only the active ones per token",
                          d.bw_gbs * 1e9 / (m.total_params * fmt_.bytes_per_weight)))
    elif not m.tied:
        other = m.params_read(whole_checkpoint=not whole)
        slips.append(Slip("the input embedding left out, though the question counts the whole checkpoint" if whole
                          else "the input embedding counted, though a token reads one row of it",
                          d.bw_gbs * 1e9 / (other * fmt_.bytes_per_weight)))
    return Drill(
        prompt=(f"{m.name} ({params_phrase(m)}) in {fmt_.key} ({fmt_.bits_per_weight:g} bits per weight) on "
                f"{d.name} ({fmt(d.bw_gbs)} GB/s), batch 1, short context. {counting} "
                f"What is the tokens/s ceiling?"),
        answer=answer, unit="tokens/s",
        worked=(f"{params / 1e9:.4g}B x {fmt_.bytes_per_weight:g} B = {gb:.2f} GB per token; "
                f"{fmt(d.bw_gbs)} GB/s ÷ {gb:.2f} GB = {fmt(answer)} tokens/s"),
        reread=reread, slips=tuple(slips), memory=memory(m, d, fmt_))


def kv_per_token(rng: random.Random) -> Drill:
    """KV cache bytes per token of context: 2 x layers x kv_heads x head_dim x bytes, in KiB."""
    m = rng.choice(real_models())
    bytes_per_value, name = rng.choice(((2, "bf16"), (1, "fp8")))
    n = m.kv_bytes_per_token(bytes_per_value)
    return Drill(
        prompt=(f"{m.name}: {m.layers} layers, {m.kv_heads} key/value heads of {m.head_dim} values, KV cache "
                f"in {name}. How many KiB of KV cache does one token of context take?"),
        answer=n / 1024, unit="KiB",
        worked=(f"2 (K, V) x {m.layers} x {m.kv_heads} x {m.head_dim} x {bytes_per_value} B = {n:,.0f} B "
                f"= {fmt(n / 1024)} KiB"),
        reread="The KV cache is also bytes",
        slips=(scaled(n / 1024, 0.5, "the factor 2 of K and V left out: each token caches a key and a value"),
               *unit_slips(n / 1024, "KiB"),
               scaled(n / 1024, 8, f"bits for bytes: {name} is {8 * bytes_per_value} bits per value, "
                                   f"{bytes_per_value} B")))


def kv_at_context(rng: random.Random) -> Drill:
    """KV cache bytes read per step for ``batch`` streams of ``context`` tokens, in GB."""
    m = rng.choice(real_models())
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
        reread="The KV cache is also bytes",
        slips=(scaled(gb, 0.5, "the factor 2 of K and V left out: each token caches a key and a value"),
               *unit_slips(gb, "GB"),
               scaled(gb, 8, "bits for bytes: bf16 is 2 bytes per value, 16 bits"),
               scaled(gb, 1 / batch, "per-stream given for the total: one stream's cache, not every stream's")))


def ridge_point(rng: random.Random) -> Drill:
    """Ridge point: peak FLOP/s / bandwidth, in FLOPs per byte."""
    d = rng.choice(devices(with_peak=True))
    ridge = d.ridge_flops_per_byte
    return Drill(
        prompt=(f"{d.name}: {fmt(d.peak_bf16_tflops)} TFLOP/s of dense bf16 and {fmt(d.bw_gbs)} GB/s. "
                f"Where is its ridge point, in FLOPs per byte?"),
        answer=ridge, unit="FLOPs/byte",
        worked=f"{fmt(d.peak_bf16_tflops)}e12 FLOP/s ÷ {fmt(d.bw_gbs)}e9 B/s = {fmt(ridge)} FLOPs/byte",
        reread="Arithmetic intensity: work per byte",
        slips=(scaled(ridge, 1e-3, "TFLOP/s divided by GB/s as they stand: 1e12 over 1e9 is a factor 1000"),
               Slip("upside down: bandwidth divided by peak", 1 / ridge)))


def attainable(rng: random.Random) -> Drill:
    """The roofline at one intensity: the lower of the compute roof and bandwidth x intensity."""
    d = rng.choice(devices(with_peak=True))
    intensity = rng.choice((1, 4, 16, 64, 256, 1024))
    slope = d.bw_gbs * intensity / 1000
    answer = min(d.peak_bf16_tflops, slope)
    roof = "the bandwidth slope" if slope < d.peak_bf16_tflops else "the compute roof"
    return Drill(
        prompt=(f"{d.name}: {fmt(d.peak_bf16_tflops)} TFLOP/s of dense bf16 and {fmt(d.bw_gbs)} GB/s. What "
                f"TFLOP/s can a kernel of {intensity} FLOPs per byte attain at best?"),
        answer=answer, unit="TFLOP/s",
        worked=(f"{fmt(d.bw_gbs)} GB/s x {intensity} FLOPs/byte = {fmt(slope)} TFLOP/s against a roof of "
                f"{fmt(d.peak_bf16_tflops)}: the lower one, {roof}, gives {fmt(answer)} TFLOP/s"),
        reread="The roofline",
        slips=(Slip("max instead of min: a kernel gets the lower of its two roofs", max(d.peak_bf16_tflops, slope)),
               Slip("GFLOP/s given for TFLOP/s: GB/s x FLOPs/byte is GFLOP/s, divide by 1000",
                    d.bw_gbs * intensity)))


def batch_total(rng: random.Random) -> Drill:
    """Total tokens/s at a batch: one step reads the weights once plus every stream's KV cache."""
    batch, context = rng.choice((8, 16, 32, 64)), rng.choice((1024, 4096))

    def caches(m: tables.Model) -> float:
        return batch * context * m.kv_bytes_per_token(2)

    m, d, bf16 = placement(rng, [m for m in real_models() if m.active_params is None], devices(with_peak=True),
                           ("bf16",), extra_bytes=caches)
    per_stream, total = ceiling.batch_ceiling(m, 2.0, d, batch=batch, context=context)
    weights = ceiling.weight_bytes(m, 2.0) / 1e9
    kv = batch * context * m.kv_bytes_per_token(2) / 1e9
    flops_s = 2 * m.params_read() * batch / (d.peak_bf16_tflops * 1e12)
    bytes_s = (weights + kv) / d.bw_gbs
    bound = "memory-bound" if bytes_s >= flops_s else "compute-bound"

    def total_if(weights_gb: float, kv_gb: float, compute: bool = True) -> float:
        return batch / max((weights_gb + kv_gb) / d.bw_gbs, flops_s if compute else 0.0)

    slips = (
        Slip("per-stream given for the total: the total is the batch times one stream's speed", per_stream),
        Slip("the weights read once per stream: one read of the weights serves every stream in the step",
             total_if(batch * weights, kv)),
        Slip("the factor 2 of K and V left out: each token caches a key and a value", total_if(weights, kv / 2)),
        Slip("the KV cache left out: every stream reads its own cache each step", total_if(weights, 0.0)),
        Slip("one stream's KV cache counted, not every stream's", total_if(weights, kv / batch)),
        Slip("the compute roof left out: a step takes the longer of its bytes and its FLOPs",
             total_if(weights, kv, compute=False)),
        Slip(f"the bytes in GiB used as GB ({GIB_TEXT}): fewer GB, so the total comes out "
             f"{GIB_PER_GB:.3f}x high while the step is memory-bound",
             total_if(weights / GIB_PER_GB, kv / GIB_PER_GB)),
        Slip(f"the bandwidth in GiB/s used as GB/s ({GIB_TEXT}): the total comes out "
             f"{GIB_PER_GB:.3f}x low while the step is memory-bound",
             total_if(weights * GIB_PER_GB, kv * GIB_PER_GB)),
    )
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
        reread="Every way around the wall: batching", slips=slips, memory=memory(m, d, bf16, extra_bytes=caches(m)))


def prefill_time(rng: random.Random) -> Drill:
    """Ideal prefill seconds: 2 x parameters x prompt tokens / peak FLOP/s."""
    m, d, bf16 = placement(rng, [m for m in real_models() if m.active_params is None], devices(with_peak=True),
                           ("bf16",))
    prompt_tokens = rng.choice((1000, 2000, 8000))
    seconds = ceiling.prefill_seconds(m, prompt_tokens, d)
    return Drill(
        prompt=(f"{m.name} ({fmt(m.total_params / 1e9)}B parameters, bf16) on {d.name} "
                f"({fmt(d.peak_bf16_tflops)} TFLOP/s): how many seconds does an ideal prefill of a "
                f"{prompt_tokens:,}-token prompt take?"),
        answer=seconds, unit="s",
        worked=(f"2 x {fmt(m.total_params / 1e9)}e9 x {prompt_tokens:,} = "
                f"{sci(2 * m.total_params * prompt_tokens)} FLOPs "
                f"÷ {fmt(d.peak_bf16_tflops)}e12 FLOP/s = {fmt(seconds)} s"),
        reread="Prefill is the opposite workload",
        slips=(scaled(seconds, 0.5, "the 2 left out: each parameter does a multiply and an add per token"),
               *unit_slips(seconds, "s"),
               scaled(seconds, 1e12, "the 1e12 of TFLOP/s left out")),
        memory=memory(m, d, bf16))


#: The kinds of drill on the lesson's formulas.
LESSON_KINDS = (decode_ceiling, kv_per_token, ridge_point, batch_total, kv_at_context, prefill_time, attainable)
#: Every kind of drill: the lesson's, then the interview card's (a session shuffles them).
KINDS = LESSON_KINDS + card_drills.KINDS + serving_drills.KINDS


#: Draws a focused re-drill tries per drill before it gives up on a section no drill kind rereads.
FOCUS_TRIES = 400


def make_focused(rng: random.Random, n: int, section: str) -> list[Drill]:
    """Up to ``n`` drills whose section to reread is ``section``, values drawn from ``rng``; fewer
    (none) when the drill kinds rarely (never) reread it."""
    out: list[Drill] = []
    for _ in range(n * FOCUS_TRIES):
        if len(out) == n:
            break
        drill = rng.choice(KINDS)(rng)
        if drill.reread == section:
            out.append(drill)
    return out


def make(rng: random.Random, n: int, weakness=None) -> list[Drill]:
    """``n`` drills: the kinds in a shuffled order (repeating after all have come), values drawn from ``rng``.

    With ``weakness`` (a section title -> a sort key, higher is weaker), one drill of every kind is drawn
    per round of kinds and those whose section to reread is weakest are asked first (ties keep the
    shuffled order)."""
    order = list(KINDS)
    rng.shuffle(order)
    if weakness is None:
        return [order[i % len(order)](rng) for i in range(n)]
    out: list[Drill] = []
    while len(out) < n:
        round_ = sorted((kind(rng) for kind in order), key=lambda d: weakness(d.reread), reverse=True)
        out += round_[:n - len(out)]
    return out
