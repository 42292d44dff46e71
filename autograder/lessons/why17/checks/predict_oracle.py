"""Plain oracles for the lesson's formulas, and how checks read and compare a student's numbers.

The oracles are written here, in the grader, straight from the lesson; they never import the
reference solution. ``number`` turns a returned value into a float or fails the check with one
line; ``ratio_hint`` names the likely slip behind a wrong ratio, in the lesson's words.
This module registers no checks.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed
from shared import diagnose

GB = 1e9       # bytes per GB
TFLOP = 1e12   # FLOP per TFLOP


def decode_tokens_per_s(params_read: float, bytes_per_weight: float, bw_gbs: float) -> float:
    """Tokens/s ceiling at batch 1: bandwidth over the bytes of one trip through the weights."""
    bytes_per_token = params_read * bytes_per_weight
    return (bw_gbs * GB) / bytes_per_token


def kv_bytes(layers: float, kv_heads: float, head_dim: float, bytes_per_value: float) -> float:
    """KV cache bytes per token of context: a K and a V per layer, KV head and head dimension."""
    per_layer = kv_heads * head_dim * bytes_per_value
    return 2 * layers * per_layer


def ridge(peak_tflops: float, bw_gbs: float) -> float:
    """FLOPs per byte where bandwidth x intensity reaches the compute peak."""
    return (peak_tflops * TFLOP) / (bw_gbs * GB)


def roof(intensity: float, peak_tflops: float, bw_gbs: float) -> float:
    """Attainable TFLOP/s: the lower of the bandwidth slope and the compute roof."""
    slope = intensity * bw_gbs * GB / TFLOP
    return slope if slope < peak_tflops else peak_tflops


def ceiling(params_read: float, bytes_per_weight: float, bw_gbs: float, batch: float, context: float,
            kv_bytes_per_token: float, peak_tflops: float) -> tuple[float, float]:
    """(per-stream, total) tokens/s of one decode step serving ``batch`` streams."""
    memory_s = (params_read * bytes_per_weight + batch * context * kv_bytes_per_token) / (bw_gbs * GB)
    compute_s = 0.0 if math.isinf(peak_tflops) else 2 * params_read * batch / (peak_tflops * TFLOP)
    step_s = max(memory_s, compute_s)
    return 1 / step_s, batch / step_s


def prefill(params: float, prompt_tokens: float, peak_tflops: float) -> float:
    """Seconds to run the prompt through the model at peak compute (2 FLOPs per weight per token)."""
    return 2 * params * prompt_tokens / (peak_tflops * TFLOP)


# ------------------------------------------------------------------ reading results

def number(value, what: str, unit: str) -> float:
    """``value`` as a finite float, or CheckFailed: '<what> returned <type>; return a float in
    <unit>' (nan and inf included: no value check passes a non-finite number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = type(value).__name__ if not hasattr(value, "type_name") else value.type_name
        if hasattr(value, "kind"):  # an Array from the child: a tensor or a numpy array
            kind = value.kind
        hint = " (a tensor's .item() gives one)" if "Tensor" in str(kind) or kind == "numpy" else ""
        raise CheckFailed(f"{what} returned a {kind}, not a number; return a plain float in {unit}{hint}. "
                          f"Reread: the Returns section of its docstring.")
    number = float(value)
    if not math.isfinite(number):
        # nan compares False with everything: a law asking "did it rise?" would pass it
        raise CheckFailed(f"{what} returned {number}, not a finite number in {unit}; every ceiling and rate "
                          f"of the lesson is finite for these arguments. Reread: the Returns section of its docstring.")
    return number


def pair(value, what: str, unit: str) -> tuple[float, float]:
    """A returned (a, b) pair of numbers, or CheckFailed."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise CheckFailed(f"{what} should return a pair (per-stream, total) in {unit}; "
                          f"it returned {_kind(value)}.")
    return number(value[0], what, unit), number(value[1], what, unit)


def _kind(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    """Relative closeness; NaN and inf are never close to a finite value."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= rel * max(abs(a), abs(b))


def ratio_hint(yours: float, expected: float, twos: str = "", slips: dict | None = None) -> str:
    """'(ratio 0.5: <likely slip>)' or '(ratio 1.37)' when no classic slip matches.

    The words come from shared/diagnose.py, which the public tests use too (one source of messages).
    ``twos`` says where a factor 2 belongs for this quantity ('a multiply-add is 2 FLOPs');
    ``slips``: a named slip's words -> the value it gives here, asked first (diagnose.named).
    """
    return diagnose.ratio_note(yours, expected, twos, slips=slips)


def fmt(x: float) -> str:
    """A number as a reader would write it: 17.1, 3.35e+09, 0.5."""
    return f"{x:.4g}"
