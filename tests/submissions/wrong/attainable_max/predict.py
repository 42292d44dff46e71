# WRONG ON PURPOSE (attainable_max): attainable_tflops takes the higher roof
"""Task 3: predictions. Decode speed from one division, the roofline, the KV cache, prefill.

Arithmetic only; no torch needed. Units: GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s, parameters
counted one by one, bytes per weight in bytes (2 for bf16, 0.5 for 4-bit), tokens/s.
Lesson: The Idea (one token, one trip through every weight), The roofline, Prefill is the opposite
workload, The KV cache is also bytes, Every way around the wall (batching).
"""
import math

from shared import validate


def predict_decode(params_read, bytes_per_weight, bw_gbs) -> float:
    """Tokens/s ceiling at batch 1 and short context: bandwidth / bytes read per token.

    Args:
        params_read: parameters read per token (active ones for a mixture of experts).
        bytes_per_weight: bytes per weight (2 for bf16, 1 for 8-bit, about 0.61 for Q4_K_M).
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).

    Returns:
        bw_gbs * 1e9 / (params_read * bytes_per_weight), in tokens/s.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    params_read = validate.positive("params_read", params_read, "parameters")
    bytes_per_weight = validate.positive("bytes_per_weight", bytes_per_weight, "bytes")
    bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")
    return bw_gbs * 1e9 / (params_read * bytes_per_weight)
    ### END SOLUTION


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_value) -> float:
    """KV cache bytes per token of context: 2 (K and V) * layers * kv_heads * head_dim * bytes.

    Args:
        layers: transformer layers.
        kv_heads: key/value heads per layer (fewer than query heads with GQA).
        head_dim: values per head.
        bytes_per_value: bytes per cached value (2 for bf16).

    Returns:
        Bytes of KV cache per token of context.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    layers = validate.positive("layers", layers)
    kv_heads = validate.positive("kv_heads", kv_heads)
    head_dim = validate.positive("head_dim", head_dim)
    bytes_per_value = validate.positive("bytes_per_value", bytes_per_value, "bytes")
    return 2.0 * layers * kv_heads * head_dim * bytes_per_value
    ### END SOLUTION


def arithmetic_intensity(flops, bytes_moved) -> float:
    """Arithmetic intensity in FLOPs per byte.

    Args:
        flops: floating-point operations done (a multiply-add counts as 2).
        bytes_moved: bytes moved to or from memory.

    Returns:
        flops / bytes_moved, in FLOPs per byte.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    flops = validate.positive("flops", flops, "FLOPs")
    bytes_moved = validate.positive("bytes_moved", bytes_moved, "bytes")
    return flops / bytes_moved
    ### END SOLUTION


def ridge_point(peak_tflops, bw_gbs) -> float:
    """The machine's ridge point in FLOPs per byte, where the bandwidth slope meets the compute roof.

    Args:
        peak_tflops: peak compute in TFLOP/s (1e12 FLOP/s).
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).

    Returns:
        peak_tflops * 1e12 / (bw_gbs * 1e9), in FLOPs per byte.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    peak_tflops = validate.positive("peak_tflops", peak_tflops, "TFLOP/s")
    bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")
    return peak_tflops * 1e12 / (bw_gbs * 1e9)
    ### END SOLUTION


def attainable_tflops(intensity, peak_tflops, bw_gbs) -> float:
    """The roofline: attainable TFLOP/s (1e12 FLOP/s) at an arithmetic intensity.

    Args:
        intensity: arithmetic intensity in FLOPs per byte.
        peak_tflops: peak compute in TFLOP/s.
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).

    Returns:
        min(peak_tflops, bw_gbs * intensity / 1000), in TFLOP/s.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    intensity = validate.positive("intensity", intensity, "FLOPs/byte")
    peak_tflops = validate.positive("peak_tflops", peak_tflops, "TFLOP/s")
    bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")
    return max(peak_tflops, bw_gbs * intensity / 1000.0)
    ### END SOLUTION


def decode_ceiling(params_read, bytes_per_weight, bw_gbs, *, batch=1, context=0,
                   kv_bytes_per_token=0.0, peak_tflops=math.inf) -> tuple:
    """(per-stream, total) tokens/s ceiling of one decode step serving ``batch`` streams.

    One step reads the weights once plus every stream's KV cache,
    step_bytes = params_read * bytes_per_weight + batch * context * kv_bytes_per_token,
    and does 2 * params_read * batch FLOPs; step time = max(bytes / bandwidth, FLOPs / peak).

    Args:
        params_read: parameters read per step.
        bytes_per_weight: bytes per weight.
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).
        batch: streams decoded together (a positive integer).
        context: tokens already in each stream's KV cache (may be 0).
        kv_bytes_per_token: KV cache bytes per token of context (may be 0).
        peak_tflops: peak compute in TFLOP/s (1e12 FLOP/s); inf means no compute roof.

    Returns:
        (1 / step time, batch / step time), both in tokens/s.

    Raises:
        ValueError: an argument is non-finite or non-positive (context and kv_bytes_per_token
            may be 0, peak_tflops may be inf).
    """
    ### BEGIN SOLUTION
    params_read = validate.positive("params_read", params_read, "parameters")
    bytes_per_weight = validate.positive("bytes_per_weight", bytes_per_weight, "bytes")
    bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")
    batch = validate.positive("batch", batch, "streams")
    context = validate.non_negative("context", context, "tokens")
    kv_bytes_per_token = validate.non_negative("kv_bytes_per_token", kv_bytes_per_token, "bytes")
    peak_tflops = validate.positive("peak_tflops", peak_tflops, "TFLOP/s", allow_inf=True)
    step_bytes = params_read * bytes_per_weight + batch * context * kv_bytes_per_token
    step_flops = 2.0 * params_read * batch
    step_seconds = max(step_bytes / (bw_gbs * 1e9), step_flops / (peak_tflops * 1e12))
    return 1.0 / step_seconds, batch / step_seconds
    ### END SOLUTION


def prefill_seconds(params, prompt_tokens, peak_tflops) -> float:
    """Ideal prefill time in seconds: 2 * params * prompt_tokens FLOPs at the compute peak.

    Args:
        params: parameters the prompt runs through.
        prompt_tokens: tokens in the prompt.
        peak_tflops: peak compute in TFLOP/s (1e12 FLOP/s).

    Returns:
        2 * params * prompt_tokens / (peak_tflops * 1e12), in seconds.

    Raises:
        ValueError: an argument is not a positive finite number.
    """
    ### BEGIN SOLUTION
    params = validate.positive("params", params, "parameters")
    prompt_tokens = validate.positive("prompt_tokens", prompt_tokens, "tokens")
    peak_tflops = validate.positive("peak_tflops", peak_tflops, "TFLOP/s")
    return 2.0 * params * prompt_tokens / (peak_tflops * 1e12)
    ### END SOLUTION
