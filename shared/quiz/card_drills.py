"""Numeric drills for the interview card's items that the lesson's formulas alone do not drill: the
card's own worked numbers, work per byte and the batch that reaches the ridge, one request split
across devices, a bigger chip on the same memory, the fraction of peak a decode uses, serving
economics, time per token, measured bandwidth, and a mixture of experts at large batch.

Hardware and models come from ``shared.tables`` (every row with its source), the experts a batch
reads from ``shared.decode.bytes``, the card's example from shared/data/quiz.yml (``card_example``,
with its source). What a question supposes rather than looks up (a chip with k times the FLOP/s, a
price ratio, a target speed) is said to be supposed in its prompt.
Units: GB = 1e9 bytes, GB/s, TFLOP/s = 1e12 FLOP/s, FLOPs/byte, tokens/s, ms, %, x (a ratio),
streams.
"""
from __future__ import annotations

import random

from shared import tables
from shared.decode import bytes as step_bytes
from shared.decode import config
from shared.quiz import bank
from shared.quiz.drill import Drill, devices, fmt, memory, placement, real_models
from shared.quiz.slips import Slip, gib_mixups, scaled, unit_slips

#: Weight formats these drills draw from (keys of the tables' formats).
FORMATS = ("bf16", "fp8", "int4")

ONE_TRIP = "One token, one trip through every weight"
INTENSITY = "Arithmetic intensity: work per byte"
ROOFLINE = "The roofline"
MOE = "Every way around the wall: mixture of experts"
BATCHING = "Every way around the wall: batching"
MEMORY = "Every way around the wall: faster memory"


def _weights(m: tables.Model, fmt_: tables.Format) -> tuple[float, float]:
    """(parameters, GB) one decode token reads: the input embedding left out (a tied model streams it
    anyway as its output projection), active experts only for a mixture of experts."""
    params = m.params_read()
    return params, params * fmt_.bytes_per_weight / 1e9


def _model_phrase(m: tables.Model, fmt_: tables.Format) -> str:
    params, gb = _weights(m, fmt_)
    return (f"{m.name} in {fmt_.key} ({fmt(params / 1e9)}B parameters read per token at "
            f"{fmt_.bits_per_weight:g} bits: {gb:.2f} GB)")


def _bytes(n: float) -> str:
    """ "1 byte", "2 bytes", "0.5 bytes"."""
    return f"{n:g} byte" + ("" if n == 1 else "s")


def _bits_for_bytes(answer: float, fmt_: tables.Format, *, per_token_time: bool = False) -> Slip:
    """The slip of bits used as bytes per weight: bytes per token 8x too many."""
    factor = 8.0 if per_token_time else 1 / 8.0
    return scaled(answer, factor, f"bits for bytes: {fmt_.bits_per_weight:g} bits per weight used as "
                                  f"{fmt_.bits_per_weight:g} bytes")


def card_ceiling(rng: random.Random) -> Drill:
    """The card's batch-1 example: bandwidth / (parameters x bytes per weight), in tokens/s."""
    ex = bank.load().card_example
    answer = ex.bw_gbs / ex.gb_per_token
    byte = ex.bits_per_weight / 8
    return Drill(
        prompt=(f"The interview card's worked example: a dense model of {ex.params_read / 1e9:g}B parameters "
                f"with {ex.bits_per_weight:g}-bit weights, on a device with about {ex.bw_gbs / 1000:g} TB/s of "
                f"memory bandwidth, one request (batch 1). What is the tokens/s ceiling?"),
        answer=answer, unit="tokens/s",
        worked=(f"{ex.params_read / 1e9:g}B x {byte:g} B = {ex.gb_per_token:g} GB per token; "
                f"{fmt(ex.bw_gbs)} GB/s ÷ {ex.gb_per_token:g} GB = {fmt(answer)} tokens/s, an upper bound: the "
                f"KV cache is read too, and no kernel reaches the full bandwidth"),
        reread=ONE_TRIP,
        slips=(scaled(answer, 1 / ex.bits_per_weight, f"bits for bytes: {ex.bits_per_weight:g} bits per weight "
                                                      f"used as {ex.bits_per_weight:g} bytes"),
               scaled(answer, byte / 2, "16-bit weights assumed: these are "
                                        f"{ex.bits_per_weight:g}-bit, {byte:g} byte each"),
               scaled(answer, 1e-3, "TB/s used as GB/s: 1 TB/s is 1,000 GB/s"),
               *gib_mixups(answer)))


def card_batch(rng: random.Random) -> Drill:
    """The card's batch example: the batch x the batch-1 ceiling, an upper bound on total tokens/s."""
    ex = bank.load().card_example
    single = ex.bw_gbs / ex.gb_per_token
    answer = ex.batch * single
    return Drill(
        prompt=(f"The interview card's example again: {ex.params_read / 1e9:g}B parameters at "
                f"{ex.bits_per_weight:g} bits on about {ex.bw_gbs / 1000:g} TB/s, but now {ex.batch} sequences share "
                f"each read of the weights. Leaving out the KV cache and the compute roof, what is the upper "
                f"bound on the total tokens/s?"),
        answer=answer, unit="tokens/s",
        worked=(f"one step reads the {ex.gb_per_token:g} GB of weights once for all {ex.batch}: "
                f"{fmt(ex.bw_gbs)} GB/s ÷ {ex.gb_per_token:g} GB = {fmt(single)} steps/s x {ex.batch} tokens "
                f"per step = {fmt(answer)} tokens/s in total, each stream still at most {fmt(single)}; an upper "
                f"bound, since every stream's KV cache is read too and a large batch turns compute-bound"),
        reread=BATCHING,
        slips=(Slip("per-stream given for the total: the total is the batch times one stream's speed", single),
               scaled(answer, 1 / ex.batch ** 2, "divided by the batch instead of multiplied: a shared read "
                                                  "makes more tokens, not fewer"),
               scaled(answer, 1 / ex.bits_per_weight, f"bits for bytes: {ex.bits_per_weight:g} bits per weight "
                                                      f"used as {ex.bits_per_weight:g} bytes"),
               *gib_mixups(answer)))


def intensity(rng: random.Random) -> Drill:
    """Decode's arithmetic intensity on the weights: 2 FLOPs x batch / bytes per weight, in FLOPs/byte."""
    fmt_ = tables.weight_format(rng.choice(FORMATS))
    batch = rng.choice((1, 1, 4, 16, 64))
    bpw = fmt_.bytes_per_weight
    answer = 2 * batch / bpw
    streams = "its one stream" if batch == 1 else f"each of the {batch} streams"
    slips = [scaled(answer, 0.5, "the multiply-add counted as one FLOP: it is two"),
             scaled(answer, bpw / fmt_.bits_per_weight, f"bits for bytes: {fmt_.bits_per_weight:g} bits per weight "
                                                        f"used as {fmt_.bits_per_weight:g} bytes"),
             Slip("upside down: bytes per FLOP, not FLOPs per byte", 1 / answer)]
    if batch > 1:
        slips.append(scaled(answer, 1 / batch, "the batch left out: one weight read serves every stream"))
    return Drill(
        prompt=(f"Decode at batch {batch} with weights in {fmt_.key} ({_bytes(bpw)} each): every weight read from "
                f"memory does a multiply and an add for {streams}. How many FLOPs per byte of weights is that "
                f"(KV cache left out)?"),
        answer=answer, unit="FLOPs/byte",
        worked=(f"2 FLOPs x {batch} stream{'s' if batch > 1 else ''} ÷ {bpw:g} B per weight = {fmt(answer)} "
                f"FLOPs/byte, {against_ridges(answer)}"),
        reread=INTENSITY, slips=tuple(slips))


def against_ridges(intensity: float) -> str:
    """Where ``intensity`` (FLOPs/byte) sits against the ridge points of the tables' devices, in words
    worked out from those numbers: "12x to 57x below every ridge point in the tables (38-458)"."""
    ridges = sorted((d.ridge_flops_per_byte, d.name) for d in devices(with_peak=True))
    low, high = ridges[0][0], ridges[-1][0]
    span = f"({fmt(low)} to {fmt(high)} FLOPs/byte)"
    if intensity < low:
        return (f"{fmt(low / intensity)}x to {fmt(high / intensity)}x below every ridge point in the tables "
                f"{span}: memory-bound on all of them")
    if intensity >= high:
        return f"at or above every ridge point in the tables {span}: compute-bound on all of them"
    over = [name for ridge, name in ridges if ridge <= intensity]
    return (f"at or above the ridge point of {len(over)} of the {len(ridges)} devices in the tables "
            f"({', '.join(over)}), whose ridges run {fmt(low)} to {fmt(high)} FLOPs/byte: compute-bound "
            f"there, memory-bound on the rest")


def ridge_batch(rng: random.Random) -> Drill:
    """The batch at which decode's intensity reaches the ridge: ridge x bytes per weight / 2, in streams."""
    d = rng.choice(devices(with_peak=True))
    fmt_ = tables.weight_format(rng.choice(FORMATS))
    bpw, ridge = fmt_.bytes_per_weight, d.ridge_flops_per_byte
    answer = ridge * bpw / 2
    return Drill(
        prompt=(f"{d.name}: {fmt(d.peak_bf16_tflops)} TFLOP/s of dense bf16 and {fmt(d.bw_gbs)} GB/s. Weights in "
                f"{fmt_.key} ({_bytes(bpw)} each, the math in bf16), short contexts (KV cache left out): at what "
                f"batch does decode's work per byte reach the ridge point, where the step turns compute-bound?"),
        answer=answer, unit="streams",
        worked=(f"ridge = {fmt(d.peak_bf16_tflops)}e12 FLOP/s ÷ {fmt(d.bw_gbs)}e9 B/s = {fmt(ridge)} FLOPs/byte; at "
                f"batch B decode does 2 x B ÷ {bpw:g} FLOPs/byte; they meet at B = {fmt(ridge)} x {bpw:g} ÷ 2 = "
                f"{fmt(answer)} streams (the KV cache of long contexts stops a batch well before that)"),
        reread=BATCHING,
        slips=(Slip("the ridge point given as the batch: at batch B each weight byte does "
                    f"2 x B ÷ {bpw:g} FLOPs, not B", ridge),
               scaled(answer, 2, "the multiply-add counted as one FLOP: it is two"),
               scaled(answer, 1e-3, "TFLOP/s divided by GB/s as they stand: 1e12 over 1e9 is a factor 1000"),
               scaled(answer, 8, f"bits for bytes: {fmt_.bits_per_weight:g} bits per weight used as "
                                 f"{fmt_.bits_per_weight:g} bytes")))


def split_devices(rng: random.Random) -> Drill:
    """One request split across n devices: layers sliced across them (tensor parallel) add their
    bandwidths; layers handed out in turn (pipeline) do not, at batch 1. Ceiling in tokens/s."""
    n = rng.choice((2, 4, 8))
    m, d, fmt_ = placement(rng, real_models(), devices(), FORMATS, count=n)
    _, gb = _weights(m, fmt_)
    one = d.bw_gbs / gb
    if rng.random() < 0.5:
        how = (f"so that each device holds 1/{n} of every layer and all {n} read their shares at the same "
               f"time (tensor parallel)")
        answer = n * one
        worked = (f"each device reads {gb / n:.3g} GB per token, all at once: {gb / n:.3g} GB ÷ {fmt(d.bw_gbs)} "
                  f"GB/s per device = {fmt(answer)} tokens/s, {n}x one device: this split adds bandwidth "
                  f"(an upper bound: the devices must also exchange activations every layer)")
        slip = Slip(f"one device's bandwidth: the {n} shares are read at the same time, so the bandwidths add", one)
    else:
        how = (f"so that the first device holds the first 1/{n} of the layers, the next the next 1/{n}, and so "
               f"on (pipeline parallel); the one request passes through them in turn")
        answer = one
        worked = (f"the devices take turns: {n} x ({gb / n:.3g} GB ÷ {fmt(d.bw_gbs)} GB/s) = {gb:.2f} GB ÷ "
                  f"{fmt(d.bw_gbs)} GB/s, so {fmt(answer)} tokens/s, the same as one device holding it all: "
                  f"this split adds memory, not bandwidth for one request")
        slip = Slip("the bandwidths added: one request's layers run one device after another, so only one "
                    "device reads at a time", n * one)
    return Drill(
        prompt=(f"{_model_phrase(m, fmt_)} is split across {n} x {d.name} ({fmt(d.bw_gbs)} GB/s each) {how}. One "
                f"request at batch 1: what is its tokens/s ceiling?"),
        answer=answer, unit="tokens/s", worked=worked, reread=MEMORY,
        slips=(slip, _bits_for_bytes(answer, fmt_), *gib_mixups(answer)), memory=memory(m, d, fmt_, count=n))


def bigger_chip(rng: random.Random) -> Drill:
    """A chip with k times the FLOP/s on the same memory: the batch-1 ceiling does not move (tokens/s)."""
    m, d, fmt_ = placement(rng, real_models(), devices(with_peak=True), FORMATS)
    k = rng.choice((2, 4, 10))
    _, gb = _weights(m, fmt_)
    answer = d.bw_gbs / gb
    return Drill(
        prompt=(f"Suppose a new chip with {k}x the TFLOP/s of the {d.name} ({fmt(d.peak_bf16_tflops)} -> "
                f"{fmt(k * d.peak_bf16_tflops)} TFLOP/s of dense bf16) and the same memory system "
                f"({fmt(d.bw_gbs)} GB/s). {_model_phrase(m, fmt_)}, batch 1, short context: what is its "
                f"tokens/s ceiling on the new chip?"),
        answer=answer, unit="tokens/s",
        worked=(f"a batch-1 step waits on memory: {fmt(d.bw_gbs)} GB/s ÷ {gb:.2f} GB = {fmt(answer)} tokens/s, the "
                f"same as on the {d.name}; peak FLOP/s is not in the division, only its unused share grows"),
        reread=ROOFLINE,
        slips=(scaled(answer, k, f"scaled with the FLOP/s: {k}x the arithmetic, but a batch-1 step waits on "
                                 f"memory, which is the same"),
               _bits_for_bytes(answer, fmt_), *gib_mixups(answer)), memory=memory(m, d, fmt_))


def peak_fraction(rng: random.Random) -> Drill:
    """The share of peak FLOP/s a batch-1 decode at its ceiling uses: 2 x parameters x tokens/s / peak, in %."""
    m, d, fmt_ = placement(rng, real_models(), devices(with_peak=True), FORMATS)
    params, gb = _weights(m, fmt_)
    speed = d.bw_gbs / gb
    used_tflops = 2 * params * speed / 1e12
    answer = 100 * used_tflops / d.peak_bf16_tflops
    return Drill(
        prompt=(f"{_model_phrase(m, fmt_)} decodes at its batch-1 ceiling on the {d.name} ({fmt(d.bw_gbs)} GB/s, "
                f"{fmt(d.peak_bf16_tflops)} TFLOP/s of dense bf16), each parameter read doing a multiply and an "
                f"add. What percentage of the peak FLOP/s does it use?"),
        answer=answer, unit="%",
        worked=(f"{fmt(speed)} tokens/s x 2 x {fmt(params / 1e9)}e9 FLOPs = {used_tflops:.3g} TFLOP/s ÷ "
                f"{fmt(d.peak_bf16_tflops)} TFLOP/s = {fmt(answer)}%: the GPU is busy, waiting on memory, at a "
                f"small share of its peak, the signature of the bandwidth roof"),
        reread=ROOFLINE,
        slips=(*unit_slips(answer, "%"),
               scaled(answer, 0.5, "the multiply-add counted as one FLOP: it is two")), memory=memory(m, d, fmt_))


def bandwidth_needed(rng: random.Random) -> Drill:
    """The memory bandwidth one stream needs at a target speed: tokens/s x bytes per token, in GB/s."""
    m = rng.choice(real_models())
    fmt_ = tables.weight_format(rng.choice(FORMATS))
    target = rng.choice((20, 50, 100, 200))
    params, gb = _weights(m, fmt_)
    answer = target * gb
    return Drill(
        prompt=(f"Suppose one user must get {target} tokens/s from {m.name} in {fmt_.key} ({fmt(params / 1e9)}B "
                f"parameters read per token at {fmt_.bits_per_weight:g} bits) at batch 1. How much memory "
                f"bandwidth does the device need at the least (in GB/s, or say TB/s)?"),
        answer=answer, unit="GB/s",
        worked=(f"{fmt(params / 1e9)}B x {fmt_.bytes_per_weight:g} B = {gb:.2f} GB per token x {target} tokens/s = "
                f"{fmt(answer)} GB/s ({answer / 1000:.3g} TB/s), before any real-world losses: one user's speed "
                f"is paid for in bandwidth"),
        reread=MEMORY,
        slips=(*unit_slips(answer, "GB/s"), scaled(answer, 8, f"bits for bytes: {fmt_.bits_per_weight:g} bits per "
                                                                f"weight used as {fmt_.bits_per_weight:g} bytes")))


def bandwidth_per_dollar(rng: random.Random) -> Drill:
    """Batch-1 tokens per dollar of device A over device B at a supposed price ratio: bandwidth ratio / price ratio."""
    a, b = rng.sample(devices(with_peak=True), 2)
    price = rng.choice((1.5, 2, 3, 4))
    answer = a.bw_gbs / b.bw_gbs / price
    return Drill(
        prompt=(f"Suppose an hour of the {a.name} ({fmt(a.bw_gbs)} GB/s, {fmt(a.peak_bf16_tflops)} TFLOP/s) costs "
                f"{price:g}x an hour of the {b.name} ({fmt(b.bw_gbs)} GB/s, {fmt(b.peak_bf16_tflops)} TFLOP/s). For "
                f"batch-1 decode of the same model, how many times the {b.name}'s tokens per dollar does the "
                f"{a.name} give?"),
        answer=answer, unit="x",
        worked=(f"batch-1 tokens/s follow bandwidth: {fmt(a.bw_gbs)} ÷ {fmt(b.bw_gbs)} = {a.bw_gbs / b.bw_gbs:.3g}x "
                f"the tokens per hour at {price:g}x the price, so {a.bw_gbs / b.bw_gbs:.3g} ÷ {price:g} = "
                f"{fmt(answer)}x the tokens per dollar; the TFLOP/s do not enter"),
        reread=MEMORY,
        slips=(Slip("FLOP/s per dollar compared: batch-1 decode waits on memory, so bandwidth per dollar decides",
                    a.peak_bf16_tflops / b.peak_bf16_tflops / price),
               scaled(answer, price, "the price left out: tokens per hour, not per dollar"),
               Slip("upside down: the second device's tokens per dollar over the first's", 1 / answer)))


def active_params_cost(rng: random.Random) -> Drill:
    """Cost per token of a dense model over a mixture of experts at batch 1: the ratio of the parameters
    each reads per token (x), whole checkpoints counted."""
    moe = rng.choice([m for m in real_models() if m.active_params is not None])
    dense = rng.choice([m for m in real_models() if m.active_params is None])
    fmt_ = tables.weight_format(rng.choice(FORMATS))
    dense_b, active_b, total_b = dense.total_params / 1e9, moe.active_params / 1e9, moe.total_params / 1e9
    answer = dense.total_params / moe.active_params
    return Drill(
        prompt=(f"One device, batch 1, weights in {fmt_.key}, a token's cost being the device time it takes: "
                f"{dense.name} ({fmt(dense_b)}B parameters, dense) against {moe.name} ({fmt(total_b)}B parameters, "
                f"{fmt(active_b)}B of them active per token). What is {dense.name}'s cost per token divided by "
                f"{moe.name}'s?"),
        answer=answer, unit="x",
        worked=(f"time per token follows the bytes read: {dense.name} reads all {fmt(dense_b)}B parameters, "
                f"{moe.name} its {fmt(active_b)}B active ones: {fmt(dense_b)} ÷ {fmt(active_b)} = {fmt(answer)}x; "
                f"the total of {fmt(total_b)}B sets the memory to hold, not the cost per token"),
        reread=MOE,
        slips=(Slip("total parameters compared: a token reads only the active experts",
                    dense.total_params / moe.total_params),
               Slip("upside down: the mixture of experts' cost over the dense model's", 1 / answer)))


def time_per_token(rng: random.Random) -> Drill:
    """Time per token at the batch-1 ceiling: bytes per token / bandwidth, in ms."""
    m, d, fmt_ = placement(rng, real_models(), devices(), FORMATS)
    params, gb = _weights(m, fmt_)
    answer = gb / d.bw_gbs * 1e3
    return Drill(
        prompt=(f"{m.name} in {fmt_.key} ({fmt(params / 1e9)}B parameters read per token at "
                f"{fmt_.bits_per_weight:g} bits) on the {d.name} ({fmt(d.bw_gbs)} GB/s), batch 1, short context: "
                f"how many milliseconds does one token take at the bandwidth ceiling?"),
        answer=answer, unit="ms",
        worked=(f"{fmt(params / 1e9)}B x {fmt_.bytes_per_weight:g} B = {gb:.2f} GB ÷ {fmt(d.bw_gbs)} GB/s = "
                f"{fmt(answer)} ms per token ({fmt(1e3 / answer)} tokens/s); a real engine takes longer"),
        reread=ONE_TRIP,
        slips=(*unit_slips(answer, "ms"),
               Slip("tokens/s given for the time per token: the time is one over the rate", 1e3 / answer),
               _bits_for_bytes(answer, fmt_, per_token_time=True),
               *gib_mixups(answer, per_token_time=True)), memory=memory(m, d, fmt_))


def measured_ceiling(rng: random.Random) -> Drill:
    """The batch-1 ceiling from a measured bandwidth (shared/data/hardware.yml's measured_bw_gbs), in tokens/s."""
    m, d, fmt_ = placement(rng, real_models(), [d for d in devices() if d.measured_bw_gbs is not None], FORMATS)
    _, gb = _weights(m, fmt_)
    answer = d.measured_bw_gbs / gb
    return Drill(
        prompt=(f"A bandwidth benchmark on the {d.name} measured {fmt(d.measured_bw_gbs)} GB/s against a spec of "
                f"{fmt(d.bw_gbs)} GB/s. {_model_phrase(m, fmt_)}, batch 1: what ceiling does the measured "
                f"bandwidth give?"),
        answer=answer, unit="tokens/s",
        worked=(f"{fmt(d.measured_bw_gbs)} GB/s ÷ {gb:.2f} GB = {fmt(answer)} tokens/s, "
                f"{d.measured_bw_gbs / d.bw_gbs:.0%} of the spec ceiling ({fmt(d.bw_gbs / gb)}); a real engine "
                f"lands lower still: the KV cache, small kernels and their launches, and the host between tokens"),
        reread=ONE_TRIP,
        slips=(scaled(answer, d.bw_gbs / d.measured_bw_gbs, "the spec bandwidth used: memory delivers less than "
                                                            "its rating"),
               _bits_for_bytes(answer, fmt_), *gib_mixups(answer)), memory=memory(m, d, fmt_))


def moe_batch(rng: random.Random) -> Drill:
    """GB of weights one decode step of a mixture of experts reads at a batch, if tokens picked experts
    independently and uniformly: the shared parameters plus the expected union of experts touched
    (``shared.decode.bytes``: expected_experts_read, weight_params_read)."""
    m = rng.choice([m for m in real_models() if m.active_params is not None])
    fmt_ = tables.weight_format(rng.choice(("bf16", "fp8")))
    batch = rng.choice((4, 16, 64))
    cfg = config.from_model(m)
    per_expert = step_bytes.expert_params(cfg)
    union = step_bytes.expected_experts_read(cfg, batch)
    shared = step_bytes.weight_params_read(cfg) - m.layers * cfg.experts_per_token * per_expert

    def gb(experts_per_layer: float) -> float:
        """Weight GB of a step reading ``experts_per_layer`` experts per layer (any count, for the slips)."""
        return (shared + experts_per_layer * m.layers * per_expert) * fmt_.bytes_per_weight / 1e9

    answer = step_bytes.weight_params_read(cfg, union) * fmt_.bytes_per_weight / 1e9
    return Drill(
        prompt=(f"{m.name} in {fmt_.key}: {m.layers} layers of {m.experts} experts of {fmt(per_expert / 1e6)}M "
                f"parameters, {m.experts_per_token} routed per token, and {fmt(shared / 1e9)}B shared parameters read "
                f"per step (input embedding left out). Batch {batch}, short contexts. If each token picked its "
                f"experts independently and uniformly (real routers are skewed and touch fewer), how many GB of "
                f"weights would one decode step read?"),
        answer=answer, unit="GB",
        worked=(f"experts touched per layer: {m.experts} x (1 - (1 - {m.experts_per_token}/{m.experts})^{batch}) = "
                f"{union:.1f}; ({fmt(shared / 1e9)}B + {union:.1f} x {m.layers} x {fmt(per_expert / 1e6)}M) x "
                f"{fmt_.bytes_per_weight:g} B = {fmt(answer)} GB per step, against {fmt(gb(m.experts_per_token))} GB "
                f"at batch 1 and {fmt(gb(m.experts))} GB for every expert: at large batch the advantage over a "
                f"dense model of the same size erodes"),
        reread=MOE,
        slips=(Slip("batch 1's bytes: a step reads the union of every token's experts", gb(m.experts_per_token)),
               Slip("each token's experts read separately: tokens routed to the same expert share one read",
                    gb(batch * m.experts_per_token)),
               Slip("every expert counted: at this batch the tokens do not touch them all", gb(m.experts)),
               *unit_slips(answer, "GB")))


#: The interview card's kinds of drill (the coverage table in docs/quiz.md names each).
KINDS = (card_ceiling, card_batch, intensity, ridge_batch, split_devices, bigger_chip, peak_fraction,
         bandwidth_needed, bandwidth_per_dollar, active_params_cost, time_per_token, measured_ceiling, moe_batch)
