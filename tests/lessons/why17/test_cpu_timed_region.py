"""The CPU argument checks judge the work inside the timed region (checks/timed.py): the ops
recorded between the clock readings that bracket the returned number.

Each timing function here runs in this process under the real watch (autograder/runtime/
torchwatch.py) with real torch copies and matmuls, and reads a scripted clock: every reading
moves it by a step hypothesis draws, however unlike the work those steps are. So a verdict that
held only on some machine's timings would show here: correct styles pass whatever the clock
reads, and the slips fail whatever it reads.
"""
from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.api import CheckFailed
from autograder.lessons.why17.checks import bw_cpu, flops_cpu
from autograder.runtime import torchwatch
from autograder.runtime.dtypes import to_torch

torch = pytest.importorskip("torch")

#: Steps of the scripted clock between two readings, in seconds: from 100 us (a hundred times the
#: coarsest clock's resolution, timed.RESOLUTION_S, below which a window tells nothing) to a second.
STEPS = st.lists(st.floats(1e-4, 1.0), min_size=1, max_size=40)
#: Each example copies and multiplies for real: a few per style, derandomized, no deadline.
CLOCKS = settings(max_examples=8, deadline=None, derandomize=True, database=None)
#: The buffer the bw check asks for, smaller here (the grading child copies 3 MiB).
SMALL_BYTES = 64 * 1024 + 4096


@pytest.fixture(autouse=True)
def small_buffer(monkeypatch):
    monkeypatch.setattr(bw_cpu, "HONOUR_BYTES", SMALL_BYTES)


class ScriptedClock:
    """A clock with CpuClock's ``readers``: each reading moves it by the next of ``steps``."""

    def __init__(self, steps):
        self.readers, self.steps, self.t, self.reads = [], list(steps), 100.0, 0

    def __call__(self) -> float:
        self.t += self.steps[self.reads % len(self.steps)]
        self.reads += 1
        for reader in self.readers:
            reader(self.t)
        return self.t


class Ctx:
    """What the checks ask of a Context, for a function run here: ``fn(clock, *args, **kwargs)``."""

    def __init__(self, fn, steps):
        self.fn, self.steps = fn, steps

    def call_watched(self, _module, _function, *args, **kwargs):
        clock = ScriptedClock(self.steps)
        with torchwatch.TorchWatch(clock) as watch:
            value = self.fn(clock, *to_torch(args), **to_torch(kwargs))
        return value, {"ops": watch.summary(), "trace": watch.trace()}


def _buffers(n_bytes):
    return torch.empty(n_bytes, dtype=torch.uint8), torch.empty(n_bytes, dtype=torch.uint8)


def bw_reference(clock, n_bytes, iters, device):
    src, dst = _buffers(n_bytes)
    for _ in range(3):
        dst.copy_(src)
    start = clock()
    for _ in range(iters):
        dst.copy_(src)
    return 2 * n_bytes * iters / (clock() - start) / 1e9


def bw_autorange(clock, n_bytes, iters, device):
    """timeit's autorange: blocks of iters copies, the timer picks how many (here: by the clock)."""
    src, dst = _buffers(n_bytes)
    number = 1
    while True:
        start = clock()
        for _ in range(number * iters):
            dst.copy_(src)
        total = clock() - start
        if total >= 0.2 or number >= 64:
            return 2 * n_bytes * iters / (total / number) / 1e9
        number *= 2


def bw_median_per_copy(clock, n_bytes, iters, device):
    """Each copy timed alone, the median of an even number of them (the mean of the middle two)."""
    src, dst = _buffers(n_bytes)
    dst.copy_(src)
    times = []
    for _ in range(2 * iters):
        start = clock()
        dst.copy_(src)
        times.append(clock() - start)
    return 2 * n_bytes / statistics.median(times) / 1e9


_WARMED = set()


def bw_warm_once_elsewhere(clock, n_bytes, iters, device):
    """A warm-up of another size once per process, then a loop that ignores iters but reports
    the rate of what it timed; a watchdog reading on entry."""
    clock()
    if "cpu" not in _WARMED:
        big, other = _buffers(4 * n_bytes)
        other.copy_(big)
        _WARMED.add("cpu")
    src, dst = _buffers(n_bytes)
    start = clock()
    for _ in range(5):
        dst.copy_(src)
    return 2 * n_bytes * 5 / (clock() - start) / 1e9


def bw_bytes_per_s(clock, n_bytes, iters, device):
    return bw_reference(clock, n_bytes, iters, device) * 1e9           # a units slip: charged elsewhere


def bw_fixed_count(clock, n_bytes, iters, device):
    src, dst = _buffers(n_bytes)
    start = clock()
    for _ in range(50):
        dst.copy_(src)
    return 2 * n_bytes * iters / (clock() - start) / 1e9


def bw_warmups_counted(clock, n_bytes, iters, device):
    src, dst = _buffers(n_bytes)
    for _ in range(3):
        dst.copy_(src)
    start = clock()
    for _ in range(iters):
        dst.copy_(src)
    return 2 * n_bytes * (iters + 3) / (clock() - start) / 1e9


def bw_fill_from_one_byte(clock, n_bytes, iters, device):
    """A source expanded from one byte: each 'copy' reads one byte, a fill."""
    src, dst = torch.zeros(1, dtype=torch.uint8).expand(n_bytes), torch.empty(n_bytes, dtype=torch.uint8)
    start = clock()
    for _ in range(iters):
        dst.copy_(src)
    return 2 * n_bytes * iters / (clock() - start) / 1e9


def bw_on_meta(clock, n_bytes, iters, device):
    """Copies of tensors on the meta device: the dispatcher sees them, no memory moves."""
    src, dst = (torch.empty(n_bytes, dtype=torch.uint8, device="meta") for _ in range(2))
    start = clock()
    for _ in range(iters):
        dst.copy_(src)
    return 2 * n_bytes * iters / (clock() - start) / 1e9


def bw_untimed(clock, n_bytes, iters, device):
    src, dst = _buffers(n_bytes)
    for _ in range(iters):
        dst.copy_(src)
    return 20.0


def flops_reference(clock, n, iters, dtype, device, timed=None):
    a, b = torch.ones(n, n, dtype=dtype), torch.ones(n, n, dtype=dtype)
    a @ b
    start = clock()
    for _ in range(iters if timed is None else timed(iters)):
        a @ b
    return 2 * n**3 * iters / (clock() - start) / 1e12


def flops_bmm_uncounted(clock, n, iters, dtype, device):
    """bmm over 4 pairs per launch, 2 n^3 counted per launch: a constant factor, charged on the GPU."""
    a, b = torch.ones(4, n, n, dtype=dtype), torch.ones(4, n, n, dtype=dtype)
    start = clock()
    for _ in range(iters):
        torch.bmm(a, b)
    return 2 * n**3 * iters / (clock() - start) / 1e12


def FULL(n):
    return n


def HALF(n):
    return n // 2


def flops_shapes(rows, inner, cols):
    """An (rows x inner) @ (inner x cols) product counted as an n x n one."""
    def timing(clock, n, iters, dtype, device):
        a, b = torch.ones(rows(n), inner(n), dtype=dtype), torch.ones(inner(n), cols(n), dtype=dtype)
        start = clock()
        for _ in range(iters):
            a @ b
        return 2 * n**3 * iters / (clock() - start) / 1e12
    return timing


GOOD = {"bw reference": (bw_cpu, bw_reference), "bw autorange": (bw_cpu, bw_autorange),
        "bw median of per-copy times": (bw_cpu, bw_median_per_copy),
        "bw warm-up once, of another size": (bw_cpu, bw_warm_once_elsewhere),
        "bw units slip": (bw_cpu, bw_bytes_per_s), "flops reference": (flops_cpu, flops_reference),
        "flops bmm uncounted": (flops_cpu, flops_bmm_uncounted)}
WRONG = {"bw fixed count, iters claimed": (bw_cpu, bw_fixed_count, "do not explain"),
         "bw warm-ups counted": (bw_cpu, bw_warmups_counted, "do not explain"),
         "bw nothing timed": (bw_cpu, bw_untimed, "between two clock readings"),
         "bw a fill from one byte": (bw_cpu, bw_fill_from_one_byte, "copied only"),
         "bw copies on meta": (bw_cpu, bw_on_meta, "never copied"),
         "flops off by one": (flops_cpu, lambda *a, **k: flops_reference(*a, **k, timed=lambda i: i - 1),
                              "do not explain"),
         "flops fixed count": (flops_cpu, lambda *a, **k: flops_reference(*a, **k, timed=lambda i: 20),
                               "do not explain"),
         "flops half-width B": (flops_cpu, flops_shapes(FULL, FULL, HALF), "multiplied shapes"),
         "flops half the rows": (flops_cpu, flops_shapes(HALF, FULL, FULL), "multiplied shapes"),
         "flops half the inner side": (flops_cpu, flops_shapes(FULL, HALF, FULL), "multiplied shapes")}


@pytest.mark.parametrize("name", sorted(GOOD))
@CLOCKS
@given(steps=STEPS)
def test_a_correct_style_passes_whatever_its_clock_reads(name, steps):
    module, fn = GOOD[name]
    _WARMED.clear()
    assert module.honours_args(Ctx(fn, steps)) is None


@pytest.mark.parametrize("name", sorted(WRONG))
@CLOCKS
@given(steps=STEPS)
def test_a_slip_in_the_timed_region_fails_whatever_its_clock_reads(name, steps):
    module, fn, words = WRONG[name]
    with pytest.raises(CheckFailed, match=words) as failed:
        module.honours_args(Ctx(fn, steps))
    assert len(str(failed.value).splitlines()) <= 3 and "Reread:" in str(failed.value)


def test_the_trace_places_each_reading_among_the_ops_and_merges_what_they_wrote():
    clock = ScriptedClock([0.5])
    src, dst = _buffers(4096)
    with torchwatch.TorchWatch(clock) as watch:
        dst.copy_(src)                                    # before any reading: outside every window
        clock(), clock()                                  # one run: no op between them
        for half in (slice(0, 2048), slice(2048, 4096)):
            dst[half].copy_(src[half])                    # two slices that write the buffer once
        clock()
    trace = watch.trace()
    assert trace["readings"] == [[100.5, 101.0, 2], [101.5, 101.5, 1]]
    ops = watch.summary()
    between = {(ops[i]["written_bytes"], count) for i, count in trace["stretches"][1]}
    assert between == {(2048, 2)} and trace["stretches"][2] == []
    (start, end), = trace["written"][1]
    assert (start, end - start) == (dst.data_ptr(), 4096)
