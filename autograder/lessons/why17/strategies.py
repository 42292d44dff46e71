"""Hypothesis strategies as domain objects: GPUs, model shapes, decode configurations, and each
law's cases.

Each dimension has its own bounds and its own kind of number, so an argument mix-up shows: a
bandwidth in GB/s (50 to 20,000), a peak in TFLOP/s (1 to 5,000), parameter counts (1e8 to 2e12),
bytes per weight (0.25 to 4), layer and head counts as integers. Rows of shared/data tables are
mixed in, so the lesson's real machines and models are among the cases.

``laws()`` names the strategy each law's cases come from. Grading never draws: the laws read their
cases from law_cases.json (cases.py), which draw.py drew once from these strategies. The grader's
own tests and bench/law_verdicts.py draw afresh with ``run_fresh`` to hunt counterexamples that
the table misses.
"""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.lessons.why17.domain import DecodeConfig, GpuSpec, ModelShape
from shared import tables

#: Cases per law in the table. Each costs a few round trips to the child (about 0.1 ms each on
#: an idle machine); 17 checks x 30 cases grade in well under a second.
MAX_EXAMPLES = 30
#: Cases of the ValueError law of predict_errors.py (valid bases, one argument made negative),
#: tried after its enumeration of every argument with every kind of bad value.
ERROR_EXAMPLES = 15

#: The documented bounds of the made-up values (a table row may lie outside them: the tiny test
#: decoder has fewer than 1e8 parameters).
BW_GBS = (50.0, 20_000.0)
PEAK_TFLOPS = (1.0, 5_000.0)
PARAMS_READ = (1e8, 2e12)
BYTES_PER_WEIGHT = (0.25, 4.0)
LAYERS = (1, 160)
KV_HEADS = (1, 64)
HEAD_DIMS = (16, 32, 64, 80, 96, 128, 192, 256, 512)
BYTES_PER_VALUE = (0.5, 1.0, 2.0, 4.0)
BATCH = (1, 4096)
CONTEXT = (0, 2**20)
INTENSITY = (0.01, 1e5)
SCALE = (1.5, 64.0)
#: The laws' other draws: which KV argument is scaled and by what, the context a law starts from
#: and its factor, and the argument made negative in the ValueError law and its magnitude.
KV_ARGUMENT, KV_FACTOR = (0, 3), (2, 8)
CONTEXT_FROM, CONTEXT_FACTOR = (1024, 2**20), (2, 16)
ERROR_ARGUMENT, ERROR_MAGNITUDE = (0, 6), (1e-6, 1e15)


def _floats(bounds: tuple[float, float]):
    return st.floats(min_value=bounds[0], max_value=bounds[1], allow_nan=False, allow_infinity=False)


def _ints(bounds: tuple[int, int]):
    return st.integers(*bounds)


def table_gpus() -> list[GpuSpec]:
    """The hardware table's machines that have a bf16 peak (shared/data/hardware.yml)."""
    return [GpuSpec(d.bw_gbs, d.peak_bf16_tflops, d.name) for d in tables.devices().values()
            if d.peak_bf16_tflops]


def table_models() -> list:
    """The model table's rows (shared/data/models.yml)."""
    return list(tables.models().values())


def gpu_specs():
    """Machines from the hardware table and made-up ones: bandwidth 50-20,000 GB/s, peak 1-5,000 TFLOP/s."""
    made_up = st.builds(GpuSpec, bw_gbs=_floats(BW_GBS), peak_tflops=_floats(PEAK_TFLOPS))
    return st.one_of(st.sampled_from(table_gpus()), made_up)


def _table_models():
    fmts = [f.bytes_per_weight for f in tables.formats().values()]
    rows = [(m.params_read(), m.layers, m.kv_heads, m.head_dim, m.name) for m in table_models()]
    return st.builds(lambda row, bpw, bpv: ModelShape(row[0], bpw, row[1], row[2], row[3], bpv, row[4]),
                     st.sampled_from(rows), st.sampled_from(fmts), st.sampled_from([1.0, 2.0]))


def model_shapes():
    """Models from the table in its weight formats, and made-up ones: 1e8-2e12 parameters,
    0.25-4 bytes per weight, 1-160 layers, 1-64 KV heads, head_dim 16-512, 0.5-4 bytes per value."""
    made_up = st.builds(
        ModelShape,
        params_read=_floats(PARAMS_READ),
        bytes_per_weight=st.one_of(st.sampled_from([0.5, 1.0, 2.0, 4.0]), _floats(BYTES_PER_WEIGHT)),
        layers=_ints(LAYERS), kv_heads=_ints(KV_HEADS),
        head_dim=st.sampled_from(HEAD_DIMS),
        bytes_per_value=st.sampled_from(BYTES_PER_VALUE),
    )
    return st.one_of(_table_models(), made_up)


def batches():
    """Streams per step: 1 to 4,096."""
    return _ints(BATCH)


def contexts():
    """Tokens in each stream's KV cache: 0 to 1,048,576."""
    return st.one_of(st.just(0), st.integers(1, CONTEXT[1]))


def decode_configs():
    """A GPU, a model, a batch and a context together."""
    return st.builds(DecodeConfig, gpu=gpu_specs(), model=model_shapes(), batch=batches(), context=contexts())


def intensities():
    """Arithmetic intensities in FLOPs per byte: 0.01 to 100,000."""
    return _floats(INTENSITY)


def scale_factors():
    """Factors a quantity is scaled by in a law: 1.5 to 64 (never 1, so a change must show)."""
    return st.one_of(st.sampled_from([2.0, 4.0, 10.0]), _floats(SCALE))


def batch_pairs():
    """A decode setting with two batch sizes ``small <= big``: (config, small, big), big up to 4,097."""
    return st.tuples(decode_configs(), batches()).map(
        lambda t: (t[0], min(t[0].batch, t[1]), max(t[0].batch, t[1]) + 1))


def laws() -> dict:
    """Each law's name in law_cases.json -> (the strategy its cases are drawn from, how many).

    The law's name is its check's id; the ValueError checks of predict_errors.py, one per
    function, share ``errors_negative_argument``.
    """
    model_gpu = st.tuples(model_shapes(), gpu_specs())
    return {
        "law_bandwidth_doubles": (model_gpu, MAX_EXAMPLES),
        "law_bytes_halve": (model_gpu, MAX_EXAMPLES),
        "law_kv_linear": (st.tuples(model_shapes(), _ints(KV_ARGUMENT), _ints(KV_FACTOR)), MAX_EXAMPLES),
        "law_roofline_min": (st.tuples(gpu_specs(), intensities()), MAX_EXAMPLES),
        "law_ridge_meets": (st.tuples(gpu_specs(), scale_factors()), MAX_EXAMPLES),
        "law_per_stream_never_rises": (batch_pairs(), MAX_EXAMPLES),
        "law_total_never_falls": (batch_pairs(), MAX_EXAMPLES),
        "law_compute_roof_caps": (decode_configs(), MAX_EXAMPLES),
        "law_context_costs": (st.tuples(decode_configs(), _ints(CONTEXT_FROM), _ints(CONTEXT_FACTOR)),
                              MAX_EXAMPLES),
        "law_batch1_is_predict": (model_gpu, MAX_EXAMPLES),
        "errors_negative_argument": (st.tuples(model_shapes(), gpu_specs(), _ints(ERROR_ARGUMENT),
                                               _floats(ERROR_MAGNITUDE)), ERROR_EXAMPLES),
    }


def is_close(a: float, b: float, rel: float = 1e-9) -> bool:
    """Relative closeness for finite positive quantities (a NaN or inf is never close)."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b))


def run_fresh(law: str, body, profile: settings) -> None:
    """``cases.run_law`` without the table: ``body`` on cases hypothesis draws afresh from
    ``law``'s strategy under ``profile`` (a failure is shrunk, then raised). For the tests and
    bench/law_verdicts.py, which hunt for what the table misses; never for grading.

    A call that hangs, crashes or finds the module missing stops the law at once and is raised
    as it is, as the table's run does (no shrinking through time limits).
    """
    from autograder.api import StudentCrashed, StudentMissing, StudentTimeout

    strategy, _count = laws()[law]
    fatal: list[Exception] = []

    @profile
    @given(strategy)
    def fresh(case):
        if fatal:
            raise fatal[0]
        try:
            body(case)
        except (StudentTimeout, StudentCrashed, StudentMissing) as exc:
            fatal.append(exc)
            raise

    try:
        fresh()
    except Exception:
        if fatal:
            raise fatal[0] from None
        raise
