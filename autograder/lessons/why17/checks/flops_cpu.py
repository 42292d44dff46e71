"""flops.py as a CPU can check it: plausible TFLOP/s, n and dtype honoured, bad arguments refused.

These run with device='cpu' on the grading machine with small matrices. Counting 2n^3 and the
GPU's peak are checked on the simulated GPU (gpu_flops_counted_2n3).
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, Dtype, check
from autograder.lessons.why17.checks import gpu, timed
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.checks.refusal import refuses

TASK = "task2"
CPU = "cpu"

# Plausible CPU matmul throughput, in TFLOP/s.
# Low: 1e-6 TFLOP/s is 1 MFLOP/s, a thousand times below a plain scalar loop on any CPU of the last
# twenty years (so a grading machine loaded a hundredfold stays above it); below it the timed loop
# holds something else or the unit is wrong by a million. Whether it is TFLOP/s and 2 n^3 is the
# simulated GPU's check (gpu_flops_counted_2n3).
# High: the largest two-socket servers reach about 20 TFLOP/s in float32 with AVX-512 (2 x 96 cores
# x 32 FLOP/cycle x 3 GHz ~ 18); matrix extensions (AMX) reach a few hundred in bf16. GFLOP/s on an
# ordinary CPU stays under these, but FLOP/s or GFLOP/s on a fast one does not: a number that a
# units factor brings back under them is that slip, charged once on the simulated GPU.
LOW_TFLOPS = 1e-6
HIGH_TFLOPS_ANY = 1000.0
#: A number above the high bound that one of these factors brings back into range is a units slip
#: (FLOP/s, kFLOP/s, MFLOP/s, GFLOP/s): flops_counted_2n3 charges it on the simulated GPU,
#: where the true answer is known, so it is not charged again here (one mistake, one charge).
UNITS_FACTORS = (1e12, 1e9, 1e6, 1e3)
#: Matrix side and repetitions of the plausibility call: a fraction of a millisecond on one core.
PROBE_N, PROBE_ITERS = 128, 3
#: Matrix side, two repetition counts (whose slips differ: timed.py) and a dtype no default would
#: pick.
HONOUR_N, HONOUR_ITERS, HONOUR_DTYPE = 96, (3, 7), "float64"
BUILD = "Reread: Build It (matmul_tflops)."


def plausible_tflops(value, what: str) -> float:
    """``value`` as TFLOP/s, or CheckFailed naming the slip it most likely is."""
    tflops = oracle.number(value, what, "TFLOP/s")
    if not math.isfinite(tflops) or tflops <= 0:
        raise CheckFailed(f"{what} returned {tflops!r} TFLOP/s; a throughput is a positive finite number. {BUILD}")
    if tflops > HIGH_TFLOPS_ANY:
        if any(LOW_TFLOPS <= tflops / u <= HIGH_TFLOPS_ANY for u in UNITS_FACTORS):
            return tflops                               # a units slip: flops_counted_2n3's to charge
        raise CheckFailed(f"{what} returned {oracle.fmt(tflops)} TFLOP/s on a CPU, beyond any CPU: report "
                          f"TFLOP/s (FLOPs / seconds / 1e12), with 2 n^3 FLOPs per matmul. {BUILD}")
    if tflops < LOW_TFLOPS:
        raise CheckFailed(f"{what} returned {oracle.fmt(tflops)} TFLOP/s on a CPU, far below any CPU: report "
                          f"TFLOP/s (1e12 FLOP/s) and keep matrix creation out of the timed loop. {BUILD}")
    return tflops


@check("flops_returns_tflops", task=TASK, name="matmul_tflops returns a plausible TFLOP/s on the CPU",
       files="flops")
def returns_tflops(ctx):
    """Judged by the number alone, against bounds no CPU's speed or load reaches (LOW_TFLOPS,
    HIGH_TFLOPS_ANY), as bw_returns_gbs judges copy_bandwidth. Never against the reference timed
    in another process: two processes' sub-millisecond timings on a loaded machine can differ by
    any factor, and a verdict must not follow them. Whether the number is TFLOP/s of 2 n^3 FLOPs
    is the simulated GPU's check (gpu_flops_counted_2n3), whether it follows the work it timed is
    flops_honours_args's."""
    value = ctx.call("flops", "matmul_tflops", PROBE_N, iters=PROBE_ITERS, dtype=Dtype("float32"), device=CPU)
    plausible_tflops(value, "matmul_tflops")


@check("flops_rejects_bad", task=TASK, name="matmul_tflops raises ValueError on bad n and iters", files="flops")
def rejects_bad(ctx):
    good = dict(n=8, iters=1, dtype=Dtype("float32"), device=CPU)
    for name, bad in (("n", 0), ("n", -8), ("n", 8.5), ("iters", 0), ("iters", -1), ("iters", 1.5)):
        refuses(ctx, "flops", "matmul_tflops", {**good, name: bad}, f"{name}={bad!r}",
                "n and iters are positive integers", BUILD)


@check("flops_peak_plausible", task=TASK, name="measured_peak_tflops returns a plausible TFLOP/s on the CPU",
       files="flops")
def peak_plausible(ctx):
    plausible_tflops(ctx.call("flops", "measured_peak_tflops", device=CPU), "measured_peak_tflops")


# Registered after the file's other CPU checks, so they run first: this one ends on the simulated
# GPU (gpu.charge_shown), and they then share the file's one device-free child.
@check("flops_honours_args", task=TASK, name="matmul_tflops multiplies n x n matrices of the dtype asked for",
       files="flops")
def honours_args(ctx):
    """Judges the work between the clock readings (timed.py), not the whole call: n x n products
    of the dtype asked for are timed, and the number returned follows the products timed, with
    iters=3 as with iters=7 (a batch of pairs per launch counts each pair; warm-ups outside the
    timed region, a count a timer picks, a warm-up once per shape: none matters).
    It also fails on what the simulated GPU shows and points here for (``gpu.charge_shown``)."""
    _honours_args_on_cpu(ctx)
    gpu.charge_shown(ctx, "flops_honours_args", "matmul_tflops")


def _honours_args_on_cpu(ctx) -> None:
    follows = timed.Follows("matmuls", "n x n matmuls")
    for iters in HONOUR_ITERS:
        value, record = ctx.call_watched("flops", "matmul_tflops", HONOUR_N, iters=iters,
                                         dtype=Dtype(HONOUR_DTYPE), device=CPU)
        where = f"matmul_tflops(n={HONOUR_N}, iters={iters}, dtype=torch.{HONOUR_DTYPE}, device='cpu')"
        call = timed.Timed(record)
        _judge_products(call, where)
        if not follows.add(iters, call, value, 2 * HONOUR_N**3 / 1e12, _products):
            return      # no number to follow (flops_returns_tflops's), or a trace too long to place
    problem = follows.problem("matmul_tflops", f"report 2 n^3 FLOPs per matmul timed over the time they span. {BUILD}")
    if problem:
        raise CheckFailed(problem)


def _products(op: dict) -> int:
    """How many n x n by n x n products of the dtype asked for one run of ``op`` did (its FLOPs
    over 2 n^3: a batch of pairs counts each pair), or 0 when its matrices are not n x n or its
    FLOPs are no whole number of such products. A block of rows of a product is not counted: an
    (n/2 x n) @ (n x n) product reported as an n x n one cannot be told from blocks that make one
    (fresh outputs make any union of what was written useless)."""
    matrices = [s for s in op["shapes"] if len(s) >= 2]
    batch, rest = divmod(op["flops"], 2 * HONOUR_N**3)
    if (set(op["dtypes"]) != {HONOUR_DTYPE} or len(matrices) < 2 or rest
            or any(s[-2:] != [HONOUR_N, HONOUR_N] for s in matrices)):
        return 0
    return int(batch)


def _judge_products(call: timed.Timed, where: str) -> None:
    """CheckFailed unless the call did n x n products of the dtype between two clock readings."""
    # a matmul is what torch's FLOP registry counts (mm, bmm, addmm, baddbmm, ...), however the
    # Python spelled it (@, linalg.matmul, multi_dot, einsum, tensordot, F.linear)
    matmuls = [op for op in call.ops() if op["flops"] > 0]
    if not matmuls:
        raise CheckFailed(f"{where} did no torch matmul (@, torch.matmul or torch.mm) between two clock readings "
                          f"that the grader could see. {BUILD}")
    if not any(_products(op) for op in matmuls):
        seen = matmuls[0]
        raise CheckFailed(f"{where} multiplied shapes {seen['shapes']} of dtype {'/'.join(seen['dtypes'])}; "
                          f"use n x n matrices of the dtype passed in. {BUILD}")
