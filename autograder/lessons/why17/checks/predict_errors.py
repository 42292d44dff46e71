"""Every predict.py function raises ValueError on a non-positive or non-finite argument.

Exceptions the lesson's API allows: context and kv_bytes_per_token may be 0 and peak_tflops may be
inf (decode_ceiling must then return numbers). For each function every argument is tried with
0, negatives, NaN and the infinities (one bad argument at a time, the others valid); then the
cases of ``errors_negative_argument`` in law_cases.json (cases.py, drawn once by hypothesis) add
valid bases from other models and machines with one argument made negative. One check per
function (partial credit).
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, StudentRaised, check
from autograder.lessons.why17 import cases
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.checks.refusal import refuses
from autograder.lessons.why17.domain import GpuSpec, ModelShape

TASK = "task3"
#: Error handling is worth half a formula check.
WEIGHT = 0.5
NAN, INF = math.nan, math.inf
RAISES = "Reread: the Raises section of its docstring."
#: Values no argument accepts (beyond what is allowed per argument below).
BAD = (0.0, -1.0, -1e-12, -3.5e9, NAN, INF, -INF)


def _valid(function: str, model: ModelShape, gpu: GpuSpec) -> dict:
    """Valid keyword arguments of ``function`` (all by name, so each can be replaced alone)."""
    return {
        "predict_decode": dict(params_read=model.params_read, bytes_per_weight=model.bytes_per_weight,
                               bw_gbs=gpu.bw_gbs),
        "kv_bytes_per_token": dict(layers=model.layers, kv_heads=model.kv_heads, head_dim=model.head_dim,
                                   bytes_per_value=model.bytes_per_value),
        "arithmetic_intensity": dict(flops=2.0 * model.params_read, bytes_moved=model.params_read),
        "ridge_point": dict(peak_tflops=gpu.peak_tflops, bw_gbs=gpu.bw_gbs),
        "attainable_tflops": dict(intensity=3.0, peak_tflops=gpu.peak_tflops, bw_gbs=gpu.bw_gbs),
        "decode_ceiling": dict(params_read=model.params_read, bytes_per_weight=model.bytes_per_weight,
                               bw_gbs=gpu.bw_gbs, batch=4, context=1024,
                               kv_bytes_per_token=model.kv_bytes_per_token, peak_tflops=gpu.peak_tflops),
        "prefill_seconds": dict(params=model.params_read, prompt_tokens=1000, peak_tflops=gpu.peak_tflops),
    }[function]


#: decode_ceiling's arguments that may take values that are not positive and finite.
ALLOWED = {"decode_ceiling": {"context": (0.0,), "kv_bytes_per_token": (0.0,), "peak_tflops": (INF,)}}
#: Positional-or-keyword arguments are passed by name; decode_ceiling's extras are keyword-only anyway.
BASE_MODEL = ModelShape(8.03e9, 2.0, 32, 8, 128, 2.0, "an 8B model")
BASE_GPU = GpuSpec(273.0, 125.0, "a 273 GB/s machine")


def _shown(value) -> str:
    return repr(value)


def _expect_value_error(ctx, function: str, kwargs: dict, name: str) -> None:
    kind = "non-finite" if not _finite(kwargs[name]) else "non-positive"
    refuses(ctx, "predict", function, kwargs, f"{name}={_shown(kwargs[name])}",
            f"a {kind} {name} is meaningless; check every argument (math.isfinite, > 0)", RAISES)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _expect_number(ctx, function: str, kwargs: dict, name: str) -> None:
    try:
        value = ctx.call("predict", function, **kwargs)
    except StudentRaised as exc:
        raise CheckFailed(f"{function} with {name}={_shown(kwargs[name])} raised {exc.exc_type}, but {name} "
                          f"may be {_shown(kwargs[name])}: context and kv_bytes_per_token may be 0 and "
                          f"peak_tflops may be inf (no compute roof). {RAISES}") from None
    first = value[0] if isinstance(value, (tuple, list)) and value else value
    oracle.number(first, function, "tokens/s")


def _make(function: str):
    def run(ctx):
        base = _valid(function, BASE_MODEL, BASE_GPU)
        allowed = ALLOWED.get(function, {})
        for name in base:
            for bad in BAD:
                if bad in allowed.get(name, ()):
                    continue
                _expect_value_error(ctx, function, {**base, name: bad}, name)
            for ok in allowed.get(name, ()):
                _expect_number(ctx, function, {**base, name: ok}, name)

        names = list(base)

        def body(case):
            model, gpu, index, magnitude = case    # index 0-6 picks the argument; magnitude 1e-6 to 1e15
            kwargs = _valid(function, model, gpu)
            name = names[index % len(names)]
            _expect_value_error(ctx, function, {**kwargs, name: -magnitude}, name)

        cases.run_law("errors_negative_argument", body)
    run.__name__ = f"errors_{function}"
    return run


for _function in ("predict_decode", "kv_bytes_per_token", "arithmetic_intensity", "ridge_point",
                  "attainable_tflops", "decode_ceiling", "prefill_seconds"):
    check(f"errors_{_function}", task=TASK, name=f"{_function} raises ValueError on bad arguments",
          files="predict", weight=WEIGHT)(_make(_function))
