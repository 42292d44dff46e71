"""Hypothesis laws of predict.py: how the ceilings must move when one quantity changes.

Each law is its own check (partial credit) and is graded on its cases in law_cases.json
(autograder/lessons/why17/cases.py: drawn once by hypothesis from strategies.py, reviewed,
simplest first; the check's id names them). A failure reports the table's first failing case, in
plain words, with the lesson section to reread.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, StudentRaised, check
from autograder.lessons.why17 import cases
from autograder.lessons.why17.checks import predict_oracle as oracle
from shared import diagnose

TASK = "task3"
REL = 1e-9
f = oracle.fmt


def _call(ctx, function, *args, **kwargs):
    try:
        return ctx.call("predict", function, *args, **kwargs)
    except StudentRaised as exc:
        shown = ", ".join([f(a) for a in args] + [f"{k}={f(v)}" for k, v in kwargs.items()])
        raise CheckFailed(f"{function}({shown}) raised {exc.exc_type}: {exc.message}; these are valid "
                          f"arguments.") from None


def _tokens(ctx, *args):
    return oracle.number(_call(ctx, "predict_decode", *args), "predict_decode", "tokens/s")


def _ceiling(ctx, p, bpw, bw, **kwargs):
    return oracle.pair(_call(ctx, "decode_ceiling", p, bpw, bw, **kwargs), "decode_ceiling", "tokens/s")


@check("law_bandwidth_doubles", task=TASK, name="law: doubling bandwidth doubles the ceiling", files="predict")
def bandwidth_doubles(ctx):
    def body(case):
        model, gpu = case
        one = _tokens(ctx, model.params_read, model.bytes_per_weight, gpu.bw_gbs)
        two = _tokens(ctx, model.params_read, model.bytes_per_weight, 2 * gpu.bw_gbs)
        if not oracle.close(two, 2 * one, REL):
            raise CheckFailed(
                f"doubling bw_gbs from {f(gpu.bw_gbs)} to {f(2 * gpu.bw_gbs)} GB/s should double the ceiling; "
                f"yours went from {f(one)} to {f(two)} tokens/s (ratio {two / one if one else math.nan:.3g}). "
                f"Tokens/s = bandwidth / bytes per token. Reread: The Idea.")
    cases.run_law("law_bandwidth_doubles", body)


@check("law_bytes_halve", task=TASK, name="law: halving bytes per weight doubles the ceiling", files="predict")
def bytes_halve(ctx):
    def body(case):
        model, gpu = case
        full = _tokens(ctx, model.params_read, model.bytes_per_weight, gpu.bw_gbs)
        half = _tokens(ctx, model.params_read, model.bytes_per_weight / 2, gpu.bw_gbs)
        if not oracle.close(half, 2 * full, REL):
            raise CheckFailed(
                f"halving bytes_per_weight from {f(model.bytes_per_weight)} to {f(model.bytes_per_weight / 2)} "
                f"should double the ceiling; yours went from {f(full)} to {f(half)} tokens/s "
                f"(ratio {half / full if full else math.nan:.3g}). Each token reads every weight once. "
                f"Reread: Every way around the wall (fewer bytes per weight).")
    cases.run_law("law_bytes_halve", body)


_KV_ARGS = ("layers", "kv_heads", "head_dim", "bytes_per_value")


@check("law_kv_linear", task=TASK, name="law: the KV cache grows linearly in each argument", files="predict")
def kv_linear(ctx):
    def body(case):
        model, index, k = case     # the argument scaled (0-3) and its factor (2-8)
        args = [model.layers, model.kv_heads, model.head_dim, model.bytes_per_value]
        base = oracle.number(_call(ctx, "kv_bytes_per_token", *args), "kv_bytes_per_token", "bytes")
        scaled_args = list(args)
        scaled_args[index] = args[index] * k
        scaled = oracle.number(_call(ctx, "kv_bytes_per_token", *scaled_args), "kv_bytes_per_token", "bytes")
        if not oracle.close(scaled, k * base, REL):
            raise CheckFailed(
                f"multiplying {_KV_ARGS[index]} by {k} (from {f(args[index])} to {f(scaled_args[index])}) "
                f"should multiply the KV bytes per token by {k}; yours went from {f(base)} to {f(scaled)} bytes "
                f"(ratio {scaled / base if base else math.nan:.3g}). Reread: The KV cache is also bytes.")
    cases.run_law("law_kv_linear", body)


@check("law_roofline_min", task=TASK, name="law: the roofline is the lower of the two roofs", files="predict")
def roofline_min(ctx):
    def body(case):
        gpu, intensity = case
        got = oracle.number(_call(ctx, "attainable_tflops", intensity, gpu.peak_tflops, gpu.bw_gbs),
                            "attainable_tflops", "TFLOP/s")
        slope = gpu.bw_gbs * intensity / 1000.0
        want = min(slope, gpu.peak_tflops)
        if not oracle.close(got, want, REL):
            hint = oracle.ratio_hint(got, want, slips={diagnose.MAX_FOR_MIN: max(slope, gpu.peak_tflops)})
            side = "the bandwidth slope is lower" if slope < gpu.peak_tflops else "the compute roof is lower"
            raise CheckFailed(
                f"at {f(intensity)} FLOPs/byte with {f(gpu.bw_gbs)} GB/s and {f(gpu.peak_tflops)} TFLOP/s, "
                f"{side}, so that line is the limit; yours gave {f(got)} TFLOP/s {hint}. "
                f"Attainable = the minimum of peak and bandwidth x intensity. Reread: The roofline.")
    cases.run_law("law_roofline_min", body)


@check("law_ridge_meets", task=TASK, name="law: the two roofs meet at the ridge point", files="predict")
def ridge_meets(ctx):
    def body(case):
        gpu, k = case              # k: how far below the ridge to look (1.5-64)
        ridge = oracle.number(_call(ctx, "ridge_point", gpu.peak_tflops, gpu.bw_gbs), "ridge_point", "FLOPs/byte")
        if not oracle.close(ridge, gpu.ridge, REL):
            raise CheckFailed(
                f"with {f(gpu.peak_tflops)} TFLOP/s and {f(gpu.bw_gbs)} GB/s the ridge is where bandwidth x "
                f"intensity reaches the peak; yours is {f(ridge)} FLOPs/byte {oracle.ratio_hint(ridge, gpu.ridge)}. "
                f"Reread: Arithmetic intensity: work per byte.")
        at = oracle.number(_call(ctx, "attainable_tflops", ridge, gpu.peak_tflops, gpu.bw_gbs),
                           "attainable_tflops", "TFLOP/s")
        below = oracle.number(_call(ctx, "attainable_tflops", ridge / k, gpu.peak_tflops, gpu.bw_gbs),
                              "attainable_tflops", "TFLOP/s")
        if not (oracle.close(at, gpu.peak_tflops, 1e-6) and oracle.close(below, gpu.peak_tflops / k, 1e-6)):
            raise CheckFailed(
                f"at the ridge point ({f(ridge)} FLOPs/byte) attainable_tflops should reach the peak "
                f"{f(gpu.peak_tflops)} TFLOP/s, and {f(k)}x below it 1/{f(k)} of the peak; yours gave {f(at)} "
                f"and {f(below)} TFLOP/s. Reread: The roofline.")
    cases.run_law("law_ridge_meets", body)


@check("law_per_stream_never_rises", task=TASK, name="law: per-stream speed never rises with batch",
       files="predict")
def per_stream_never_rises(ctx):
    def body(case):
        cfg, small, big = case     # two batch sizes, small <= big
        m, g = cfg.model, cfg.gpu
        kw = dict(context=cfg.context, kv_bytes_per_token=m.kv_bytes_per_token, peak_tflops=g.peak_tflops)
        one_small, _ = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, batch=small, **kw)
        one_big, _ = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, batch=big, **kw)
        if one_big > one_small * (1 + REL):
            raise CheckFailed(
                f"per-stream tokens/s rose from {f(one_small)} at batch {small} to {f(one_big)} at batch {big} "
                f"({cfg.context} tokens of context); a bigger batch never makes one stream faster. "
                f"Reread: Every way around the wall (batching).")
    cases.run_law("law_per_stream_never_rises", body)


@check("law_total_never_falls", task=TASK, name="law: total speed never falls with batch", files="predict")
def total_never_falls(ctx):
    def body(case):
        cfg, small, big = case     # two batch sizes, small <= big
        m, g = cfg.model, cfg.gpu
        kw = dict(context=cfg.context, kv_bytes_per_token=m.kv_bytes_per_token, peak_tflops=g.peak_tflops)
        _, all_small = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, batch=small, **kw)
        _, all_big = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, batch=big, **kw)
        if all_big < all_small * (1 - REL):
            raise CheckFailed(
                f"total tokens/s fell from {f(all_small)} at batch {small} to {f(all_big)} at batch {big} "
                f"({cfg.context} tokens of context); one weight read serves the whole batch, so the total "
                f"climbs and then flattens at the compute roof. Reread: Every way around the wall (batching).")
    cases.run_law("law_total_never_falls", body)


@check("law_compute_roof_caps", task=TASK, name="law: total speed never passes the compute roof",
       files="predict")
def compute_roof_caps(ctx):
    def body(cfg):
        m, g = cfg.model, cfg.gpu
        _, total = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, batch=cfg.batch,
                            context=cfg.context, kv_bytes_per_token=m.kv_bytes_per_token, peak_tflops=g.peak_tflops)
        cap = g.peak_tflops * 1e12 / (2 * m.params_read)
        if total > cap * (1 + REL):
            raise CheckFailed(
                f"at batch {cfg.batch} with {f(g.peak_tflops)} TFLOP/s and {f(m.params_read)} parameters your total "
                f"is {f(total)} tokens/s, {total / cap:.4g}x what the math units can do (2 FLOPs per parameter "
                f"per token); the step time is the larger of memory time and compute time. Reread: The roofline.")
    cases.run_law("law_compute_roof_caps", body)


@check("law_context_costs", task=TASK, name="law: more context means more bytes and fewer tokens/s",
       files="predict")
def context_costs(ctx):
    def body(case):
        cfg, context, k = case     # a context of 1,024-2^20 tokens, then k (2-16) times it
        m, g = cfg.model, cfg.gpu
        kv = m.kv_bytes_per_token
        base = dict(batch=cfg.batch, kv_bytes_per_token=kv, peak_tflops=math.inf)
        one_short, _ = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, context=context, **base)
        one_long, _ = _ceiling(ctx, m.params_read, m.bytes_per_weight, g.bw_gbs, context=context * k, **base)
        want = oracle.ceiling(m.params_read, m.bytes_per_weight, g.bw_gbs, cfg.batch, context * k, kv, math.inf)[0]
        want_short = oracle.ceiling(m.params_read, m.bytes_per_weight, g.bw_gbs, cfg.batch, context, kv, math.inf)[0]
        if not (oracle.close(one_long / one_short, want / want_short, 1e-6)):
            seen = one_long / one_short
            change = "no change" if oracle.close(seen, 1.0, 1e-9) else f"{seen:.4g}x"
            raise CheckFailed(
                f"going from {context} to {context * k} tokens of context at batch {cfg.batch} "
                f"({f(kv)} KV bytes per token) changed per-stream tokens/s by {change}; every "
                f"step reads each stream's whole KV cache on top of the weights. Reread: The KV cache is also bytes.")
    cases.run_law("law_context_costs", body)


@check("law_batch1_is_predict", task=TASK, name="law: decode_ceiling at batch 1 equals predict_decode",
       files="predict")
def batch1_is_predict(ctx):
    def body(case):
        model, gpu = case
        single = _tokens(ctx, model.params_read, model.bytes_per_weight, gpu.bw_gbs)
        one, total = _ceiling(ctx, model.params_read, model.bytes_per_weight, gpu.bw_gbs)
        if not (oracle.close(one, single, REL) and oracle.close(total, single, REL)):
            raise CheckFailed(
                f"at batch 1, no context and no compute roof, decode_ceiling gave ({f(one)}, {f(total)}) tokens/s "
                f"but predict_decode gave {f(single)} for the same model and {f(gpu.bw_gbs)} GB/s; both are "
                f"bandwidth / bytes per token there. Reread: The Idea.")
    cases.run_law("law_batch1_is_predict", body)
