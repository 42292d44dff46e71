"""Batching, the lesson's main way around the wall: one weight read serves the whole batch.

``ceiling_batch_shares_weights`` asks decode_ceiling three things on machines from the hardware
table, each against the plain oracle of predict_oracle.py:

1. while the weights dominate the step's bytes (short context), total tokens/s rises with batch,
   nearly batch-fold;
2. per-stream tokens/s falls only by the KV cache's share of the step's bytes;
3. total tokens/s stops climbing where the ridge point says: at batch = ridge x bytes/weight / 2
   (context 0), memory time equals compute time.

A decode_ceiling in which every stream re-reads the weights (step bytes = batch x params x
bytes/weight + ...) keeps the total flat and divides per-stream by the batch; the message names
that slip (shared/diagnose.py) and points to Every way around the wall.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, StudentRaised, check
from autograder.lessons.why17.checks import predict_oracle as oracle
from shared import diagnose, tables

TASK = "task3"
REL = 1e-6
#: Tokens of context per stream: short, so the weights dominate the step's bytes.
SHORT_CONTEXT = 256
BATCHES = (8, 32)
#: (model, bytes per weight, device) of the cases.
CASES = (("llama-3.1-8b", 2.0, "dgx-spark"), ("llama-3.1-70b", 1.0, "h200"))
SECTION = f"Reread: {diagnose.BATCHING}."
f = oracle.fmt


def _ceiling(ctx, *args, **kwargs) -> tuple[float, float]:
    try:
        value = ctx.call("predict", "decode_ceiling", *args, **kwargs)
    except StudentRaised as exc:
        shown = ", ".join([f(a) for a in args] + [f"{k}={f(v)}" for k, v in kwargs.items()])
        raise CheckFailed(f"decode_ceiling({shown}) raised {exc.exc_type}: {exc.message}; these are valid "
                          f"arguments.") from None
    return oracle.pair(value, "decode_ceiling", "tokens/s")


def _shares_weights(ctx, model, bpw: float, device) -> None:
    p, bw, kv = model.params_read(), device.bw_gbs, model.kv_bytes_per_token(2.0)
    where = (f"{model.name} ({f(p)} parameters, {bpw:g} bytes/weight) on {device.name}, "
             f"{SHORT_CONTEXT} tokens of context")
    kw = dict(context=SHORT_CONTEXT, kv_bytes_per_token=kv)
    one, total_one = _ceiling(ctx, p, bpw, bw, batch=1, **kw)
    want_one, _ = oracle.ceiling(p, bpw, bw, 1, SHORT_CONTEXT, kv, math.inf)
    for batch in BATCHES:
        per, total = _ceiling(ctx, p, bpw, bw, batch=batch, **kw)
        want_per, want_total = oracle.ceiling(p, bpw, bw, batch, SHORT_CONTEXT, kv, math.inf)
        total_ratio = total / total_one if total_one else math.nan
        per_ratio = per / one if one else math.nan
        slip = diagnose.batching(batch, total_ratio, per_ratio)
        if slip:
            raise CheckFailed(f"decode_ceiling for {where}: from batch 1 to {batch} your total tokens/s went "
                              f"{total_ratio:.3g}x and per-stream {per_ratio:.3g}x: {slip}. {SECTION}")
        want_total_ratio = want_total / want_one   # total at batch 1 is the per-stream speed
        if not diagnose.close(total_ratio, want_total_ratio, REL):
            raise CheckFailed(f"decode_ceiling for {where}: from batch 1 to {batch} your total tokens/s went "
                              f"{total_ratio:.4g}x; while the weights dominate the bytes it should rise nearly "
                              f"{batch}-fold (only the KV cache grows with the batch). {SECTION}")
        kv_share = batch * SHORT_CONTEXT * kv / (p * bpw + batch * SHORT_CONTEXT * kv)
        if not diagnose.close(per_ratio, want_per / want_one, REL):
            raise CheckFailed(f"decode_ceiling for {where}: from batch 1 to {batch} your per-stream tokens/s went "
                              f"{per_ratio:.4g}x; it should fall only by the KV cache's share of the step's "
                              f"bytes (here {kv_share:.1%}). {SECTION}")


def _crossover(ctx, model, bpw: float, device) -> None:
    p, bw, peak = model.params_read(), device.bw_gbs, device.peak_bf16_tflops
    ridge = oracle.ridge(peak, bw)
    crossover = ridge * bpw / 2.0     # 2·p·b / peak = p·bpw / bw
    for batch, side in ((max(1, math.floor(crossover / 4)), "below"), (math.ceil(crossover * 4), "above")):
        _per, total = _ceiling(ctx, p, bpw, bw, batch=batch, context=0, kv_bytes_per_token=0.0, peak_tflops=peak)
        _, want = oracle.ceiling(p, bpw, bw, batch, 0, 0.0, peak)
        if not diagnose.close(total, want, REL):
            bound = "memory-bound: total = batch x bandwidth / weight bytes" if side == "below" else \
                "compute-bound: total = peak / (2 FLOPs x params)"
            raise CheckFailed(f"decode_ceiling for {model.name} ({bpw:g} bytes/weight) on {device.name} at batch "
                              f"{batch}, {side} the crossover batch {crossover:.4g} = ridge point x bytes/weight / 2, "
                              f"should be {bound}; your total is {f(total)} tokens/s {oracle.ratio_hint(total, want)}. "
                              f"Reread: The roofline; {diagnose.BATCHING}.")


@check("ceiling_batch_shares_weights", task=TASK,
       name="decode_ceiling: one weight read serves the whole batch, up to the ridge point", files="predict")
def batch_shares_weights(ctx):
    for key, bpw, dev in CASES:
        model, device = tables.model(key), tables.device(dev)
        _shares_weights(ctx, model, bpw, device)
        _crossover(ctx, model, bpw, device)
