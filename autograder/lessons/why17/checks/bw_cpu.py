"""bw.py as a CPU can check it: plausible GB/s, arguments honoured, bad arguments refused.

These run with device='cpu' on the grading machine, whatever --device says, with small buffers
so they take well under a second. What only a GPU can show (synchronize, warm-up, the cache
cliff, bytes counted twice, GB/s units) is checked on the simulated GPU by gpu_*.py.
measured_bandwidth is left to those checks: on a CPU it needs a buffer 4x the last-level cache
(1.2 GB on a 300 MiB L3), seconds of copying that would dominate grading.
"""
from __future__ import annotations

import math

from autograder.api import CheckFailed, check
from autograder.lessons.why17.checks import gpu, timed
from autograder.lessons.why17.checks import predict_oracle as oracle
from autograder.lessons.why17.checks.refusal import refuses

TASK = "task1"
CPU = "cpu"
MiB = 2**20

# Plausible copy bandwidth of a CPU, in GB/s, copy counted as read + write. These bounds catch
# gross slips only; whether the number is GB/s rather than GiB/s or TB/s is the simulated GPU's
# check (gpu_units_gb_per_s), where the true answer is known.
# Low: 0.001 GB/s is 1 MB/s. DDR-400, twenty years old, gives 3.2 GB/s per channel, and a buffer
# that sits in cache copies faster still; even a grading machine loaded a hundredfold stays far
# above 1 MB/s. Below it the timed loop holds something else (allocation of fresh pages many
# times over, a sleep) or the unit is wrong by a million.
# High: the aggregate cache bandwidth of the largest server sockets is a few TB/s (about 64 B per
# cycle per core at 3 GHz over 128 cores is 25 TB/s of L1 reads at most, and torch copies a
# 4 MiB buffer on one thread here). 20,000 GB/s is out of reach; bytes/s (1e9 too high) on any
# machine, or MB/s (1000 too high) on an ordinary one, lands above it.
LOW_GBS, HIGH_GBS = 0.001, 20_000.0
#: A number above HIGH_GBS that one of these factors brings back into range is a units slip
#: (bytes/s, MB/s): units_gb_per_s charges it on the simulated GPU, where the true answer is
#: known, so it is not charged again here (one mistake, one charge).
UNITS_FACTORS = (1e9, 1e3)
#: Buffer and repetitions of the plausibility call: a few MiB, a fraction of a second.
PROBE_BYTES, PROBE_ITERS = 4 * MiB, 5
#: Buffer and the two repetition counts of the honours-its-arguments calls: an odd size no default
#: would give, and two iters whose slips differ (timed.py: a count not taken from the timed work
#: gives each its own factor).
HONOUR_BYTES, HONOUR_ITERS = 3 * MiB + 4096, (4, 9)
#: Smallest part of the buffer one op may write and still count as a piece of a copy (a copy in
#: slices counts by its bytes: 64 slices of n_bytes/64 are one copy).
MIN_SLICE = 1 / 1024
#: Least part of the buffer the copies between two clock readings must read and write (each byte
#: counted once: a source expanded from one byte is one byte read): a
#: buffer sized in whole elements of a wider dtype (rows x 4096 float16) may fall short of n_bytes
#: by a row.
COVERED = 0.99
BUILD = "Reread: Build It (bw.py)."


def plausible_gbs(value, what: str) -> float:
    """``value`` as GB/s, or CheckFailed naming the units slip it most likely is."""
    gbs = oracle.number(value, what, "GB/s")
    if not math.isfinite(gbs) or gbs <= 0:
        raise CheckFailed(f"{what} returned {gbs!r} GB/s; a bandwidth is a positive finite number. {BUILD}")
    if gbs > HIGH_GBS:
        if any(LOW_GBS <= gbs / factor <= HIGH_GBS for factor in UNITS_FACTORS):
            return gbs                                  # a units slip: units_gb_per_s's to charge
        raise CheckFailed(f"{what} returned {oracle.fmt(gbs)} GB/s on a CPU, more than any CPU can copy: "
                          f"time the copies themselves and report bytes / seconds / 1e9. {BUILD}")
    if gbs < LOW_GBS:
        raise CheckFailed(f"{what} returned {oracle.fmt(gbs)} GB/s on a CPU, far below any memory system: "
                          f"report GB/s (1e9 bytes/s), and time only the copies, not allocation. {BUILD}")
    return gbs


@check("bw_returns_gbs", task=TASK, name="copy_bandwidth returns a rate a CPU can copy at (its units: units_gb_per_s)",
       files="bw")
def returns_gbs(ctx):
    plausible_gbs(ctx.call("bw", "copy_bandwidth", PROBE_BYTES, iters=PROBE_ITERS, device=CPU), "copy_bandwidth")


@check("bw_sweep_sizes", task=TASK, name="bandwidth_sweep returns exactly the sizes asked for, in MiB", files="bw")
def sweep_sizes(ctx):
    sizes = (1, 3)
    result = ctx.call("bw", "bandwidth_sweep", sizes_mb=sizes, iters=2, device=CPU)
    if not isinstance(result, dict):
        raise CheckFailed(f"bandwidth_sweep returned a {type(result).__name__}; return a dict from size in MiB "
                          f"to GB/s. {BUILD}")
    keys = sorted(result, key=repr)
    if set(result) != set(sizes) or any(isinstance(k, (bool, str)) for k in result):
        raise CheckFailed(f"bandwidth_sweep(sizes_mb={sizes}) returned keys {keys!r}; the keys should be exactly "
                          f"the sizes asked for, in MiB (all of them fit in memory). {BUILD}")
    # The values are judged elsewhere, once: copy_bandwidth's by bw_returns_gbs, the sweep's units
    # by units_gb_per_s.bandwidth_sweep. Judging them here too would charge one slip twice.


def _refuses(ctx, function: str, kwargs: dict, bad: str) -> None:
    refuses(ctx, "bw", function, kwargs, bad, "sizes and counts are positive integers", BUILD)


@check("bw_rejects_bad", task=TASK, name="bw.py raises ValueError on bad sizes and counts", files="bw")
def rejects_bad(ctx):
    good = dict(n_bytes=4096, iters=1, device=CPU)
    for name, bad in (("n_bytes", 0), ("n_bytes", -4096), ("n_bytes", 4096.5), ("iters", 0), ("iters", -3),
                      ("iters", 2.5)):
        _refuses(ctx, "copy_bandwidth", {**good, name: bad}, f"{name}={bad!r}")
    for sizes in ((0,), (-8,), (1.5,)):
        _refuses(ctx, "bandwidth_sweep", dict(sizes_mb=sizes, iters=1, device=CPU), f"sizes_mb={sizes!r}")
    _refuses(ctx, "bandwidth_sweep", dict(sizes_mb=(1,), iters=0, device=CPU), "iters=0")


# Registered after the file's other CPU checks, so they run first: this one ends on the simulated
# GPU (gpu.charge_shown), and they then share the file's one device-free child.
@check("bw_honours_args", task=TASK, name="copy_bandwidth times copies of n_bytes and reports what it timed",
       files="bw")
def honours_args(ctx):
    """Judges the work between the clock readings (timed.py), not the whole call: each stretch
    of copies between two readings writes the n_bytes buffer, and the number returned follows
    the copies timed, with iters=4 as with iters=9 (warm-ups outside the timed region, a count a
    timer picks, a warm-up once per process: none matters).
    It also fails on what the simulated GPU shows and points here for (``gpu.charge_shown``)."""
    _honours_args_on_cpu(ctx)
    gpu.charge_shown(ctx, "bw_honours_args", "copy_bandwidth")


def _honours_args_on_cpu(ctx) -> None:
    follows = timed.Follows("copies", "copies of n_bytes")
    for iters in HONOUR_ITERS:
        value, record = ctx.call_watched("bw", "copy_bandwidth", HONOUR_BYTES, iters=iters, device=CPU)
        where = f"copy_bandwidth(n_bytes={HONOUR_BYTES}, iters={iters}, device='cpu')"
        call = timed.Timed(record)
        _judge_copies(call, where, value)
        if not follows.add(iters, call, value, 2 * HONOUR_BYTES / 1e9, _copies):
            return      # no number to follow (bw_returns_gbs's), or a trace too long to place
    problem = follows.problem("copy_bandwidth", "report the bytes copied between your clock readings over the "
                              f"time they span. {BUILD}")
    if problem:
        raise CheckFailed(problem)


def _judge_copies(call: timed.Timed, where: str, value) -> None:
    """CheckFailed unless the call copied the n_bytes buffer between two clock readings, and each
    stretch of such copies between two readings wrote the whole buffer and no larger tensor (a
    warm-up of another size between a watchdog's reading and the start is not a timed copy).
    Copies over part of the buffer are charged here, but for a smaller buffer copied once per
    copy reported, each reported as n_bytes: that is the simulated GPU's
    buffer_exceeds_cache.copy_bandwidth to charge (it sees the buffer against the size asked;
    one mistake, one charge)."""
    timed_copies = [stretch for stretch in call.inner if any(_copies(op) for op in stretch.ops)]
    if not timed_copies:
        # What the ops that move data wrote: an index (index_copy_'s int64 rows, made by arange,
        # a fill) or another helper may be larger than the buffer without any copy being so.
        biggest = max((op["written_bytes"] for op in call.ops() if op["read_bytes"]), default=0)
        raise CheckFailed(f"{where} never copied a buffer of n_bytes bytes between two clock readings (largest "
                          f"tensor written there: {biggest} bytes); allocate source and destination of n_bytes "
                          f"each and time their copies. {BUILD}")
    for stretch in timed_copies:
        biggest = max(op["written_bytes"] for op in stretch.ops if op["read_bytes"])
        if biggest > 2 * HONOUR_BYTES:
            raise CheckFailed(f"{where} used a tensor of {biggest} bytes, more than the n_bytes asked for; "
                              f"the buffer size is the argument. {BUILD}")
        covered = min(stretch.written_bytes, stretch.read_bytes)
        short_buffer = stretch.written_bytes < COVERED * HONOUR_BYTES and _short_buffer_reported_whole(call, value)
        if covered < COVERED * HONOUR_BYTES and not short_buffer:
            raise CheckFailed(f"{where} copied only {covered} of the n_bytes bytes between two clock readings "
                              f"(distinct bytes read and written); each timed copy reads the whole source and "
                              f"writes the whole destination. {BUILD}")


def _short_buffer_reported_whole(call: timed.Timed, value) -> bool:
    """Whether ``value`` (GB/s) counts each timed copy op as a copy of n_bytes: one op per copy
    reported (not a buffer's copy made of pieces, nor a chunk copied again and again)."""
    rate = timed.rate_of(value)
    found = None if rate is None else call.factors(rate / (2 * HONOUR_BYTES / 1e9),
                                                   lambda op: 1.0 if _copies(op) else 0.0)
    return found is not None and found[0] <= 1.0 <= found[1]


def _copies(op: dict) -> float:
    """How many HONOUR_BYTES buffers one run of ``op`` copies (a slice counts by its bytes)."""
    return op["written_bytes"] / HONOUR_BYTES if _copies_part(op, HONOUR_BYTES) else 0.0


def _copies_part(op: dict, n_bytes: int) -> bool:
    """Whether an aten op is a copy of (a slice of) an ``n_bytes`` buffer, whatever its spelling
    (``copy_``, ``clone``, ``cat``, ``index_copy_``, ``_to_copy``): it writes between MIN_SLICE
    of the buffer and the buffer (1% slack), and reads at least as many bytes as it writes. A fill
    or a random source reads nothing; a reduction writes a few bytes."""
    written = op["written_bytes"]
    return MIN_SLICE * n_bytes <= written <= 1.01 * n_bytes and op["read_bytes"] >= written
