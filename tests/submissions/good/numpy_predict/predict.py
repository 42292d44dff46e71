# A CORRECT predict.py in another style: numpy, unit constants, algebraically rearranged formulas,
# its own argument checks. It must keep full marks.
import math

import numpy as np

GIGA = 10.0**9
TERA = 10.0**12


def _check(allow_zero=(), allow_inf=(), **named):
    for name, value in named.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise ValueError(f"{name}: expected a number, got {value!r}")
        if np.isnan(value):
            raise ValueError(f"{name} is NaN")
        if np.isinf(value) and not (name in allow_inf and value > 0):
            raise ValueError(f"{name} must be finite")
        if value < 0 or (value == 0 and name not in allow_zero):
            raise ValueError(f"{name} must be > 0, got {value}")


def predict_decode(params_read, bytes_per_weight, bw_gbs):
    _check(params_read=params_read, bytes_per_weight=bytes_per_weight, bw_gbs=bw_gbs)
    seconds_per_token = np.float64(params_read) * bytes_per_weight / (bw_gbs * GIGA)
    return float(np.reciprocal(seconds_per_token))


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_value):
    _check(layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_value=bytes_per_value)
    return float(np.prod([2, layers, kv_heads, head_dim, bytes_per_value], dtype=np.float64))


def arithmetic_intensity(flops, bytes_moved):
    _check(flops=flops, bytes_moved=bytes_moved)
    return float(np.divide(flops, bytes_moved))


def ridge_point(peak_tflops, bw_gbs):
    _check(peak_tflops=peak_tflops, bw_gbs=bw_gbs)
    return float(1000.0 * peak_tflops / bw_gbs)


def attainable_tflops(intensity, peak_tflops, bw_gbs):
    _check(intensity=intensity, peak_tflops=peak_tflops, bw_gbs=bw_gbs)
    return float(np.minimum(np.float64(peak_tflops), intensity * bw_gbs * GIGA / TERA))


def decode_ceiling(params_read, bytes_per_weight, bw_gbs, *, batch=1, context=0,
                   kv_bytes_per_token=0.0, peak_tflops=math.inf):
    _check(allow_zero=("context", "kv_bytes_per_token"), allow_inf=("peak_tflops",),
           params_read=params_read, bytes_per_weight=bytes_per_weight, bw_gbs=bw_gbs, batch=batch,
           context=context, kv_bytes_per_token=kv_bytes_per_token, peak_tflops=peak_tflops)
    memory_s = (params_read * bytes_per_weight + batch * context * kv_bytes_per_token) / (bw_gbs * GIGA)
    compute_s = 2 * params_read * batch / (peak_tflops * TERA)
    tokens_per_s = 1.0 / np.maximum(memory_s, compute_s)
    return float(tokens_per_s), float(batch * tokens_per_s)


def prefill_seconds(params, prompt_tokens, peak_tflops):
    _check(params=params, prompt_tokens=prompt_tokens, peak_tflops=peak_tflops)
    return float((2 * params) * (prompt_tokens / (peak_tflops * TERA)))
