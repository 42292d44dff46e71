"""flops.py as a CPU can check it: plausible TFLOP/s, n and dtype honoured, bad arguments refused.

These run with device='cpu' on the grading machine with small matrices. Counting 2n^3 and the
GPU's peak are checked on the simulated GPU (gpu_flops_counted_2n3).
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, Dtype, StudentRaised, check
from autograder.lessons.why17.checks import predict_oracle as oracle

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
#: Student / reference TFLOP/s on the same CPU in the same run: a correct matmul_tflops reads within
#: CPU_SPREAD of 1 (another style, a timed iters that flops_honours_args charges, the machine's load
#: between the two calls), a units slip within CPU_SPREAD of one of UNITS_FACTORS (FLOP/s, MFLOP/s,
#: GFLOP/s, PFLOP/s or ms for s), which flops_counted_2n3 charges. Neighbouring factors are 1e3
#: apart, so no reading is within CPU_SPREAD of two of them.
CPU_SPREAD = 30.0
UNITS_FACTORS = (1.0, 1e12, 1e9, 1e6, 1e3, 1e-3)
#: Matrix side and repetitions: a fraction of a second on one core.
PROBE_N, PROBE_ITERS = 128, 3
#: Calls of the student's and the reference's matmul_tflops, interleaved; each side's fastest
#: counts. A call lasts well under a millisecond, so one preemption on a loaded grading machine can
#: slow it a hundredfold; load only ever slows a call, so the best of a few reads the machine.
PROBE_CALLS = 5
#: Matrix side, two repetition counts (their matmul counts must differ by their difference: warm-ups
#: cancel) and a dtype no default would pick.
HONOUR_N, HONOUR_ITERS, HONOUR_DTYPE = 96, (3, 7), "float64"
#: Most matmuls per unit of iters a correct matmul_tflops may run: a batch of pairs per launch
#: (the rate counts them all), or one launch of a stack of iters pairs warmed up as it is timed.
MAX_PER_ITER = 10
BUILD = "Reread: Build It (matmul_tflops)."


def plausible_tflops(value, what: str, high: float) -> float:
    tflops = oracle.number(value, what, "TFLOP/s")
    if not math.isfinite(tflops) or tflops <= 0:
        raise CheckFailed(f"{what} returned {tflops!r} TFLOP/s; a throughput is a positive finite number. {BUILD}")
    if tflops > high:
        if any(LOW_TFLOPS <= tflops / u <= high for u in UNITS_FACTORS if u > 1):
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
    """Judged against the reference timed on the same CPU in the same grading, never against a
    fixed number: how fast the grading machine is at that moment moves both alike (the best of
    PROBE_CALLS interleaved calls each, so one preempted call does not decide)."""
    args = dict(iters=PROBE_ITERS, dtype=Dtype("float32"), device=CPU)
    tflops = reference = 0.0
    for _ in range(PROBE_CALLS):
        value = ctx.call("flops", "matmul_tflops", PROBE_N, **args)
        tflops = max(tflops, plausible_tflops(value, "matmul_tflops", math.inf))
        theirs = ctx.reference("flops", "matmul_tflops", PROBE_N, **args)
        reference = max(reference, oracle.number(theirs, "the reference", "TFLOP/s"))
    ratio = tflops / reference
    unit = min(UNITS_FACTORS, key=lambda u: abs(math.log(ratio / u)))
    if abs(math.log(ratio / unit)) <= math.log(CPU_SPREAD):
        return   # right, or a units slip that flops_counted_2n3 names on the simulated GPU (charged once)
    raise CheckFailed(f"matmul_tflops(n={PROBE_N}) read {oracle.fmt(ratio)}x the TFLOP/s of the reference "
                      "timed on the same CPU just now, which no unit explains: time only the n x n matmuls "
                      f"and report 2 n^3 FLOPs / seconds / 1e12. {BUILD}")


@check("flops_honours_args", task=TASK, name="matmul_tflops multiplies n x n matrices of the dtype asked for",
       files="flops")
def honours_args(ctx):
    counts = {}
    for iters in HONOUR_ITERS:
        _value, ops = ctx.call_watched("flops", "matmul_tflops", HONOUR_N, iters=iters,
                                       dtype=Dtype(HONOUR_DTYPE), device=CPU)
        # a matmul is what torch's FLOP registry counts (mm, bmm, addmm, baddbmm, ...), however
        # the Python spelled it (@, linalg.matmul, multi_dot, einsum, tensordot, F.linear)
        matmuls = [op for op in ops if op["flops"] > 0]
        where = f"matmul_tflops(n={HONOUR_N}, iters={iters}, dtype=torch.{HONOUR_DTYPE}, device='cpu')"
        if not matmuls:
            raise CheckFailed(f"{where} did no torch matmul (@, torch.matmul or torch.mm) that the grader could "
                              f"see. {BUILD}")
        right = [op for op in matmuls if _batch(op, HONOUR_N) and set(op["dtypes"]) == {HONOUR_DTYPE}]
        if not right:
            seen = matmuls[0]
            raise CheckFailed(f"{where} multiplied shapes {seen['shapes']} of dtype {'/'.join(seen['dtypes'])}; "
                              f"use n x n matrices of the dtype passed in. {BUILD}")
        counts[iters] = sum(op["count"] * _batch(op, HONOUR_N) for op in right)
        if counts[iters] < iters:
            raise CheckFailed(f"{where} ran {counts[iters]} matmuls; time iters of them. {BUILD}")
    (few, many), (c_few, c_many) = HONOUR_ITERS, (counts[i] for i in HONOUR_ITERS)
    # Warm-ups cancel out of the difference; ignoring iters makes it 0. Each iteration runs one
    # matmul, up to two (a warm-up that scales with iters), or a whole number of them.
    per_iter = (c_many - c_few) / (many - few)
    if not (1 <= per_iter <= MAX_PER_ITER and (per_iter <= 2 or per_iter.is_integer())):
        raise CheckFailed(f"matmul_tflops ran {c_few} matmuls with iters={few} and {c_many} with iters={many}; "
                          f"the timed loop should run iters of them. {BUILD}")


def _batch(op: dict, n: int) -> int:
    """How many n x n by n x n products an op with FLOPs did (its FLOPs / 2 n^3), or 0 when its
    matrices are not n x n or its FLOPs are no whole number of such products."""
    matrices = [s for s in op["shapes"] if len(s) >= 2]
    batch, rest = divmod(op["flops"], 2 * n**3)
    if len(matrices) < 2 or any(s[-2:] != [n, n] for s in matrices) or rest:
        return 0
    return int(batch)


@check("flops_rejects_bad", task=TASK, name="matmul_tflops raises ValueError on bad n and iters", files="flops")
def rejects_bad(ctx):
    good = dict(n=8, iters=1, dtype=Dtype("float32"), device=CPU)
    for name, bad in (("n", 0), ("n", -8), ("n", 8.5), ("iters", 0), ("iters", -1), ("iters", 1.5)):
        try:
            value = ctx.call("flops", "matmul_tflops", **{**good, name: bad})
        except StudentRaised as exc:
            if exc.exc_type == "ValueError":
                continue
            raise CheckFailed(f"matmul_tflops with {name}={bad!r} raised {exc.exc_type} ({exc.message}); "
                              "check the argument first "
                              f"and raise ValueError with a clear message. {BUILD}") from None
        raise CheckFailed(f"matmul_tflops with {name}={bad!r} returned {value!r}; raise ValueError instead: "
                          f"n and iters are positive integers. {BUILD}")


@check("flops_peak_plausible", task=TASK, name="measured_peak_tflops returns a plausible TFLOP/s on the CPU",
       files="flops")
def peak_plausible(ctx):
    plausible_tflops(ctx.call("flops", "measured_peak_tflops", device=CPU), "measured_peak_tflops", HIGH_TFLOPS_ANY)
