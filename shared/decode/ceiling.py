"""The lesson's ceilings, computed on table rows: one source for the benchmark and the quiz.

These take ``shared.tables`` objects (Model, Device) rather than bare numbers, so they are not a
stand-in for the student's ``predict.py``.

Units: GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s, bytes, seconds, tokens/s.
"""
from __future__ import annotations

import math

from shared import tables, validate


def tokens_per_s(bw_gbs: float, bytes_per_token: float) -> float:
    """Tokens/s ceiling of a memory-bound step: bandwidth (GB/s) / bytes read per token."""
    bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")
    bytes_per_token = validate.positive("bytes_per_token", bytes_per_token, "bytes")
    return bw_gbs * 1e9 / bytes_per_token


def weight_bytes(model: tables.Model, bytes_per_weight: float, *, whole_checkpoint: bool = False) -> float:
    """Weight bytes one token reads: ``model.params_read(...)`` x bytes per weight."""
    return model.params_read(whole_checkpoint=whole_checkpoint) * bytes_per_weight


def batch_ceiling(model: tables.Model, bytes_per_weight: float, device: tables.Device, *, batch: int,
                  context: int, kv_bytes_per_value: float = 2.0) -> tuple[float, float]:
    """(per-stream, total) tokens/s at ``batch`` streams of ``context`` tokens each.

    One step reads the weights once plus every stream's KV cache and does 2 x params x batch FLOPs;
    its time is the larger of bytes / bandwidth and FLOPs / peak (no compute roof without a peak).
    """
    step_bytes = weight_bytes(model, bytes_per_weight) + batch * context * model.kv_bytes_per_token(kv_bytes_per_value)
    peak = device.peak_bf16_tflops or math.inf
    step_s = max(step_bytes / (device.bw_gbs * 1e9), 2.0 * model.params_read() * batch / (peak * 1e12))
    return 1.0 / step_s, batch / step_s


def prefill_seconds(model: tables.Model, prompt_tokens: int, device: tables.Device) -> float:
    """Ideal prefill time in seconds: 2 x parameters x prompt tokens / peak FLOP/s (compute-bound)."""
    if device.peak_bf16_tflops is None:
        raise ValueError(f"{device.name} has no BF16 peak in the tables")
    params = model.active_params or model.total_params
    return 2.0 * params * prompt_tokens / (device.peak_bf16_tflops * 1e12)
