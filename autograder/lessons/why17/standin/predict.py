"""A stand-in for predict.py: each function is the formula the public stub's docstring states.

The grader puts this file, never the reference solution, beside a student's roofline.py when
the student's own predict.py is missing, does not import or failed its checks
(autograder/grading/fallback.py). A student may read it: it holds nothing the handed-out stub
(assignments/why17/predict.py) does not say. It checks no argument (the stub's Raises lines are
the student's work), so it would not pass task 3 if handed in.

Units as in the stub: GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s, tokens/s, bytes, seconds.
"""
import math


def predict_decode(params_read, bytes_per_weight, bw_gbs) -> float:
    """Tokens/s: bw_gbs * 1e9 / (params_read * bytes_per_weight)."""
    return bw_gbs * 1e9 / (params_read * bytes_per_weight)


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_value) -> float:
    """Bytes per token of context: 2 (K and V) * layers * kv_heads * head_dim * bytes."""
    return 2 * layers * kv_heads * head_dim * bytes_per_value


def arithmetic_intensity(flops, bytes_moved) -> float:
    """FLOPs per byte: flops / bytes_moved."""
    return flops / bytes_moved


def ridge_point(peak_tflops, bw_gbs) -> float:
    """FLOPs per byte: peak_tflops * 1e12 / (bw_gbs * 1e9)."""
    return peak_tflops * 1e12 / (bw_gbs * 1e9)


def attainable_tflops(intensity, peak_tflops, bw_gbs) -> float:
    """TFLOP/s: min(peak_tflops, bw_gbs * intensity / 1000)."""
    return min(peak_tflops, bw_gbs * intensity / 1000)


def decode_ceiling(params_read, bytes_per_weight, bw_gbs, *, batch=1, context=0,
                   kv_bytes_per_token=0.0, peak_tflops=math.inf) -> tuple:
    """(1 / step time, batch / step time) in tokens/s, where
    step_bytes = params_read * bytes_per_weight + batch * context * kv_bytes_per_token,
    step FLOPs = 2 * params_read * batch, step time = max(bytes / bandwidth, FLOPs / peak)."""
    step_bytes = params_read * bytes_per_weight + batch * context * kv_bytes_per_token
    step_flops = 2 * params_read * batch
    step_s = max(step_bytes / (bw_gbs * 1e9), step_flops / (peak_tflops * 1e12))
    return 1 / step_s, batch / step_s


def prefill_seconds(params, prompt_tokens, peak_tflops) -> float:
    """Seconds: 2 * params * prompt_tokens / (peak_tflops * 1e12)."""
    return 2 * params * prompt_tokens / (peak_tflops * 1e12)
