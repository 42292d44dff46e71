"""The why17 GPU checks' logic: each ``fn(session, function) -> Verdict`` (see rubric.py's table).

Each is asked only after the function's slips (slips.py) and, in the hidden grader, the probe's
gate: here the number is a measurement of the work asked, and the check judges one mistake.
"""
from __future__ import annotations

import math
from typing import Callable

from shared.lessons.why17.gpu import rubric as r
from shared.lessons.why17.gpu.factors import BYTE_FACTORS, FLOP_FACTORS, GBS_UNITS, TFLOPS_UNITS
from shared.lessons.why17.gpu.rubric import say
from shared.simgpu.device import NOT_COMPLETED
from shared.simgpu.judging import NotANumber, Session, Verdict
from shared.simgpu.ratios import close, explain, single


def sync_present(s: Session, function: str) -> Verdict:
    """``function`` must wait for the device before reading the clock (Break It)."""
    try:
        a = s.number(function, "async")[0]
    except NotANumber:
        raise
    except Exception as exc:  # only the events error and a zero time are this check's
        if getattr(exc, "exc_type", type(exc).__name__) == "ZeroDivisionError":
            s.measure(function, "ideal")     # raises in the ideal setting too: that is its own error
            return Verdict(s.vid, False, say("sync_zero_time", function=function), math.inf)
        if NOT_COMPLETED.split(" before")[0] not in str(exc):
            raise
        return Verdict(s.vid, False, say("sync_events_early", function=function))
    ratio = a / s.number(function, "ideal")[0]
    key = ("sync_stopped_early" if ratio > r.SYNC_BOUNDS[1] else
           "sync_started_early" if ratio < r.SYNC_BOUNDS[0] else "sync_ok")
    return Verdict(s.vid, key == "sync_ok", say(key, function=function, ratio=ratio, unit=r.unit(function)), ratio)


def warmup_present(s: Session, function: str) -> Verdict:
    """``function`` must warm up before timing: the first use pays one-time costs."""
    ratio = s.number(function, "cold")[0] / s.number(function, "ideal")[0]
    passed = ratio >= r.WARMUP_MIN
    key = "warmup_ok" if passed else "warmup_missing"
    return Verdict(s.vid, passed, say(key, function=function, ratio=ratio, unit=r.unit(function)), ratio)


def _ratio(s: Session, function: str) -> float:
    """``function``'s number over the reference's (``rubric.versus``); NotANumber when it is none."""
    raw, ratio, _ref = r.versus(s, function)
    if ratio is None:
        raise NotANumber(function, raw)
    return ratio


def _copy_ratio(s: Session, function: str) -> tuple[float, float]:
    """(student/reference GB/s at the large size, largest allocation / n_bytes asked)."""
    large = r.asked(s.cfgs)[1]
    return _ratio(s, function), (s.measure(function, "ideal")[2].get("largest_alloc_bytes") or large) / large


def _cold(s: Session, function: str, ratio: float) -> Verdict | None:
    """A pass pointing at the failed warm-up check of ``function`` or of its base, else None: a
    number no count explains because the first use was timed is charged there, once. Timing the
    first use makes a number low (``ratio`` to the reference below 1), never high."""
    if ratio >= 1:
        return None
    failed = (_failed(s, "warmup_present", f) for f in (function, r.BASE.get(function)) if f is not None)
    check = next((c for c in failed if c is not None), None)
    if check is None:
        return None
    return Verdict(s.vid, True, say("judged_in_warmup", function=function, check=check), ratio)


def _failed(s: Session, check: str, function: str) -> str | None:
    """The id of ``check`` on ``function`` when that instance fails (a mistake charged there), else None."""
    vid = s.rubric.check_id(check, function)
    return vid if function in r.JUDGES[check] and not s.verdict(vid).passed else None


def bytes_counted_twice(s: Session, function: str) -> Verdict:
    """``function`` must count 2·n_bytes per copy (read + write), as STREAM does."""
    ratio, moved = _copy_ratio(s, function)
    explained = explain(ratio, BYTE_FACTORS, GBS_UNITS)
    if explained is None:
        other_size = not close(moved, 1.0)
        cold = _cold(s, function, ratio)
        if cold is not None:
            return cold
        if r.BAND[0] <= ratio <= r.BAND[1] or other_size:
            note = say("other_size", moved=moved) if other_size else ""
            return Verdict(s.vid, False, say("bytes_unexplained", function=function, ratio=ratio, note=note), ratio)
        return Verdict(s.vid, True, say("bytes_units_only", function=function, ratio=ratio), ratio)
    count, _unit_factor = explained
    if count != 1.0:
        return Verdict(s.vid, False, say("bytes_miscounted", function=function, ratio=ratio,
                                         why=BYTE_FACTORS[count]), ratio)
    return Verdict(s.vid, True, say("bytes_ok", function=function), ratio)


def units_gb_per_s(s: Session, function: str) -> Verdict:
    """``function`` must report GB/s: 1e9 bytes per second."""
    ratio, moved = _copy_ratio(s, function)
    # A buffer of another size than n_bytes (bytes_counted_twice's mistake) scales the ratio by
    # its size when the student counted n_bytes: either reading may be the one in GB/s.
    readings = [explain(r, BYTE_FACTORS, GBS_UNITS) for r in (ratio, ratio * moved)]
    units = [e[1] for e in readings if e is not None]
    if 1.0 in units or (not units and r.BAND[0] <= ratio <= r.BAND[1]):
        return Verdict(s.vid, True, say("units_ok", function=function), ratio)
    key = "units_named" if units else "units_orders_off"
    why = GBS_UNITS[units[0]] if units else ""
    return Verdict(s.vid, False, say(key, function=function, ratio=ratio, why=why), ratio)


def buffer_exceeds_cache(s: Session, function: str) -> Verdict:
    """measured_bandwidth: a buffer >= 4x L2 and a value main memory can give; copy_bandwidth:
    the sweep shows the cache cliff."""
    if function == "copy_bandwidth":
        return _cache_cliff(s)
    cfg = s.cfgs["ideal"]
    l2 = cfg["l2_bytes"]
    trace = s.measure(function, "ideal")[2]
    timed = trace.get("timed") or {}
    biggest = timed.get("copy_extent_bytes") or trace.get("largest_alloc_bytes", 0)
    times = biggest / l2
    if times < r.CACHE_MULTIPLE:
        return Verdict(s.vid, False, say("cache_buffer_small", function=function, times=times,
                                         multiple=r.CACHE_MULTIPLE), times)
    x = s.number(function, "ideal")[0]
    explained = single(explain(_ratio(s, function), BYTE_FACTORS, GBS_UNITS))
    spec_ratio = x / cfg["bw_gbs"]
    if explained in (None, (1.0, 1.0)) and spec_ratio > r.SPEED_OF_LIGHT:
        return Verdict(s.vid, False, say("cache_above_spec", function=function, ratio=spec_ratio,
                                         multiple=r.CACHE_MULTIPLE), spec_ratio)
    return Verdict(s.vid, True, say("cache_ok", function=function, size=times), spec_ratio)


def _cache_cliff(s: Session) -> Verdict:
    small, large, _n = r.asked(s.cfgs)
    a, trace_small = s.number("copy_bandwidth", "ideal", small)
    b = s.number("copy_bandwidth", "ideal", large)[0]
    ratio = (a / b) / (r.ref_copy(s, small) / r.ref_copy(s))
    if ratio < r.CLIFF_MIN:
        biggest = trace_small.get("largest_alloc_bytes", 0)
        launch = (trace_small.get("timed") or {}).get("latency_share", 0.0)
        # launches hide the cliff when the small copies' rate without their launch time shows it
        hidden = launch >= r.LAUNCH_BOUND_SHARE or ratio / (1 - launch) >= r.CLIFF_MIN
        cause = say("cliff_ignores_size" if biggest > 1.02 * small else
                    "cliff_launch_bound" if hidden else "cliff_flushed", size=biggest / small, share=launch)
        return Verdict(s.vid, False, say("cliff_missing", ratio=ratio, cause=cause), ratio)
    return Verdict(s.vid, True, say("cliff_ok", ratio=ratio), ratio)


def flops_counted_2n3(s: Session, function: str) -> Verdict:
    """matmul_tflops must count 2·n³ FLOPs per matmul and report TFLOP/s."""
    ratio = _ratio(s, function)
    explained = explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)
    if explained == (1.0, 1.0):
        return Verdict(s.vid, True, say("flops_ok", function=function), ratio)
    if explained is None:
        cold = _cold(s, function, ratio)
        if cold is not None:
            return cold
        above = s.number(function, "ideal")[0] > r.SPEED_OF_LIGHT * s.cfgs["ideal"]["peak_tflops"]
        why = say("flops_above_peak" if above else "flops_no_count")
        return Verdict(s.vid, False, say("flops_unexplained", function=function, ratio=ratio, why=why), ratio)
    count, unit = explained
    why = "; ".join(x for x in (FLOP_FACTORS[count], TFLOPS_UNITS[unit]) if x)
    return Verdict(s.vid, False, say("flops_miscounted", function=function, ratio=ratio, why=why), ratio)


def within_peak(s: Session, function: str) -> Verdict:
    """measured_peak_tflops: a compute-bound n, and never above the device's peak."""
    cfg = s.cfgs["ideal"]
    x, trace = s.number(function, "ideal")
    peak_ratio = x / cfg["peak_tflops"]
    ratio = _ratio(s, function)
    explained = single(explain(ratio, FLOP_FACTORS, TFLOPS_UNITS))
    if explained not in (None, (1.0, 1.0)):
        return Verdict(s.vid, True, say("peak_gap_is_a_count", function=function), ratio)
    if peak_ratio > r.SPEED_OF_LIGHT:
        return Verdict(s.vid, False, say("peak_above", function=function, ratio=peak_ratio), peak_ratio)
    matmuls = [g for g in trace.get("op_groups", []) if g["kind"] == "matmul"]
    counted = _same_count_as_base(s, function, ratio)
    if counted is not None:            # matmul_tflops' FLOP count, inherited: charged there, once
        return Verdict(s.vid, True, say("judged_in_base", function=function, base=r.BASE[function],
                                        check=counted), ratio)
    passed = ratio >= r.PEAK_MIN and bool(matmuls)
    key = "peak_ok" if passed else "peak_not_compute_bound"
    return Verdict(s.vid, passed, say(key, function=function, ratio=ratio), ratio)


def _same_count_as_base(s: Session, function: str, ratio: float) -> str | None:
    """The id of matmul_tflops' failed FLOP-count check when ``function`` reads the same gap to
    the reference as matmul_tflops does (the same miscount, inherited), else None."""
    base = r.BASE.get(function)
    if base is None or close(ratio, 1.0):
        return None
    base_ratio = r.versus(s, base)[1]
    return _failed(s, "flops_counted_2n3", base) if base_ratio is not None and close(ratio, base_ratio) else None


CHECKS: dict[str, Callable[[Session, str], Verdict]] = {
    "sync_present": sync_present,
    "bytes_counted_twice": bytes_counted_twice,
    "buffer_exceeds_cache": buffer_exceeds_cache,
    "warmup_present": warmup_present,
    "flops_counted_2n3": flops_counted_2n3,
    "units_gb_per_s": units_gb_per_s,
    "within_peak": within_peak,
}
