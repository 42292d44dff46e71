"""The why17 GPU checks' logic: each ``fn(session, function) -> Verdict`` (see rubric.py's table).

Each is asked only after the function's slips (slips.py) and, in the hidden grader, the probe's
gate: here the number is a measurement of the work asked, and the check judges one mistake.
"""
from __future__ import annotations

import math
from typing import Callable

from shared.lessons.why17.gpu import rubric as r
from shared.lessons.why17.gpu.factors import BYTE_FACTORS, FLOP_FACTORS, GBS_UNITS, TFLOPS_UNITS
from shared.simgpu.device import NOT_COMPLETED
from shared.simgpu.judging import Session, Verdict
from shared.simgpu.ratios import close, explain, fmt_ratio, single


def sync_present(s: Session, function: str) -> Verdict:
    """``function`` must wait for the device before reading the clock (Break It)."""
    try:
        fast, a, _ = s.measure(function, "async")
    except Exception as exc:  # only the events error and a zero time are this check's
        if getattr(exc, "exc_type", type(exc).__name__) == "ZeroDivisionError":
            s.measure(function, "ideal")     # raises in the ideal setting too: that is its own error
            return Verdict(s.vid, False,
                           f"{function} divided by a time of zero when launches are asynchronous: "
                           "the clock stopped before the device started, so it timed nothing. "
                           f"Synchronize before reading the clock. {r.SYNC_LESSON}", math.inf)
        if NOT_COMPLETED.split(" before")[0] not in str(exc):
            raise
        return Verdict(s.vid, False,
                       f"{function} asked CUDA events for their elapsed time before the device "
                       "finished (PyTorch raises 'Both events must be completed'): call "
                       f"end.synchronize() or torch.cuda.synchronize() first. {r.SYNC_LESSON}")
    slow, b, _ = s.measure(function, "ideal")
    if a is None or b is None:
        return s.rubric.not_a_number(s.vid, function, fast if a is None else slow)
    ratio = a / b
    what = r.unit(function)
    if ratio > r.SYNC_BOUNDS[1]:
        return Verdict(s.vid, False,
                       f"{function} reads {fmt_ratio(ratio)} more {what} when launches are asynchronous "
                       "than when each launch waits: the clock stopped before the device finished, "
                       "so you timed how fast Python queues work. Synchronize before reading the "
                       f"clock. {r.SYNC_LESSON}", ratio)
    if ratio < r.SYNC_BOUNDS[0]:
        return Verdict(s.vid, False,
                       f"{function} reads {fmt_ratio(ratio)} the {what} it reads when each launch waits: "
                       "the clock started while earlier work (the warm-up) was still queued. "
                       "Synchronize before starting the clock too. Reread: Build It, step 3, "
                       f"and {r.SYNC_LESSON.removeprefix('Reread: ')}", ratio)
    return Verdict(s.vid, True,
                   f"{function} waits for the device: asynchronous / waiting launches = {fmt_ratio(ratio)}.",
                   ratio)


def warmup_present(s: Session, function: str) -> Verdict:
    """``function`` must warm up before timing: the first use pays one-time costs."""
    cold, a, _ = s.measure(function, "cold")
    warm, b, _ = s.measure(function, "ideal")
    if a is None or b is None:
        return s.rubric.not_a_number(s.vid, function, cold if a is None else warm)
    ratio = a / b
    if ratio < r.WARMUP_MIN:
        return Verdict(s.vid, False,
                       f"{function} reads {fmt_ratio(ratio)} the {r.unit(function)} on a device whose first "
                       "use of an operation pays a one-time start-up cost than on one where it does "
                       "not: the timed loop includes that first use. Run a few untimed iterations "
                       "first. Reread: Build It, step 2 (warm up).", ratio)
    return Verdict(s.vid, True,
                   f"{function} warms up: with / without a one-time start-up cost = {fmt_ratio(ratio)}.",
                   ratio)


def _copy_ratio(s: Session, function: str):
    """(student/reference GB/s at the large size, largest allocation / n_bytes asked, raw value)."""
    raw, ratio, _ref = r.versus(s, function)
    large = r.asked(s.cfgs)[1]
    return ratio, (s.measure(function, "ideal")[2].get("largest_alloc_bytes") or large) / large, raw


def _cold(s: Session, function: str, ratio: float) -> Verdict | None:
    """A pass pointing at the failed warm-up check of ``function`` or of its base, else None: a
    number no count explains because the first use was timed is charged there, once. Timing the
    first use makes a number low (``ratio`` to the reference below 1), never high."""
    if ratio >= 1:
        return None
    for f in (function, r.BASE.get(function)):
        if f is not None and f in r.JUDGES["warmup_present"]:
            verdict = s.verdict(s.rubric.check_id("warmup_present", f))
            if not verdict.passed:
                return Verdict(s.vid, True, f"not judged here: {function}'s timed region is judged in "
                                            f"[{verdict.check}].", ratio)
    return None


def bytes_counted_twice(s: Session, function: str) -> Verdict:
    """``function`` must count 2·n_bytes per copy (read + write), as STREAM does."""
    ratio, moved, raw = _copy_ratio(s, function)
    if ratio is None:
        return s.rubric.not_a_number(s.vid, function, raw)
    head = f"{function} reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    explained = explain(ratio, BYTE_FACTORS, GBS_UNITS)
    if explained is None:
        other_size = not close(moved, 1.0)
        note = f" (your buffers are {moved:.3g}x the n_bytes asked for)" if other_size else ""
        cold = _cold(s, function, ratio)
        if cold is not None:
            return cold
        if r.BAND[0] <= ratio <= r.BAND[1] or other_size:
            return Verdict(s.vid, False,
                           f"{head}{note}, which no byte count or unit explains: copy buffers of "
                           "n_bytes, time only those copies and count 2·n_bytes per copy. Reread: "
                           "Build It, bw.py step 4, and Break It, Count bytes once.", ratio)
        return Verdict(s.vid, True, f"{head}; the gap is a matter of units (see units_gb_per_s).", ratio)
    count, _unit_factor = explained
    if count != 1.0:
        return Verdict(s.vid, False,
                       f"{head}: {BYTE_FACTORS[count]}. Reread: Break It, Count bytes once.", ratio)
    return Verdict(s.vid, True, f"{function} counts each copy as read + write.", ratio)


def units_gb_per_s(s: Session, function: str) -> Verdict:
    """``function`` must report GB/s: 1e9 bytes per second."""
    ratio, moved, raw = _copy_ratio(s, function)
    if ratio is None:
        return s.rubric.not_a_number(s.vid, function, raw)
    head = f"{function} reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    # A buffer of another size than n_bytes (bytes_counted_twice's mistake) scales the ratio by
    # its size when the student counted n_bytes: either reading may be the one in GB/s.
    readings = [explain(r, BYTE_FACTORS, GBS_UNITS) for r in (ratio, ratio * moved)]
    units = [e[1] for e in readings if e is not None]
    if 1.0 in units or (not units and r.BAND[0] <= ratio <= r.BAND[1]):
        return Verdict(s.vid, True, f"{function} reports GB/s (1e9 bytes/s).", ratio)
    if not units:
        return Verdict(s.vid, False,
                       f"{head}: orders of magnitude off, so check the units: GB/s is bytes / "
                       "seconds / 1e9. Reread: Build It, bw.py.", ratio)
    return Verdict(s.vid, False,
                   f"{head}: {GBS_UNITS[units[0]]}. GB/s is bytes / seconds / 1e9. Reread: Build It, "
                   "bw.py (units: GB = 1e9 bytes).", ratio)


def buffer_exceeds_cache(s: Session, function: str) -> Verdict:
    """measured_bandwidth: a buffer >= 4x L2 and a value main memory can give; copy_bandwidth:
    the sweep shows the cache cliff."""
    if function == "copy_bandwidth":
        return _cache_cliff(s)
    cfg = s.cfgs["ideal"]
    l2 = cfg["l2_bytes"]
    raw, x, trace = s.measure(function, "ideal")
    timed = trace.get("timed") or {}
    biggest = timed.get("copy_extent_bytes") or trace.get("largest_alloc_bytes", 0)
    times = biggest / l2
    if times < r.CACHE_MULTIPLE:
        return Verdict(s.vid, False,
                       f"{function} copies a buffer of at most {fmt_ratio(times)} the L2 cache "
                       f"(it needs at least {r.CACHE_MULTIPLE}x, read from "
                       "torch.cuda.get_device_properties(...).L2_cache_size): the copy runs from the "
                       f"cache, not from main memory. {r.CACHE_LESSON}", times)
    if x is None:
        return s.rubric.not_a_number(s.vid, function, raw)
    ratio = r.versus(s, function)[1]
    explained = single(explain(ratio, BYTE_FACTORS, GBS_UNITS))
    spec_ratio = x / cfg["bw_gbs"]
    if explained in (None, (1.0, 1.0)) and spec_ratio > r.SPEED_OF_LIGHT:
        return Verdict(s.vid, False,
                       f"{function} returned {fmt_ratio(spec_ratio)} the device's spec bandwidth, faster "
                       "than this device can move bytes: the buffer sat in the L2, or the clock was "
                       "read before the GPU finished. Return the rate of a buffer at least "
                       f"{r.CACHE_MULTIPLE}x the L2, not the best of a sweep. {r.CACHE_LESSON}", spec_ratio)
    return Verdict(s.vid, True,
                   f"{function}'s buffer is {times:.1f}x the L2 and its rate is one main memory can give.",
                   spec_ratio)


def _cache_cliff(s: Session) -> Verdict:
    small, large, _n = r.asked(s.cfgs)
    s_small, a, trace_small = s.measure("copy_bandwidth", "ideal", small)
    s_large, b, _ = s.measure("copy_bandwidth", "ideal", large)
    if a is None or b is None:
        return s.rubric.not_a_number(s.vid, "copy_bandwidth", s_small if a is None else s_large)
    ratio = (a / b) / (r.ref_copy(s, small) / r.ref_copy(s))
    if ratio < r.CLIFF_MIN:
        biggest = trace_small.get("largest_alloc_bytes", 0)
        launch = (trace_small.get("timed") or {}).get("latency_share", 0.0)
        if biggest > 1.02 * small:
            cause = f"copy_bandwidth ignores n_bytes: its buffers were {biggest / small:.3g}x the small size asked for"
        elif launch >= r.LAUNCH_BOUND_SHARE:
            cause = (f"its small copies are launch-bound ({launch:.0%} of their time is the fixed "
                     "cost of a launch): copy the buffer in one launch, or a few large ones")
        else:
            cause = "the small copies did not run from the cache (do not flush it between copies)"
        return Verdict(s.vid, False,
                       f"copy_bandwidth's sweep shows {fmt_ratio(ratio)} the reference's cache cliff "
                       f"(GB/s of a buffer well inside the L2 over one well past it): {cause}. "
                       f"{r.CACHE_LESSON}", ratio)
    return Verdict(s.vid, True,
                   f"copy_bandwidth's sweep shows the cache cliff ({fmt_ratio(ratio)} the reference's).", ratio)


def flops_counted_2n3(s: Session, function: str) -> Verdict:
    """matmul_tflops must count 2·n³ FLOPs per matmul and report TFLOP/s."""
    raw, ratio, _ref = r.versus(s, function)
    if ratio is None:
        return s.rubric.not_a_number(s.vid, function, raw)
    head = f"{function} reads {fmt_ratio(ratio)} the reference TFLOP/s on the same simulated GPU"
    explained = explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)
    if explained == (1.0, 1.0):
        return Verdict(s.vid, True, f"{function} counts 2·n**3 FLOPs and reports TFLOP/s.", ratio)
    if explained is None:
        cold = _cold(s, function, ratio)
        if cold is not None:
            return cold
        above = s.measure(function, "ideal")[1] > r.SPEED_OF_LIGHT * s.cfgs["ideal"]["peak_tflops"]
        why = (", faster than this device can compute: the clock was read before the GPU "
               "finished, or the FLOPs are miscounted" if above else ", which no FLOP count or unit explains")
        return Verdict(s.vid, False,
                       f"{head}{why}: time only the n×n matmuls, in the dtype asked for, and count "
                       "2·n**3 FLOPs each. Reread: Build It, matmul_tflops.", ratio)
    count, unit = explained
    why = "; ".join(x for x in (FLOP_FACTORS[count], TFLOPS_UNITS[unit]) if x)
    return Verdict(s.vid, False,
                   f"{head}: {why}. Reread: The Idea, Arithmetic intensity (a multiply-add counts "
                   "as 2), and Build It, matmul_tflops.", ratio)


def within_peak(s: Session, function: str) -> Verdict:
    """measured_peak_tflops: a compute-bound n, and never above the device's peak."""
    cfg = s.cfgs["ideal"]
    raw, x, trace = s.measure(function, "ideal")
    if x is None:
        return s.rubric.not_a_number(s.vid, function, raw)
    peak_ratio = x / cfg["peak_tflops"]
    ratio = r.versus(s, function)[1]
    explained = single(explain(ratio, FLOP_FACTORS, TFLOPS_UNITS))
    if explained not in (None, (1.0, 1.0)):
        return Verdict(s.vid, True, f"{function}'s gap is a FLOP count or unit (see flops_counted_2n3).", ratio)
    if peak_ratio > r.SPEED_OF_LIGHT:
        return Verdict(s.vid, False,
                       f"{function} returned {fmt_ratio(peak_ratio)} the device's bf16 peak, faster than "
                       "this device can compute: the clock was read before the GPU finished, or the "
                       "FLOPs are miscounted. Reread: Break It, Forget to synchronize, and The "
                       "roofline.", peak_ratio)
    matmuls = [g for g in trace.get("op_groups", []) if g["kind"] == "matmul"]
    counted = _same_count_as_base(s, function, ratio)
    if counted is not None:            # matmul_tflops' FLOP count, inherited: charged there, once
        return Verdict(s.vid, True, f"not judged here: {function} relies on matmul_tflops, judged in "
                                    f"[{counted}].", ratio)
    if ratio < r.PEAK_MIN or not matmuls:
        return Verdict(s.vid, False,
                       f"{function} reads {fmt_ratio(ratio)} the TFLOP/s of a compute-bound bf16 matmul: "
                       "pick n large enough that the matmul is past the ridge point (thousands), in "
                       "bf16. Reread: The roofline, the ridge point.", ratio)
    return Verdict(s.vid, True, f"{function} is compute-bound and within the device's peak.", ratio)


def _same_count_as_base(s: Session, function: str, ratio: float) -> str | None:
    """The id of matmul_tflops' failed FLOP-count check when ``function`` reads the same gap to
    the reference as matmul_tflops does (the same miscount, inherited), else None."""
    base = r.BASE.get(function)
    if base is None or close(ratio, 1.0):
        return None
    base_ratio = r.versus(s, base)[1]
    if base_ratio is None or not close(ratio, base_ratio):
        return None
    verdict = s.verdict(s.rubric.check_id("flops_counted_2n3", base))
    return None if verdict.passed else verdict.check


CHECKS: dict[str, Callable[[Session, str], Verdict]] = {
    "sync_present": sync_present,
    "bytes_counted_twice": bytes_counted_twice,
    "buffer_exceeds_cache": buffer_exceeds_cache,
    "warmup_present": warmup_present,
    "flops_counted_2n3": flops_counted_2n3,
    "units_gb_per_s": units_gb_per_s,
    "within_peak": within_peak,
}
