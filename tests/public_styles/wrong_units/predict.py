"""Wrong: reads GB/s as GiB/s (2**30 bytes), so every ceiling comes out about 7% high."""
import math

GB = 2**30   # wrong: GB/s means 1e9 bytes/s, not GiB
TERA = 1e12


def _check(**values):
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be positive and finite, got {value!r}")


def predict_decode(params_read, bytes_per_weight, bw_gbs):
    _check(params_read=params_read, bytes_per_weight=bytes_per_weight, bw_gbs=bw_gbs)
    bytes_per_token = params_read * bytes_per_weight
    seconds_per_token = bytes_per_token / (bw_gbs * GB)
    return 1.0 / seconds_per_token


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_value):
    _check(layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_value=bytes_per_value)
    per_layer = kv_heads * head_dim * bytes_per_value
    return float(2 * layers * per_layer)


def arithmetic_intensity(flops, bytes_moved):
    _check(flops=flops, bytes_moved=bytes_moved)
    return flops / bytes_moved


def ridge_point(peak_tflops, bw_gbs):
    _check(peak_tflops=peak_tflops, bw_gbs=bw_gbs)
    return (peak_tflops * TERA) / (bw_gbs * GB)


def attainable_tflops(intensity, peak_tflops, bw_gbs):
    _check(intensity=intensity, peak_tflops=peak_tflops, bw_gbs=bw_gbs)
    memory_roof = intensity * bw_gbs * GB / TERA
    return peak_tflops if memory_roof > peak_tflops else memory_roof


def decode_ceiling(params_read, bytes_per_weight, bw_gbs, *, batch=1, context=0,
                   kv_bytes_per_token=0.0, peak_tflops=math.inf):
    _check(params_read=params_read, bytes_per_weight=bytes_per_weight, bw_gbs=bw_gbs, batch=batch)
    for name, value in (("context", context), ("kv_bytes_per_token", kv_bytes_per_token)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be >= 0 and finite, got {value!r}")
    if not isinstance(peak_tflops, (int, float)) or math.isnan(peak_tflops) or peak_tflops <= 0:
        raise ValueError(f"peak_tflops must be positive, got {peak_tflops!r}")
    memory_s = (params_read * bytes_per_weight + batch * context * kv_bytes_per_token) / (bw_gbs * GB)
    compute_s = 0.0 if math.isinf(peak_tflops) else 2 * params_read * batch / (peak_tflops * TERA)
    step = max(memory_s, compute_s)
    return (1 / step, batch / step)


def prefill_seconds(params, prompt_tokens, peak_tflops):
    _check(params=params, prompt_tokens=prompt_tokens, peak_tflops=peak_tflops)
    return 2 * params * prompt_tokens / peak_tflops / TERA
