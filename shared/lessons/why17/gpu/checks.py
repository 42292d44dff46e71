"""The why17 GPU checks (row 4 of docs/simulated-gpu.md's table): each ``fn(session, function)
-> Verdict``, asked once the slips (slips.py) and the probe's gate have passed the number as a
measurement of the work asked, judges one mistake."""
from __future__ import annotations

import math
from typing import Callable

from shared.lessons.why17.gpu import counts
from shared.lessons.why17.gpu import rubric as r
from shared.lessons.why17.gpu.factors import BYTE_FACTORS, FLOP_FACTORS, GBS_UNITS, TFLOPS_UNITS
from shared.simgpu.device import NOT_COMPLETED
from shared.simgpu.judging import NotANumber, Session, Verdict
from shared.simgpu.ratios import RATIO_TOLERANCE, close, explain, single


def _says(s: Session, function: str, passed: bool, key: str, ratio: float | None = None, **fields) -> Verdict:
    """The verdict on ``function``: messages.yml's ``key`` with ``ratio``, its unit and ``fields``."""
    return Verdict(s.vid, passed, r.say(key, function=function, ratio=ratio, unit=r.unit(function), **fields), ratio)


def sync_present(s: Session, function: str) -> Verdict:
    """``function`` must wait for the device before reading the clock (Break It)."""
    try:
        a = s.number(function, "async")[0]
    except NotANumber:
        raise
    except Exception as exc:  # only the events error and a zero time are this check's
        if getattr(exc, "exc_type", type(exc).__name__) == "ZeroDivisionError":
            s.measure(function, "ideal")     # raises in the ideal setting too: that is its own error
            return _says(s, function, False, "sync_zero_time", math.inf)
        if NOT_COMPLETED.split(" before")[0] not in str(exc):
            raise
        return _says(s, function, False, "sync_events_early")
    ratio = a / s.number(function, "ideal")[0]
    key = ("sync_stopped_early" if ratio > r.LIMITS.sync_bounds[1] else
           "sync_started_early" if ratio < r.LIMITS.sync_bounds[0] else "sync_ok")
    return _says(s, function, key == "sync_ok", key, ratio)


def warmup_present(s: Session, function: str) -> Verdict:
    """``function`` must warm up before timing: the first use pays one-time costs."""
    ratio = s.number(function, "cold")[0] / s.number(function, "ideal")[0]
    warm = ratio >= r.LIMITS.warmup_min
    return _says(s, function, warm, "warmup_ok" if warm else "warmup_missing", ratio)


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
    number no count explains because the first use was timed (which makes it low) is charged there."""
    if ratio >= 1:
        return None
    failed = (_failed(s, "warmup_present", f) for f in (function, r.BASE.get(function)) if f is not None)
    check = next((c for c in failed if c is not None), None)
    return None if check is None else _says(s, function, True, "judged_in_warmup", ratio, check=check)


def _failed(s: Session, check: str, function: str) -> str | None:
    """The id of ``check`` on ``function`` when that instance fails (a mistake charged there), else None."""
    vid = s.rubric.check_id(check, function)
    return vid if function in r.JUDGES[check] and not s.verdict(vid).passed else None


def bytes_counted_twice(s: Session, function: str) -> Verdict:
    """``function`` must count 2·n_bytes per copy (read + write), as STREAM does."""
    ratio, moved = _copy_ratio(s, function)
    explained = explain(ratio, BYTE_FACTORS, GBS_UNITS)
    if explained is not None:
        count = explained[0]
        return _says(s, function, count == 1.0, "bytes_ok" if count == 1.0 else "bytes_miscounted", ratio,
                     why=BYTE_FACTORS[count])
    other_size = not close(moved, 1.0)
    cold = _cold(s, function, ratio)
    if cold is not None:
        return cold
    if r.LIMITS.band[0] <= ratio <= r.LIMITS.band[1] or other_size:
        note = r.say("other_size", moved=moved) if other_size else ""
        return _says(s, function, False, "bytes_unexplained", ratio, note=note)
    return _says(s, function, True, "bytes_units_only", ratio)


def units_gb_per_s(s: Session, function: str) -> Verdict:
    """``function`` must report GB/s: 1e9 bytes per second."""
    ratio, moved = _copy_ratio(s, function)
    # A buffer of another size than n_bytes (bytes_counted_twice's mistake) scales the ratio by
    # its size when the student counted n_bytes: either reading may be the one in GB/s.
    readings = [explain(x, BYTE_FACTORS, GBS_UNITS) for x in (ratio, ratio * moved)]
    units = [e[1] for e in readings if e is not None]
    if 1.0 in units or (not units and r.LIMITS.band[0] <= ratio <= r.LIMITS.band[1]):
        return _says(s, function, True, "units_ok", ratio)
    return _says(s, function, False, "units_named" if units else "units_orders_off", ratio,
                 why=GBS_UNITS[units[0]] if units else "")


def buffer_exceeds_cache(s: Session, function: str) -> Verdict:
    """measured_bandwidth: a buffer >= 4x L2 and a value main memory can give; copy_bandwidth:
    the sweep shows the cache cliff."""
    if function == "copy_bandwidth":
        return _cache_cliff(s)
    cfg, trace = s.cfgs["ideal"], s.measure(function, "ideal")[2]
    times = (s.window(function).get("copy_extent_bytes") or trace.get("largest_alloc_bytes", 0)) / cfg["l2_bytes"]
    if times < r.LIMITS.cache_multiple:
        return _says(s, function, False, "cache_buffer_small", times, times=times, multiple=r.LIMITS.cache_multiple)
    spec_ratio = s.number(function, "ideal")[0] / cfg["bw_gbs"]
    if single(explain(_ratio(s, function), BYTE_FACTORS, GBS_UNITS)) in (None, (1.0, 1.0)) \
            and spec_ratio > r.LIMITS.speed_of_light:
        return _says(s, function, False, "cache_above_spec", spec_ratio, multiple=r.LIMITS.cache_multiple)
    return _says(s, function, True, "cache_ok", spec_ratio, size=times)


def _cache_cliff(s: Session) -> Verdict:
    small, large, _n = r.asked(s.cfgs)
    a, trace_small = s.number("copy_bandwidth", "ideal", small)
    ratio = (a / s.number("copy_bandwidth", "ideal", large)[0]) / (r.ref_copy(s, small) / r.ref_copy(s))
    if ratio >= r.LIMITS.cliff_min:
        return _says(s, "copy_bandwidth", True, "cliff_ok", ratio)
    biggest = trace_small.get("largest_alloc_bytes", 0)
    launch = (trace_small.get("timed") or {}).get("latency_share", 0.0)
    # launches hide the cliff when the small copies' rate without their launch time shows it
    hidden = launch >= r.LIMITS.launch_bound_share or ratio / (1 - launch) >= r.LIMITS.cliff_min
    cause = r.say("cliff_ignores_size" if biggest > RATIO_TOLERANCE * small else "cliff_launch_bound" if hidden else
                  "cliff_flushed", size=biggest / small, share=launch)
    return _says(s, "copy_bandwidth", False, "cliff_missing", ratio, cause=cause)


def flops_counted_2n3(s: Session, function: str) -> Verdict:
    """matmul_tflops must count 2·n³ FLOPs per matmul and report TFLOP/s."""
    ratio = _ratio(s, function)
    explained = explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)
    if explained == (1.0, 1.0):
        return _says(s, function, True, "flops_ok", ratio)
    if explained is not None:
        why = "; ".join(x for x in (FLOP_FACTORS[explained[0]], TFLOPS_UNITS[explained[1]]) if x)
        return _says(s, function, False, "flops_miscounted", ratio, why=why)
    cold = _cold(s, function, ratio)
    if cold is not None:
        return cold
    above = s.number(function, "ideal")[0] > r.LIMITS.speed_of_light * s.cfgs["ideal"]["peak_tflops"]
    return _says(s, function, False, "flops_unexplained", ratio, why=r.say("flops_above_peak" if above else
                                                                           "flops_no_count"))


def within_peak(s: Session, function: str) -> Verdict:
    """measured_peak_tflops: a compute-bound n, and never above the device's peak."""
    x, trace = s.number(function, "ideal")
    peak_ratio, ratio = x / s.cfgs["ideal"]["peak_tflops"], _ratio(s, function)
    if single(explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)) not in (None, (1.0, 1.0)):
        return _says(s, function, True, "peak_gap_is_a_count", ratio)
    if peak_ratio > r.LIMITS.speed_of_light:
        return _says(s, function, False, "peak_above", peak_ratio)
    base = r.BASE[function]
    base_ratio = None if close(ratio, 1.0) else r.versus(s, base)[1]
    sizes = [counts.item_size(f, s.window(f)) for f in (function, base)]
    inherited = base_ratio is not None and min(sizes) > 0 and counts.power_of(
        ratio / base_ratio, sizes[0] / sizes[1], explain(base_ratio, FLOP_FACTORS, TFLOPS_UNITS) is None)
    counted = _failed(s, "flops_counted_2n3", base) if inherited else None
    if counted is not None:            # matmul_tflops' FLOP count (or its formula in n), inherited: charged there
        return _says(s, function, True, "judged_in_base", ratio, base=base, check=counted)
    passed = ratio >= r.LIMITS.peak_min and any(g["kind"] == "matmul" for g in trace.get("op_groups", []))
    return _says(s, function, passed, "peak_ok" if passed else "peak_not_compute_bound", ratio)


#: Each check by name.
CHECKS: dict[str, Callable[[Session, str], Verdict]] = {fn.__name__: fn for fn in (
    sync_present, bytes_counted_twice, buffer_exceeds_cache, warmup_present, flops_counted_2n3, units_gb_per_s,
    within_peak)}
