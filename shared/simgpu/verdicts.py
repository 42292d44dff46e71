"""The six GPU sanity checks' logic, in one place for the grader and the student command.

Each verdict runs the student's function on the simulated GPU through a ``Runner`` (the grader
adapts its sandboxed Context; the student command runs the code in-process) and compares it,
as a ratio, with the student's own code under another simulator setting or with the reference
on the same device. The simulator's knobs isolate each mistake so that it fails only its own
check:

    sync_present          async launches vs launches that each wait: the ratio is ~1 only when
                          the code waits for the device before reading the clock
    warmup_present        one-time first-use cost on vs off: the ratio is 1 only with a warm-up
    bytes_counted_twice   student / reference GB/s with launches blocking and free: a factor of 0.5
    units_gb_per_s        ... and a units factor (1e9 bytes/s, 1e3 MB/s, GiB/s, ms as s, ...)
    buffer_exceeds_cache  measured_bandwidth's buffer >= 4x L2 (from the trace), and
                          copy_bandwidth's small/large ratio shows the reference's cache cliff
    flops_counted_2n3     student / reference TFLOP/s: 0.5 means n**3 was counted

Messages name the mistake, the ratio seen and the lesson section to reread; never an expected
value beyond the ratio.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from shared.simgpu.events import NOT_COMPLETED
from shared.simgpu.profile import config

MIB = 2**20
#: Student/reference ratios within this factor of an explained ratio count as that ratio.
RATIO_TOLERANCE = 1.02
#: Async over blocking GB/s must lie within these bounds: correct code reads >= 1 (waiting
#: launches add their overhead) and ~1.01 at the checks' size; below, queued work was timed.
SYNC_BOUNDS = (0.97, 1.1)
#: GB/s with the one-time cost over GB/s without it must be at least this.
WARMUP_MIN = 0.9
#: measured_bandwidth's buffer must be at least this many times the L2 (STREAM's rule).
CACHE_MULTIPLE = 4
#: The student's cache cliff (small/large GB/s) over the reference's must be at least this.
CLIFF_MIN = 0.75
#: Iterations the checks ask for: few, since the simulator is deterministic.
ITERS = {"sync": 20, "bytes": 5, "warmup": 10, "cliff": 20, "flops": 5}
#: The device-following probe runs copy_bandwidth on the seeded GPU and on one with this many
#: times its bandwidth; a measurement reads that many times the GB/s (within FOLLOW_TOLERANCE).
FOLLOW_FACTOR = 2.0
FOLLOW_TOLERANCE = 1.1
#: Matrix side of the FLOP check, elements.
MATMUL_N = 4096

#: Byte-count factors: student / reference when only the byte count is off.
BYTE_FACTORS = {0.5: "you counted the bytes once; a copy reads n_bytes and writes n_bytes",
                1.0: "", 2.0: "you counted 4·n_bytes per copy; a copy reads n_bytes and writes n_bytes, 2·n_bytes in all"}
#: Units factors for GB/s: student / reference when only the unit is off.
GBS_UNITS = {
    1.0: "",
    1e9: "bytes per second, not GB/s (1e9 bytes/s)",
    1e6: "kB/s, not GB/s",
    1e3: "MB/s, not GB/s",
    1e-3: "TB/s instead of GB/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
    1e9 / 2**30: "GiB/s (2**30 bytes) instead of GB/s (1e9 bytes)",
    1e9 / 2**20: "MiB/s instead of GB/s",
    1e9 / 2**40: "TiB/s instead of GB/s",
    8.0: "gigabits per second, not gigabytes",
}
#: FLOP-count factors: student / reference when only the FLOP count is off.
FLOP_FACTORS = {0.5: "you counted n**3 FLOPs; each of the n**3 multiply-adds is 2 FLOPs, 2·n**3 in all",
                1.0: "", 2.0: "you counted 4·n**3 FLOPs; an n×n matmul does 2·n**3"}
#: Units factors for TFLOP/s.
TFLOPS_UNITS = {
    1.0: "",
    1e12: "FLOP/s, not TFLOP/s (1e12 FLOP/s)",
    1e6: "MFLOP/s, not TFLOP/s",
    1e3: "GFLOP/s, not TFLOP/s",
    1e-3: "PFLOP/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
}

CHECK_IDS = ("sync_present", "bytes_counted_twice", "buffer_exceeds_cache", "warmup_present",
             "flops_counted_2n3", "units_gb_per_s")


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: ``passed``, a short ``message`` and the ratio it judged (or None)."""

    check: str
    passed: bool
    message: str
    ratio: float | None = None


class Runner(Protocol):
    """How a verdict runs code: the grader's sandbox, or the student's own process."""

    def student(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """The student's ``module.function(*args, **kwargs)`` on the simulated device ``sim``."""

    def student_traced(self, module: str, function: str, *args, sim: dict, **kwargs) -> tuple[Any, dict]:
        """As ``student``, plus the simulator's trace of the call."""

    def reference(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """What a correct ``module.function`` reads on the same device."""


# ---------------------------------------------------------------- settings
def configs(profile: str, seed: int | None) -> dict[str, dict]:
    """The simulator settings the checks use, all on the same (seeded) device.

    ideal:    launches wait; launches, allocations and syncs cost the host nothing, a clock read
              1 ns (the resolution of perf_counter_ns); no first-use cost:
              the timer sees exactly the device's time
    async:    real launches (asynchronous), no first-use cost
    blocking: every launch waits for its kernel, no first-use cost
    cold:     every launch waits, and the first op of each kind pays the one-time cost
    """
    return {
        "ideal": config(profile, seed, sync_launches=True, first_use=False, launch_overhead_s=0.0,
                        alloc_s=0.0, sync_overhead_s=0.0, clock_read_s=1e-9),
        "async": config(profile, seed, sync_launches=False, first_use=False),
        "blocking": config(profile, seed, sync_launches=True, first_use=False),
        "cold": config(profile, seed, sync_launches=True, first_use=True),
    }


def sizes(cfg: dict) -> tuple[int, int]:
    """(small, large) copy sizes in bytes: an eighth of the L2 and eight times it, whole MiB."""
    l2 = cfg["l2_bytes"]
    return max(MIB, l2 // 8 // MIB * MIB), -(-8 * l2 // MIB) * MIB


def fmt_ratio(ratio: float) -> str:
    """A ratio for a message: '0.50x', '1.07x', '232x', '1e+09x'."""
    if 0.01 <= ratio < 10:
        return f"{ratio:.2f}x"
    return f"{ratio:.0f}x" if 10 <= ratio < 1e5 else f"{ratio:.3g}x"


def _number(value) -> float | None:
    """``value`` as a positive finite float (a float, an int, a one-element array), or None."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return None
    if type(value).__name__ == "Array":           # autograder.runtime.runner's tensor/array that came back
        data = getattr(value, "data", None)
        value = data[0] if isinstance(data, list) and len(data) == 1 else data
        if value is None or isinstance(value, (bool, str, list)):
            return None
    try:
        x = float(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def _not_a_number(check: str, function: str, value, unit: str) -> Verdict:
    return Verdict(check, False, f"{function} returned {value!r:.60}, not a positive number of {unit}. "
                                 "Reread: Build It.")


def _explain(ratio: float, counts: dict, units: dict) -> tuple[float, float] | None:
    """(count factor, unit factor) whose product is within RATIO_TOLERANCE of ``ratio``, or None."""
    best = None
    for c in counts:
        for u in units:
            off = abs(math.log(ratio / (c * u)))
            if off <= math.log(RATIO_TOLERANCE) and (best is None or off < best[0]):
                best = (off, c, u)
    return None if best is None else best[1:]


def _stream_bytes(trace: dict) -> int:
    """Bytes written by the trace's largest copy-like kernel (a copy or an elementwise op)."""
    return max((g["write_bytes"] for g in trace.get("op_groups", [])
                if g["kind"] in ("copy", "elementwise")), default=0)


def _follows_device(run: Runner, check: str, profile: str, seed: int | None) -> Verdict | None:
    """A failing Verdict when copy_bandwidth does not follow the device's bandwidth, else None.

    The checks that compare the student's code with itself under two settings (sync_present,
    warmup_present) or through a units explanation (bytes_counted_twice) would otherwise pass a
    number that is not measured at all: a hard-coded or cached answer reads the same everywhere.
    """
    base = configs(profile, seed)["ideal"]
    faster = dict(base, bw_gbs=base["bw_gbs"] * FOLLOW_FACTOR)
    _small, large = sizes(base)
    first = run.student("bw", "copy_bandwidth", large, iters=ITERS["bytes"], sim=base)
    second = run.student("bw", "copy_bandwidth", large, iters=ITERS["bytes"], sim=faster)
    a, b = _number(first), _number(second)
    if a is None or b is None:
        return _not_a_number(check, "copy_bandwidth", first if a is None else second, "GB/s")
    ratio = (b / a) / FOLLOW_FACTOR
    if abs(math.log(ratio)) <= math.log(FOLLOW_TOLERANCE):
        return None
    return Verdict(check, False,
                   f"copy_bandwidth read {fmt_ratio(b / a)} the GB/s on a simulated GPU with "
                   f"{FOLLOW_FACTOR:g}x the memory bandwidth: the number does not follow the device "
                   "(hard-coded, cached, or not timing the copies). Time the copies themselves. "
                   "Reread: Build It, bw.py.", ratio)


# --------------------------------------------------------------- the checks
def sync_present(run: Runner, profile: str, seed: int | None) -> Verdict:
    """copy_bandwidth must wait for the device before reading the clock (Break It)."""
    cfgs = configs(profile, seed)
    if (stale := _follows_device(run, "sync_present", profile, seed)) is not None:
        return stale
    _small, large = sizes(cfgs["async"])
    iters = ITERS["sync"]
    try:
        fast = run.student("bw", "copy_bandwidth", large, iters=iters, sim=cfgs["async"])
    except Exception as exc:  # noqa: BLE001 - only the events error is this check's verdict
        if NOT_COMPLETED.split(" before")[0] not in str(exc):
            raise
        return Verdict("sync_present", False,
                       "copy_bandwidth asked CUDA events for their elapsed time before the device "
                       "finished (PyTorch raises 'Both events must be completed'): call "
                       "end.synchronize() or torch.cuda.synchronize() first. Reread: Break It, "
                       "Forget to synchronize.")
    slow = run.student("bw", "copy_bandwidth", large, iters=iters, sim=cfgs["blocking"])
    a, b = _number(fast), _number(slow)
    if a is None or b is None:
        return _not_a_number("sync_present", "copy_bandwidth", fast if a is None else slow, "GB/s")
    ratio = a / b
    if ratio > SYNC_BOUNDS[1]:
        return Verdict("sync_present", False,
                       f"copy_bandwidth reads {fmt_ratio(ratio)} more GB/s when launches are asynchronous "
                       "than when each launch waits: the clock stopped before the device finished, "
                       "so you timed how fast Python queues work. Synchronize before reading the "
                       "clock. Reread: Break It, Forget to synchronize.", ratio)
    if ratio < SYNC_BOUNDS[0]:
        return Verdict("sync_present", False,
                       f"copy_bandwidth reads {fmt_ratio(ratio)} the GB/s it reads when each launch waits: "
                       "the clock started while earlier work (the warm-up) was still queued. "
                       "Synchronize before starting the clock too. Reread: Build It, bw.py step 3, "
                       "and Break It, Forget to synchronize.", ratio)
    return Verdict("sync_present", True,
                   f"copy_bandwidth waits for the device: asynchronous / waiting launches = {fmt_ratio(ratio)}.",
                   ratio)


def warmup_present(run: Runner, profile: str, seed: int | None) -> Verdict:
    """copy_bandwidth must warm up before timing: the first use pays one-time costs."""
    cfgs = configs(profile, seed)
    if (stale := _follows_device(run, "warmup_present", profile, seed)) is not None:
        return stale
    _small, large = sizes(cfgs["cold"])
    iters = ITERS["warmup"]
    cold = run.student("bw", "copy_bandwidth", large, iters=iters, sim=cfgs["cold"])
    warm = run.student("bw", "copy_bandwidth", large, iters=iters, sim=cfgs["blocking"])
    a, b = _number(cold), _number(warm)
    if a is None or b is None:
        return _not_a_number("warmup_present", "copy_bandwidth", cold if a is None else warm, "GB/s")
    ratio = a / b
    if ratio < WARMUP_MIN:
        return Verdict("warmup_present", False,
                       f"copy_bandwidth reads {fmt_ratio(ratio)} the GB/s on a device whose first copy pays "
                       "a one-time start-up cost than on one where it does not: the timed loop "
                       "includes that first use. Run a few untimed copies first. Reread: Build It, "
                       "bw.py step 2 (warm up).", ratio)
    return Verdict("warmup_present", True,
                   f"copy_bandwidth warms up: with / without a one-time start-up cost = {fmt_ratio(ratio)}.",
                   ratio)


def _copy_ratio(run: Runner, profile: str, seed: int | None):
    """(ratio student/reference, bytes the student copied, bytes asked) in the ideal setting."""
    cfg = configs(profile, seed)["ideal"]
    _small, large = sizes(cfg)
    iters = ITERS["bytes"]
    value, trace = run.student_traced("bw", "copy_bandwidth", large, iters=iters, sim=cfg)
    x = _number(value)
    if x is None:
        return value, None, large
    copied = _stream_bytes(trace) or large
    ref = run.reference("bw", "copy_bandwidth", copied, iters=iters, sim=cfg)
    return x / float(ref), copied, large


def bytes_counted_twice(run: Runner, profile: str, seed: int | None) -> Verdict:
    """copy_bandwidth must count 2·n_bytes per copy (read + write), as STREAM does."""
    if (stale := _follows_device(run, "bytes_counted_twice", profile, seed)) is not None:
        return stale
    ratio, copied, asked = _copy_ratio(run, profile, seed)
    if copied is None:
        return _not_a_number("bytes_counted_twice", "copy_bandwidth", ratio, "GB/s")
    head = f"copy_bandwidth reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    explained = _explain(ratio, BYTE_FACTORS, GBS_UNITS)
    if explained is None:
        moved = f" (your copies moved {copied / asked:.3g}x the n_bytes asked for)" if copied != asked else ""
        if 0.3 <= ratio <= 3.5 or copied != asked:
            return Verdict("bytes_counted_twice", False,
                           f"{head}{moved}, which no byte count or unit explains: time only the "
                           "copies of n_bytes and count 2·n_bytes per copy. Reread: Build It, bw.py "
                           "step 4, and Break It, Count bytes once.", ratio)
        return Verdict("bytes_counted_twice", True,
                       f"{head}; the gap is a matter of units (see units_gb_per_s).", ratio)
    count, _unit = explained
    if count != 1.0:
        return Verdict("bytes_counted_twice", False,
                       f"{head}: {BYTE_FACTORS[count]}. Reread: Break It, Count bytes once.", ratio)
    return Verdict("bytes_counted_twice", True, "copy_bandwidth counts each copy as read + write.", ratio)


def units_gb_per_s(run: Runner, profile: str, seed: int | None) -> Verdict:
    """copy_bandwidth must report GB/s: 1e9 bytes per second."""
    ratio, copied, _asked = _copy_ratio(run, profile, seed)
    if copied is None:
        return _not_a_number("units_gb_per_s", "copy_bandwidth", ratio, "GB/s")
    explained = _explain(ratio, BYTE_FACTORS, GBS_UNITS)
    head = f"copy_bandwidth reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    if explained is None:
        if 0.3 <= ratio <= 3.5:
            return Verdict("units_gb_per_s", True, "copy_bandwidth's number is in GB/s.", ratio)
        return Verdict("units_gb_per_s", False,
                       f"{head}: orders of magnitude off, so check the units: GB/s is bytes / "
                       "seconds / 1e9. Reread: Build It, bw.py.", ratio)
    _count, unit = explained
    if unit != 1.0:
        return Verdict("units_gb_per_s", False,
                       f"{head}: {GBS_UNITS[unit]}. GB/s is bytes / seconds / 1e9. Reread: Build It, "
                       "bw.py (units: GB = 1e9 bytes).", ratio)
    return Verdict("units_gb_per_s", True, "copy_bandwidth reports GB/s (1e9 bytes/s).", ratio)


def buffer_exceeds_cache(run: Runner, profile: str, seed: int | None) -> Verdict:
    """measured_bandwidth uses a buffer >= 4x L2; copy_bandwidth's sweep shows the cache cliff."""
    cfg = configs(profile, seed)["ideal"]
    l2 = cfg["l2_bytes"]
    _value, trace = run.student_traced("bw", "measured_bandwidth", sim=cfg)
    biggest = _stream_bytes(trace)
    times = biggest / l2
    if times < CACHE_MULTIPLE:
        return Verdict("buffer_exceeds_cache", False,
                       f"measured_bandwidth copies a buffer of at most {fmt_ratio(times)} the L2 cache "
                       f"(it needs at least {CACHE_MULTIPLE}x, read from "
                       "torch.cuda.get_device_properties(...).L2_cache_size): the copy runs from the "
                       "cache, not from main memory. Reread: Break It, Tiny buffers.", times)
    small, large = sizes(cfg)
    iters = ITERS["cliff"]
    s_small, trace_small = run.student_traced("bw", "copy_bandwidth", small, iters=iters, sim=cfg)
    s_large = run.student("bw", "copy_bandwidth", large, iters=iters, sim=cfg)
    a, b = _number(s_small), _number(s_large)
    if a is None or b is None:
        return _not_a_number("buffer_exceeds_cache", "copy_bandwidth", s_small if a is None else s_large, "GB/s")
    ref_cliff = float(run.reference("bw", "copy_bandwidth", small, iters=iters, sim=cfg)) / \
        float(run.reference("bw", "copy_bandwidth", large, iters=iters, sim=cfg))
    ratio = (a / b) / ref_cliff
    if ratio < CLIFF_MIN:
        moved = _stream_bytes(trace_small)
        cause = ("copy_bandwidth ignores n_bytes: it copied "
                 f"{moved / small:.3g}x the small size asked for" if moved != small else
                 "the small copies did not run from the cache (do not flush it between copies)")
        return Verdict("buffer_exceeds_cache", False,
                       f"copy_bandwidth's sweep shows {fmt_ratio(ratio)} the reference's cache cliff "
                       f"(GB/s of a buffer well inside the L2 over one well past it): {cause}. "
                       "Reread: Break It, Tiny buffers.", ratio)
    return Verdict("buffer_exceeds_cache", True,
                   f"measured_bandwidth's buffer is {times:.1f}x the L2, and copy_bandwidth's sweep "
                   f"shows the cache cliff ({fmt_ratio(ratio)} the reference's).", ratio)


def flops_counted_2n3(run: Runner, profile: str, seed: int | None) -> Verdict:
    """matmul_tflops must count 2·n³ FLOPs per matmul and report TFLOP/s."""
    cfg = configs(profile, seed)["ideal"]
    n, iters = MATMUL_N, ITERS["flops"]
    value = run.student("flops", "matmul_tflops", n, iters=iters, sim=cfg)
    x = _number(value)
    if x is None:
        return _not_a_number("flops_counted_2n3", "matmul_tflops", value, "TFLOP/s")
    ratio = x / float(run.reference("flops", "matmul_tflops", n, iters=iters, sim=cfg))
    head = f"matmul_tflops reads {fmt_ratio(ratio)} the reference TFLOP/s on the same simulated GPU"
    explained = _explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)
    if explained == (1.0, 1.0):
        return Verdict("flops_counted_2n3", True, "matmul_tflops counts 2·n**3 FLOPs and reports TFLOP/s.", ratio)
    if explained is None:
        return Verdict("flops_counted_2n3", False,
                       f"{head}, which no FLOP count or unit explains: time only the n×n matmuls, in "
                       "the dtype asked for, and count 2·n**3 FLOPs each. Reread: Build It, "
                       "matmul_tflops.", ratio)
    count, unit = explained
    why = "; ".join(x for x in (FLOP_FACTORS[count], TFLOPS_UNITS[unit]) if x)
    return Verdict("flops_counted_2n3", False,
                   f"{head}: {why}. Reread: The Idea, Arithmetic intensity (a multiply-add counts "
                   "as 2), and Build It, matmul_tflops.", ratio)


VERDICTS = {
    "sync_present": sync_present,
    "bytes_counted_twice": bytes_counted_twice,
    "buffer_exceeds_cache": buffer_exceeds_cache,
    "warmup_present": warmup_present,
    "flops_counted_2n3": flops_counted_2n3,
    "units_gb_per_s": units_gb_per_s,
}
