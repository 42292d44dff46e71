"""Hypothesis strategies as domain objects: GPUs, model shapes, decode configurations.

Each dimension has its own bounds and its own kind of number, so an argument mix-up shows: a
bandwidth in GB/s (50 to 20,000), a peak in TFLOP/s (1 to 5,000), parameter counts (1e8 to 2e12),
bytes per weight (0.25 to 4), layer and head counts as integers. Rows of shared/data tables are
mixed in, so the lesson's real machines and models are always among the cases.

The grading profile (``GRADING``) is derandomized with no deadline and no example database, so a
grade never depends on luck, machine load or an earlier run.
"""
from __future__ import annotations

import copy
import math
from contextlib import contextmanager
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st

from shared import tables

#: Examples per law. Each costs a few round trips to the child (about 0.1 ms each on an idle
#: machine) and a few ms of hypothesis's own work; 17 laws x 30 examples grade in about 2 s.
MAX_EXAMPLES = 30

GRADING = settings(
    derandomize=True, deadline=None, database=None, max_examples=MAX_EXAMPLES,
    suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
    verbosity=Verbosity.quiet, phases=(Phase.explicit, Phase.generate, Phase.shrink),
)


@dataclass(frozen=True)
class GpuSpec:
    """A machine: ``bw_gbs`` in GB/s (1e9 bytes/s), ``peak_tflops`` in TFLOP/s (1e12 FLOP/s)."""

    bw_gbs: float
    peak_tflops: float
    name: str = "a made-up device"

    @property
    def ridge(self) -> float:
        """FLOPs per byte where the roofs meet."""
        return self.peak_tflops * 1e12 / (self.bw_gbs * 1e9)


@dataclass(frozen=True)
class ModelShape:
    """A model: ``params_read`` parameters per token, ``bytes_per_weight`` bytes, KV cache shape."""

    params_read: float
    bytes_per_weight: float
    layers: int
    kv_heads: int
    head_dim: int
    bytes_per_value: float
    name: str = "a made-up model"

    @property
    def kv_bytes_per_token(self) -> float:
        return 2.0 * self.layers * self.kv_heads * self.head_dim * self.bytes_per_value


@dataclass(frozen=True)
class DecodeConfig:
    """One decode setting: a GPU, a model, ``batch`` streams, ``context`` tokens each."""

    gpu: GpuSpec
    model: ModelShape
    batch: int
    context: int


def _floats(lo: float, hi: float):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def _table_gpus():
    rows = [GpuSpec(d.bw_gbs, d.peak_bf16_tflops, d.name) for d in tables.devices().values()
            if d.peak_bf16_tflops]
    return st.sampled_from(rows)


def gpu_specs():
    """Machines from the hardware table and made-up ones: bandwidth 50-20,000 GB/s, peak 1-5,000 TFLOP/s."""
    made_up = st.builds(GpuSpec, bw_gbs=_floats(50.0, 20_000.0), peak_tflops=_floats(1.0, 5_000.0))
    return st.one_of(_table_gpus(), made_up)


def _table_models():
    fmts = [f.bytes_per_weight for f in tables.formats().values()]
    rows = [(m.params_read(), m.layers, m.kv_heads, m.head_dim, m.name) for m in tables.models().values()]
    return st.builds(lambda row, bpw, bpv: ModelShape(row[0], bpw, row[1], row[2], row[3], bpv, row[4]),
                     st.sampled_from(rows), st.sampled_from(fmts), st.sampled_from([1.0, 2.0]))


def model_shapes():
    """Models from the table in its weight formats, and made-up ones: 1e8-2e12 parameters,
    0.25-4 bytes per weight, 1-160 layers, 1-64 KV heads, head_dim 16-512, 0.5-4 bytes per value."""
    made_up = st.builds(
        ModelShape,
        params_read=_floats(1e8, 2e12),
        bytes_per_weight=st.one_of(st.sampled_from([0.5, 1.0, 2.0, 4.0]), _floats(0.25, 4.0)),
        layers=st.integers(1, 160), kv_heads=st.integers(1, 64),
        head_dim=st.sampled_from([16, 32, 64, 80, 96, 128, 192, 256, 512]),
        bytes_per_value=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    )
    return st.one_of(_table_models(), made_up)


def batches():
    """Streams per step: 1 to 4,096."""
    return st.integers(1, 4096)


def contexts():
    """Tokens in each stream's KV cache: 0 to 1,048,576."""
    return st.one_of(st.just(0), st.integers(1, 2**20))


def decode_configs():
    """A GPU, a model, a batch and a context together."""
    return st.builds(DecodeConfig, gpu=gpu_specs(), model=model_shapes(), batch=batches(), context=contexts())


def intensities():
    """Arithmetic intensities in FLOPs per byte: 0.01 to 100,000."""
    return _floats(0.01, 1e5)


def scale_factors():
    """Factors a quantity is scaled by in a law: 1.5 to 64 (never 1, so a change must show)."""
    return st.one_of(st.sampled_from([2.0, 4.0, 10.0]), _floats(1.5, 64.0))


def is_close(a: float, b: float, rel: float = 1e-9) -> bool:
    """Relative closeness for finite positive quantities (a NaN or inf is never close)."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b))


def run_law(strategy, body, max_examples: int = MAX_EXAMPLES) -> None:
    """Check ``body(case)`` for cases drawn from ``strategy`` under the grading profile.

    ``body`` raises CheckFailed with a plain-words message for a falsifying case; hypothesis
    shrinks it to a simple one first. A call that hangs, crashes or finds the module missing
    stops the law at once (no shrinking through time limits) and is re-raised as it is.

    The profile is derandomized, so for a law that holds hypothesis draws the same cases every
    time: they are shipped in drawn_cases.json (drawn.py), and a law the file does not hold
    records them on its first run in a process that holds; every run that knows them replays
    them without hypothesis. Only a case that fails sends the law back through hypothesis, which
    finds that same first failing case and shrinks it, so verdicts and messages are those of a
    plain hypothesis run; a class of correct work skips hypothesis's own work (about half of the
    grader's CPU time per submission).
    """
    from autograder.api import StudentCrashed, StudentMissing, StudentTimeout
    from autograder.lessons.why17 import drawn

    key = _key(strategy, body, max_examples)
    cases = _DRAWN.get(key)
    if cases is None:
        cases = drawn.shipped().get(key)
    if cases is None:
        seen: list = []

        def recorded(case):
            seen.append(copy.deepcopy(case))    # before the body, which may change it
            body(case)
        _hypothesis(strategy, recorded, max_examples)   # a failure raises: nothing is kept
        if len(_DRAWN) >= _DRAWN_MAX:
            _DRAWN.clear()
        _DRAWN[key] = tuple(seen)
        return
    try:
        for case in cases:
            body(copy.deepcopy(case))
        return
    except (StudentTimeout, StudentCrashed, StudentMissing):
        raise          # hypothesis would stop at this same case and re-raise it as it is
    except Exception:  # a failing case: hypothesis shrinks it and words it
        pass
    _hypothesis(strategy, body, max_examples)


#: (the law's module and name, the strategy, max_examples) -> the cases hypothesis draws for it.
_DRAWN: dict[tuple, tuple] = {}
#: Most laws remembered: a law whose strategy is built from per-student values gets new keys.
_DRAWN_MAX = 512


def _key(strategy, body, max_examples: int) -> tuple:
    """What the cases of a law depend on: its strategy (by repr) and example count, and the law
    it is (module and qualified name; drawn.py also checks the module's source is unchanged)."""
    return (getattr(body, "__module__", None), getattr(body, "__qualname__", repr(body)),
            repr(strategy), max_examples)


def _hypothesis(strategy, body, max_examples: int) -> None:
    """``body`` under hypothesis with the grading profile (the law of ``run_law``)."""
    from hypothesis import given

    from autograder.api import StudentCrashed, StudentMissing, StudentTimeout

    fatal: list[Exception] = []

    # One definition for every law: with derandomize, hypothesis seeds a test from its code, so
    # every law draws from the same seed and its cases depend on its strategy alone.
    @settings(GRADING, max_examples=max_examples)
    @given(strategy)
    def law(case):
        if fatal:
            raise fatal[0]
        try:
            body(case)
        except (StudentTimeout, StudentCrashed, StudentMissing) as exc:
            fatal.append(exc)
            raise

    try:
        with strategy_alone():
            law()
    except Exception:
        if fatal:
            raise fatal[0] from None
        raise


@contextmanager
def strategy_alone():
    """Hypothesis draws from its strategy alone inside this block, not from the modules loaded.

    Hypothesis 6.x also draws "local constants": numbers it finds in the source of every local
    module in ``sys.modules`` (``hypothesis.internal.conjecture.providers._get_local_constants``).
    A law's cases would then depend on which of the grader's modules a process has imported (the
    ``grade`` command, a grade-all worker, a pytest worker and Gradescope import different sets)
    and on every literal in them, so a grader edit anywhere could change a student's cases. This
    empties that pool for the block, and clears the cache of permitted constants on the way in and
    out so a cache filled outside the block cannot leak in, nor ours out. It goes through a
    hypothesis internal; tests/lessons/why17/test_law_replay.py fails if that stops working.
    """
    from hypothesis.internal.conjecture import providers

    before, empty = providers._get_local_constants, providers.Constants()
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = before
        providers.CONSTANTS_CACHE.cache.clear()
