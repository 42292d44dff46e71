"""Hidden unit checks of predict.py on inputs the public tests do not use.

Other models and machines from shared/data (an MoE model's active parameters on an H200,
Mixtral, a 70B in Q4_K_M on an A100, an RTX 4090 ...), each compared with the plain oracle in
predict_oracle.py. Feedback names the quantity, its unit, the ratio seen and the lesson section;
it never shows the expected value.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, StudentRaised, check
from autograder.lessons.why17.checks import predict_oracle as oracle
from shared import diagnose, tables

TASK = "task3"
REL = 1e-9


def _call(ctx, function, *args, **kwargs):
    try:
        return ctx.call("predict", function, *args, **kwargs)
    except StudentRaised as exc:
        shown = ", ".join([oracle.fmt(a) for a in args] + [f"{k}={oracle.fmt(v)}" for k, v in kwargs.items()])
        raise CheckFailed(f"{function}({shown}) raised {exc.exc_type}: {exc.message}; these are valid "
                          f"arguments.") from None


def _expect(ctx, function, args, kwargs, expected, *, unit, what, section, twos="", slips=None):
    value = oracle.number(_call(ctx, function, *args, **kwargs), function, unit)
    if not oracle.close(value, expected, REL):
        raise CheckFailed(f"{function} for {what} gave {oracle.fmt(value)} {unit} "
                          f"{oracle.ratio_hint(value, expected, twos, slips)}. Reread: {section}.")


def _bpw(fmt: str) -> float:
    return tables.weight_format(fmt).bytes_per_weight


@check("decode_moe_active", task=TASK, name="predict_decode counts only an MoE model's active parameters",
       files="predict")
def decode_moe_active(ctx):
    for key, fmt, dev in (("qwen3-30b-a3b", "bf16", "h200"), ("mixtral-8x7b", "fp8", "h100-pcie")):
        model, device = tables.model(key), tables.device(dev)
        p, b, bw = model.params_read(), _bpw(fmt), device.bw_gbs
        _expect(ctx, "predict_decode", (p, b, bw), {}, oracle.decode_tokens_per_s(p, b, bw), unit="tokens/s",
                what=f"{model.name} ({oracle.fmt(p)} parameters read per token, {fmt}) on {device.name} "
                     f"({oracle.fmt(bw)} GB/s)",
                section="The Idea; Every way around the wall (fewer weights per token)")


@check("decode_quantized", task=TASK, name="predict_decode with quantized weights", files="predict")
def decode_quantized(ctx):
    for key, fmt, dev in (("llama-3.1-70b", "q4_k_m", "a100-80gb"), ("llama-3.2-3b", "int4", "rtx-4090")):
        model, device = tables.model(key), tables.device(dev)
        p, b, bw = model.params_read(), _bpw(fmt), device.bw_gbs
        _expect(ctx, "predict_decode", (p, b, bw), {}, oracle.decode_tokens_per_s(p, b, bw), unit="tokens/s",
                what=f"{model.name} in {fmt} ({b:g} bytes/weight) on {device.name} ({oracle.fmt(bw)} GB/s)",
                section="Every way around the wall (fewer bytes per weight)")


@check("kv_bytes_gqa", task=TASK, name="kv_bytes_per_token for grouped-query models", files="predict")
def kv_bytes_gqa(ctx):
    for key, bpv in (("qwen3-30b-a3b", 1.0), ("llama-3.1-70b", 2.0), ("mixtral-8x7b", 4.0)):
        m = tables.model(key)
        args = (m.layers, m.kv_heads, m.head_dim, bpv)
        _expect(ctx, "kv_bytes_per_token", args, {}, oracle.kv_bytes(*args), unit="bytes",
                what=f"{m.name} ({m.layers} layers, {m.kv_heads} KV heads, head_dim {m.head_dim}, "
                     f"{bpv:g} bytes per value)",
                section="The KV cache is also bytes", twos="K and V are two tensors per layer",
                slips={diagnose.KV_WITHOUT_2: oracle.kv_bytes(*args) / 2})


@check("intensity_and_ridge", task=TASK, name="arithmetic_intensity and ridge_point on other machines",
       files="predict")
def intensity_and_ridge(ctx):
    model = tables.model("llama-3.1-70b")
    flops, moved = 2.0 * model.params_read() * 32, model.params_read() * 1.0
    _expect(ctx, "arithmetic_intensity", (flops, moved), {}, flops / moved, unit="FLOPs/byte",
            what=f"{oracle.fmt(flops)} FLOPs over {oracle.fmt(moved)} bytes",
            section="Arithmetic intensity: work per byte")
    for dev in ("h200", "a100-40gb", "l4"):
        d = tables.device(dev)
        _expect(ctx, "ridge_point", (d.peak_bf16_tflops, d.bw_gbs), {}, oracle.ridge(d.peak_bf16_tflops, d.bw_gbs),
                unit="FLOPs/byte",
                what=f"{d.name} ({oracle.fmt(d.peak_bf16_tflops)} TFLOP/s, {oracle.fmt(d.bw_gbs)} GB/s)",
                section="Arithmetic intensity: work per byte; The roofline")


@check("attainable_two_roofs", task=TASK, name="attainable_tflops below and above the ridge", files="predict")
def attainable_two_roofs(ctx):
    d = tables.device("rtx-4090")
    ridge = oracle.ridge(d.peak_bf16_tflops, d.bw_gbs)
    for intensity, side in ((ridge / 37.0, "below the ridge (memory-bound)"),
                            (ridge * 11.0, "above the ridge (compute-bound)")):
        args = (intensity, d.peak_bf16_tflops, d.bw_gbs)
        _expect(ctx, "attainable_tflops", args, {}, oracle.roof(*args), unit="TFLOP/s",
                what=f"{d.name} at {oracle.fmt(intensity)} FLOPs/byte, {side}",
                section="The roofline",
                slips={diagnose.MAX_FOR_MIN: max(d.peak_bf16_tflops, d.bw_gbs * intensity / 1000.0)})


@check("ceiling_kv_cache", task=TASK, name="decode_ceiling reads every stream's KV cache", files="predict")
def ceiling_kv_cache(ctx):
    model, d = tables.model("llama-3.1-70b"), tables.device("h200")
    kv = oracle.kv_bytes(model.layers, model.kv_heads, model.head_dim, 2.0)
    for batch, context in ((16, 32768), (1, 131072)):
        kwargs = dict(batch=batch, context=context, kv_bytes_per_token=kv)
        _expect_pair(ctx, (model.params_read(), 1.0, d.bw_gbs), kwargs,
                     oracle.ceiling(model.params_read(), 1.0, d.bw_gbs, batch, context, kv, math.inf),
                     what=f"{model.name} in 8-bit on {d.name}, batch {batch}, {context} tokens of context",
                     section="The KV cache is also bytes; Every way around the wall (batching)")


@check("ceiling_compute_roof", task=TASK, name="decode_ceiling stops at the compute roof", files="predict")
def ceiling_compute_roof(ctx):
    model, d = tables.model("llama-3.1-8b"), tables.device("a100-40gb")
    for batch, fmt in ((4096, "fp8"), (1024, "int4")):
        b = _bpw(fmt)
        kwargs = dict(batch=batch, context=0, kv_bytes_per_token=0.0, peak_tflops=d.peak_bf16_tflops)
        _expect_pair(ctx, (model.params_read(), b, d.bw_gbs), kwargs,
                     oracle.ceiling(model.params_read(), b, d.bw_gbs, batch, 0, 0.0, d.peak_bf16_tflops),
                     what=f"{model.name} in {fmt} on {d.name} at batch {batch} (past the ridge point)",
                     section="The roofline; Every way around the wall (batching)")


def _rereads_weights(args, kwargs) -> tuple[float, float]:
    """decode_ceiling's pair if every stream re-read the weights (the batching slip)."""
    p, bpw, bw = args
    batch = kwargs.get("batch", 1)
    return oracle.ceiling(p * batch, bpw, bw, batch, kwargs.get("context", 0),
                          kwargs.get("kv_bytes_per_token", 0.0), kwargs.get("peak_tflops", math.inf) * batch)


def _expect_pair(ctx, args, kwargs, expected, *, what, section):
    got = oracle.pair(_call(ctx, "decode_ceiling", *args, **kwargs), "decode_ceiling", "tokens/s")
    slip = _rereads_weights(args, kwargs)
    if kwargs.get("batch", 1) > 1 and all(oracle.close(g, s, 1e-6) for g, s in zip(got, slip, strict=True)):
        raise CheckFailed(f"decode_ceiling for {what}: {diagnose.REREAD_WEIGHTS}. Reread: {diagnose.BATCHING}.")
    for label, mine, want in (("per-stream", got[0], expected[0]), ("total", got[1], expected[1])):
        if not oracle.close(mine, want, REL):
            raise CheckFailed(f"decode_ceiling for {what}: {label} {oracle.fmt(mine)} tokens/s "
                              f"{oracle.ratio_hint(mine, want)}. Reread: {section}.")


@check("prefill_time", task=TASK, name="prefill_seconds for a long prompt on another machine", files="predict")
def prefill_time(ctx):
    model, d = tables.model("llama-3.1-70b"), tables.device("h200")
    args = (float(model.total_params), 4096, d.peak_bf16_tflops)
    _expect(ctx, "prefill_seconds", args, {}, oracle.prefill(*args), unit="s",
            what=f"{model.name}, a 4096-token prompt, {oracle.fmt(d.peak_bf16_tflops)} TFLOP/s",
            section="Prefill is the opposite workload", twos="a multiply-add is 2 FLOPs")
